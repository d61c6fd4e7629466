package writer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/formats/trace"
)

// rawBuffer builds a thread's buffer of raw records as the C runtime
// writes them.
type rawBuffer struct {
	enc  trace.RawEncoder
	data []byte
}

func (r *rawBuffer) add(ticks uint64, k trace.Kind, args ...uint64) *rawBuffer {
	var err error
	if r.data, err = r.enc.Append(r.data, k, ticks, args...); err != nil {
		panic(err)
	}
	return r
}

// rawRecord is a buffer of one record.
func rawRecord(ticks uint64, k trace.Kind, args ...uint64) []byte {
	return new(rawBuffer).add(ticks, k, args...).data
}

// A malformed record (a runtime bug) ends its span and its buffer: the
// records before it are written, the span is released, the error is logged
// once, a later span of that buffer is skipped, and the next buffer is
// written whole.
func TestLoopSkipsMalformedRecord(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
	bad := new(rawBuffer).add(20_000, trace.Marker, 1).add(20_010, trace.Marker, 2).add(20_020, trace.Marker, 3).data
	second := len(rawRecord(20_000, trace.Marker, 1))
	bad[second] = 63 // the second record's kind is not one
	h.full = []Span{{Data: rawRecord(20_030, trace.Marker, 4), Thread: 2, Slot: 1, Full: true}}
	h.partial = []Span{
		{Data: bad, Thread: 1, Slot: 0},
		{Data: []byte{byte(trace.Marker), 2, 5}, Offset: uint32(len(bad)), Thread: 1, Slot: 0},
	}
	buf, log := runToShutdown(t, h)
	if len(h.released) != 3 {
		t.Errorf("released %d spans, want 3", len(h.released))
	}
	names, _ := readMarkers(t, buf.Bytes())
	if !slices.Equal(names, []uint64{4, 1}) {
		t.Errorf("markers %v written, want [4 1]", names)
	}
	if n := strings.Count(log.String(), "bad raw record"); n != 1 || !strings.Contains(log.String(), fmt.Sprintf("malformed raw record at byte %d: kind 63 is not a timed event kind", second)) {
		t.Errorf("log has %d lines on the bad record, want 1 naming it:\n%s", n, log.String())
	}
}

// A whole buffer whose counts cannot be its records' (a runtime bug) is
// copied like any other span: every record is in the trace, and the log
// says so once.
func TestLoopCopiesAWholeBufferWithBadCounts(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
	data := new(rawBuffer).add(20_000, trace.Marker, 1).add(20_010, trace.Marker, 2).add(20_020, trace.Marker, 3).data
	var counts [64]uint32
	counts[trace.Marker] = uint32(len(data)) + 1 // more events than bytes
	h.full = []Span{{Data: data, Thread: 1, Slot: 0, Full: true, Counts: &counts, LastTicks: 20_020}}
	buf, log := runToShutdown(t, h)
	names, r := readMarkers(t, buf.Bytes())
	if !slices.Equal(names, []uint64{1, 2, 3}) || r.RawChunks() != 0 || r.Stats().Events[trace.Marker] != 3 {
		t.Errorf("markers %v written, %d raw chunks, stats count %d; want [1 2 3], 0, 3", names, r.RawChunks(), r.Stats().Events[trace.Marker])
	}
	if n := strings.Count(log.String(), "copied instead"); n != 1 || len(h.released) != 1 {
		t.Errorf("%d log lines on the counts, %d spans released; want 1 and 1:\n%s", n, len(h.released), log.String())
	}
}

// runToShutdown runs a loop on h until Shutdown and returns the trace it
// wrote and its log.
func runToShutdown(t *testing.T, h Host) (file, log *bytes.Buffer) {
	t.Helper()
	file, log = new(bytes.Buffer), new(bytes.Buffer)
	tw, err := trace.NewWriter(file, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.New(log), Start: time.Now()})
	l.Start()
	l.Shutdown()
	return file, log
}

// readMarkers reads a trace and returns the string ids of its markers, in
// order, and the reader at its end.
func readMarkers(t *testing.T, data []byte) ([]uint64, *trace.Reader) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var names []uint64
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			return names, r
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == trace.Marker {
			names = append(names, e.Args[0])
		}
	}
}

func rawDef(k trace.Kind, text string, args ...uint64) []byte {
	b := make([]byte, 8+8*len(args)+(len(text)+7)&^7)
	b[0] = byte(k)
	b[1] = byte(len(args))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(text)))
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[8+8*i:], a)
	}
	copy(b[8+8*len(args):], text)
	return b
}

