package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/perfetto"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
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
	var other bytes.Buffer // another process of the same rank
	if err := tracetest.WriteSmall(&other, tracetest.SmallOptions{PID: 4243}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "run", "b.occatrace"), other.Bytes(), 0o644)
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
		golden.Check(t, filepath.Join("testdata", name+".golden"), b)
	}
}

// TestConvertLeftOut converts to Perfetto a trace with more device times
// that overlap without nesting than a track has lanes: convert succeeds
// and says how many slices it left out, where, and what keeps them.
func TestConvertLeftOut(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	b := w.Batch(0)
	const n = perfetto.MaxLanes + 3
	for i := range n {
		ts := int64(tracetest.MonoStart + i*1000)
		if err := b.Add(trace.DeviceTime, ts, uint64(i+1), uint64(ts), uint64(ts+1e9)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "t.occatrace")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	var so, se strings.Builder
	if st := run([]string{"convert", "-to", "perfetto", "-o", out, in}, &Env{Stdout: &so, Stderr: &se}); st != 0 {
		t.Fatalf("status %d: %s", st, se.String())
	}
	want := "occa-tools convert: " + in + ": 3 slices overlapped, without nesting, the slices of 256 lanes of their track and were left out of the Perfetto trace; -to csv or parquet keeps every row\n"
	if se.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", se.String(), want)
	}
}
