package config_test

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/configs"
	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/filters/config"
)

// FuzzParse: Parse never panics (nor hides a panic as an internal error),
// always returns a config, reports errors as a sorted Errors list where
// every error has a line and prints on one line, and whatever it returns
// compiles.
func FuzzParse(f *testing.F) {
	for _, text := range configs.All() {
		f.Add(text)
	}
	for _, s := range []string{
		"[output]\ncompression = \"fast\"\n",
		"[[trigger.window]]\nkernel = \"a\"\nregion = \"b\"\n",
		"[trigger]\nwindow = [{kernel = \"a\"}, {delay = \"1s\", from = 2}]\n",
		"[output]\nmemory = \"2MiB\"\nname = \"{x\"\n",
		"a = \"\"\"\n[x]\n\"\"\"\n[filter.kernel]\nregex = [\"(\"]\n",
		"[[tag]]\n[[tag]]\nkernel = \"*\"\ntag = \"t\"\n",
		"on_error = 'abort'\n[",
		"a = " + strings.Repeat("[", 17) + strings.Repeat("]", 17),
		"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q = 1\n",
		"[output]\ndirectory = \"\x1b[2J\\n\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		cfg, err := config.Parse("fuzz.toml", text)
		if cfg == nil {
			t.Fatal("nil config")
		}
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T %v is not a non-empty Errors", err, err)
			}
			if !sort.SliceIsSorted(es, func(i, j int) bool { return es[i].Line < es[j].Line }) {
				t.Fatalf("errors not sorted: %v", err)
			}
			for _, e := range es {
				if e.File != "fuzz.toml" || e.Msg == "" || e.Line <= 0 ||
					strings.Contains(e.Msg, "internal error") || strings.ContainsAny(e.Error(), "\n\r") {
					t.Fatalf("bad error %#v", e)
				}
			}
		}
		if _, err := filters.Compile(cfg); err != nil {
			t.Fatalf("Parse returned a config that does not compile: %v\n%q", err, text)
		}
	})
}
