package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Flat records are the fixed-layout events a producer writes into memory it
// shares with its writer: the runtime's per-thread buffers
// (runtime/src/ot_internal.h). Each is, little-endian:
//
//	time   8 bytes   the producer's clock ticks
//	kind   1 byte    a timed kind of kinds.go
//	nargs  1 byte    the kind's argument count
//	pad    6 bytes
//	args   nargs × 8 bytes, in kinds.go order
//
// AddFlat encodes them without a call per event: it is the traced
// program's writer's inner loop.
const flatHeader = 16

// Linear maps a producer's ticks to CLOCK_MONOTONIC ns on one segment of
// its clock: ticks From+x, 0 <= x < Span, map to Mono + x*Q + x*Frac/2^64
// rounded down. Span 0 maps nothing.
type Linear struct {
	From    uint64
	Mono    int64
	Span    uint64
	Q, Frac uint64
}

// Nanos converts ticks; ok is false outside the segment, or where the
// fixed-point fraction carries and only an exact division gives the result.
func (l *Linear) Nanos(ticks uint64) (ns int64, ok bool) {
	x := ticks - l.From
	if ticks < l.From || x >= l.Span {
		return 0, false
	}
	hi, lo := bits.Mul64(x, l.Frac)
	if lo+x < lo {
		return 0, false
	}
	return l.Mono + int64(x*l.Q+hi), true
}

// FlatClock converts a producer's ticks: Fast first, Slow for the ticks
// Fast does not map. Slow may move Fast to another segment.
type FlatClock struct {
	Fast *Linear
	Slow func(ticks uint64) int64
	// TickArgs[k] has bit j set when argument j of kind k is in ticks too
	// (an ArgTime the producer stamped with its own clock).
	TickArgs [maxEventKind + 1]uint8
}

// ErrFlat is wrapped by AddFlat's errors about a malformed record.
var ErrFlat = errors.New("malformed flat record")

// AddFlat appends the flat records at the start of data and returns how
// many bytes it consumed: all of data, or less when the batch is full
// (ErrBatchFull: write it and go on with the rest) or a record is malformed
// (an error wrapping ErrFlat that names the record's offset in data; the
// records before it are in the batch).
//
// It is the only event encoder (FORMAT.md §5): Add passes it one record.
// The batch's running state stays in locals for the whole span, and the
// common event (its other arguments as before, its correlation id the
// expected one) takes no loop over its arguments' types.
func (b *Batch) AddFlat(data []byte, clock *FlatClock) (int, error) {
	if b.encoded {
		return 0, errors.New("trace: Batch.Add after EncodeBatch: write the batch first")
	}
	tab := b.tab
	buf := b.raw[:cap(b.raw)]
	i := len(b.raw)
	last, corr, count := b.last, b.corr, b.n
	off := 0
	for off+flatHeader <= len(data) && i < maxBatchRaw {
		if len(buf)-i < maxFlatEvent {
			buf = growBatch(buf, i)
		}
		rec := data[off:]
		ticks := binary.LittleEndian.Uint64(rec)
		k := Kind(rec[8] & kindMask)
		n := int(rec[9])
		ki := &tab[k]
		size := flatHeader + 8*n
		if rec[8] > maxEventKind || !ki.valid || int(ki.n) != n || len(rec) < size {
			break
		}
		t, ok := clock.Fast.Nanos(ticks)
		if !ok {
			t = clock.Slow(ticks)
		}
		if t < last {
			t = last
			b.clamped++
		}
		delta := uint64(t - last)
		if count == 0 {
			b.base, delta = t, 0
		}
		last = t
		count++
		b.counts[k]++

		// prev keeps every argument: the correlation and time slots are
		// never compared, and the others are equal to it when same holds.
		prev := &b.prev[k]
		args := rec[flatHeader:size]
		if clock.TickArgs[k] != 0 {
			var conv [8 * MaxArgs]byte
			args = clock.convertArgs(conv[:0], k, args)
		}
		var differ uint16
		for j := range n {
			v := binary.LittleEndian.Uint64(args[8*j:])
			if v != prev[j] {
				differ |= 1 << j
			}
			prev[j] = v
		}
		same := ki.hasRef && differ&ki.refs == 0
		h := i
		head := byte(k)
		i = putUvarint(buf, h+1, delta)
		if ki.corr == 0 { // every kind of kinds.go that has one
			i = putCorr(buf, i, prev[0], &corr, ki.begin, &head)
		}
		if !same || ki.times != 0 || ki.corr > 0 {
			i = putArgs(buf, i, ki, prev[:n], same, t, &corr, &head)
		}
		if same {
			head |= flagS
		}
		buf[h] = head
		off += size
	}
	b.raw = buf[:i]
	b.last, b.corr, b.n = last, corr, count
	if off == len(data) {
		return off, nil
	}
	if i >= maxBatchRaw {
		return off, ErrBatchFull
	}
	return off, flatError(tab, data, off)
}

