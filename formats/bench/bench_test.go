package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/csv"
	"github.com/libocca/occa-tools/formats/deflate"
	"github.com/libocca/occa-tools/formats/parquet"
	"github.com/libocca/occa-tools/formats/perfetto"
	"github.com/libocca/occa-tools/formats/summary"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

var (
	genOnce sync.Once
	genPath string
	genN    int
	genErr  error
)

// steadyTrace writes (once) a trace of the tracetest steady stream on four
// threads, in 16 K-event batches; with OCCA_BENCH_TRACE set, it is that
// trace instead (make bench-convert passes the bundled workload's, for its
// mix of events).
func steadyTrace(b *testing.B) (string, int) {
	genOnce.Do(func() {
		if genPath = os.Getenv("OCCA_BENCH_TRACE"); genPath != "" {
			genN, genErr = countEvents(genPath)
			return
		}
		genN = 10_000_000
		if s := os.Getenv("OCCA_BENCH_EVENTS"); s != "" {
			genN, _ = strconv.Atoi(s)
		}
		genPath = filepath.Join(os.TempDir(), "occa-tools-bench-"+strconv.Itoa(genN)+".occatrace")
		if _, err := os.Stat(genPath); err == nil {
			return
		}
		f, err := os.Create(genPath)
		if err != nil {
			genErr = err
			return
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<20)
		tw, err := trace.NewWriter(bw, tracetest.Header())
		if err != nil {
			genErr = err
			return
		}
		tw.WriteDefs(tracetest.Defs())
		const threads = 4
		gens := make([]*tracetest.Gen, threads)
		for i := range gens {
			gens[i] = tracetest.NewGen(uint64(i + 1))
			gens[i].Corr = uint64(i) << 40 // distinct correlation ids per thread
		}
		var e trace.Event
		for n := 0; n < genN; {
			for t := 0; t < threads && n < genN; t++ {
				bt := tw.Batch(uint32(t))
				for bt.Len() < 16384 && n < genN {
					gens[t].Next(&e)
					if err := bt.AddEvent(&e); err != nil {
						genErr = err
						return
					}
					n++
				}
				if err := tw.WriteBatch(bt); err != nil {
					genErr = err
					return
				}
			}
		}
		if genErr = tw.Close(); genErr == nil {
			genErr = bw.Flush()
		}
	})
	if genErr != nil {
		b.Fatal(genErr)
	}
	return genPath, genN
}

// countEvents returns the number of events of the trace at path.
func countEvents(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	n := 0
	for {
		_, err := r.ReadEvent()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		n++
	}
}

// peakHeap samples the heap in use while fn runs and returns its peak.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if v := ms.HeapInuse + ms.StackInuse; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}

func run(b *testing.B, fn func(path string) error) {
	path, n := steadyTrace(b)
	runOn(b, path, n, fn)
}

