package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"reflect"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// appendFlat appends e as a flat record stamped ticks.
func appendFlat(b []byte, ticks uint64, e *trace.Event) []byte {
	n := len(e.Kind.Spec().Args)
	b = binary.LittleEndian.AppendUint64(b, ticks)
	b = append(b, byte(e.Kind), byte(n), 0, 0, 0, 0, 0, 0)
	for _, a := range e.Args[:n] {
		b = binary.LittleEndian.AppendUint64(b, a)
	}
	return b
}

// tickClock is 0.4 ns per tick from tick 0 at ns 1000, exact: Fast
// covers 1<<30 ticks from its start, so later ticks go through Slow (which
// moves Fast to start there, as the writer's Clock moves it), and DROPPED's
// "since" is in ticks.
type tickClock struct {
	fc    trace.FlatClock
	slows int
}

func newTickClock() *tickClock {
	c := &tickClock{}
	frac, _ := bits.Div64(2, 0, 5) // 0.4 in 64-bit fixed point
	c.fc.Fast = &trace.Linear{From: 0, Mono: 1000, Span: 1 << 30, Frac: frac}
	c.fc.Slow = func(ticks uint64) int64 {
		c.slows++
		base := ticks - ticks%5 // whole ns: the segment stays exact
		*c.fc.Fast = trace.Linear{From: base, Mono: c.exact(base), Span: 1 << 30, Frac: frac}
		return c.exact(ticks)
	}
	c.fc.TickArgs[trace.Dropped] = 1 << 2
	return c
}

func (c *tickClock) exact(ticks uint64) int64 {
	hi, lo := bits.Mul64(ticks, 2)
	q, _ := bits.Div64(hi, lo, 5)
	return 1000 + int64(q)
}

// TestAddFlat encodes the generator's events as flat records in ticks
// (some of them later than Fast maps, DROPPED's "since" in ticks too) and
// reads back exactly the events converted.
func TestAddFlat(t *testing.T) {
	g := tracetest.NewGen(7)
	c := newTickClock()
	var data []byte
	var want []trace.Event
	ticks := uint64(5)
	for i := 0; i < 20000; i++ {
		var e trace.Event
		g.Next(&e)
		if e.Kind.IsDef() || e.Kind.Spec() == nil {
			continue
		}
		ticks += uint64(1 + i%7)
		if i == 12000 {
			ticks += 3 << 30 // past Fast's segment
		}
		e.Thread = 0
		raw := e
		if e.Kind == trace.Dropped {
			raw.Args[2] = ticks - 3
			e.Args[2] = uint64(c.exact(ticks - 3))
		}
		data = appendFlat(data, ticks, &raw)
		e.Time = c.exact(ticks)
		want = append(want, e)
	}

	flatRoundTrip(t, c, data, want)
	if c.slows == 0 {
		t.Fatal("no slow conversions, want some")
	}
}

// TestAddFlatOneArgChanges encodes, for every timed kind, records that
// differ from the kind's previous one in exactly one argument, each
// position in turn: the S flag must never cover a changed argument, nor a
// C flag a changed correlation id.
func TestAddFlatOneArgChanges(t *testing.T) {
	c := newTickClock()
	var data []byte
	want := oneArgChanges(t, c, func(ticks uint64, e *trace.Event) { data = appendFlat(data, ticks, e) })
	flatRoundTrip(t, c, data, want)
}

// oneArgChanges makes, for every timed kind but DROPPED, events 3 ticks
// apart that differ from the kind's previous one in exactly one argument,
// each position in turn (each twice, so that the second is the same as
// the first), gives each to add with its ticks, and returns them as they
// read back.
func oneArgChanges(t *testing.T, c *tickClock, add func(ticks uint64, e *trace.Event)) []trace.Event {
	t.Helper()
	var want []trace.Event
	ticks := uint64(5)
	emit := func(e trace.Event) {
		ticks += 3
		add(ticks, &e)
		e.Time = c.exact(ticks)
		want = append(want, e)
	}
	kinds := 0
	for k := trace.Kind(1); k < 64; k++ {
		s := k.Spec()
		if s == nil || k.IsDef() || k == trace.Dropped || len(s.Args) > trace.MaxArgs {
			continue
		}
		kinds++
		e := trace.Event{Kind: k}
		for j := range s.Args {
			e.Args[j] = uint64(1000*j + 7)
		}
		emit(e)
		emit(e)
		for j := range s.Args {
			e.Args[j]++
			emit(e)
			emit(e)
		}
	}
	if kinds < 10 {
		t.Fatalf("only %d kinds tested", kinds)
	}
	return want
}

