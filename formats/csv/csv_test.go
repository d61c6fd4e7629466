package csv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp"
	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/table"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// convert writes the trace in (written by write) as the convert command
// does, into a new directory, and returns that directory.
func convert(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.occatrace")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	var w *Writer
	res, err := analysis.Read(in, 0, analysis.Options{Open: func(p *analysis.Process) error {
		var err error
		w, err = Create(filepath.Join(out, table.Path(analysis.Events.Name, p.Rank, 0, ".csv")), p)
		return err
	}}, func(p *analysis.Process, r *analysis.Row) error { return w.Add(p, r) })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(res); err != nil {
		t.Fatal(err)
	}
	return out
}

// The OpenMP rows of omptest's trace go to the OpenMP table, the edges to
// the dependences table; the events table keeps the two launches.
func TestOpenMP(t *testing.T) {
	out := convert(t, func(b *bytes.Buffer) error { return omptest.WriteSmall(b) })
	var dump bytes.Buffer
	for _, name := range []string{"events/events-rank00003.csv", "openmp/openmp-rank00003.csv", "dependences/dependences-rank00003.csv"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&dump, "== %s\n%s", name, b)
	}
	golden.Check(t, filepath.Join("testdata", "omp.csv"), dump.Bytes())
}

// A trace without OpenMP rows gets no OpenMP tables.
func TestNoOpenMPTables(t *testing.T) {
	out := convert(t, func(b *bytes.Buffer) error { return tracetest.WriteSmall(b, tracetest.SmallOptions{}) })
	for _, name := range []string{omp.TableRows, omp.TableDependences} {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want none", name, err)
		}
	}
}
