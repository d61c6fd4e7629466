package trace_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// goldens maps each testdata/<name>.txtar to the trace it holds. A golden
// file keeps the binary trace (base64) and its dump: reading the stored
// bytes checks that this reader still reads files written before, and
// writing the trace afresh checks that the writer still writes the same
// events.
var goldens = map[string]tracetest.SmallOptions{
	"small":  {},
	"nodefs": {NoDefs: true},
	"cut":    {NoClose: true},
}

func TestGolden(t *testing.T) {
	for name, opts := range goldens {
		t.Run(name, func(t *testing.T) {
			var fresh bytes.Buffer
			if err := tracetest.WriteSmall(&fresh, opts); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".txtar")
			if *golden.Update {
				a := &txtarArchive{
					Comment: []byte("Golden dump of tracetest.WriteSmall(" + strings.TrimSpace(name) + "). Regenerate: go test -run TestGolden -update\n"),
					Files: []txtarFile{
						{"trace.b64", wrap(base64.StdEncoding.EncodeToString(fresh.Bytes()), 76)},
						{"dump", dumpString(fresh.Bytes())},
					},
				}
				if err := os.WriteFile(path, formatTxtar(a), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			stored, want := readGolden(t, path)
			if got := string(dumpString(stored)); got != want {
				t.Errorf("dump of the stored trace differs:\n%s", diffLines(got, want))
			}
			if got := string(dumpString(fresh.Bytes())); got != want {
				t.Errorf("dump of a freshly written trace differs:\n%s", diffLines(got, want))
			}
		})
	}
}

// TestGoldenOlderFormats reads traces written by earlier format versions
// (testdata/v<major>.<minor>/, kept as they were written): this reader must
// still read every one of them, to the same dump.
func TestGoldenOlderFormats(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "v*", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files of older formats (%v)", err)
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			stored, want := readGolden(t, path)
			if got := string(dumpString(stored)); got != want {
				t.Errorf("dump differs:\n%s", diffLines(got, want))
			}
		})
	}
}

// readGolden returns the trace a golden file stores and its dump.
func readGolden(t *testing.T, path string) (stored []byte, dump string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := parseTxtar(data)
	stored, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(string(a.file("trace.b64")), "\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	return stored, string(a.file("dump"))
}

// dumpString returns Dump's output, then "error: ..." if it failed.
func dumpString(data []byte) []byte {
	var b bytes.Buffer
	r, err := trace.NewReader(bytes.NewReader(data))
	if err == nil {
		err = trace.Dump(&b, r)
	}
	if err != nil {
		b.WriteString("error: " + err.Error() + "\n")
	}
	return b.Bytes()
}

func wrap(s string, n int) []byte {
	var b []byte
	for len(s) > n {
		b = append(b, s[:n]...)
		b = append(b, '\n')
		s = s[n:]
	}
	return append(append(b, s...), '\n')
}

// diffLines shows the first differing line.
func diffLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(same lines)"
}
