package writer

import (
	"encoding/binary"
	"fmt"

	"github.com/libocca/occa-tools/formats/trace"
)

// Definitions come from the C runtime's queue in its in-memory layout
// (runtime/src/ot_internal.h), little-endian on every platform we build
// for. Its event records are raw records (formats/trace/raw.go).

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
