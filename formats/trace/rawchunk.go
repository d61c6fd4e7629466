package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/klauspost/compress/s2"
)

// A raw events chunk (FORMAT.md §5a) holds a span of a runtime thread's raw
// records as the thread wrote them: the writer compresses them and does
// nothing per event (a whole buffer), or only follows their state
// (ScanRaw), and a reader converts the ticks as it decodes the records
// (decodeRawEvent).
//
// Body: thread uvarint; n uvarint, then n × (kind byte, mask byte), the
// ArgTime arguments in ticks (FlatClock.TickArgs); the RawState the records
// start from (ticks uvarint, corr uvarint, m uvarint, then m × (kind byte,
// mask byte, a uvarint per bit of the mask: the kind's previous arguments
// that are not 0); then the records to the end of the body.

// MaxRawRecords is the most bytes of raw records a raw events chunk holds:
// a Batch in raw mode takes at most this many, so that its chunk stays
// within MaxPayload whatever the records.
const MaxRawRecords = maxBatchRaw

// SetRaw makes b, empty, the raw events chunk of a span of thread's records
// that starts from st (nil: a buffer's first records), with ArgTime
// arguments of kind k in ticks where bit j of tickArgs[k] is set. The
// caller says what the records hold: counts[k] events of kind k, and end,
// the time of the latest of them (after conversion), which becomes the
// floor for the thread's next batch. b keeps records, not a copy: they must
// stay unchanged until b is written, by Writer.WriteBatch of an S2 Writer
// (LevelFastest; TakesRaw).
func (b *Batch) SetRaw(records []byte, tickArgs *[maxEventKind + 1]uint8, st *RawState, counts *[maxEventKind + 1]uint32, end int64) error {
	switch {
	case b.n != 0 || b.rawRecords != nil || b.encoded:
		return errors.New("trace: Batch.SetRaw: the batch is not empty")
	case len(records) > MaxRawRecords:
		return fmt.Errorf("trace: Batch.SetRaw: %d bytes of records, over the %d a raw chunk holds", len(records), MaxRawRecords)
	}
	var n uint64
	for _, c := range counts {
		n += uint64(c)
	}
	if n > uint64(len(records)) || n > math.MaxInt32 {
		return fmt.Errorf("trace: Batch.SetRaw: %d events cannot be in %d bytes of records", n, len(records))
	}
	p := b.raw[:0]
	p = appendUvarint(p, uint64(b.thread))
	var pairs uint64
	for _, m := range tickArgs {
		if m != 0 {
			pairs++
		}
	}
	p = appendUvarint(p, pairs)
	for k, m := range tickArgs {
		if m != 0 {
			p = append(p, byte(k), m)
		}
	}
	p = appendRawState(p, st)
	b.raw = p
	b.rawRecords = records
	b.counts = *counts
	b.n = int(n)
	b.base = b.last
	b.last = max(b.last, end)
	return nil
}

// appendRawState appends st as a raw events chunk's prefix holds it: the
// arguments the S flag covers that are not 0, by kind.
func appendRawState(p []byte, st *RawState) []byte {
	if st == nil {
		return append(p, 0, 0, 0)
	}
	p = appendUvarint(p, st.ticks)
	p = appendUvarint(p, st.corr)
	var masks [maxEventKind + 1]uint8
	kinds := 0
	for k := range st.prev {
		for j, v := range st.prev[k] {
			if v != 0 {
				masks[k] |= 1 << j
			}
		}
		if masks[k] != 0 {
			kinds++
		}
	}
	p = appendUvarint(p, uint64(kinds))
	for k, m := range masks {
		if m == 0 {
			continue
		}
		p = append(p, byte(k), m)
		for j, v := range st.prev[k] {
			if m&(1<<j) != 0 {
				p = appendUvarint(p, v)
			}
		}
	}
	return p
}

// TakesRaw says whether the Writer writes raw batches (Batch.SetRaw): at
// LevelFastest, whose codec (S2) compresses them in place.
func (w *Writer) TakesRaw() bool { return w.codec == codecS2 }

// appendS2Joined appends to dst one S2 block of prefix followed by rest,
// compressing rest only: a literal of prefix, then the elements S2 makes of
// rest's pieces of s2Piece bytes each, compressed one at a time in scratch.
// Copies in an S2 block reach back by distance, and each piece's reach only
// into the piece, so they decode the same in the joined block. rest is read
// in place (a runtime buffer), and dst grows only by what the pieces
// compress to: no buffer of S2's worst case for all of rest is needed.
func appendS2Joined(dst, scratch, prefix, rest []byte) (out, scratchOut []byte) {
	dst = binary.AppendUvarint(dst, uint64(len(prefix)+len(rest)))
	if n := len(prefix); n > 0 {
		switch l := n - 1; {
		case l < 60:
			dst = append(dst, byte(l)<<2)
		case l < 1<<8:
			dst = append(dst, 60<<2, byte(l))
		default: // prefixes are at most a few hundred bytes
			dst = append(dst, 61<<2, byte(l), byte(l>>8))
		}
		dst = append(dst, prefix...)
	}
	for len(rest) > 0 {
		piece := rest[:min(len(rest), s2Piece)]
		rest = rest[len(piece):]
		if need := s2.MaxEncodedLen(len(piece)); cap(scratch) < need {
			scratch = make([]byte, need)
		}
		enc := s2.Encode(scratch[:cap(scratch)], piece)
		_, hdr := binary.Uvarint(enc) // the piece's own length, dropped
		dst = append(dst, enc[hdr:]...)
	}
	return dst, scratch
}