// flatRoundTrip adds data to a batch with AddFlat, writes it and checks
// that it reads back as exactly want.
func flatRoundTrip(t *testing.T, c *tickClock, data []byte, want []trace.Event) {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	b := w.Batch(0)
	if n, err := b.AddFlat(data, &c.fc); err != nil || n != len(data) {
		t.Fatalf("AddFlat = %d, %v; want %d, nil", n, err, len(data))
	}
	if b.Len() != len(want) {
		t.Fatalf("batch holds %d events, want %d", b.Len(), len(want))
	}
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := readEvents(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d: got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestAddFlatBatchFull fills batches one after another from one span: each
// AddFlat stops at a record boundary with ErrBatchFull, and every event is
// in exactly one batch.
func TestAddFlatBatchFull(t *testing.T) {
	c := newTickClock()
	var data []byte
	e := trace.Event{Kind: trace.Marker}
	const n = 1_500_000 // about 7 bytes each: over one batch's 8 MiB
	for i := range n {
		e.Args[0] = uint64(i) << 20 // a new name each time: no S flag
		data = appendFlat(data, uint64(100+i), &e)
	}
	w, err := trace.NewWriter(io.Discard, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	total, batches := 0, 0
	for off := 0; off < len(data); {
		b := w.Batch(0)
		m, err := b.AddFlat(data[off:], &c.fc)
		if err != nil && !errors.Is(err, trace.ErrBatchFull) {
			t.Fatal(err)
		}
		if (m == len(data)-off) != (err == nil) || m%24 != 0 {
			t.Fatalf("AddFlat consumed %d of %d bytes with %v", m, len(data)-off, err)
		}
		off += m
		total += b.Len()
		batches++
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	if total != n || batches < 2 || w.Stats().Events[trace.Marker] != n {
		t.Fatalf("%d events in %d batches, %d written; want %d in at least 2", total, batches, w.Stats().Events[trace.Marker], n)
	}
}

// TestAddFlatMalformed: a malformed record stops AddFlat with an error that
// names its offset; the records before it are in the batch.
func TestAddFlatMalformed(t *testing.T) {
	c := newTickClock()
	marker := trace.Event{Kind: trace.Marker, Args: [trace.MaxArgs]uint64{4}}
	good := appendFlat(nil, 10, &marker)
	cases := []struct {
		name string
		bad  []byte
		err  string
	}{
		{"short header", []byte{1, 2, 3}, "malformed flat record at byte 24: 3 bytes left, a header needs 16"},
		{"definition kind", appendFlat(nil, 11, &trace.Event{Kind: trace.Kind(64)})[:16], "malformed flat record at byte 24: kind 64 is not a timed event kind"},
		{"unknown kind", append(binary.LittleEndian.AppendUint64(nil, 11), 63, 0, 0, 0, 0, 0, 0, 0), "malformed flat record at byte 24: kind 63 is not a timed event kind"},
		{"wrong count", append(binary.LittleEndian.AppendUint64(nil, 11), byte(trace.Marker), 2, 0, 0, 0, 0, 0, 0), "malformed flat record at byte 24: kind 22 has 1 arguments, not 2"},
		{"cut arguments", appendFlat(nil, 11, &marker)[:20], "malformed flat record at byte 24: kind 22 with 1 arguments does not fit in the 20 bytes left"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := trace.NewWriter(io.Discard, tracetest.Header())
			if err != nil {
				t.Fatal(err)
			}
			b := w.Batch(0)
			n, err := b.AddFlat(append(append([]byte(nil), good...), tc.bad...), &c.fc)
			if n != len(good) || err == nil || !errors.Is(err, trace.ErrFlat) || !strings.HasPrefix(err.Error(), tc.err) || b.Len() != 1 {
				t.Fatalf("AddFlat = %d, %v with %d events; want %d, %q with 1", n, err, b.Len(), len(good), tc.err)
			}
		})
	}
}
