package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// rawBuffer is one thread's buffer of raw records and where each ends.
type rawBuffer struct {
	enc  trace.RawEncoder
	data []byte
	ends []int
}

func (r *rawBuffer) add(t testing.TB, k trace.Kind, ticks uint64, args ...uint64) {
	t.Helper()
	var err error
	if r.data, err = r.enc.Append(r.data, k, ticks, args...); err != nil {
		t.Fatal(err)
	}
	r.ends = append(r.ends, len(r.data))
}

// rawRoundTrip adds the buffer's records to batches in spans that end at
// the given record ends, one batch per span as the runtime's writer does
// (and more where a batch fills), writes them and checks that they read
// back as exactly want.
func rawRoundTrip(t *testing.T, c *tickClock, data []byte, cuts []int, want []trace.Event) {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	var st trace.RawState
	from, batches := 0, 0
	for _, to := range append(cuts, len(data)) {
		span := data[from:to]
		from = to
		for len(span) > 0 {
			b := w.Batch(0)
			n, err := b.AddRaw(span, &st, &c.fc)
			if err != nil && !errors.Is(err, trace.ErrBatchFull) {
				t.Fatal(err)
			}
			span = span[n:]
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			batches++
		}
	}
	closeAndCompare(t, w, &buf, want, fmt.Sprintf("the events of %d batches", batches))
}

// closeAndCompare closes w, whose bytes are in buf, and checks that they
// read back as exactly want.
func closeAndCompare(t *testing.T, w *trace.Writer, buf *bytes.Buffer, want []trace.Event, what string) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := readEvents(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events as %s, want %d", len(got), what, len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d of %s: got %+v\nwant %+v", i, what, got[i], want[i])
		}
	}
}

// TestAddRaw encodes the generator's events as raw records in ticks (some
// later than Fast maps, some earlier than their predecessor, DROPPED's
// "since" in ticks too), cuts the buffer into spans at random record ends,
// and reads back exactly the events converted: the batches start afresh
// where the buffer's state goes on.
func TestAddRaw(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		g := tracetest.NewGen(uint64(seed))
		rng := rand.New(rand.NewSource(seed))
		c := newTickClock()
		var r rawBuffer
		var want []trace.Event
		ticks := uint64(5)
		for i := 0; i < 20000; i++ {
			var e trace.Event
			g.Next(&e)
			if e.Kind.IsDef() || e.Kind.Spec() == nil {
				continue
			}
			ticks += uint64(1 + i%7)
			if i%1000 == 999 {
				ticks += uint64(rng.Intn(1 << 20)) // a long pause: a 3-byte delta
			}
			if i == 12000 {
				ticks += 3 << 30 // past Fast's segment
			}
			stamp := ticks
			if i%500 == 7 {
				stamp -= 3 // earlier than the one before: clamped
			}
			e.Thread = 0
			raw := e
			if e.Kind == trace.Dropped {
				raw.Args[2] = ticks - 3
				e.Args[2] = uint64(c.exact(ticks - 3))
			}
			r.add(t, e.Kind, stamp, raw.Args[:len(e.Kind.Spec().Args)]...)
			e.Time = c.exact(stamp)
			if len(want) > 0 && e.Time < want[len(want)-1].Time {
				e.Time = want[len(want)-1].Time
			}
			want = append(want, e)
		}
		var cuts []int
		for _, end := range r.ends[:len(r.ends)-1] {
			if rng.Intn(300) == 0 {
				cuts = append(cuts, end)
			}
		}
		rawRoundTrip(t, c, r.data, cuts, want)
		if c.slows == 0 {
			t.Fatal("no slow conversions, want some")
		}
	}
}

