package filters

import (
	"reflect"
	"testing"
)

func TestPropertiesTags(t *testing.T) {
	for _, tc := range []struct {
		props string
		want  []string
	}{
		{"", nil},
		{"{}", nil},
		{`{"occa_tools_tag": "hot"}`, []string{"hot"}},
		{`{occa_tools_tag: 'hot'}`, []string{"hot"}},
		{`occa_tools_tag: "hot"`, []string{"hot"}},
		{`{occa_tools_tag: ['hot', "solver"]}`, []string{"hot", "solver"}},
		{`{occa_tools_tag: ['hot', 3, true, {a: 'x'}, ['y'], "", 'cold',]}`, []string{"hot", "cold"}},
		{`{defines: {occa_tools_tag: 'inner'}, occa_tools_tag: 'outer'}`, []string{"outer"}},
		{`{defines: {N: 10, S: "a,b}"}, 'okl': {validate: true}, occa_tools_tag: 'x'}`, []string{"x"}},
		{`{compiler_flags: '-O3 -DX="}"', occa_tools_tag: "y"}`, []string{"y"}},
		{`{/* c */ occa_tools_tag /* c */ : /* c */ 'z' // end
		}`, []string{"z"}},
		{`{"occa_tools_tag": "a \"quoted\" tag"}`, []string{`a "quoted" tag`}},
		{`{occa_tools_tag: 'a\'b'}`, []string{"a'b"}},
		{`{occa_tools_tag: true}`, nil},
		{`{occa_tools_tag: null, x: 1}`, nil},
		{`{occa_tools_tag: {a: 'b'}}`, nil},
		{`{occa_tools_tag_x: 'no', xocca_tools_tag: 'no'}`, nil},
		{`{occa_tools_tag: 'a', occa_tools_tag: 'b'}`, []string{"a", "b"}},
		{`{a: [1, 2, {b: [3]}], occa_tools_tag: ["t"]}`, []string{"t"}},
		{`[occa_tools_tag, 'x']`, nil},
		{`{occa_tools_tag 'x'}`, nil},
		{`{occa_tools_tag: 'unterminated`, []string{"unterminated"}},
		{`{occa_tools_tag: ['a', 'b'`, []string{"a", "b"}},
		{`{x: 'unterminated, occa_tools_tag: 'y'}`, nil},
		{`{/* unterminated comment occa_tools_tag: 'y'}`, nil},
		{"{\x00\xff occa_tools_tag: 'k'}", []string{"k"}},
	} {
		if got := PropertiesTags(tc.props); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PropertiesTags(%q) = %q, want %q", tc.props, got, tc.want)
		}
	}
}

func FuzzPropertiesTags(f *testing.F) {
	for _, s := range []string{`{occa_tools_tag: ['hot', "solver"]}`, `{defines: {occa_tools_tag: 'inner'}, occa_tools_tag: 'outer'}`,
		`{/* c */ occa_tools_tag: 'z' // x`, `{a: "\\", b: '\'', occa_tools_tag: [[[`, `occa_tools_tag: "x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tag := range PropertiesTags(s) {
			if tag == "" {
				t.Fatalf("empty tag from %q", s)
			}
		}
	})
}
