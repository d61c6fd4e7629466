package trace_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// threeThreads returns steady events of threads 0..2, n each.
func threeThreads(n int) [][]trace.Event {
	out := make([][]trace.Event, 3)
	for th := range out {
		g := tracetest.NewGen(uint64(th + 10))
		out[th] = make([]trace.Event, n)
		for i := range out[th] {
			g.Next(&out[th][i])
			out[th][i].Thread = uint32(th)
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	h := tracetest.Header()
	h.Unknown = []trace.HeaderField{{Tag: 1000, Value: []byte("from the future")}}
	w, err := trace.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDefs(tracetest.Defs()); err != nil {
		t.Fatal(err)
	}
	clock := []trace.ClockSync{{TSC: 100, Mono: tracetest.MonoStart}, {TSC: 2_450_000_100, Mono: tracetest.MonoStart + 1e9}}
	if err := w.WriteClock(clock); err != nil {
		t.Fatal(err)
	}
	threads := threeThreads(5000)
	batches := make([]*trace.Batch, 3)
	for th := range batches {
		batches[th] = w.Batch(uint32(th))
	}
	// Interleave batches of different sizes from the three threads.
	var want []trace.Event
	pos := make([]int, 3)
	for round := 0; ; round++ {
		progress := false
		for th, evs := range threads {
			n := 100 + 37*th + round%50
			end := min(pos[th]+n, len(evs))
			for _, e := range evs[pos[th]:end] {
				if err := batches[th].AddEvent(&e); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, evs[pos[th]:end]...)
			if end > pos[th] {
				progress = true
			}
			pos[th] = end
			if err := w.WriteBatch(batches[th]); err != nil {
				t.Fatal(err)
			}
		}
		if round == 3 {
			var s trace.Stats
			s.Dropped[trace.DropBufferFull] = 7
			if err := w.WriteStats(&s); err != nil {
				t.Fatal(err)
			}
		}
		if !progress {
			break
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	h.Major, h.Minor = trace.FormatMajor, trace.FormatMinor
	h.Kinds = trace.KindTable()
	if got := r.Header(); !reflect.DeepEqual(got, h) {
		t.Errorf("header:\n got %+v\nwant %+v", got, h)
	}
	var got []trace.Event
	var stats []*trace.Stats
	var gotClock []trace.ClockSync
	var defs int
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Type {
		case trace.RecordEvent:
			got = append(got, rec.Event)
		case trace.RecordDef:
			defs++
		case trace.RecordClock:
			gotClock = append(gotClock, rec.Clock...)
		case trace.RecordStats:
			stats = append(stats, rec.Stats)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, wrote %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if defs != len(tracetest.Defs()) {
		t.Errorf("read %d defs, wrote %d", defs, len(tracetest.Defs()))
	}
	if !reflect.DeepEqual(gotClock, clock) {
		t.Errorf("clock: got %v, want %v", gotClock, clock)
	}
	if len(stats) != 2 || stats[0].Final || !stats[1].Final {
		t.Fatalf("stats chunks: %+v", stats)
	}
	last := r.Stats()
	if last != stats[1] || !r.Complete() {
		t.Errorf("Stats() = %p, want the last stats chunk %p; Complete = %v", last, stats[1], r.Complete())
	}
	var kinds [trace.NumKindCounters]uint64
	var end int64
	for _, e := range want {
		kinds[e.Kind]++
		end = max(end, e.Time)
	}
	if last.Events != kinds || last.Dropped[trace.DropBufferFull] != 7 || last.End != end || last.Clamped != 0 {
		t.Errorf("final stats %+v; want events %v, 7 drops, end %d", last, kinds, end)
	}
	if last.Bytes == 0 || int64(last.Bytes) >= w.Offset() {
		t.Errorf("final stats bytes = %d, file is %d", last.Bytes, w.Offset())
	}

	d := r.Dict()
	for _, c := range []struct{ got, want string }{
		{d.String(tracetest.StrAxpy), "axpy"},
		{d.String(99), "string#99"},
		{d.String(0), ""},
		{d.Device(1).Name(), "CUDA:0"},
		{d.Device(2).Name(), "Serial"},
		{d.Device(9).Name(), "device#9"},
		{d.Kernel(1).Name, "axpy"},
		{strings.Join(d.Kernel(1).Tags, ","), "hot"},
		{d.Kernel(3).Source, "kernels.okl"},
		{d.Kernel(7).Name, "kernel#7"},
		{d.Memory(1).Tag, "x"},
		{d.Thread(1).Name, "worker"},
	} {
		if c.got != c.want {
			t.Errorf("dict: got %q, want %q", c.got, c.want)
		}
	}
	if k := d.Kernel(2); k.Device != 1 || k.PropertiesHash != 0xbeef {
		t.Errorf("kernel 2 = %+v", k)
	}
	if s := d.Stream(1); !s.Known || s.Device != 1 {
		t.Errorf("stream 1 = %+v", s)
	}
	if th := d.Thread(2); th.TID != 4244 {
		t.Errorf("thread 2 = %+v", th)
	}
	if m := d.Memory(1); !m.Known || d.MemoryDevice(1) != m.Device || m.Device == 0 || d.MemoryDevice(9) != 0 {
		t.Errorf("memory 1 = %+v, device %d; memory 9's device %d", m, d.MemoryDevice(1), d.MemoryDevice(9))
	}

	// ReadEvent sees the same events.
	r, _ = trace.NewReader(bytes.NewReader(buf.Bytes()))
	for i := range want {
		e, err := r.ReadEvent()
		if err != nil || e != want[i] {
			t.Fatalf("ReadEvent %d = %+v, %v; want %+v", i, e, err, want[i])
		}
	}
	if _, err := r.ReadEvent(); err != io.EOF {
		t.Fatalf("ReadEvent at the end = %v, want io.EOF", err)
	}
}

// TestArgValues round-trips extreme argument values of every kind.
func TestArgValues(t *testing.T) {
	vals := []uint64{0, 1, 2, 127, 128, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 62}
	var want []trace.Event
	tm := int64(5)
	for _, k := range trace.EventKinds() {
		for i, v := range vals {
			e := trace.Event{Kind: k, Time: tm}
			for j := range len(k.Spec().Args) {
				e.Args[j] = vals[(i+j)%len(vals)] ^ uint64(j)
			}
			if len(k.Spec().Args) > 0 {
				e.Args[0] = v
			}
			want = append(want, e)
			want = append(want, e) // twice: exercises the S and C flags
			if i%3 == 0 {
				tm += int64(v % 1e12)
			}
		}
	}
	// ArgTime values equal to the event's time, zero, and far away.
	for _, v := range []uint64{uint64(tm), 0, 1, math.MaxUint64, uint64(tm) + 1, uint64(tm) - 1, uint64(tm) + math.MaxInt64 + 1} {
		want = append(want, trace.Event{Kind: trace.DeviceTime, Time: tm, Args: [trace.MaxArgs]uint64{1, v, v}})
	}
	want = append(want, trace.Event{Kind: trace.Marker, Time: math.MaxInt64, Args: [trace.MaxArgs]uint64{1}})
	got := roundTrip(t, want, nil)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// roundTrip writes evs as one thread's batch and reads them back.
func roundTrip(t *testing.T, evs []trace.Event, check func(*trace.Writer)) []trace.Event {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	b := w.Batch(0)
	for i := range evs {
		if err := b.AddEvent(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	if check != nil {
		check(w)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []trace.Event
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
}

func TestClamp(t *testing.T) {
	evs := []trace.Event{
		{Kind: trace.Marker, Time: 100},
		{Kind: trace.Marker, Time: 90},
		{Kind: trace.Marker, Time: 120},
		{Kind: trace.Marker, Time: -5},
	}
	got := roundTrip(t, evs, func(w *trace.Writer) {
		if s := w.Stats(); s.Clamped != 2 {
			t.Errorf("Clamped = %d, want 2", s.Clamped)
		}
	})
	var times []int64
	for _, e := range got {
		times = append(times, e.Time)
	}
	if !reflect.DeepEqual(times, []int64{100, 100, 120, 120}) {
		t.Errorf("times = %v, want [100 100 120 120]", times)
	}
}

func TestBatchOrder(t *testing.T) {
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, tracetest.Header())
	// A reused batch carries its floor across writes.
	b := w.Batch(1)
	b.Add(trace.Marker, 200, 0)
	w.WriteBatch(b)
	b.Add(trace.Marker, 150, 0)
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	// So does a new batch for the same thread.
	b2 := w.Batch(1)
	b2.Add(trace.Marker, 100, 0)
	if err := w.WriteBatch(b2); err != nil {
		t.Fatal(err)
	}
	// Two batches of one thread filled independently, written out of order.
	x, y := w.Batch(2), w.Batch(2)
	x.Add(trace.Marker, 500, 0)
	y.Add(trace.Marker, 400, 0)
	if err := w.WriteBatch(x); err != nil {
		t.Fatal(err)
	}
	err := w.WriteBatch(y)
	want := "trace: thread 2: batch starts at 400 ns, before the thread's previous batch ended at 500 ns; write each thread's batches in time order"
	if err == nil || err.Error() != want {
		t.Errorf("out-of-order batch: got %v, want %q", err, want)
	}
	if s := w.Stats(); s.Clamped != 2 || s.Events[trace.Marker] != 4 {
		t.Errorf("stats = %+v, want 2 clamped, 4 markers", s)
	}
}

// ForgetThreads drops the ends of the threads whose last batch ended
// before the cut: a later batch of such a thread is no longer checked
// against it, while a thread that ended at or after the cut still is.
func TestForgetThreads(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc"})
	if err != nil {
		t.Fatal(err)
	}
	for th, at := range map[uint32]int64{1: 500, 2: 900} {
		b := w.Batch(th)
		b.Add(trace.Marker, at, 0)
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	w.ForgetThreads(900)
	for th, want := range map[uint32]string{1: "", 2: "before the thread's previous batch ended at 900 ns"} {
		b := trace.NewBatch(th, 0) // not raised to the thread's end, as w.Batch would
		b.Add(trace.Marker, 400, 0)
		err := w.WriteBatch(b)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("thread %d: a batch at 400 ns after the cut: %v, want %q", th, err, want)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	var buf bytes.Buffer
	if _, err := trace.NewWriter(&buf, tracetest.Header(), trace.WithLevel(9)); err == nil {
		t.Error("WithLevel(9) accepted")
	}
	if _, err := trace.NewWriter(&buf, tracetest.Header(), trace.WithConcurrency(0)); err == nil {
		t.Error("WithConcurrency(0) accepted")
	}
	w, _ := trace.NewWriter(&buf, tracetest.Header())
	b := w.Batch(0)
	for _, c := range []struct {
		err  error
		want string
	}{
		{b.Add(trace.DefString, 1, 1), "trace: Batch.Add: def_string is not a timed event kind"},
		{b.Add(trace.RunBegin, 1, 1, 2), "trace: Batch.Add: run_begin takes 4 arguments, got 2"},
		{b.Add(trace.Kind(60), 1), "trace: Batch.Add: kind(60) is not a timed event kind"},
		{w.WriteDefs([]trace.Def{{Kind: trace.RunBegin}}), "trace: WriteDefs: defs[0] has kind run_begin, not a definition kind"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
	w.Close()
	if err := w.WriteBatch(b); err == nil || err.Error() != "trace: write after Close" {
		t.Errorf("write after close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// A failing io.Writer sticks.
	fw := &failWriter{n: 30}
	w, err := trace.NewWriter(fw, tracetest.Header())
	if err == nil {
		err = w.WriteDefs(tracetest.Defs())
	}
	if err == nil || !errors.Is(err, errDiskFull) {
		t.Fatalf("got %v, want disk full", err)
	}
}

var errDiskFull = errors.New("disk full")

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

func TestLongString(t *testing.T) {
	long := strings.Repeat("é", trace.MaxString) // 2 bytes per rune
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, tracetest.Header())
	if err := w.WriteDefs([]trace.Def{{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{5}, Text: long}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, _ := trace.NewReader(&buf)
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Def.Text) != trace.MaxString || rec.Def.Text != long[:trace.MaxString] {
		t.Errorf("text is %d bytes, want the first %d", len(rec.Def.Text), trace.MaxString)
	}
}

func TestEventHelpers(t *testing.T) {
	e := trace.Event{Kind: trace.RunBegin, Args: [trace.MaxArgs]uint64{5, 2, 1, 0}}
	if v, ok := e.Arg("kernel"); !ok || v != 2 {
		t.Errorf("Arg(kernel) = %d, %v", v, ok)
	}
	if _, ok := e.Arg("bytes"); ok {
		t.Error("Arg(bytes) found on run_begin")
	}
	if c, ok := e.Corr(); !ok || c != 5 {
		t.Errorf("Corr = %d, %v", c, ok)
	}
	m := trace.Event{Kind: trace.Marker}
	if _, ok := m.Corr(); ok {
		t.Error("marker has a correlation id")
	}
	for _, l := range []string{"fastest", "default", "better", "best"} {
		lv, err := trace.ParseLevel(l)
		if err != nil || lv.String() != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l, lv, err)
		}
	}
	if _, err := trace.ParseLevel("max"); err == nil || err.Error() != `unknown compression level "max" (want fastest, default, better or best)` {
		t.Errorf("ParseLevel(max): %v", err)
	}
}

// TestParallelEncode compresses batches on four goroutines and appends them
// in order, as a runtime with a compression pool does (run with -race).
func TestParallelEncode(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header(), trace.WithConcurrency(4))
	if err != nil {
		t.Fatal(err)
	}
	threads := threeThreads(3000)
	var batches []*trace.Batch
	var want []trace.Event
	for th, evs := range threads {
		for i := 0; i < len(evs); i += 500 {
			b := trace.NewBatch(uint32(th), 0)
			for k := i; k < i+500; k++ {
				b.AddEvent(&evs[k])
			}
			batches = append(batches, b)
			want = append(want, evs[i:i+500]...)
		}
	}
	errs := make(chan error, len(batches))
	sem := make(chan struct{}, 4)
	for _, b := range batches {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := w.EncodeBatch(b)
			errs <- err
		}()
	}
	for range batches {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range batches {
		if err := w.WriteEncoded(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := trace.NewReader(&buf)
	for i := range want {
		e, err := r.ReadEvent()
		if err != nil || e != want[i] {
			t.Fatalf("event %d = %+v, %v; want %+v", i, e, err, want[i])
		}
	}
	if _, err := r.ReadEvent(); err != io.EOF {
		t.Fatal(err)
	}
	if r.Stats().TotalEvents() != uint64(len(want)) {
		t.Errorf("stats count %d events, want %d", r.Stats().TotalEvents(), len(want))
	}
}
