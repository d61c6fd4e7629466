package trace_test

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

const (
	benchEvents = 1 << 20 // the steady-state stream of the brief: 1 M events
	benchBatch  = 16384   // events per batch (a 256 KiB runtime buffer holds about this many)
)

var (
	benchOnce sync.Once
	benchEvs  []trace.Event
)

func steady() []trace.Event {
	benchOnce.Do(func() { benchEvs = tracetest.Steady(1, benchEvents) })
	return benchEvs
}

// writeSteady writes evs in batches of benchBatch, encoding with workers
// goroutines (1: plain WriteBatch).
func writeSteady(tb testing.TB, w io.Writer, evs []trace.Event, workers int, opts ...trace.WriterOption) *trace.Writer {
	tw, err := trace.NewWriter(w, tracetest.Header(), append(opts, trace.WithConcurrency(workers))...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := tw.WriteDefs(tracetest.Defs()); err != nil {
		tb.Fatal(err)
	}
	if workers == 1 {
		b := tw.Batch(0)
		for i := range evs {
			if err := b.AddEvent(&evs[i]); err != nil {
				tb.Fatal(err)
			}
			if b.Len() == benchBatch {
				if err := tw.WriteBatch(b); err != nil {
					tb.Fatal(err)
				}
			}
		}
		if err := tw.WriteBatch(b); err != nil {
			tb.Fatal(err)
		}
	} else {
		// Fill batches in order, compress them on workers, append in order:
		// the pipeline EncodeBatch exists for.
		type job struct {
			b    *trace.Batch
			done chan struct{}
		}
		jobs := make(chan job, workers)
		order := make(chan job, workers)
		for range workers {
			go func() {
				for j := range jobs {
					tw.EncodeBatch(j.b)
					close(j.done)
				}
			}()
		}
		var wg sync.WaitGroup
		wg.Add(1)
		free := make(chan *trace.Batch, 2*workers)
		for range 2 * workers {
			free <- tw.Batch(0)
		}
		go func() {
			defer wg.Done()
			for j := range order {
				<-j.done
				if err := tw.WriteEncoded(j.b); err != nil {
					tb.Error(err)
				}
				free <- j.b
			}
		}()
		for i := 0; i < len(evs); i += benchBatch {
			b := <-free
			for k := i; k < min(i+benchBatch, len(evs)); k++ {
				b.AddEvent(&evs[k])
			}
			j := job{b, make(chan struct{})}
			order <- j
			jobs <- j
		}
		close(jobs)
		close(order)
		wg.Wait()
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return tw
}

func benchWrite(b *testing.B, workers int, opts ...trace.WriterOption) {
	evs := steady()
	var buf bytes.Buffer
	b.ResetTimer()
	for range b.N {
		buf.Reset()
		writeSteady(b, &buf, evs, workers, opts...)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(buf.Len())/float64(len(evs)), "B/event")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkWrite(b *testing.B)         { benchWrite(b, 1) }
func BenchmarkWrite2(b *testing.B)        { benchWrite(b, 2) }
func BenchmarkWriteDefault(b *testing.B)  { benchWrite(b, 1, trace.WithLevel(trace.LevelDefault)) }
func BenchmarkWriteDefault2(b *testing.B) { benchWrite(b, 2, trace.WithLevel(trace.LevelDefault)) }

// BenchmarkEncodeOnly measures Batch.Add alone: the cost before compression.
func BenchmarkEncodeOnly(b *testing.B) {
	evs := steady()
	bt := trace.NewBatch(0, 0)
	b.ResetTimer()
	for range b.N {
		for i := range evs {
			bt.AddEvent(&evs[i])
			if bt.Len() == benchBatch {
				bt.Reset()
			}
		}
		bt.Reset()
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkRead(b *testing.B) {
	evs := steady()
	var buf bytes.Buffer
	writeSteady(b, &buf, evs, 1)
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for range b.N {
		r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != len(evs) {
			b.Fatalf("read %d events, wrote %d", n, len(evs))
		}
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}
