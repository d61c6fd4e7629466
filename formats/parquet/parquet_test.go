package parquet

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp"
	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/table"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// TestRoundTrip converts the small trace and reads the file back: the rows
// equal the analysis's records, and the schema and metadata match the golden
// dump (a readable form, not the bytes).
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := tracetest.WriteSmall(&buf, tracetest.SmallOptions{}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "small.occatrace")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "out.parquet")
	var w *Writer
	var want []analysis.Record
	var fl *analysis.Flattener
	res, err := analysis.Read(in, 0, analysis.Options{Open: func(p *analysis.Process) error {
		var err error
		w, err = Create(out, p)
		fl = analysis.NewFlattener(p)
		return err
	}}, func(p *analysis.Process, r *analysis.Row) error {
		var rec analysis.Record
		fl.Flatten(&rec, r)
		want = append(want, rec)
		return w.Add(p, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	got, err := pq.Read[analysis.Record](f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	fmt.Fprintf(&dump, "%s\n", pf.Schema())
	for _, k := range []string{KeySchemaVersion, KeyEpoch} {
		v, _ := pf.Lookup(k)
		fmt.Fprintf(&dump, "%s = %s\n", k, v)
	}
	fmt.Fprintf(&dump, "rows %d, row groups %d\n", pf.NumRows(), len(pf.RowGroups()))
	dumpStorage(t, &dump, pf)
	for _, r := range got {
		fmt.Fprintf(&dump, "%+v\n", r)
	}
	dumped := bytes.ReplaceAll(dump.Bytes(), []byte(dir), []byte("$DIR"))
	golden.Check(t, filepath.Join("testdata", "small.dump"), dumped)
}

// dumpStorage appends how the first row group stores each column: its
// encodings, codec, whether it has min/max statistics, and the bounds of
// its first page in the column index, which Spark prunes pages by (empty
// bounds on a string column made Spark skip every row of `where kind =
// 'run'`).
func dumpStorage(t *testing.T, dump *bytes.Buffer, pf *pq.File) {
	chunks := pf.RowGroups()[0].ColumnChunks()
	for i, c := range pf.Metadata().RowGroups[0].Columns {
		m := &c.MetaData
		var encs []string
		for _, e := range m.Encoding {
			encs = append(encs, e.String())
		}
		ci, err := chunks[i].ColumnIndex()
		if err != nil {
			t.Fatalf("column %v: column index: %v", m.PathInSchema, err)
		}
		fmt.Fprintf(dump, "column %s: %s, %s, min/max %t, page 0 [%v, %v]\n", strings.Join(m.PathInSchema, "."), strings.Join(encs, " "),
			m.Codec, m.Statistics.MinValue != nil && m.Statistics.MaxValue != nil, ci.MinValue(0), ci.MaxValue(0))
	}
}

// convert writes the trace at in as the convert command does, into dir.
func convert(t *testing.T, in, dir string) {
	t.Helper()
	var w *Writer
	res, err := analysis.Read(in, 0, analysis.Options{Open: func(p *analysis.Process) error {
		var err error
		w, err = Create(filepath.Join(dir, table.GroupPath(analysis.Events.Name, 0, 1, 0, ".parquet")), p)
		return err
	}}, func(p *analysis.Process, r *analysis.Row) error { return w.Add(p, r) })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(res); err != nil {
		t.Fatal(err)
	}
}

// dumpTable appends the schema, the metadata and the rows of a Parquet file
// of T rows to dump.
func dumpTable[T any](t *testing.T, dump *bytes.Buffer, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	rows, err := pq.Read[T](f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(dump, "== %s\n%s\n", filepath.Base(path), pf.Schema())
	for _, k := range []string{KeySchemaVersion, KeyEpoch} {
		v, ok := pf.Lookup(k)
		if ok {
			fmt.Fprintf(dump, "%s = %s\n", k, v)
		}
	}
	fmt.Fprintf(dump, "rows %d\n", pf.NumRows())
	for _, r := range rows {
		fmt.Fprintf(dump, "%+v\n", r)
	}
	return rows
}

// The OpenMP rows of omptest's trace go to the OpenMP table, not to the
// events table (which keeps its two launches); the dependences table holds
// the edges.
func TestOpenMP(t *testing.T) {
	in := omptest.SmallFile(t)
	dir := filepath.Dir(in)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	convert(t, in, out)
	var dump bytes.Buffer
	file := "part-00000-of-00001-000.parquet"
	events := dumpTable[analysis.Record](t, &dump, filepath.Join(out, "events", file))
	rows := dumpTable[omp.Record](t, &dump, filepath.Join(out, "openmp", file))
	edges := dumpTable[omp.EdgeRecord](t, &dump, filepath.Join(out, "dependences", file))
	if len(events) != 2 || len(rows) != 57 || len(edges) != 7 {
		t.Errorf("%d events, %d OpenMP rows, %d edges; want 2, 57, 7", len(events), len(rows), len(edges))
	}
	dumped := bytes.ReplaceAll(dump.Bytes(), []byte(dir), []byte("$DIR"))
	golden.Check(t, filepath.Join("testdata", "omp.dump"), dumped)
}

// A trace without OpenMP rows gets no OpenMP tables.
func TestNoOpenMPTables(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := tracetest.WriteSmall(&buf, tracetest.SmallOptions{}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "small.occatrace")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	convert(t, in, out)
	for _, name := range []string{omp.TableRows, omp.TableDependences} {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want none", name, err)
		}
	}
}

// A part holds its traces' rows one trace after another, each row with its
// trace's rank, and the OpenMP tables hold the rows of the traces that have
// some: here the second and fourth of four.
func TestPartHoldsTracesInOrder(t *testing.T) {
	dir := t.TempDir()
	var small bytes.Buffer
	if err := tracetest.WriteSmall(&small, tracetest.SmallOptions{}); err != nil {
		t.Fatal(err)
	}
	inputs := []string{filepath.Join(dir, "a.occatrace"), omptest.SmallFile(t), filepath.Join(dir, "b.occatrace"), omptest.SmallFile(t)}
	os.WriteFile(inputs[0], small.Bytes(), 0o644)
	os.WriteFile(inputs[2], small.Bytes(), 0o644)
	path := filepath.Join(dir, "out", table.GroupPath(analysis.Events.Name, 0, 1, 0, ".parquet"))
	pt, err := CreatePart(path)
	if err != nil {
		t.Fatal(err)
	}
	var wantRanks []int32
	for i, in := range inputs {
		var w *Writer
		res, err := analysis.Read(in, 10+i, analysis.Options{Open: func(p *analysis.Process) error {
			w = pt.Trace(p)
			return nil
		}}, func(p *analysis.Process, r *analysis.Row) error {
			if r.OMP == nil {
				wantRanks = append(wantRanks, int32(p.Rank))
			}
			return w.Add(p, r)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(res); err != nil {
			t.Fatal(err)
		}
	}
	if err := pt.Close(); err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	events := dumpTable[analysis.Record](t, &dump, path)
	rows := dumpTable[omp.Record](t, &dump, omp.TablePath(path, omp.TableRows))
	edges := dumpTable[omp.EdgeRecord](t, &dump, omp.TablePath(path, omp.TableDependences))
	if len(events) != len(wantRanks) {
		t.Fatalf("%d events rows, want %d", len(events), len(wantRanks))
	}
	for i := range events {
		if events[i].Rank != wantRanks[i] {
			t.Fatalf("events row %d: rank %d, want %d", i, events[i].Rank, wantRanks[i])
		}
	}
	if len(rows) != 2*57 || len(edges) != 2*7 {
		t.Errorf("%d OpenMP rows, %d edges; want %d, %d", len(rows), len(edges), 2*57, 2*7)
	}
}
