package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	runGolden(t, [][2]string{
		{"help-convert", "help convert"},
		{"convert-no-to", "convert -o out small.occa"},
		{"convert-bad-to", "convert -to xml -o out small.occa"},
		{"convert-no-out", "convert -to csv small.occa"},
		{"convert-damaged", "convert -to csv -o out-damaged damaged.occa"},
		{"convert-salvage", "convert -to csv -o out-salvage -salvage damaged.occa"},
	})
}

// TestConvertCSV checks the CSV of the small trace against a golden file,
// and that a run directory gives one file per trace plus the process table.
func TestConvertCSV(t *testing.T) {
	dir := t.TempDir()
	writeTraces(t, dir)
	os.MkdirAll(filepath.Join(dir, "run"), 0o755)
	small, _ := os.ReadFile(filepath.Join(dir, "small.occa"))
	os.WriteFile(filepath.Join(dir, "run", "a.occatrace"), small, 0o644)
	os.WriteFile(filepath.Join(dir, "run", "b.occatrace"), small, 0o644)
	out := filepath.Join(dir, "out")
	var so, se strings.Builder
	if st := run([]string{"convert", "-to", "csv", "-o", out, filepath.Join(dir, "run")}, &Env{Stdout: &so, Stderr: &se}); st != 0 {
		t.Fatalf("status %d: %s", st, se.String())
	}
	for _, name := range []string{"events-rank00003.csv", "events-rank00003-1.csv", "_processes.csv"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "_processes.csv" {
			b = []byte(strings.ReplaceAll(string(b), dir, "$DIR"))
			name = "convert-processes.csv"
		} else if strings.Contains(name, "-1") {
			continue
		} else {
			name = "convert-small.csv"
		}
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			os.WriteFile(golden, b, 0o644)
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(want) {
			t.Errorf("%s differs from %s:\n%s", name, golden, b)
		}
	}
}