func TestDecodeDefs(t *testing.T) {
	data := append(rawDef(trace.DefString, "axpy", 5), rawDef(trace.DefKernel, "", 1, 2, 5, 0, 42)...)
	defs, err := decodeDefs(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 2 || defs[0].Text != "axpy" || defs[0].Args[0] != 5 || defs[1].Kind != trace.DefKernel || defs[1].Args[4] != 42 {
		t.Errorf("defs = %+v", defs)
	}
	_, err = decodeDefs(rawDef(trace.RunBegin, "", 1), nil)
	if err == nil || !strings.Contains(err.Error(), "definition at byte 0: kind 11") {
		t.Errorf("err = %v", err)
	}
	_, err = decodeDefs(rawDef(trace.DefString, "abc", 1)[:12], nil)
	if err == nil {
		t.Error("a cut definition decoded")
	}
}

// A live buffer taken in spans over several cycles, then full, is decoded
// across them: each span goes on from the state its predecessor left (the
// deltas, correlation ids and S flags of the buffer's records), though
// each starts a new batch, and the events read back exactly.
func TestLoopContinuesABuffer(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
	var r rawBuffer
	var ends []int
	for i := uint64(0); i < 30; i++ {
		r.add(20_000+i*10, trace.RunBegin, 1<<40|(2*i+1), 1+i%2, 1, 1)
		r.add(20_005+i*10, trace.RunEnd, 1<<40|(2*i+1), 0)
		ends = append(ends, len(r.data))
	}
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Start: time.Now()})
	cuts := []int{0, ends[0], ends[9], ends[20], len(r.data)}
	for i := 1; i < len(cuts); i++ {
		s := Span{Data: r.data[cuts[i-1]:cuts[i]], Offset: uint32(cuts[i-1]), Thread: 1, Slot: 3}
		if i == len(cuts)-1 {
			s.Full = true
			h.full = []Span{s}
		} else {
			h.partial = []Span{s}
		}
		l.cycle(true, false)
		h.partial = nil
	}
	if len(l.buffers) != 0 {
		t.Errorf("%d buffer states kept after the buffer was full, want 0", len(l.buffers))
	}
	r2, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var evs []trace.Event
	for {
		e, err := r2.ReadEvent()
		if err == io.EOF || errors.Is(err, trace.ErrNoFinalStats) { // the loop was not shut down
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Thread == 1 {
			evs = append(evs, e)
		}
	}
	if len(evs) != 60 {
		t.Fatalf("%d events read, want 60", len(evs))
	}
	for i, e := range evs {
		n := uint64(i / 2)
		if e.Args[0] != 1<<40|(2*n+1) || (i%2 == 0 && (e.Kind != trace.RunBegin || e.Args[1] != 1+n%2)) || (i%2 == 1 && e.Kind != trace.RunEnd) {
			t.Fatalf("event %d: %v %v", i, e.Kind, e.Args)
		}
	}
}

// The same buffers read back as exactly the same events however the
// writer writes them: copied into events chunks (at a zstd level, where the
// writer converts the ticks), as whole buffers (raw events chunks, which
// the reader converts through the clock chunks), scanned (raw chunks the
// writer counts itself), each taken in two spans (the second a raw chunk
// that starts from the state the first left), or whole and scanned in
// turn (the reader's time floor after a raw chunk is the writer's). Three
// cycles with a sync point each, so that buffers cross clock segments.
func TestLoopWritesSpansAlike(t *testing.T) {
	spans, events := benchSpans(3, 30_000, 0)
	read := func(mode string) []trace.Event {
		h := &benchHost{}
		h.windows = map[int]bool{}
		for i, s := range spans {
			s.Data = slices.Clone(s.Data)
			switch {
			case mode == "scanned", mode == "mixed" && i%2 == 1:
				s.Counts = nil
			case mode == "split":
				var st trace.RawState
				var counts [64]uint32
				cut, _ := trace.ScanRaw(s.Data[:len(s.Data)/2], &st, &counts) // the last whole record
				h.spans = append(h.spans, Span{Data: s.Data[:cut], Thread: s.Thread, Slot: s.Slot})
				s = Span{Data: s.Data[cut:], Offset: uint32(cut), Thread: s.Thread, Slot: s.Slot, Full: true}
			}
			h.spans = append(h.spans, s)
		}
		level := trace.LevelFastest
		if mode == "copied" {
			level = trace.LevelDefault
		}
		var buf bytes.Buffer
		tw, err := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1}, trace.WithLevel(level))
		if err != nil {
			t.Fatal(err)
		}
		l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.Nop(), Encoders: 2})
		for range 3 {
			h.advance(1 << 28)
			l.cycle(false, false)
		}
		l.stopEncoders()
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var evs []trace.Event
		for {
			e, err := r.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			evs = append(evs, e)
		}
		wantRaw := 3 * len(h.spans)
		if mode == "copied" {
			wantRaw = 0
		}
		if r.RawChunks() != wantRaw || r.Stats().TotalEvents() != uint64(3*events) || r.Stats().Clamped != 0 {
			t.Fatalf("%s: %d raw chunks, %d events counted, %d clamped; want %d, %d, 0", mode, r.RawChunks(),
				r.Stats().TotalEvents(), r.Stats().Clamped, wantRaw, 3*events)
		}
		return evs
	}
	want := read("copied")
	if len(want) != 3*events {
		t.Fatalf("%d events read, want %d", len(want), 3*events)
	}
	for _, mode := range []string{"whole", "scanned", "split", "mixed"} {
		got := read(mode)
		if len(got) != len(want) {
			t.Fatalf("%s: %d events, want %d", mode, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: event %d = %+v, want %+v", mode, i, got[i], want[i])
			}
		}
	}
}
