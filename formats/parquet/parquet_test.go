package parquet

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/libocca/occa-tools/formats/model"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestRoundTrip converts the small trace and reads the file back: the rows
// equal the model's records, and the schema and metadata match the golden
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
	var want []model.Record
	var fl *model.Flattener
	res, err := model.Read(in, 0, model.Options{Open: func(p *model.Process) error {
		var err error
		w, err = Create(out, p)
		fl = model.NewFlattener(p)
		return err
	}}, func(p *model.Process, r *model.Row) error {
		var rec model.Record
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
	got, err := pq.Read[model.Record](f, st.Size())
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
	for _, k := range []string{KeySchemaVersion, KeyEpoch, KeyProcess} {
		v, _ := pf.Lookup(k)
		fmt.Fprintf(&dump, "%s = %s\n", k, v)
	}
	fmt.Fprintf(&dump, "rows %d, row groups %d\n", pf.NumRows(), len(pf.RowGroups()))
	for _, r := range got {
		fmt.Fprintf(&dump, "%+v\n", r)
	}
	dumped := bytes.ReplaceAll(dump.Bytes(), []byte(dir), []byte("$DIR"))
	golden := filepath.Join("testdata", "small.dump")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, dumped, 0o644)
	}
	wantDump, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dumped, wantDump) {
		t.Errorf("dump differs from %s (go test -update):\n%s", golden, dumped)
	}
}
