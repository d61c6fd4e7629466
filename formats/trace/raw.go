package trace

import (
	"errors"
	"fmt"
)

// Raw records are the events the runtime's threads write into the buffers
// they share with the writer (runtime/src/rt.h, ot_encode). They use the
// encoding of an events chunk (FORMAT.md §5) with two differences, so that
// the thread pays a few stores per event and the writer copies most events
// as they are:
//
//   - the state the S and C flags and the deltas refer to is the whole
//     buffer's, from its first byte, not a batch's: the previous event, the
//     previous correlation id and the previous event of each kind in the
//     buffer (all zero before the first);
//   - times are the producer's ticks: delta is a uvarint of the ticks
//     since the buffer's previous event (since 0 for its first; a thread
//     raises a time earlier than its previous event's to it, so that deltas
//     are never negative and under 128 ticks take one byte), and an ArgTime
//     argument is a uvarint of the value as the producer has it (ticks, or
//     ns where FlatClock.TickArgs says so).
//
// So a record is: head (1 byte: kind | S | C), delta (uvarint), then the
// kind's arguments: ArgCorr absent when C, else varint(value - prev);
// ArgTime uvarint; ArgInt varint and every other type uvarint, both absent
// when S. The writer reads a buffer's records in order, possibly in several
// spans, keeping a RawState per buffer between them.

// RawState is what the records of one buffer read so far leave for the
// next ones. The zero value is the state at the start of a buffer.
type RawState struct {
	ticks uint64
	corr  uint64
	prev  [maxEventKind + 1][MaxArgs]uint64 // arguments covered by S
}

// Ticks returns the ticks of the last record read: the latest, since a
// thread's records never go back in time.
func (s *RawState) Ticks() uint64 { return s.ticks }

// Reset returns s to the start of a buffer.
func (s *RawState) Reset() { *s = RawState{} }

// RawEncoder writes raw records as the runtime does: tests and fuzzers
// use it to make a thread's buffer.
type RawEncoder struct{ st RawState }

// State returns the state the next record is encoded after.
func (e *RawEncoder) State() RawState { return e.st }

// Append appends the record of kind k at ticks (raised to the previous
// record's, as the runtime does) with the kind's arguments in kinds.go
// order (time arguments as the producer has them); it returns an error for
// a kind that is not timed or a wrong argument count.
func (e *RawEncoder) Append(dst []byte, k Kind, ticks uint64, args ...uint64) ([]byte, error) {
	if k > maxEventKind || compiledTab[k].flatN < 0 || len(args) != int(compiledTab[k].n) {
		return dst, fmt.Errorf("trace: RawEncoder.Append: %v with %d arguments is not a timed kind and its arguments", k, len(args))
	}
	ki, st := &compiledTab[k], &e.st
	head := byte(k)
	same := ki.refs != 0
	for j, v := range args {
		if ki.refs&(1<<j) != 0 && v != st.prev[k][j] {
			same = false
		}
	}
	if same {
		head |= HeadS
	}
	at := len(dst)
	dst = append(dst, 0)
	ticks = max(ticks, st.ticks) // as the runtime's threads do
	dst = appendUvarint(dst, ticks-st.ticks)
	st.ticks = ticks
	for j, v := range args {
		switch ki.types[j] {
		case ArgCorr:
			want := st.corr
			if ki.begin {
				want++
			}
			if v == want {
				head |= HeadC
			} else {
				dst = appendUvarint(dst, zigzag(int64(v-st.corr)))
			}
			st.corr = v
		case ArgTime:
			dst = appendUvarint(dst, v)
		default:
			if same {
				continue
			}
			st.prev[k][j] = v
			if ki.types[j] == ArgInt {
				v = zigzag(int64(v))
			}
			dst = appendUvarint(dst, v)
		}
	}
	dst[at] = head
	return dst, nil
}

// ErrRaw is wrapped by AddRaw's errors about a malformed record.
var ErrRaw = errors.New("malformed raw record")