// TestAddRawCopies: a steady stream (a run's begin and end, the same
// kernel, correlation ids counting up) is copied, not re-encoded: the
// batch holds the records with each delta in ns in place of the ticks,
// so its encoded size follows theirs.
func TestAddRawCopies(t *testing.T) {
	c := newTickClock()
	var r rawBuffer
	var want []trace.Event
	ticks := uint64(100)
	for i := range 10000 {
		corr := 1<<40 | uint64(2*i+3)
		r.add(t, trace.RunBegin, ticks, corr, 7, 1, 2)
		want = append(want, trace.Event{Kind: trace.RunBegin, Time: c.exact(ticks), Args: [trace.MaxArgs]uint64{corr, 7, 1, 2}})
		ticks += 20
		r.add(t, trace.RunEnd, ticks, corr, 0)
		want = append(want, trace.Event{Kind: trace.RunEnd, Time: c.exact(ticks), Args: [trace.MaxArgs]uint64{corr, 0}})
		ticks += 25
	}
	rawRoundTrip(t, c, r.data, []int{r.ends[1], r.ends[5001]}, want)

	w, err := trace.NewWriter(io.Discard, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	b := w.Batch(0)
	var st trace.RawState
	if n, err := b.AddRaw(r.data, &st, &c.fc); n != len(r.data) || err != nil {
		t.Fatalf("AddRaw = %d, %v; want %d, nil", n, err, len(r.data))
	}
	// Raw: head and a 1-byte delta (20 or 25 ticks; the first 100) per
	// event, a 1-byte correlation delta per begin; the first begin has a
	// 6-byte correlation id and its 3 other arguments. In the batch the
	// deltas are 8 and 10 ns, and the first is 0: the same size.
	if len(r.data) != 20000*2+9999+(6+3) || b.Size() != len(r.data) {
		t.Fatalf("%d raw bytes, %d in the batch", len(r.data), b.Size())
	}
}

// TestAddRawOneArgChanges encodes, for every timed kind, records that
// differ from the kind's previous one in exactly one argument, each
// position in turn, with a span ending after each: the S flag must never
// cover a changed argument, nor a C flag a changed correlation id, in the
// buffer or in the batch.
func TestAddRawOneArgChanges(t *testing.T) {
	c := newTickClock()
	var r rawBuffer
	want := oneArgChanges(t, c, func(ticks uint64, e *trace.Event) {
		r.add(t, e.Kind, ticks, e.Args[:len(e.Kind.Spec().Args)]...)
	})
	rawRoundTrip(t, c, r.data, r.ends[:len(r.ends)-1], want)
	rawRoundTrip(t, c, r.data, nil, want)
}

// TestAddRawBatchFull fills batches one after another from one span, at
// the chunk's limit and at a smaller one (SetMax): each AddRaw stops at a
// record boundary with ErrBatchFull, every batch but the last is as full as
// its limit lets it be, and every event is in exactly one batch.
func TestAddRawBatchFull(t *testing.T) {
	c := newTickClock()
	var r rawBuffer
	const n = 1_500_000 // a new name each time, so no S flag: over one batch's 8 MiB
	for i := range n {
		r.add(t, trace.Marker, uint64(100+i), uint64(i)<<20)
	}
	for _, limit := range []int{0, 16 << 10} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) { addRawBatches(t, c, r.data, n, limit) })
	}
}

