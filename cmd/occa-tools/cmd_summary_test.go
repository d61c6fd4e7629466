package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/summary"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// runGolden runs each command line in a directory of test traces and
// compares its output with testdata/<name>.golden.
func runGolden(t *testing.T, cases [][2]string) {
	dir := t.TempDir()
	writeTraces(t, dir)
	os.MkdirAll(filepath.Join(dir, "run"), 0o755)
	small, _ := os.ReadFile(filepath.Join(dir, "small.occa"))
	var nodefs bytes.Buffer // another process of the same rank
	if err := tracetest.WriteSmall(&nodefs, tracetest.SmallOptions{NoDefs: true, PID: 4243}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "run", "a.occatrace"), small, 0o644)
	os.WriteFile(filepath.Join(dir, "run", "b.occatrace"), nodefs.Bytes(), 0o644)
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, c := range cases {
		name, args := c[0], c[1]
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := run(strings.Fields(args), &Env{Stdout: &stdout, Stderr: &stderr})
			got := fmt.Sprintf("$ occa-tools %s\nexit status %d\n-- stdout --\n%s-- stderr --\n%s", args, status, stdout.String(), stderr.String())
			golden.Check(t, filepath.Join(wd, "testdata", name+".golden"), []byte(got))
		})
	}
}

func TestSummary(t *testing.T) {
	runGolden(t, [][2]string{
		{"help-summary", "help summary"},
		{"summary", "summary small.occa"},
		{"summary-csv-kernels", "summary -format csv -section kernels small.occa"},
		{"summary-markdown", "summary -format markdown -section copies small.occa"},
		{"summary-run", "summary -section ranks run"},
		{"summary-damaged", "summary damaged.occa"},
		{"summary-salvage", "summary -salvage -section kernels damaged.occa"},
		{"summary-bad-format", "summary -format xml small.occa"},
		{"summary-bad-section", "summary -section nope small.occa"},
		{"summary-no-args", "summary"},
	})
}

// A run summed in shards, each written as a partial summary and merged in
// any order, gives byte for byte the report of the unsharded summary, in
// every format; a partial given twice is an error naming both files.
func TestSummaryShards(t *testing.T) {
	runDir := shardRun(t)
	parts := t.TempDir()
	summarize := func(args ...string) (int, string, string) {
		var so, se strings.Builder
		st := run(append([]string{"summary"}, args...), &Env{Stdout: &so, Stderr: &se})
		return st, so.String(), se.String()
	}
	for _, format := range summary.Formats {
		st, want, se := summarize("-format", format, runDir)
		if st != 0 || !strings.Contains(want, "7") {
			t.Fatalf("unsharded: status %d: %s", st, se)
		}
		for _, n := range []int{1, 2, 3, 7} {
			var files []string
			for i := range n {
				f := filepath.Join(parts, fmt.Sprintf("%s-%d-of-%d.json", format, i, n))
				if st, out, se := summarize("-shard", fmt.Sprintf("%d/%d", i, n), "-partial", f, runDir); st != 0 || out != "" {
					t.Fatalf("shard %d/%d: status %d, stdout %q: %s", i, n, st, out, se)
				}
				files = append(files, f)
			}
			slices.Reverse(files)
			st, got, se := summarize(append([]string{"-format", format}, files...)...)
			if st != 0 || got != want {
				t.Errorf("%s, %d shards: status %d: %s\n%s\nwant\n%s", format, n, st, se, got, want)
			}
		}
	}
	a, b := filepath.Join(parts, "table-0-of-2.json"), filepath.Join(parts, "table-1-of-2.json")
	st, _, se := summarize(a, b, a)
	if want := a + " and " + a + " both hold the trace of host node7"; st != 1 || !strings.Contains(se, want) {
		t.Errorf("a partial twice: status %d, %q, want %q", st, se, want)
	}
	st, _, se = summarize(a, filepath.Join(runDir, "t0.occatrace"))
	if want := a + " is a partial summary and " + filepath.Join(runDir, "t0.occatrace") + " is not"; st != 2 || !strings.Contains(se, want) {
		t.Errorf("a partial and a trace: status %d, %q, want %q", st, se, want)
	}
	// A damaged partial summary is an error naming the file and the offset.
	body, _ := os.ReadFile(a)
	bad := filepath.Join(parts, "bad.json")
	os.WriteFile(bad, body[:len(body)/2], 0o644)
	st, _, se = summarize(bad, b)
	if want := bad + ": at byte "; st != 1 || !strings.Contains(se, want) {
		t.Errorf("damaged: status %d, %q, want %q", st, se, want)
	}
}
