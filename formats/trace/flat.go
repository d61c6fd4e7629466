package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Flat records are events in a fixed layout, stamped with a producer's
// ticks: the form in which Batch.Add and AddRaw's uncommon records reach
// the encoder. Each is, little-endian:
//
//	time   8 bytes   the producer's clock ticks
//	kind   1 byte    a timed kind of kinds.go
//	nargs  1 byte    the kind's argument count
//	pad    6 bytes
//	args   nargs × 8 bytes, in kinds.go order
//
// AddFlat encodes them without a call per event.
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
// Its inner loop, encodeFlat, encodes every event (FORMAT.md §5) but the
// raw records AddRaw copies: Add passes it one record, AddRaw each record
// it decodes.
func (b *Batch) AddFlat(data []byte, clock *FlatClock) (int, error) {
	if b.encoded {
		return 0, errors.New("trace: Batch.Add after EncodeBatch: write the batch first")
	}
	off, retry := 0, -1
	for off < len(data) {
		if len(b.raw) >= b.max {
			return off, ErrBatchFull
		}
		if len(b.raw) >= b.roomFor(b.raw) {
			b.grow()
		}
		n, stop := b.encodeFlat(data[off:], clock)
		off += n
		if n > 0 || stop == stopSpace {
			continue
		}
		if stop == stopBadRecord {
			return off, flatError(b.tab, data, off)
		}
		// A record with times encodeFlat does not convert itself: its
		// time arguments are in ticks, or its time is outside the clock's
		// segment. Slow moves the segment (usually to one that maps it);
		// failing that, the record is converted here and encoded alone.
		rec := data[off:]
		if off != retry && clock.TickArgs[rec[8]&kindMask] == 0 {
			retry = off
			clock.Slow(binary.LittleEndian.Uint64(rec))
			continue
		}
		var conv [flatHeader + 8*MaxArgs]byte
		if m, _ := b.encodeFlat(clock.nanosRecord(conv[:0], rec), &nanosClock); m == 0 {
			return off, flatError(b.tab, data, off) // unreachable: a converted record is well formed
		}
		off += flatSize(rec)
	}
	return off, nil
}

// Why encodeFlat stopped before the end of its records.
const (
	stopSpace     = iota + 1 // the batch needs room, or is full
	stopBadRecord            // a malformed record
	stopSlow                 // a record AddFlat converts (see there)
)

// encodeFlat is AddFlat's inner loop: it encodes the records at the start
// of data until one needs a slower path, and returns the bytes consumed and
// why it stopped (0 at the end of data). It calls nothing, so that the
// batch's running state stays in registers (a call in the loop, even one
// never taken, makes the compiler spill them at every event), and the
// common event (its other arguments as before, its correlation id first
// and the expected one) takes no loop over its arguments' types.
func (b *Batch) encodeFlat(data []byte, clock *FlatClock) (off, stop int) {
	tab, fast := b.tab, clock.Fast
	buf := b.raw[:cap(b.raw)]
	i := len(b.raw)
	last, corr, count := b.last, b.corr, b.n
	room := b.roomFor(buf)
	for {
		if len(data)-off < flatHeader {
			if off < len(data) {
				stop = stopBadRecord
			}
			break
		}
		if i >= room {
			stop = stopSpace
			break
		}
		rec := data[off:]
		k := Kind(rec[8])
		n := int(rec[9])
		ki := &tab[k]
		size := flatHeader + 8*n
		if int(ki.flatN) != n || len(rec) < size {
			stop = stopBadRecord
			break
		}
		t, ok := fast.Nanos(binary.LittleEndian.Uint64(rec))
		if !ok || clock.TickArgs[k] != 0 {
			stop = stopSlow
			break
		}
		t, delta := b.stamp(t, last, count)
		last = t
		count++
		b.counts[k]++

		// prev keeps every argument: the correlation and time slots are
		// never compared, and the others are equal to it when same holds.
		// Unrolled (n <= MaxArgs): a loop here keeps its index and the
		// flags on the stack, the loop's state taking every register.
		prev := &b.prev[k]
		args := rec[flatHeader:size]
		var differ uint
		if n > 0 {
			if v := binary.LittleEndian.Uint64(args[0:]); v != prev[0] {
				prev[0], differ = v, 1
			}
			if n > 1 {
				if v := binary.LittleEndian.Uint64(args[8:]); v != prev[1] {
					prev[1], differ = v, differ|2
				}
				if n > 2 {
					if v := binary.LittleEndian.Uint64(args[16:]); v != prev[2] {
						prev[2], differ = v, differ|4
					}
					if n > 3 {
						if v := binary.LittleEndian.Uint64(args[24:]); v != prev[3] {
							prev[3], differ = v, differ|8
						}
						if n > 4 {
							if v := binary.LittleEndian.Uint64(args[32:]); v != prev[4] {
								prev[4], differ = v, differ|16
							}
							if n > 5 {
								if v := binary.LittleEndian.Uint64(args[40:]); v != prev[5] {
									prev[5], differ = v, differ|32
								}
							}
						}
					}
				}
			}
		}
		same := ki.refs != 0 && differ&uint(ki.refs) == 0
		h := i
		head := byte(k)
		i = putUvarint(buf, i+1, delta)
		if same && ki.times == 0 && ki.corr <= 0 {
			head |= HeadS
			if ki.corr == 0 { // the common event
				v, want := prev[0], corr
				if ki.begin {
					want++
				}
				if v == want {
					head |= HeadC
				} else {
					i = putUvarint(buf, i, zigzag(int64(v-corr)))
				}
				corr = v
			}
			buf[h] = head
			off += size
			continue
		}
		if same {
			head |= HeadS
		}
		for j := range n {
			v := prev[j]
			switch ki.types[j] {
			case ArgCorr:
				want, before := corr, corr
				if ki.begin {
					want++
				}
				corr = v
				if v == want {
					head |= HeadC
					continue
				}
				v = zigzag(int64(v - before))
			case ArgTime:
				v = encodeTime(v, t)
			case ArgInt:
				if same {
					continue
				}
				v = zigzag(int64(v))
			default:
				if same {
					continue
				}
			}
			i = putUvarint(buf, i, v)
		}
		buf[h] = head
		off += size
	}
	b.raw = buf[:i]
	b.last, b.corr, b.n = last, corr, count
	return off, stop
}