func addRawBatches(t *testing.T, c *tickClock, data []byte, n, limit int) {
	w, err := trace.NewWriter(io.Discard, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	var st trace.RawState
	total, batches := 0, 0
	for off := 0; off < len(data); {
		b := w.Batch(0)
		if limit > 0 {
			b.SetMax(limit)
		}
		m, err := b.AddRaw(data[off:], &st, &c.fc)
		if limit > 0 && (b.Size() > limit+trace.MaxEventBytes || err != nil && b.Size() < limit) {
			t.Fatalf("a batch limited to %d bytes holds %d (%v)", limit, b.Size(), err)
		}
		if err != nil && !errors.Is(err, trace.ErrBatchFull) {
			t.Fatal(err)
		}
		if (m == len(data)-off) != (err == nil) {
			t.Fatalf("AddRaw consumed %d of %d bytes with %v", m, len(data)-off, err)
		}
		off += m
		total += b.Len()
		batches++
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	if total != n || batches < 2 || w.Stats().Events[trace.Marker] != uint64(n) {
		t.Fatalf("%d events in %d batches, %d written; want %d in at least 2", total, batches, w.Stats().Events[trace.Marker], n)
	}
}

// TestAddRawMalformed: a malformed record stops AddRaw with an error that
// names its offset and what is wrong; the records before it are in the
// batch, and the state is theirs.
func TestAddRawMalformed(t *testing.T) {
	c := newTickClock()
	var good rawBuffer
	good.add(t, trace.Marker, 10, 4)
	cases := []struct {
		name string
		bad  []byte
		err  string
	}{
		{"definition kind", []byte{64 & 0x3f, 2}, "malformed raw record at byte 3: kind 0 is not a timed event kind"},
		{"unknown kind", []byte{63, 2}, "malformed raw record at byte 3: kind 63 is not a timed event kind"},
		{"cut delta", []byte{byte(trace.Marker), 0x80}, "malformed raw record at byte 3: the time delta is cut short"},
		{"cut argument", []byte{byte(trace.Marker), 2, 0x85}, "malformed raw record at byte 3: argument 0 is cut short"},
		{"S without arguments it covers", []byte{byte(trace.Fork) | 0x40, 2}, "malformed raw record at byte 3: kind 25 has the S flag but no arguments it covers"},
		{"C without a correlation id", []byte{byte(trace.Marker) | 0x80, 2, 5}, "malformed raw record at byte 3: kind 22 has the C flag but no correlation id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := trace.NewWriter(io.Discard, tracetest.Header())
			if err != nil {
				t.Fatal(err)
			}
			b := w.Batch(0)
			var st trace.RawState
			n, err := b.AddRaw(append(append([]byte(nil), good.data...), tc.bad...), &st, &c.fc)
			if n != len(good.data) || err == nil || !errors.Is(err, trace.ErrRaw) || !strings.HasPrefix(err.Error(), tc.err) || b.Len() != 1 {
				t.Fatalf("AddRaw = %d, %v with %d events; want %d, %q with 1", n, err, b.Len(), len(good.data), tc.err)
			}
			// The state is the good record's: it goes on from there.
			more, _ := (&good.enc).Append(nil, trace.Marker, 12, 4)
			if n, err := b.AddRaw(more, &st, &c.fc); n != len(more) || err != nil || b.Len() != 2 {
				t.Fatalf("after the error, AddRaw = %d, %v with %d events", n, err, b.Len())
			}
		})
	}
}

// FuzzAddRaw: any bytes, cut anywhere, never panic AddRaw; what it accepts
// reads back as exactly the events that decoding each record alone (the
// slow path, no copying) gives, converted, clamped and in order.
// addRawSeeds adds the raw fuzzers' seeds: records of several kinds with
// S and C flags, a tick argument, a time earlier than the one before and a
// long delta, cut after the third byte; and a record with an 11-byte delta.
func addRawSeeds(f *testing.F) {
	var r rawBuffer
	r.add(f, trace.RunBegin, 100, 1<<40|3, 7, 1, 2)
	r.add(f, trace.RunEnd, 120, 1<<40|3, 0)
	r.add(f, trace.Dropped, 130, 5, 1, 90)
	r.add(f, trace.RunBegin, 160, 1<<40|5, 7, 1, 2)
	r.add(f, trace.RunEnd, 150, 1<<40|5, 0)
	r.add(f, trace.RunBegin, 190, 1<<40|9, 7, 1, 2)
	r.add(f, trace.Marker, 3<<30, 9)
	f.Add(r.data, uint16(3))
	f.Add([]byte{byte(trace.Marker), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1}, uint16(0))
}

func FuzzAddRaw(f *testing.F) {
	addRawSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		// The reference: each record of each span decoded alone, until
		// the first error.
		ref := newTickClock()
		var want []trace.Event
		var rst trace.RawState
		at := min(int(cut), len(data))
		for off, end := 0, at; off < len(data); {
			if off == end {
				end = len(data)
			}
			k, ticks, args, size, err := trace.DecodeRawRecord(data[off:end], &rst)
			if err != nil {
				break
			}
			e := trace.Event{Kind: k, Time: ref.exact(ticks)}
			copy(e.Args[:], args)
			if k == trace.Dropped { // "since" is in ticks
				e.Args[2] = uint64(ref.exact(e.Args[2]))
			}
			if n := len(want); n > 0 && e.Time < want[n-1].Time || e.Time < 0 {
				e.Time = 0
				if n > 0 {
					e.Time = want[n-1].Time
				}
			}
			want = append(want, e)
			off += size
		}

		c := newTickClock()
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, tracetest.Header())
		if err != nil {
			t.Fatal(err)
		}
		var st trace.RawState
	spans:
		for _, span := range [][]byte{data[:at], data[at:]} {
			for len(span) > 0 {
				b := w.Batch(0)
				n, err := b.AddRaw(span, &st, &c.fc)
				span = span[n:]
				if err := w.WriteBatch(b); err != nil {
					t.Fatal(err)
				}
				if err != nil && !errors.Is(err, trace.ErrBatchFull) {
					if !errors.Is(err, trace.ErrRaw) {
						t.Fatalf("error %v does not wrap ErrRaw", err)
					}
					break spans
				}
			}
		}
		closeAndCompare(t, w, &buf, want, "AddRaw's batches against each record decoded alone")
	})
}

