package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
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
