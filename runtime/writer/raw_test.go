package writer

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/formats/trace"
)

// rawRecord encodes one record as the C runtime does.
func rawRecord(ticks uint64, k trace.Kind, args ...uint64) []byte {
	b := make([]byte, 16+8*len(args))
	binary.LittleEndian.PutUint64(b, ticks)
	b[8] = byte(k)
	b[9] = byte(len(args))
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// A malformed record (a runtime bug) ends its span: the records before it
// are written, the span is released, the error is logged once, and the
// next span is written whole.
func TestLoopSkipsMalformedRecord(t *testing.T) {
	h := &fakeHost{windows: map[int]bool{}, ticks: 10_000}
	bad := append(rawRecord(20_000, trace.Marker, 1), rawRecord(20_010, trace.Marker, 2)...)
	bad[24+9] = 5 // the second record claims 5 arguments
	bad = append(bad, rawRecord(20_020, trace.Marker, 3)...)
	h.full = []Span{{Data: bad, Thread: 1, Slot: 0, Full: true}, {Data: rawRecord(20_030, trace.Marker, 4), Thread: 2, Slot: 1, Full: true}}
	var buf, log bytes.Buffer
	tw, err := trace.NewWriter(&buf, &trace.Header{ClockSource: "tsc", Rank: -1, WorldSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := New(h, tw, nopOutput{}, Options{FlushInterval: time.Hour, Log: zerolog.New(&log), Start: time.Now()})
	l.Start()
	l.Shutdown()
	if len(h.released) != 2 {
		t.Errorf("released %d spans, want 2", len(h.released))
	}
	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var names []uint64
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == trace.Marker {
			names = append(names, e.Args[0])
		}
	}
	if !slices.Equal(names, []uint64{1, 4}) {
		t.Errorf("markers %v written, want [1 4]", names)
	}
	if n := strings.Count(log.String(), "bad raw record"); n != 1 || !strings.Contains(log.String(), "malformed flat record at byte 24: kind 22 has 1 arguments, not 5") {
		t.Errorf("log has %d lines on the bad record, want 1 naming it:\n%s", n, log.String())
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
