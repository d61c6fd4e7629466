package writer

import (
	"encoding/binary"
	"strings"
	"testing"

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

type rec struct {
	k    trace.Kind
	t    int64
	args []uint64
}

func decodeAll(t *testing.T, data []byte) ([]rec, error) {
	t.Helper()
	var out []rec
	c := NewClock(true)
	r := rawReader{data: data}
	for {
		k, ticks, args, ok := r.next()
		if !ok {
			break
		}
		tm := toNanos(c, k, ticks, args)
		out = append(out, rec{k, tm, append([]uint64(nil), args...)})
	}
	return out, r.err
}

func TestDecodeSpan(t *testing.T) {
	var data []byte
	data = append(data, rawRecord(100, trace.RunBegin, 7, 1, 2, 0)...)
	data = append(data, rawRecord(150, trace.RunEnd, 7, 0)...)
	data = append(data, rawRecord(200, trace.Dropped, 12, trace.DropBufferFull, 90)...)
	data = append(data, rawRecord(210, trace.Fork)...)
	got, err := decodeAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].k != trace.RunBegin || got[0].t != 100 || got[0].args[3] != 0 ||
		got[1].args[0] != 7 || got[2].args[2] != 90 || got[3].k != trace.Fork || len(got[3].args) != 0 {
		t.Errorf("decoded %+v", got)
	}
}

func TestDecodeSpanBroken(t *testing.T) {
	good := rawRecord(1, trace.Marker, 3)
	cases := []struct {
		data []byte
		want string
		n    int
	}{
		{append(append([]byte{}, good...), 1, 2, 3), "raw record at byte 24: 3 bytes left, header needs 16", 1},
		{rawRecord(1, trace.Kind(60), 1), "raw record at byte 0: unknown kind 60", 0},
		{rawRecord(1, trace.DefString, 1), "raw record at byte 0: unknown kind 64", 0},
		{func() []byte { b := rawRecord(1, trace.Marker, 3); b[9] = 7; return b }(), "raw record at byte 0: kind 22 with 7 arguments does not fit", 0},
	}
	for _, c := range cases {
		got, err := decodeAll(t, c.data)
		if err == nil || err.Error() != c.want || len(got) != c.n {
			t.Errorf("err = %v (%d records), want %q (%d)", err, len(got), c.want, c.n)
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