// s2Piece is the most bytes of a raw chunk's records S2 compresses at once
// (appendS2Joined): its matches reach no further back than this.
const s2Piece = 64 << 10

// encodeRawChunk appends b's raw events chunk to dst (FORMAT.md §3, §5a).
func (w *Writer) encodeRawChunk(dst []byte, b *Batch) ([]byte, error) {
	if w.codec != codecS2 {
		return dst, errors.New("trace: a raw batch is written only at LevelFastest (S2)")
	}
	dst = w.appendChunkHeader(dst, chunkRaw, len(b.raw)+len(b.rawRecords))
	dst, w.s2Scratch = appendS2Joined(dst, w.s2Scratch, b.raw, b.rawRecords)
	sealChunk(dst)
	return dst, nil
}

// rawChunk is what a Reader keeps of the raw events chunks it reads,
// besides the events chunk state it shares (thread, time, corr, prev).
type rawChunk struct {
	ticks    uint64                  // of the previous record
	tickArgs [maxEventKind + 1]uint8 // the chunk's masks
	clock    *TickClock              // fed by every clock chunk
	chunks   int                     // raw chunks read intact
}

// openRaw starts reading a raw events chunk whose body is r.raw.
func (r *Reader) openRaw() error {
	raw := r.raw
	th, i, ok1 := uvarint(raw, 0)
	n, i, ok2 := uvarint(raw, i)
	switch {
	case !ok1 || !ok2:
		return errors.New("raw events chunk: bad varint in its prefix")
	case th > math.MaxUint32:
		return fmt.Errorf("raw events chunk: thread index %d is out of range", th)
	case n > maxEventKind+1 || n > uint64(len(raw)-i)/2:
		return fmt.Errorf("raw events chunk: %d tick argument masks, at most %d fit", n, min(maxEventKind+1, (len(raw)-i)/2))
	}
	rc := &r.rawc
	rc.tickArgs = [maxEventKind + 1]uint8{}
	for range n {
		k, m := raw[i], raw[i+1]
		if k > maxEventKind || r.kinds[k].flatN < 0 {
			return fmt.Errorf("raw events chunk: a tick argument mask for kind %d, which is not a timed kind of the file", k)
		}
		for j := range 8 {
			if m&(1<<j) != 0 && (j >= int(r.kinds[k].n) || r.kinds[k].types[j] != ArgTime) {
				return fmt.Errorf("raw events chunk: the tick argument mask %#02x of kind %d names argument %d, which is not a time", m, k, j)
			}
		}
		rc.tickArgs[k] = m
		i += 2
	}
	// The state the records start from.
	r.prev = [maxEventKind + 1][MaxArgs]uint64{}
	ticks, i, ok1 := uvarint(raw, i)
	corr, i, ok2 := uvarint(raw, i)
	m, i, ok3 := uvarint(raw, i)
	if !ok1 || !ok2 || !ok3 || m > maxEventKind+1 || m > uint64(len(raw)-i)/2 {
		return errors.New("raw events chunk: bad varint or count in its starting state")
	}
	for range m {
		k, mask := raw[i], raw[i+1]
		if k > maxEventKind || r.kinds[k].flatN < 0 || uint16(mask)&^r.kinds[k].refs != 0 {
			return fmt.Errorf("raw events chunk: starting state for kind %d with mask %#02x, which are not a timed kind of the file and arguments the S flag covers", k, mask)
		}
		i += 2
		for j := range MaxArgs {
			if mask&(1<<j) == 0 {
				continue
			}
			var v uint64
			var ok bool
			if v, i, ok = uvarint(raw, i); !ok {
				return fmt.Errorf("raw events chunk: bad varint in the starting state of kind %d", k)
			}
			r.prev[k][j] = v
		}
	}
	// The thread's events stay in time order: the chunk's start at its end
	// so far, earlier times raised to the time before (FORMAT.md §5a).
	r.thread, r.time, r.corr = uint32(th), max(r.threadEnd[uint32(th)], 0), corr
	rc.ticks = ticks
	r.p, r.total, r.typ = i, 0, chunkRaw
	r.left = 0
	if i < len(raw) {
		r.left = 1 // until the records end
	}
	return nil
}

