package trace

// Varint helpers tuned for the hot paths: the writer appends into a slice it
// has already grown, the reader decodes with a one-byte fast path. Both follow
// encoding/binary's uvarint (FORMAT.md, introduction).

// putUvarint writes v at b[i:] and returns the index after it. The caller
// guarantees 10 bytes of room.
func putUvarint(b []byte, i int, v uint64) int {
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// uvarint decodes a uvarint from b[i:]. ok is false when b ends inside the
// varint or the varint is longer than 10 bytes or overflows 64 bits. Its
// one-byte case is inlined into the decoders, the rest is a call.
func uvarint(b []byte, i int) (v uint64, next int, ok bool) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1, true
	}
	return uvarintLong(b, i)
}

//go:noinline
func uvarintLong(b []byte, i int) (v uint64, next int, ok bool) {
	var s uint
	for n := 0; n < 10; n++ {
		if i >= len(b) {
			return 0, i, false
		}
		c := b[i]
		i++
		if c < 0x80 {
			if n == 9 && c > 1 {
				return 0, i, false
			}
			return v | uint64(c)<<s, i, true
		}
		v |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, i, false
}

// appendUvarint and appendVarint serve the cold paths (header, defs, stats).
func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarint(b []byte, v int64) []byte { return appendUvarint(b, zigzag(v)) }

// encodeTime and decodeTime implement ArgTime (FORMAT.md §5): 0 stays 0,
// other values are deltas to the event's time, with the value equal to the
// event's time swapped with 0 so that every uint64 round-trips.
func encodeTime(v uint64, t int64) uint64 {
	if v == 0 {
		return 0
	}
	if v == uint64(t) {
		return zigzag(-t)
	}
	return zigzag(int64(v - uint64(t)))
}

func decodeTime(code uint64, t int64) uint64 {
	if code == 0 {
		return 0
	}
	v := uint64(unzigzag(code)) + uint64(t)
	if v == 0 {
		return uint64(t)
	}
	return v
}
