package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// unmatchedTrace writes n device times whose launches are not in the trace,
// 1 µs apart, each lasting overlap ns: with an overlap longer than the
// spacing they overlap without nesting, every one a new lane when lanes
// were unbounded.
func unmatchedTrace(b *testing.B, n int, overlap int64) string {
	path := filepath.Join(b.TempDir(), fmt.Sprintf("unmatched-%d-%d.occatrace", n, overlap))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	tw, err := trace.NewWriter(bw, tracetest.Header())
	if err != nil {
		b.Fatal(err)
	}
	tw.WriteDefs(tracetest.Defs())
	bt := tw.Batch(0)
	for i := 0; i < n; i++ {
		ts := tracetest.MonoStart + int64(i)*1000
		err := bt.Add(trace.DeviceTime, ts, uint64(i+1), uint64(ts), uint64(ts+overlap))
		if errors.Is(err, trace.ErrBatchFull) {
			if err = tw.WriteBatch(bt); err == nil {
				err = bt.Add(trace.DeviceTime, ts, uint64(i+1), uint64(ts), uint64(ts+overlap))
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.WriteBatch(bt); err != nil {
		b.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkPerfettoUnmatched converts 10 k and 80 k device times that
// match no launch to Perfetto and reports both times and their ratio:
// linear time makes it about 8. "serial" device times follow each other,
// "overlapping" ones each overlap all those before them (they took one
// lane each, and every slice scanned them all: 80 k took 15 s).
func BenchmarkPerfettoUnmatched(b *testing.B) {
	for _, c := range []struct {
		name    string
		overlap int64
	}{{"serial", 500}, {"overlapping", 1e9}} {
		b.Run(c.name, func(b *testing.B) {
			small, large := unmatchedTrace(b, 10_000, c.overlap), unmatchedTrace(b, 80_000, c.overlap)
			out := filepath.Join(b.TempDir(), "out")
			conv := func(path string) time.Duration {
				t0 := time.Now()
				if err := perfettoPlain(path, out); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			b.ResetTimer()
			var ts, tl time.Duration
			for i := 0; i < b.N; i++ {
				ts += conv(small)
				tl += conv(large)
			}
			b.ReportMetric(ts.Seconds()/float64(b.N), "s-10k")
			b.ReportMetric(tl.Seconds()/float64(b.N), "s-80k")
			b.ReportMetric(float64(tl)/float64(ts), "ratio-80k/10k")
		})
	}
}