// decodeRawEvent decodes the next record of the current raw events chunk
// (FORMAT.md §5a): decodeEvent's work plus the conversion of its ticks.
func (r *Reader) decodeRawEvent(e *Event) error {
	raw := r.raw
	i := r.p
	idx := r.total
	head := raw[i] // r.left > 0: i < len(raw)
	k := Kind(head & kindMask)
	if !r.rawHead[head] {
		return r.badRawHead(head, i)
	}
	ki := &r.kinds[k]
	at := i
	var dz uint64
	ok := true
	switch i++; {
	case i < len(raw) && raw[i] < 0x80:
		dz, i = uint64(raw[i]), i+1
	case i+1 < len(raw) && raw[i+1] < 0x80: // a launch's length or so
		dz, i = uint64(raw[i]&0x7f)|uint64(raw[i+1])<<7, i+2
	default:
		dz, i, ok = uvarintLong(raw, i)
	}
	if !ok {
		return fmt.Errorf("record %d (%v) at body byte %d: time delta: %w", idx, k, at, errVarint)
	}
	ticks := r.rawc.ticks + dz
	clock := r.rawc.clock
	e.Kind, e.Thread = k, r.thread
	// The cached segment's conversion inlines; Nanos, a call, does the rest.
	t, cached := clock.seg.Nanos(ticks)
	if !cached {
		t = clock.Nanos(ticks)
	}
	e.Time = max(t, r.time)
	same := head&HeadS != 0
	prev := &r.prev[k]
	if same && ki.times == 0 {
		// Most records: the arguments of the kind's last record, but for
		// the correlation id.
		e.Args = *prev
		if ki.corr >= 0 {
			v := r.corr
			if head&HeadC == 0 {
				if v, i, ok = uvarint(raw, i); !ok {
					return fmt.Errorf("record %d (%v) at body byte %d: argument %d: %w", idx, k, at, ki.corr, errVarint)
				}
				v = r.corr + uint64(unzigzag(v))
			} else if ki.begin {
				v++
			}
			r.corr = v
			e.Args[ki.corr] = v
		}
		return r.endRawRecord(ticks, e.Time, i)
	}
	e.Args = [MaxArgs]uint64{}
	tick := r.rawc.tickArgs[k]
	for j := 0; j < int(ki.n); j++ {
		var v uint64
		switch ki.types[j] {
		case ArgCorr:
			if head&HeadC != 0 {
				v = r.corr
				if ki.begin {
					v++
				}
			} else {
				if v, i, ok = uvarint(raw, i); !ok {
					return fmt.Errorf("record %d (%v) at body byte %d: argument %d: %w", idx, k, at, j, errVarint)
				}
				v = r.corr + uint64(unzigzag(v))
			}
			r.corr = v
		case ArgTime:
			if v, i, ok = uvarint(raw, i); !ok {
				return fmt.Errorf("record %d (%v) at body byte %d: argument %d: %w", idx, k, at, j, errVarint)
			}
			if tick&(1<<j) != 0 {
				v = nanosOrMin(clock.Nanos(v))
			}
		default:
			if same {
				v = prev[j]
				break
			}
			if i < len(raw) && raw[i] < 0x80 {
				v, i = uint64(raw[i]), i+1
			} else if v, i, ok = uvarintLong(raw, i); !ok {
				return fmt.Errorf("record %d (%v) at body byte %d: argument %d: %w", idx, k, at, j, errVarint)
			}
			if ki.types[j] == ArgInt {
				v = uint64(unzigzag(v))
			}
		}
		e.Args[j] = v
	}
	if !same {
		*prev = e.Args
	}
	return r.endRawRecord(ticks, e.Time, i)
}

// badRawHead says why head, at body byte i, cannot start a raw record.
func (r *Reader) badRawHead(head byte, i int) error {
	k := Kind(head & kindMask)
	if r.kinds[k].flatN < 0 {
		return fmt.Errorf("record %d at body byte %d: kind %d is not a timed kind of the file", r.total, i, k)
	}
	return fmt.Errorf("record %d (%v) at body byte %d: flags %#02x do not apply to this kind", r.total, k, i, head&^kindMask)
}

// endRawRecord moves the reader past a raw record that ends at body byte i.
func (r *Reader) endRawRecord(ticks uint64, t int64, i int) error {
	r.rawc.ticks = ticks
	r.time = t
	r.p = i
	r.total++
	if i == len(r.raw) {
		r.left = 0
	}
	return nil
}

// clockSyncs feeds the sync points of a clock chunk to the raw records'
// clock.
func (r *Reader) clockSyncs(syncs []ClockSync) {
	for _, s := range syncs {
		r.rawc.clock.Add(s.TSC, s.Mono)
	}
}
