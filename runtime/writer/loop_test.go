package writer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/formats/trace"
)

// fakeHost plays the C runtime: queued full spans, live partial spans, and
// definitions, with the same contracts as ot_host_t.
type fakeHost struct {
	mu        sync.Mutex
	full      []Span
	partial   []Span // returned once each by TakePartial
	pending   bool   // the first partial has a full predecessor still queued
	defs      []byte
	released  []Span
	ticks     uint64
	windows   map[int]bool
	requested uint64
	done      uint64
	stopped   bool
	critical  []string
	// time windows: thresholds set by WindowTime
	thresholds map[int][2]uint64
}

func (h *fakeHost) Wait(time.Duration) Wake {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.requested > h.done {
		return WakeFlush
	}
	if len(h.full) > 0 {
		return WakeWork
	}
	return WakeTimeout
}

func (h *fakeHost) TakeFull() (Span, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.full) == 0 {
		return Span{}, false
	}
	s := h.full[0]
	h.full = h.full[1:]
	h.pending = false
	return s, true
}

func (h *fakeHost) TakePartial(cursor *uint32) (Span, Partial) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if int(*cursor) >= len(h.partial) {
		return Span{}, PartialDone
	}
	if h.pending {
		return Span{}, PartialDrainFull
	}
	s := h.partial[*cursor]
	*cursor++
	return s, PartialSpan
}

func (h *fakeHost) Release(s Span) {
	h.mu.Lock()
	h.released = append(h.released, s)
	h.mu.Unlock()
}

func (h *fakeHost) TakeDefs(dst []byte, tryOnly bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := copy(dst, h.defs)
	h.defs = h.defs[n:]
	return n
}

func (h *fakeHost) SyncPoint() (uint64, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ticks += 1000
	return h.ticks, int64(h.ticks)
}

func (h *fakeHost) Counters() Counters                       { return Counters{} }
func (h *fakeHost) SignalToggle(uint64) (uint64, bool, bool) { return 0, false, false }
func (h *fakeHost) WindowSet(w int, open bool)               { h.windows[w] = open }
func (h *fakeHost) WindowTime(w int, from, to uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.thresholds == nil {
		h.thresholds = map[int][2]uint64{}
	}
	h.thresholds[w] = [2]uint64{from, to}
}
func (h *fakeHost) BudgetExhausted() {}
func (h *fakeHost) RequestFlush() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requested++
	return h.requested
}
func (h *fakeHost) FlushRequested() uint64 { h.mu.Lock(); defer h.mu.Unlock(); return h.requested }
func (h *fakeHost) FlushDone(seq uint64)   { h.mu.Lock(); h.done = seq; h.mu.Unlock() }
func (h *fakeHost) FinalRequested() uint64 { return 0 }
func (h *fakeHost) RearmSignals()          {}
func (h *fakeHost) StopForGood()           { h.stopped = true }
func (h *fakeHost) Critical(k trace.Kind, n uint64, msg string) {
	h.critical = append(h.critical, msg)
}

type nopOutput struct{}

func (nopOutput) Sync() error  { return nil }
func (nopOutput) Close() error { return nil }

// A thread's full buffer queued behind its live one is written first, the
// definitions come before the events that use them, and shutdown closes
// the trace with final stats.
func TestLoopOrderAndShutdown(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
	h.defs = append(rawDef(trace.DefString, "axpy", 1), rawDef(trace.DefKernel, "", 1, 0, 1, 0, 0)...)
	var full rawBuffer
	for i := uint64(0); i < 3; i++ { // older events, in the queued full buffer
		full.add(20_000+i*10, trace.RunBegin, i+1, 1, 0, 0)
		full.add(20_005+i*10, trace.RunEnd, i+1, 0)
	}
	live := rawRecord(30_000, trace.Marker, 1)
	h.full = []Span{{Data: full.data, Thread: 1, Slot: 0, Full: true}}
	h.partial = []Span{{Data: live, Thread: 1, Slot: 1}}
	h.pending = true

	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Start: time.Now()})
	l.Start()
	l.Shutdown()
	if !h.stopped {
		t.Error("StopForGood was not called")
	}
	if len(h.released) != 2 || !h.released[0].Full || h.released[1].Full {
		t.Errorf("released %d spans: %+v", len(h.released), h.released)
	}

	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []trace.Kind
	sawDef := false
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Type {
		case trace.RecordDef:
			sawDef = true
		case trace.RecordEvent:
			if !sawDef {
				t.Fatal("an event came before the definitions")
			}
			kinds = append(kinds, rec.Event.Kind)
			if rec.Event.Kind == trace.RunBegin && r.Dict().Kernel(rec.Event.Args[1]).Name != "axpy" {
				t.Errorf("kernel name %q", r.Dict().Kernel(rec.Event.Args[1]).Name)
			}
		}
	}
	want := []trace.Kind{trace.RunBegin, trace.RunEnd, trace.RunBegin, trace.RunEnd, trace.RunBegin, trace.RunEnd, trace.Marker}
	if len(kinds) != len(want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds = %v, want %v", kinds, want)
		}
	}
	if !r.Complete() {
		t.Error("trace has no final stats")
	}
}

