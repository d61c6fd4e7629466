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

// decodeSpan converts the raw records of one span into events of batch b.
// A malformed record (a runtime bug, never user input) stops the span with
// an error; the records before it are kept.
func decodeSpan(data []byte, clock *Clock, add func(k trace.Kind, t int64, args []uint64)) (int, error) {
	var args [rawMaxArgs]uint64
	n := 0
	for off := 0; off < len(data); {
		if len(data)-off < rawHeader {
			return n, fmt.Errorf("raw record at byte %d: %d bytes left, header needs %d", off, len(data)-off, rawHeader)
		}
		ticks := binary.LittleEndian.Uint64(data[off:])
		kind := trace.Kind(data[off+8])
		nargs := int(data[off+9])
		size := rawHeader + 8*nargs
		if nargs > rawMaxArgs || len(data)-off < size {
			return n, fmt.Errorf("raw record at byte %d: kind %d with %d arguments does not fit", off, kind, nargs)
		}
		spec := kind.Spec()
		if spec == nil || kind.IsDef() {
			return n, fmt.Errorf("raw record at byte %d: unknown kind %d", off, kind)
		}
		for i := 0; i < nargs; i++ {
			args[i] = binary.LittleEndian.Uint64(data[off+rawHeader+8*i:])
		}
		t := clock.Nanos(ticks)
		// Time arguments: DEVICE_TIME's come from the source in monotonic
		// ns already; the runtime's own (DROPPED.since) are ticks.
		if kind == trace.Dropped && nargs == 3 {
			args[2] = uint64(clock.Nanos(args[2]))
		}
		add(kind, t, args[:nargs])
		n++
		off += size
	}
	return n, nil
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
