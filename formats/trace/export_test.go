package trace

import "encoding/binary"

// Test hooks: exported names that exist only in this package's tests.

// WithKindTable makes a Writer encode with descs and store them as its kind
// table instead of KindTable(): a stand-in for a newer writer.
func WithKindTable(descs []KindDesc) WriterOption {
	return func(o *writerOptions) error {
		o.kinds = descs
		return nil
	}
}

// AppendKindTable encodes descs as the value of the kinds header field,
// unchecked, so tests can make broken tables.
var AppendKindTable = appendKindTable

// TagKinds is the header tag of the kind table.
const TagKinds = tagKinds

// DecodeRawRecord decodes the raw record at the start of data after the
// records st has seen, by the slow path alone: kind, ticks, the arguments
// and the record's size.
func DecodeRawRecord(data []byte, st *RawState) (Kind, uint64, []uint64, int, error) {
	rec, size, err := decodeRaw(compiledTab, data, st, nil)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	args := make([]uint64, rec[9])
	for j := range args {
		args[j] = binary.LittleEndian.Uint64(rec[flatHeader+8*j:])
	}
	return Kind(rec[8]), binary.LittleEndian.Uint64(rec), args, size, nil
}