// A time window without delay is open from Start (from tick 0), with no
// Trigger event; one with a delay is shut until its threshold.
func TestLoopTimeWindowOpenAtStart(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}}
	var buf bytes.Buffer
	tw, _ := trace.NewWriter(&buf, &trace.Header{Rank: -1, WorldSize: -1})
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Start: time.Now(),
		TimeWindows: []TimeWindow{{Index: 2, Duration: time.Hour}, {Index: 3, Delay: time.Hour}}})
	l.Start()
	h.mu.Lock()
	two, three := h.thresholds[2], h.thresholds[3]
	h.mu.Unlock()
	near := func(v uint64) bool { return v > uint64(time.Hour-time.Second) && v < uint64(time.Hour+time.Second) }
	if two[0] != 0 || !near(two[1]) || !near(three[0]) || three[1] != noEdge {
		t.Errorf("thresholds after Start: window 2 %v, 3 %v; want [0, ~1h] and [~1h, never] (clock at %d)", two, three, h.ticks)
	}
	if len(h.windows) != 0 {
		t.Errorf("windows retired at Start: %v", h.windows)
	}
	l.Shutdown()
	if tw.Stats().Events[trace.Trigger] != 0 {
		t.Errorf("%d trigger events", tw.Stats().Events[trace.Trigger])
	}
}

// clockHost runs a TSC at 2 ticks a nanosecond whose time the test moves.
type clockHost struct {
	fakeHost
	mono int64
}

func (h *clockHost) SyncPoint() (uint64, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mono += 1000
	return uint64(2 * h.mono), h.mono
}

// A time window's thresholds sit at its nominal edges on the tick clock,
// whenever the writer runs, and its Triggers are stamped at them: an event
// is in the window by its own ticks, and the Triggers convert as the events
// around them do.
func TestLoopTimeWindowThresholds(t *testing.T) {
	h := &clockHost{mono: 1_000_000_000}
	h.windows = map[int]bool{}
	var buf bytes.Buffer
	tw, _ := trace.NewWriter(&buf, &trace.Header{Rank: -1, WorldSize: -1})
	start := time.Now()
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Start: start,
		TimeWindows: []TimeWindow{{Index: 1, Delay: 100 * time.Millisecond, Duration: 150 * time.Millisecond}}})
	startMono := l.twin[0].openAt - int64(100*time.Millisecond)
	l.startTimeWindows()
	th := h.thresholds[1]
	wantFrom, wantTo := uint64(2*(startMono+100e6)), uint64(2*(startMono+250e6))
	if th[0] != wantFrom || th[1] != wantTo {
		t.Fatalf("thresholds %v, want [%d, %d)", th, wantFrom, wantTo)
	}
	// The writer runs late (a loaded machine): 300 ms after the start, past
	// both edges at once. Both Triggers come, at the edges.
	h.mono = startMono + 300e6
	l.cycle(false, false)
	if got := h.thresholds[1]; got != th {
		t.Errorf("thresholds moved to %v after the edges passed", got)
	}
	if open, ok := h.windows[1]; !ok || open {
		t.Errorf("window retired = %v, %v; want retired shut", open, ok)
	}
	l.finish(false)
	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		e, err := r.ReadEvent()
		if err != nil {
			break
		}
		if e.Kind == trace.Trigger {
			got = append(got, fmt.Sprintf("%d@%d", e.Args[1], e.Time))
		}
	}
	want := []string{fmt.Sprintf("%d@%d", trace.TriggerOpen, startMono+100e6), fmt.Sprintf("%d@%d", trace.TriggerClose, startMono+250e6)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("triggers (action@ns) %v, want %v", got, want)
	}
}

// chunkLog is the trace file: at each chunk written it notes how many spans
// the writer had released (decoded) by then.
type chunkLog struct {
	h        *fakeHost
	released []int
}

func (c *chunkLog) Write(p []byte) (int, error) {
	c.h.mu.Lock()
	c.released = append(c.released, len(c.h.released))
	c.h.mu.Unlock()
	return len(p), nil
}

