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
// by 2 per thread, from ticks on.
func benchSpans(threads, perThread int, ticks0 uint64) ([]Span, int) {
	const bufBytes = 1 << 20
	var spans []Span
	events := 0
	rng := rand.New(rand.NewSource(1))
	for th := 1; th <= threads; th++ {
		var corr uint64
		ticks := ticks0 + 1_000_000
		var enc trace.RawEncoder
		// Each buffer's first record gets a 10-byte delta (a longer
		// varint of the same value), so that advance can make it later in
		// place.
		buf := make([]byte, 0, bufBytes)
		counts := new([64]uint32)
		var last uint64
		flush := func() {
			spans = append(spans, Span{Data: padFirst(buf), Thread: uint32(th), Slot: uint32(len(spans)), Full: true,
				Counts: counts, LastTicks: last})
			buf = make([]byte, 0, bufBytes)
			enc = trace.RawEncoder{}
			counts = new([64]uint32)
		}
		add := func(k trace.Kind, args ...uint64) {
			if len(buf)+64 > bufBytes {
				flush()
			}
			buf, _ = enc.Append(buf, k, ticks, args...)
			counts[k]++
			last = ticks
			ticks += 14 + uint64(rng.Intn(5))
		}
		for i := 0; i < perThread; i++ {
			corr += 2
			id := uint64(th)<<40 | corr
			add(trace.RunBegin, id, uint64(1+th%4), 1, 1)
			add(trace.RunEnd, id, 0)
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

// benchHost serves the same records every cycle, moved later in time by
// shift, with a TSC-like clock (0.4 ns per tick) whose sync point follows
// them.
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

// advance moves every record of the spans later by d ticks: the first of
// each buffer, whose delta is from 0.
func (h *benchHost) advance(d uint64) {
	h.shift += d
	h.next = 0
	for i, s := range h.spans {
		if s.Offset == 0 { // a buffer's first span: its first record's delta is from 0
			h.spans[i].Data = shiftFirst(s.Data, d)
		}
		h.spans[i].LastTicks += d
	}
}

// padFirst returns the records with the first one's delta a 10-byte varint.
func padFirst(data []byte) []byte {
	delta, n := binary.Uvarint(data[1:])
	out := []byte{data[0]}
	for i := 0; i < 9; i++ {
		out = append(out, byte(delta)|0x80)
		delta >>= 7
	}
	out = append(out, byte(delta))
	return append(out, data[1+n:]...)
}

// shiftFirst returns the records of a buffer with the first record's delta
// (its ticks) d greater, in place: its delta is a 10-byte varint
// (padFirst).
func shiftFirst(data []byte, d uint64) []byte {
	delta, _ := binary.Uvarint(data[1:])
	delta += 2 * d // a zig-zag delta from 0: twice the ticks
	for i := 1; i < 10; i++ {
		data[i] = byte(delta) | 0x80
		delta >>= 7
	}
	data[10] = byte(delta)
	return data
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
// one cycle of whole buffers (compressed as they are: raw events chunks).
func BenchmarkCycle(b *testing.B) { benchCycle(b, 1, true) }

// BenchmarkCycleSpans is the same for spans that are not whole buffers
// (those of a flush): scanned (trace.ScanRaw), compressed and written.
func BenchmarkCycleSpans(b *testing.B) { benchCycle(b, 1, false) }

// BenchmarkCycleSpans2 is that with the runtime's two encoders (wall time).
func BenchmarkCycleSpans2(b *testing.B) { benchCycle(b, 2, false) }

func benchCycle(b *testing.B, encoders int, whole bool) {
	spans, events := benchSpans(2, 200_000, 0)
	if !whole {
		for i := range spans {
			spans[i].Counts = nil
		}
	}
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