// rawChunkBuffer is one buffer of a thread for TestRawChunk: its records,
// what the writer is told of them, and the events they read back as.
type rawChunkBuffer struct {
	rawBuffer
	counts [64]uint32
	last   uint64 // ticks of the latest record
}

// TestRawChunk writes whole buffers of raw records as raw events chunks
// (Batch.SetRaw) between events chunks of the same thread, and reads back
// exactly the events the records hold: times converted through the sync
// points of the clock chunks written before (a TickClock of the same
// points is the reference), clamped to stay in time order within a chunk
// and after the thread's earlier chunks, DROPPED's "since" converted as a
// tick argument, a chunk of over 1 MiB of records.
// The stats count the events the writer was told of, by kind.
func TestRawChunk(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	ref := trace.NewTickClock(false)
	syncs := []trace.ClockSync{{TSC: 1000, Mono: 5_000_000}, {TSC: 5_000_001_000, Mono: 2_005_000_000}, {TSC: 9_000_001_000, Mono: 3_605_000_007}}
	for _, s := range syncs {
		ref.Add(s.TSC, s.Mono)
	}
	if err := w.WriteClock(syncs); err != nil {
		t.Fatal(err)
	}
	var tickArgs [64]uint8
	tickArgs[trace.Dropped] = 1 << 2
	var want []trace.Event
	var wantCounts [64]uint64
	end := int64(0) // thread 3's latest event time so far
	emit := func(e trace.Event) {
		e.Thread = 3
		e.Time = max(e.Time, end)
		end = e.Time
		want = append(want, e)
		wantCounts[e.Kind]++
	}
	// generated: n generator events from ticks on, some earlier than the
	// one before.
	generated := func(seed uint64, ticks uint64, n int) *rawChunkBuffer {
		g := tracetest.NewGen(seed)
		r := &rawChunkBuffer{}
		for i := 0; len(r.ends) < n; i++ {
			var e trace.Event
			g.Next(&e)
			if e.Kind.IsDef() || e.Kind.Spec() == nil {
				continue
			}
			ticks += uint64(1 + i%9)
			stamp := ticks
			if i%300 == 11 {
				stamp -= 5
			}
			raw := e
			if e.Kind == trace.Dropped {
				raw.Args[2] = ticks - 3
				e.Args[2] = uint64(ref.Nanos(ticks - 3))
			}
			r.add(t, e.Kind, stamp, raw.Args[:len(e.Kind.Spec().Args)]...)
			r.counts[e.Kind]++
			r.last = max(r.last, stamp)
			e.Time = ref.Nanos(stamp)
			emit(e)
		}
		return r
	}
	// writeRaw writes the buffer as two raw chunks, cut at a record in its
	// middle: the second starts from the state ScanRaw leaves after the
	// first, as the runtime's writer writes a buffer taken in two spans.
	// ScanRaw's counts add up to the buffer's.
	writeRaw := func(r *rawChunkBuffer) {
		cut := r.ends[len(r.ends)/2]
		var st trace.RawState
		var total [64]uint32
		for _, span := range [][]byte{r.data[:cut], r.data[cut:]} {
			start := st
			var counts [64]uint32
			if n, err := trace.ScanRaw(span, &st, &counts); n != len(span) || err != nil {
				t.Fatalf("ScanRaw = %d, %v; want %d, nil", n, err, len(span))
			}
			b := w.Batch(3)
			if err := b.SetRaw(span, &tickArgs, &start, &counts, ref.Nanos(st.Ticks())); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			for k, c := range counts {
				total[k] += c
			}
		}
		if total != r.counts {
			t.Fatalf("ScanRaw counted %v, the buffer holds %v", total, r.counts)
		}
	}
	writeRaw(generated(1, 2000, 5000))
	// An events chunk of the same thread, after the raw chunk's end.
	b := w.Batch(3)
	for i := range 10 {
		at := end + int64(i)
		if err := b.Add(trace.Marker, at, 7); err != nil {
			t.Fatal(err)
		}
		emit(trace.Event{Kind: trace.Marker, Time: at, Args: [trace.MaxArgs]uint64{7}})
	}
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	// A buffer that starts before the thread's end (another CPU's clock):
	// its first events are clamped by the reader.
	writeRaw(generated(2, 1_000_000, 5000))
	// A steady stream of over 1 MiB: 3 B a record.
	r := &rawChunkBuffer{}
	ticks := uint64(8_000_000_000)
	for i := range 400_000 {
		corr := uint64(1<<20 + i)
		r.add(t, trace.RunBegin, ticks, corr, 7, 1, 2)
		r.counts[trace.RunBegin]++
		emit(trace.Event{Kind: trace.RunBegin, Time: ref.Nanos(ticks), Args: [trace.MaxArgs]uint64{corr, 7, 1, 2}})
		ticks += 300
	}
	r.last = ticks - 300
	if len(r.data) < 1<<20 {
		t.Fatalf("the steady buffer is %d bytes, want over 1 MiB", len(r.data))
	}
	writeRaw(r)
	closeAndCompare(t, w, &buf, want, "the events of 3 raw chunks and an events chunk")
	_, rd, err := readEvents(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.Stats().Events[:64]; !reflect.DeepEqual(got, wantCounts[:]) {
		t.Errorf("stats count %v events by kind, want %v", got, wantCounts)
	}
	if rd.Chunks() != 9 || rd.RawChunks() != 6 { // clock, 3 × 2 raw, 1 events, stats
		t.Errorf("%d chunks read intact, %d of them raw; want 9 and 6", rd.Chunks(), rd.RawChunks())
	}
}

// FuzzScanRaw: ScanRaw over any bytes, in two spans cut anywhere, consumes
// exactly the records that decoding one at a time accepts (up to the
// first malformed one), counts them by kind, and leaves the same state.
func FuzzScanRaw(f *testing.F) {
	addRawSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		at := min(int(cut), len(data))
		var want trace.RawState
		var wantCounts [64]uint32
		wantN := 0
		for off, end := 0, at; off < len(data); {
			if off == end {
				end = len(data)
			}
			k, _, _, size, err := trace.DecodeRawRecord(data[off:end], &want)
			if err != nil {
				break
			}
			wantCounts[k]++
			off += size
			wantN = off
		}
		var st trace.RawState
		var counts [64]uint32
		got := 0
		for _, span := range [][]byte{data[:at], data[at:]} {
			n, err := trace.ScanRaw(span, &st, &counts)
			got += n
			if err != nil {
				if !errors.Is(err, trace.ErrRaw) {
					t.Fatalf("error %v does not wrap ErrRaw", err)
				}
				break
			}
		}
		if got != wantN || counts != wantCounts || !reflect.DeepEqual(st, want) {
			t.Fatalf("ScanRaw consumed %d bytes, counted %v; decoding one at a time %d, %v; states equal %v",
				got, counts, wantN, wantCounts, reflect.DeepEqual(st, want))
		}
	})
}
