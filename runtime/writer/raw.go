package writer

import (
	"encoding/binary"
	"fmt"

	"github.com/libocca/occa-tools/formats/trace"
)

// Raw records and definitions are the C runtime's in-memory layout
// (runtime/src/ot_internal.h), little-endian on every platform we build for.

const (
	rawHeader  = 16
	rawMaxArgs = 6
)

// rawArgs is the argument count of each event kind a raw record may carry,
// -1 for the others, so that the per-record check is one table load.
var rawArgs = func() (t [256]int8) {
	for k := range t {
		t[k] = -1
		if s := trace.Kind(k).Spec(); s != nil && !trace.Kind(k).IsDef() && len(s.Args) <= rawMaxArgs {
			t[k] = int8(len(s.Args))
		}
	}
	return t
}()

// rawReader walks the raw records of one span. A malformed record (a
// runtime bug, never user input) ends the span with err set; the records
// before it are kept.
type rawReader struct {
	data []byte
	off  int
	n    int // records returned
	err  error
	args [rawMaxArgs]uint64
}

// next returns the next record: its kind, raw ticks and arguments (valid
// until the next call); ok is false at the end of the span or at a
// malformed record.
func (r *rawReader) next() (k trace.Kind, ticks uint64, args []uint64, ok bool) {
	data, off := r.data, r.off
	if off >= len(data) {
		return 0, 0, nil, false
	}
	if len(data)-off < rawHeader {
		r.err = fmt.Errorf("raw record at byte %d: %d bytes left, header needs %d", off, len(data)-off, rawHeader)
		return 0, 0, nil, false
	}
	rec := data[off:]
	ticks = binary.LittleEndian.Uint64(rec)
	k = trace.Kind(rec[8])
	nargs := int(rec[9])
	size := rawHeader + 8*nargs
	if nargs > rawMaxArgs || len(rec) < size {
		r.err = fmt.Errorf("raw record at byte %d: kind %d with %d arguments does not fit", off, k, nargs)
		return 0, 0, nil, false
	}
	if int(rawArgs[k]) != nargs {
		if rawArgs[k] < 0 {
			r.err = fmt.Errorf("raw record at byte %d: unknown kind %d", off, k)
		} else {
			r.err = fmt.Errorf("raw record at byte %d: kind %d has %d arguments, not %d", off, k, nargs, rawArgs[k])
		}
		return 0, 0, nil, false
	}
	for i := 0; i < nargs; i++ {
		r.args[i] = binary.LittleEndian.Uint64(rec[rawHeader+8*i:])
	}
	r.off = off + size
	r.n++
	return k, ticks, r.args[:nargs], true
}

// toNanos converts a record's tick times to CLOCK_MONOTONIC ns: its own
// time, and the arguments that are the runtime's ticks (DROPPED.since;
// DEVICE_TIME's come from the source in monotonic ns already).
func toNanos(clock *Clock, k trace.Kind, ticks uint64, args []uint64) int64 {
	if k == trace.Dropped {
		args[2] = uint64(clock.Nanos(args[2]))
	}
	return clock.Nanos(ticks)
}

// decodeDefs converts the C definition queue's entries.
func decodeDefs(data []byte, defs []trace.Def) ([]trace.Def, error) {
	for off := 0; off < len(data); {
		if len(data)-off < 8 {
			return defs, fmt.Errorf("definition at byte %d: truncated header", off)
		}
		kind := trace.Kind(data[off])
		nargs := int(data[off+1])
		textLen := int(binary.LittleEndian.Uint32(data[off+4:]))
		size := 8 + 8*nargs + (textLen+7)&^7
		if !kind.IsDef() || nargs > trace.MaxArgs || size > len(data)-off {
			return defs, fmt.Errorf("definition at byte %d: kind %d with %d arguments and %d text bytes does not fit", off, kind, nargs, textLen)
		}
		d := trace.Def{Kind: kind}
		for i := 0; i < nargs; i++ {
			d.Args[i] = binary.LittleEndian.Uint64(data[off+8+8*i:])
		}
		if textLen > 0 {
			start := off + 8 + 8*nargs
			d.Text = string(data[start : start+textLen])
		}
		defs = append(defs, d)
		off += size
	}
	return defs, nil
}
