package writer

import (
	"encoding/binary"
	"io"
	"math/rand"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/formats/trace"
)

// benchSpans fills full 1 MiB buffers (the default buffer_size) of threads
// with what tests/bench/throughput.c records: run_begin/run_end pairs 5.6
// to 7.2 ns apart in TSC ticks (2.5 GHz) in bursts of 1000 events 100 us
// apart, four kernels, one device and stream, correlation ids counting up
// per thread.
func benchSpans(threads, perThread int) ([]Span, int) {
	const bufBytes = 1 << 20
	var spans []Span
	events := 0
	rng := rand.New(rand.NewSource(1))
	for th := 1; th <= threads; th++ {
		var corr uint64
		ticks := uint64(1_000_000)
		buf := make([]byte, 0, bufBytes)
		flush := func() {
			spans = append(spans, Span{Data: buf, Thread: uint32(th), Full: true})
			buf = make([]byte, 0, bufBytes)
		}
		for i := 0; i < perThread; i++ {
			if len(buf)+48+32 > bufBytes {
				flush()
			}
			corr++
			id := uint64(th)<<40 | corr
			buf = appendRaw(buf, ticks, trace.RunBegin, id, uint64(1+th%4), 1, 1)
			ticks += 14 + uint64(rng.Intn(5))
			buf = appendRaw(buf, ticks, trace.RunEnd, id, 0)
			ticks += 14 + uint64(rng.Intn(5))
			if i%500 == 499 { // the end of a burst: a pause
				ticks += 250_000 + uint64(rng.Intn(2500))
			}
			events += 2
		}
		flush()
	}
	return spans, events
}

// processCPU is the process's user and system CPU time: with the spans'
// rewriting stopped out of the timer it is the writer's, whichever
// goroutines did the work.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func appendRaw(b []byte, ticks uint64, k trace.Kind, args ...uint64) []byte {
	b = binary.LittleEndian.AppendUint64(b, ticks)
	b = binary.LittleEndian.AppendUint64(b, uint64(k)|uint64(len(args))<<8)
	for _, a := range args {
		b = binary.LittleEndian.AppendUint64(b, a)
	}
	return b
}

// benchHost serves the same spans every cycle, moved later in time by
// shift, with a TSC-like clock (0.4 ns per tick) whose sync point follows them.
type benchHost struct {
	fakeHost
	spans []Span
	next  int
	shift uint64
}

func (h *benchHost) SyncPoint() (uint64, int64) {
	t := h.shift + 200_000_000 // after the spans' last record
	return t, int64(t) * 2 / 5
}

// advance moves every record of the spans later by d ticks.
func (h *benchHost) advance(d uint64) {
	h.shift += d
	h.next = 0
	for _, s := range h.spans {
		for off := 0; off < len(s.Data); off += 16 + 8*int(s.Data[off+9]) {
			binary.LittleEndian.PutUint64(s.Data[off:], binary.LittleEndian.Uint64(s.Data[off:])+d)
		}
	}
}

func (h *benchHost) TakeFull() (Span, bool) {
	if h.next == len(h.spans) {
		return Span{}, false
	}
	h.next++
	return h.spans[h.next-1], true
}

func (h *benchHost) Release(Span) {}

// BenchmarkCycle is the writer's cost per event at the default settings
// (compression fastest), on one encoder so that ns/event is CPU per event:
// decode, delta-encode, compress and write one cycle of full buffers.
func BenchmarkCycle(b *testing.B) { benchCycle(b, 1) }

// BenchmarkCycle2 is the same with the runtime's two encoders (wall time).
func BenchmarkCycle2(b *testing.B) { benchCycle(b, 2) }

func benchCycle(b *testing.B, encoders int) {
	spans, events := benchSpans(2, 200_000)
	h := &benchHost{spans: spans}
	h.windows = map[int]bool{}
	tw, err := trace.NewWriter(io.Discard, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1},
		trace.WithConcurrency(encoders))
	if err != nil {
		b.Fatal(err)
	}
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Encoders: encoders})
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h.advance(1 << 30)
		b.StartTimer()
		c0 := processCPU()
		l.cycle(false, false)
		cpu += processCPU() - c0
	}
	if st := tw.Stats(); st.TotalEvents() != uint64(b.N*events) || st.Clamped != 0 || l.writeLost != 0 {
		b.Fatalf("%d events written, %d clamped, %d lost; want %d, 0, 0", st.TotalEvents(), st.Clamped, l.writeLost, b.N*events)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(events), "cpu-ns/event")
	b.ReportMetric(float64(tw.BytesWritten())/float64(b.N)/float64(events), "B/event")
}