// A backlog of full buffers is streamed: the first events chunk reaches the
// file after the first span, or with two encoders after at most the three
// spans in flight, not after the whole cycle has been compressed, and every
// span's events follow in order.
func TestLoopStreamsABacklog(t *testing.T) {
	const spans = 12
	for _, encoders := range []int{1, 2} {
		h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
		for i := uint64(0); i < spans; i++ {
			data := rawRecord(20_000+i*10, trace.Marker, i+1)
			h.full = append(h.full, Span{Data: data, Thread: 1, Slot: uint32(i), Full: true})
		}
		out := &chunkLog{h: h}
		// At a zstd level: spans are copied into batches, which the
		// encoders compress (at fastest they are written raw, at once).
		tw, err := trace.NewWriter(out, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1},
			trace.WithConcurrency(encoders), trace.WithLevel(trace.LevelDefault))
		if err != nil {
			t.Fatal(err)
		}
		out.released = nil // the file header
		l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Encoders: encoders})
		l.cycle(false, false)
		if len(out.released) != spans {
			t.Fatalf("encoders %d: %d chunks written, want %d (one per span)", encoders, len(out.released), spans)
		}
		if first := out.released[0]; first > encoders+1 {
			t.Errorf("encoders %d: the first chunk was written after %d of %d spans were decoded, want <= %d",
				encoders, first, spans, encoders+1)
		}
		if got := tw.Stats().Events[trace.Marker]; got != spans {
			t.Errorf("encoders %d: %d markers written, want %d", encoders, got, spans)
		}
		l.stopEncoders()
	}
}

// lateFlushHost has a flush requested just after Wait returned for a full
// buffer: the flush is only done once the live buffers are written too.
type lateFlushHost struct {
	fakeHost
	once       bool
	doneBefore int // spans released when the flush was reported done
}

func (h *lateFlushHost) Wait(d time.Duration) Wake {
	h.mu.Lock()
	first := !h.once
	h.once = true
	h.mu.Unlock()
	if first {
		h.RequestFlush() // arrives after Wait decided WakeWork
		return WakeWork
	}
	time.Sleep(time.Millisecond)
	return h.fakeHost.Wait(d)
}

func (h *lateFlushHost) FlushDone(seq uint64) {
	h.mu.Lock()
	if h.doneBefore < 0 {
		h.doneBefore = len(h.released)
	}
	h.done = seq
	h.mu.Unlock()
}

func TestLoopFlushRequestedDuringWake(t *testing.T) {
	h := &lateFlushHost{doneBefore: -1}
	h.windows = map[int]bool{}
	h.full = []Span{{Data: rawRecord(20_000, trace.Marker, 1), Thread: 1, Slot: 0, Full: true}}
	h.partial = []Span{{Data: rawRecord(20_010, trace.Marker, 2), Thread: 2, Slot: 1}}
	var buf bytes.Buffer
	tw, _ := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1})
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Start: time.Now()})
	l.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		done := h.done
		h.mu.Unlock()
		if done > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	l.Shutdown()
	if h.doneBefore != 2 {
		t.Errorf("the flush was reported done with %d of 2 spans written (the live buffer's was left for later)", h.doneBefore)
	}
}

// Once it holds many, the loop forgets the floors of the threads idle for
// floorHorizon, and the trace writer their ends: a program that makes a
// thread per task grew both for ever. A thread that records again keeps
// its floor, and its events are written.
func TestLoopForgetsIdleThreads(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Start: time.Now()})
	const threads = 2000
	for th := uint32(1); th <= threads; th++ {
		h.full = append(h.full, Span{Data: rawRecord(20_000+uint64(th), trace.Marker, 1), Thread: th, Slot: th, Full: true})
	}
	l.cycle(true, false)
	if len(l.floor) != threads {
		t.Fatalf("%d floors after %d threads recorded, want all of them", len(l.floor), threads)
	}
	h.mu.Lock()
	h.ticks += uint64(2 * floorHorizon)
	again := h.ticks + 500
	h.mu.Unlock()
	h.full = []Span{{Data: rawRecord(again, trace.Marker, 1), Thread: 7, Slot: 0, Full: true}}
	l.cycle(true, false)
	if _, ok := l.floor[7]; len(l.floor) != 1 || !ok {
		t.Errorf("%d floors after the others were idle for %v, want thread 7's only", len(l.floor), 2*floorHorizon)
	}
	if s := tw.Stats(); s.Events[trace.Marker] != threads+1 {
		t.Errorf("%d markers written, want %d", s.Events[trace.Marker], threads+1)
	}
}