// stamp places an event at t after the batch's last event, at last, as
// its count-th: it returns the event's time, raised to last where it is
// earlier (counted in clamped), and its delta, 0 for the batch's first,
// whose time becomes the base. Inlined into the encoding loops.
func (b *Batch) stamp(t, last int64, count int) (int64, uint64) {
	if t < last {
		t = last
		b.clamped++
	}
	if count == 0 {
		b.base = t
		return t, 0
	}
	return t, uint64(t - last)
}

// encodeFlat's unrolled argument comparison covers MaxArgs = 6 exactly:
// this fails to compile otherwise.
var _ = [1]struct{}{}[MaxArgs-6]

// MaxEventBytes is the most bytes one event encodes to: head, delta and
// MaxArgs arguments of 10 bytes each; in a batch, and as a raw record (the
// runtime's OT_RAW_MAX is generated from it).
const MaxEventBytes = 1 + 10 + MaxArgs*10

// roomFor is the length of a batch's raw below which one more event fits
// in its capacity and the batch is not full.
func (b *Batch) roomFor(raw []byte) int { return min(b.max, cap(raw)-MaxEventBytes+1) }

// grow gives the batch's raw room for more: twice as much, but no more than
// a full batch needs.
func (b *Batch) grow() {
	n := min(2*cap(b.raw)+MaxEventBytes, b.max+MaxEventBytes)
	nb := make([]byte, len(b.raw), max(n, len(b.raw)+MaxEventBytes))
	copy(nb, b.raw)
	b.raw = nb
}

// appendFlatRecord appends the flat record of kind k at ticks.
func appendFlatRecord(dst []byte, k Kind, ticks uint64, args []uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, ticks)
	dst = append(dst, byte(k), byte(len(args)), 0, 0, 0, 0, 0, 0)
	for _, v := range args {
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	return dst
}

// flatSize is the size of the well-formed record at the start of data.
func flatSize(data []byte) int { return flatHeader + 8*int(data[9]) }

// nanosRecord appends to dst a copy of a well-formed record with its times
// in ns, for nanosClock. A negative time becomes the most negative one,
// which encodeFlat raises to the batch's floor like any other negative time
// (nanosClock maps every time but -1).
func (c *FlatClock) nanosRecord(dst, rec []byte) []byte {
	out := append(dst, rec[:flatSize(rec)]...)
	put := func(at int, ns int64) { binary.LittleEndian.PutUint64(out[at:], nanosOrMin(ns)) }
	put(0, c.nanos(binary.LittleEndian.Uint64(rec)))
	for j := range int(rec[9]) {
		if c.TickArgs[rec[8]&kindMask]&(1<<j) != 0 {
			put(flatHeader+8*j, c.nanos(binary.LittleEndian.Uint64(rec[flatHeader+8*j:])))
		}
	}
	return out
}

// nanosOrMin is converted time ns as a record stores it: a time before
// CLOCK_MONOTONIC's 0 becomes the most negative one.
func nanosOrMin(ns int64) uint64 {
	if ns < 0 {
		ns = math.MinInt64
	}
	return uint64(ns)
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