// AddRaw appends the raw records at the start of data, which continue
// the buffer whose state st is, and returns how many bytes it consumed:
// all of data, or less when the batch is full (ErrBatchFull: write it and
// go on with the rest, with the same st) or a record is malformed (an
// error wrapping ErrRaw that names the record's offset in data; the
// records before it are in the batch, and st is theirs).
func (b *Batch) AddRaw(data []byte, st *RawState, clock *FlatClock) (int, error) {
	if b.encoded {
		return 0, errors.New("trace: Batch.Add after EncodeBatch: write the batch first")
	}
	off := 0
	for off < len(data) {
		if len(b.raw) >= b.max {
			return off, ErrBatchFull
		}
		if len(b.raw) >= b.roomFor(b.raw) {
			b.grow()
		}
		n := b.copyRaw(data[off:], st, clock.Fast)
		off += n
		if n > 0 || off == len(data) || len(b.raw) >= b.roomFor(b.raw) {
			continue
		}
		// A record copyRaw leaves: the first of its kind or correlation id
		// in the batch, one with new arguments or times, or outside the
		// clock's fast segment. Decoded, converted and encoded alone.
		var flat [flatHeader + 8*MaxArgs]byte
		rec, size, err := decodeRaw(b.tab, data[off:], st, flat[:0])
		if err != nil {
			return off, fmt.Errorf("%w at byte %d: %v", ErrRaw, off, err)
		}
		var conv [flatHeader + 8*MaxArgs]byte
		if m, _ := b.encodeFlat(clock.nanosRecord(conv[:0], rec), &nanosClock); m == 0 {
			return off, fmt.Errorf("%w at byte %d: cannot encode kind %d", ErrRaw, off, rec[8]) // unreachable: decodeRaw checked it
		}
		b.synced |= 1 << (rec[8] & kindMask)
		if b.tab[rec[8]].corr >= 0 {
			b.synced |= syncedCorr // encodeFlat took st's correlation id
		}
		off += size
	}
	return off, nil
}

// syncedCorr is Batch.synced's bit for the correlation id (no kind is 0).
const syncedCorr = 1

// copyRaw is AddRaw's inner loop: it copies the records at the start of
// data whose encoding in the batch is their raw encoding with the delta
// in ns, and stops at the first other one, returning the bytes consumed.
// Those are the events whose other arguments are as before (S set, or a
// kind without such arguments), that have no time arguments, and whose
// kind's arguments and correlation id the batch follows in step with st
// (kindInfo.rawNeed). It calls nothing, and keeps few values live, so that
// they stay in registers.
func (b *Batch) copyRaw(data []byte, st *RawState, fast *Linear) (off int) {
	tab := b.tab
	buf := b.raw[:cap(b.raw)]
	i := len(b.raw)
	room := b.roomFor(buf)
	last, count := b.last, b.n
	ticks, corr, synced := st.ticks, st.corr, b.synced
records:
	for off < len(data) && i < room {
		h := data[off]
		k := h & kindMask
		ki := &tab[k]
		how := ki.rawCopy[h>>6]
		if how == rawNo || synced&ki.rawNeed != ki.rawNeed {
			break
		}
		// The delta and the correlation id's: varints, at most 63 bits
		// here (longer ones take decodeRaw's checks).
		p := off + 1
		if p >= len(data) {
			break
		}
		dz := uint64(data[p])
		p++
		if dz >= 0x80 {
			dz &= 0x7f
			for s := uint(7); ; s += 7 {
				if p >= len(data) || s > 56 {
					break records
				}
				c := data[p]
				p++
				dz |= uint64(c&0x7f) << s
				if c < 0x80 {
					break
				}
			}
		}
		tk := ticks + dz
		t, ok := fast.Nanos(tk)
		if !ok {
			break
		}
		args := p
		switch how {
		case rawCorrNext:
			corr++
		case rawCorrVar:
			var cz uint64
			for s := uint(0); ; s += 7 {
				if p >= len(data) || s > 56 {
					break records
				}
				c := data[p]
				p++
				cz |= uint64(c&0x7f) << s
				if c < 0x80 {
					break
				}
			}
			corr += uint64(unzigzag(cz))
		}
		ticks = tk
		t, delta := b.stamp(t, last, count)
		last = t
		count++
		b.counts[k]++
		buf[i] = h
		i = putUvarint(buf, i+1, delta)
		for _, c := range data[args:p] { // a byte or two: copy would be a call
			buf[i] = c
			i++
		}
		off = p
	}
	b.raw = buf[:i]
	b.last, b.n = last, count
	if synced&syncedCorr != 0 {
		b.corr = corr
	}
	st.ticks, st.corr = ticks, corr
	return off
}

