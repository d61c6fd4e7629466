package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/summary"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// FuzzCommands runs every converter, every summary format, info and dump on
// a trace that tracetest.FromBytes makes from the fuzz input: well-formed
// (the real writer wrote it), but with whatever event sequence the ABI
// lets a program produce. Each command must succeed: no panic, no error,
// and a complete output.
func FuzzCommands(f *testing.F) {
	// testdata/fuzz/FuzzCommands holds the inputs that crashed a
	// converter before (device-without-mode: a launch on a device whose
	// def has no mode made convert -to csv|parquet index an empty name).
	// Random choices, long enough for thousands of events: a start the
	// fuzzer's small mutations would take long to grow to.
	for i, n := range []int{300, 3000} {
		rng := rand.New(rand.NewPCG(uint64(i), 0x0cca))
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "t.occatrace")
		var b bytes.Buffer
		if err := tracetest.FromBytes(&b, data); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var cmds [][]string
		for _, o := range outputs {
			cmds = append(cmds, []string{"convert", "-to", o.name, "-o", filepath.Join(dir, o.name), path})
		}
		for _, f := range summary.Formats {
			cmds = append(cmds, []string{"summary", "-format", f, path})
		}
		cmds = append(cmds, []string{"info", path}, []string{"dump", path})
		for _, args := range cmds {
			var so, se strings.Builder
			if st := run(args, &Env{Stdout: &so, Stderr: &se}); st != 0 {
				t.Fatalf("occa-tools %s: exit status %d\n%s", strings.Join(args, " "), st, se.String())
			}
		}
	})
}
