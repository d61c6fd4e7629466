// Package golden is the tests' one way to compare output with a file in
// testdata and to rewrite those files: every test binary that imports it
// has the -update flag.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag: tests write their output as the new golden
// file instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Check compares got with the file at path (relative to the test's
// package), or with -update writes it there. A difference fails the test
// with got in full, so that the diff can be read from the log.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}