// decodeRaw decodes the record at the start of data, which follows st,
// into a flat record in ticks appended to dst, and moves st past it; it
// returns the record's size. On an error st is unchanged.
func decodeRaw(tab *kindTab, data []byte, st *RawState, dst []byte) (rec []byte, size int, err error) {
	h := data[0]
	k := Kind(h & kindMask)
	ki := &tab[k]
	if ki.flatN < 0 {
		return dst, 0, fmt.Errorf("kind %d is not a timed event kind", k)
	}
	if h&HeadS != 0 && ki.refs == 0 {
		return dst, 0, fmt.Errorf("kind %d has the S flag but no arguments it covers", k)
	}
	if h&HeadC != 0 && ki.corr < 0 {
		return dst, 0, fmt.Errorf("kind %d has the C flag but no correlation id", k)
	}
	dz, p, ok := uvarint(data, 1)
	if !ok {
		return dst, 0, errors.New("the time delta is cut short")
	}
	ticks := st.ticks + dz
	var args [MaxArgs]uint64
	corr := st.corr
	for j := range int(ki.n) {
		var v uint64
		switch ki.types[j] {
		case ArgCorr:
			v = corr
			if h&HeadC != 0 {
				if ki.begin {
					v++
				}
			} else {
				var d uint64
				if d, p, ok = uvarint(data, p); !ok {
					return dst, 0, fmt.Errorf("argument %d is cut short", j)
				}
				v += uint64(unzigzag(d))
			}
			corr = v
		case ArgTime:
			if v, p, ok = uvarint(data, p); !ok {
				return dst, 0, fmt.Errorf("argument %d is cut short", j)
			}
		default:
			if h&HeadS != 0 {
				v = st.prev[k][j]
				break
			}
			if v, p, ok = uvarint(data, p); !ok {
				return dst, 0, fmt.Errorf("argument %d is cut short", j)
			}
			if ki.types[j] == ArgInt {
				v = uint64(unzigzag(v))
			}
		}
		args[j] = v
	}
	st.ticks, st.corr = ticks, corr
	for j := range int(ki.n) {
		if ki.refs&(1<<j) != 0 {
			st.prev[k][j] = args[j]
		}
	}
	dst = appendFlatRecord(dst, k, ticks, args[:ki.n])
	return dst, p, nil
}

// ScanRaw moves st past the raw records at the start of data, which
// continue the buffer whose state st is, and adds them by kind to counts,
// without turning them into events: what a writer needs to write a span of
// them as a raw events chunk (Batch.SetRaw) and to know the state the
// buffer's next span starts from. It returns the bytes consumed: all of
// data, or those before a malformed record (then an error wrapping ErrRaw
// that names the record's offset; st is the state after the records
// before it).
func ScanRaw(data []byte, st *RawState, counts *[maxEventKind + 1]uint32) (int, error) {
	tab := compiledTab
	off := 0
records:
	for off < len(data) {
		h := data[off]
		k := Kind(h & kindMask)
		ki := &tab[k]
		// The common record (what copyRaw copies: no arguments but a
		// correlation id's delta, if any) in a few instructions; varints of
		// over 63 bits and cut ones take the general path, which says why.
		if how := ki.rawCopy[h>>6]; how != rawNo {
			p := off + 1
			var dz uint64
			for s := uint(0); ; s += 7 {
				if p >= len(data) || s > 56 {
					goto general
				}
				c := data[p]
				p++
				dz |= uint64(c&0x7f) << s
				if c < 0x80 {
					break
				}
			}
			switch how {
			case rawCorrNext:
				st.corr++
			case rawCorrVar:
				var cz uint64
				for s := uint(0); ; s += 7 {
					if p >= len(data) || s > 56 {
						goto general
					}
					c := data[p]
					p++
					cz |= uint64(c&0x7f) << s
					if c < 0x80 {
						break
					}
				}
				st.corr += uint64(unzigzag(cz))
			}
			st.ticks += dz
			counts[k]++
			off = p
			continue records
		}
	general:
		// Any other record: decoded as AddRaw decodes one alone.
		var flat [flatHeader + 8*MaxArgs]byte
		_, size, err := decodeRaw(tab, data[off:], st, flat[:0])
		if err != nil {
			return off, fmt.Errorf("%w at byte %d: %v", ErrRaw, off, err)
		}
		counts[k]++
		off += size
	}
	return off, nil
}
