package perfetto

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// BenchmarkWriter times the writer alone (Add to Close, the file
// included) on the rows of tracetest's steady stream on four threads, read
// once; run it with -cpu 1 for CPU time per event.
func BenchmarkWriter(b *testing.B) {
	const threads, perThread = 4, 100_000
	var evs []trace.Event
	for t := 0; t < threads; t++ {
		g := tracetest.NewGen(uint64(t + 1))
		g.Corr = uint64(t) << 40
		for i := 0; i < perThread; i++ {
			var e trace.Event
			g.Next(&e)
			e.Thread = uint32(t)
			evs = append(evs, e)
		}
	}
	path := writeTrace(b, evs)
	var rows []analysis.Row
	var proc *analysis.Process
	if _, err := analysis.Read(path, 0, analysis.Options{Window: PairWindow, Open: func(p *analysis.Process) error {
		proc = p
		return nil
	}}, func(p *analysis.Process, r *analysis.Row) error {
		if r.OMP == nil {
			rows = append(rows, *r)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "t.perfetto-trace")
	b.ResetTimer()
	var size int64
	for i := 0; i < b.N; i++ {
		w, err := Create(out, proc, 1)
		if err != nil {
			b.Fatal(err)
		}
		for j := range rows {
			if err := w.Add(proc, &rows[j]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(nil); err != nil {
			b.Fatal(err)
		}
		size = w.Bytes
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
	b.ReportMetric(float64(size)/float64(len(evs)), "B/event")
	os.Remove(out)
}