// maxFlatEvent is the most bytes one event encodes to: head, delta and
// MaxArgs arguments of 10 bytes each.
const maxFlatEvent = 1 + 10 + MaxArgs*10

// growBatch returns buf, the first i bytes of it, with room for more.
func growBatch(buf []byte, i int) []byte {
	nb := make([]byte, 2*len(buf)+maxFlatEvent)
	copy(nb, buf[:i])
	return nb
}

// putArgs encodes the arguments that the S and C flags do not cover.
func putArgs(buf []byte, i int, ki *kindInfo, args []uint64, same bool, t int64, corr *uint64, head *byte) int {
	for j, v := range args {
		switch ki.types[j] {
		case ArgCorr:
			if j > 0 {
				i = putCorr(buf, i, v, corr, ki.begin, head)
			}
		case ArgTime:
			i = putUvarint(buf, i, encodeTime(v, t))
		case ArgInt:
			if !same {
				i = putUvarint(buf, i, zigzag(int64(v)))
			}
		default:
			if !same {
				i = putUvarint(buf, i, v)
			}
		}
	}
	return i
}

// convertArgs appends to dst a record's arguments with those in ticks
// converted to ns.
func (c *FlatClock) convertArgs(dst []byte, k Kind, args []byte) []byte {
	for j := 0; j+8 <= len(args); j += 8 {
		v := binary.LittleEndian.Uint64(args[j:])
		if c.TickArgs[k]&(1<<(j/8)) != 0 {
			v = uint64(c.nanos(v))
		}
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	return dst
}

// flatError says what is wrong with the record at data[off:].
func flatError(tab *kindTab, data []byte, off int) error {
	rec := data[off:]
	if len(rec) < flatHeader {
		return fmt.Errorf("%w at byte %d: %d bytes left, a header needs %d", ErrFlat, off, len(rec), flatHeader)
	}
	k, n := Kind(rec[8]), int(rec[9])
	switch {
	case k > maxEventKind || !tab[k].valid:
		return fmt.Errorf("%w at byte %d: kind %d is not a timed event kind", ErrFlat, off, k)
	case int(tab[k].n) != n:
		return fmt.Errorf("%w at byte %d: kind %d has %d arguments, not %d", ErrFlat, off, k, tab[k].n, n)
	}
	return fmt.Errorf("%w at byte %d: kind %d with %d arguments does not fit in the %d bytes left", ErrFlat, off, k, n, len(rec))
}

// nanos converts ticks, Fast first.
func (c *FlatClock) nanos(ticks uint64) int64 {
	if t, ok := c.Fast.Nanos(ticks); ok {
		return t
	}
	return c.Slow(ticks)
}

// putCorr encodes a correlation id v at buf[i:] against the batch's
// previous one, *corr, which becomes v (FORMAT.md §5, ArgCorr).
func putCorr(buf []byte, i int, v uint64, corr *uint64, begin bool, head *byte) int {
	want := *corr
	if begin {
		want++
	}
	if v == want {
		*head |= flagC
	} else {
		i = putUvarint(buf, i, zigzag(int64(v-*corr)))
	}
	*corr = v
	return i
}
