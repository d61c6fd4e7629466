package config

import (
	"testing"

	"github.com/BurntSushi/toml"
)

func TestKeyLines(t *testing.T) {
	text := `# comment with [brackets] and key = "value"
top = 1
"quoted key" = 'x'
'lit.key' = 2
s = """
fake = 1
[not.a.table]
"""
lit = '''
[[also.not]]
'''
esc = "a \" [x] \\"   # trailing = comment

[output]
name = "a#b"
dotted.sub.key = true
arr = [
  1,   # one
  [2, 3],
  "four",
]

[[trigger.window]]
kernel = "a"
[trigger.window.extra]
x = 1

[[trigger.window]]
region = "b"
inline = { a = 1, b.c = [ {d = 2}, {d = 3} ] }

[trigger]
max_events = 3
[[trigger.window.nested]]
q = 1
[[trigger.window.nested]]
q = 2
tables = [ { k = 1 },
  { k = 2 } ]
multi = """a
b"""
after = 9
"\u0041" = 1
`
	want := map[string]int{
		"top": 2, `"quoted key"`: 3, `"lit.key"`: 4, "s": 5, "lit": 9, "esc": 12,
		"output": 14, "output.name": 15, "output.dotted": 16, "output.dotted.sub.key": 16,
		"output.arr": 17, "output.arr[0]": 18, "output.arr[1]": 19, "output.arr[1][1]": 19, "output.arr[2]": 20,
		"trigger": 32, "trigger.window": 23, "trigger.window[0]": 23, "trigger.window[0].kernel": 24,
		"trigger.window[0].extra": 25, "trigger.window[0].extra.x": 26,
		"trigger.window[1]": 28, "trigger.window[1].region": 29, "trigger.window[1].inline": 30,
		"trigger.window[1].inline.a": 30, "trigger.window[1].inline.b.c[1].d": 30,
		"trigger.max_events": 33, "trigger.window[1].nested[0]": 34, "trigger.window[1].nested[1].q": 37,
		"trigger.window[1].nested[1].tables[1]": 39, "trigger.window[1].nested[1].tables[1].k": 39,
		"trigger.window[1].nested[1].multi": 40, "trigger.window[1].nested[1].after": 42,
		"trigger.window[1].nested[1].A": 43,
	}
	if _, err := toml.Decode(text, new(map[string]any)); err != nil {
		t.Fatalf("test document is not TOML: %v", err)
	}
	got, over := keyLines(text)
	if over != nil {
		t.Fatalf("keyLines stopped: %v", over)
	}
	for k, l := range want {
		if got[k] != l {
			t.Errorf("line of %s = %d, want %d", k, got[k], l)
		}
	}
	for _, bad := range []string{"fake", "not", "also", "not.a.table"} {
		if _, ok := got[bad]; ok {
			t.Errorf("found key %s inside a string", bad)
		}
	}
}

// Every key that BurntSushi/toml reports for documents without arrays of
// tables has a line, and it is the one the library knows.
func TestKeyLinesAgreeWithParser(t *testing.T) {
	for _, text := range []string{
		"a = 1\nb.c = 2\n[d]\ne = [1,\n2]\n[f.g]\nh = {i = 1}\n",
		"[x]\n\n\n'y z' = \"\"\"\n\n\"\"\"\nw = 1\n",
	} {
		md, err := toml.Decode(text, new(map[string]any))
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := keyLines(text)
		for _, k := range md.Keys() {
			var p *keyPath
			for _, c := range k {
				p = p.child(c)
			}
			if lines[p.String()] == 0 {
				t.Errorf("%q: no line for %s", text, p)
			}
		}
	}
}

// The scanner survives text that is not TOML.
func TestKeyLinesGarbage(t *testing.T) {
	for _, text := range []string{"", "[", "[[", "a", "a =", `a = "`, `a = """`, "a = '''", `"`, "a = [", "a = {",
		"a = [1, {b = ", "= 1", "[a.\"b", "a = \"\\u12\"", "\x00\x00", "]]]", "a = }}}", "a.'b", "[a]]\nb=1"} {
		keyLines(text)
	}
}