// runOn times fn on the trace at path, which holds n events.
func runOn(b *testing.B, path string, n int, fn func(path string) error) {
	b.ResetTimer()
	var peak uint64
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		peak = max(peak, peakHeap(func() {
			if err := fn(path); err != nil {
				b.Fatal(err)
			}
		}))
	}
	cpu := processCPU() - cpu0
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	// Per core: the stages run on goroutines of their own, so wall time
	// flatters them on an idle machine and CPU time is what a node full of
	// other conversions (convert -j) gets.
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds()/1e6, "Mevents/cpu-s")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkDecode(b *testing.B) {
	run(b, func(path string) error {
		r, c, err := trace.Open(path)
		if err != nil {
			return err
		}
		defer c.Close()
		for {
			if _, err := r.ReadEvent(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	})
}

func pair(path string) error {
	_, err := analysis.Read(path, 0, analysis.Options{}, func(*analysis.Process, *analysis.Row) error { return nil })
	return err
}

// summarizeWith sums the trace at path as summary does, with a collector
// from newCollector.
func summarizeWith(newCollector func() *summary.Collector) func(path string) error {
	return func(path string) error {
		c := newCollector()
		res, err := analysis.Read(path, 0, analysis.Options{}, c.Add)
		if err != nil {
			return err
		}
		c.Finish(res)
		return summary.Merge(c).Report().Write(io.Discard, "table", "")
	}
}

// summarize sums as summary does on a trace by itself; summarizeInline as
// it does when every core has a trace to read.
var (
	summarize       = summarizeWith(summary.NewCollector)
	summarizeInline = summarizeWith(summary.NewInlineCollector)
)

func BenchmarkPair(b *testing.B)          { run(b, pair) }
func BenchmarkSummary(b *testing.B)       { run(b, summarize) }
func BenchmarkSummaryInline(b *testing.B) { run(b, summarizeInline) }

type rankWriter interface {
	Add(*analysis.Process, *analysis.Row) error
	Close(*analysis.Result) error
}

func convert(b *testing.B, window int, create func(path string, p *analysis.Process) (rankWriter, error)) {
	path, n := steadyTrace(b)
	convertOn(b, path, n, window, create)
}

// convertOn times a conversion of the trace at path (n events).
func convertOn(b *testing.B, path string, n, window int, create func(path string, p *analysis.Process) (rankWriter, error)) {
	out := filepath.Join(b.TempDir(), "out")
	runOn(b, path, n, func(path string) error {
		var w rankWriter
		res, err := analysis.Read(path, 0, analysis.Options{Window: window, Open: func(p *analysis.Process) error {
			var err error
			w, err = create(out, p)
			return err
		}}, func(p *analysis.Process, r *analysis.Row) error { return w.Add(p, r) })
		if err != nil {
			return err
		}
		if err := w.Close(res); err != nil {
			return err
		}
		if st, err := os.Stat(out); err == nil {
			b.ReportMetric(float64(st.Size())/float64(res.Events), "out-bytes/event")
		}
		return nil
	})
}

func BenchmarkParquet(b *testing.B) {
	convert(b, 0, func(path string, p *analysis.Process) (rankWriter, error) { return parquet.Create(path, p) })
}

func createCSV(path string, p *analysis.Process) (rankWriter, error) { return csv.Create(path, p) }

func BenchmarkCSV(b *testing.B) { convert(b, 0, createCSV) }

// BenchmarkPerfetto converts as convert does by default: compressed.
func BenchmarkPerfetto(b *testing.B) {
	convert(b, perfetto.PairWindow, func(path string, p *analysis.Process) (rankWriter, error) {
		return perfetto.Create(path, p, 1, perfetto.Compressed())
	})
}

// BenchmarkPerfettoPlain converts as convert -compress=false does.
func BenchmarkPerfettoPlain(b *testing.B) {
	convert(b, perfetto.PairWindow, func(path string, p *analysis.Process) (rankWriter, error) { return perfetto.Create(path, p, 1) })
}

// perfettoPlain converts the trace at path to a plain Perfetto trace at out.
func perfettoPlain(path, out string) error {
	var w *perfetto.Writer
	res, err := analysis.Read(path, 0, analysis.Options{Window: perfetto.PairWindow, Open: func(p *analysis.Process) error {
		var err error
		w, err = perfetto.Create(out, p, 1)
		return err
	}}, func(p *analysis.Process, r *analysis.Row) error { return w.Add(p, r) })
	if err == nil {
		err = w.Close(res)
	}
	return err
}

// BenchmarkPerfettoFloor times what any Perfetto writer that reads the
// trace and writes these packets compressed must do, with the writing
// itself taken as free: reading and pairing the trace as the conversion
// does (PairWindow), and deflating the plain conversion's bytes (made
// once, untimed) in the writer's 1 MiB buffers with formats/deflate. Its
// Mevents/cpu-s is the bound over BenchmarkPerfetto's; read-ns/event and
// deflate-ns/event say what each part takes.
func BenchmarkPerfettoFloor(b *testing.B) {
	path, n := steadyTrace(b)
	out := filepath.Join(b.TempDir(), "plain")
	if err := perfettoPlain(path, out); err != nil {
		b.Fatal(err)
	}
	plain, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	var zbuf []byte
	var readCPU, zipCPU time.Duration
	runOn(b, path, n, func(path string) error {
		t0 := processCPU()
		_, err := analysis.Read(path, 0, analysis.Options{Window: perfetto.PairWindow},
			func(*analysis.Process, *analysis.Row) error { return nil })
		t1 := processCPU()
		for p := plain; len(p) > 0; p = p[min(len(p), 1<<20):] {
			zbuf = deflate.Encode(zbuf[:0], p[:min(len(p), 1<<20)])
		}
		readCPU += t1 - t0
		zipCPU += processCPU() - t1
		return err
	})
	b.ReportMetric(float64(readCPU.Nanoseconds())/float64(n*b.N), "read-ns/event")
	b.ReportMetric(float64(zipCPU.Nanoseconds())/float64(n*b.N), "deflate-ns/event")
	b.ReportMetric(float64(len(plain))/float64(n), "plain-bytes/event")
}
