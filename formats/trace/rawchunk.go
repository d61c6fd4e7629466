package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/klauspost/compress/s2"
)

// A raw events chunk (FORMAT.md §5a) holds one whole buffer of a runtime
// thread's raw records as the thread wrote them: the writer compresses the
// buffer and does nothing per event, and a reader converts the records
// (Batch.AddRaw, the writer's path for other spans) when it reads them.
//
// Body: thread uvarint; n uvarint, then n × (kind byte, mask byte), the
// ArgTime arguments in ticks (FlatClock.TickArgs); then the records, from a
// zero RawState, to the end of the body.

// MaxRawRecords is the most bytes of raw records a raw events chunk holds:
// a Batch in raw mode takes at most this many, so that its chunk stays
// within MaxPayload whatever the records.
const MaxRawRecords = maxBatchRaw

// SetRaw makes b, empty, the raw events chunk of one whole buffer of
// thread's records (records from a zero RawState; ArgTime arguments of kind
// k in ticks where bit j of tickArgs[k] is set). The caller says what the
// records hold: counts[k] events of kind k, and end, the time of the latest
// of them (after conversion), which becomes the floor for the thread's next
// batch. b keeps records, not a copy: they must stay unchanged until b is
// encoded. Only an S2 Writer (LevelFastest) encodes a raw batch.
func (b *Batch) SetRaw(records []byte, tickArgs *[maxEventKind + 1]uint8, counts *[maxEventKind + 1]uint32, end int64) error {
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
	b.raw = p
	b.rawRecords = records
	b.counts = *counts
	b.n = int(n)
	b.base = b.last
	b.last = max(b.last, end)
	return nil
}

// TakesRaw says whether the Writer writes raw batches (Batch.SetRaw): at
// LevelFastest, whose codec (S2) compresses them in place.
func (w *Writer) TakesRaw() bool { return w.codec == codecS2 }

// IsRaw says whether b holds a raw events chunk (SetRaw).
func (b *Batch) IsRaw() bool { return b.rawRecords != nil }

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
const s2Piece = 256 << 10

// encodeRawChunk appends b's raw events chunk to dst (FORMAT.md §3, §5a).
func (w *Writer) encodeRawChunk(dst []byte, b *Batch) ([]byte, error) {
	if w.codec != codecS2 {
		return dst, errors.New("trace: a raw batch is written only at LevelFastest (S2)")
	}
	dst = append(dst, chunkMagic...)
	dst = append(dst, chunkRaw|codecS2<<codecShift)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // payload length, below
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.raw)+len(b.rawRecords)))
	dst = binary.LittleEndian.AppendUint32(dst, 0) // CRC, below
	dst, w.s2Scratch = appendS2Joined(dst, w.s2Scratch, b.raw, b.rawRecords)
	sealChunk(dst)
	return dst, nil
}

// rawChunk is what a Reader keeps of the raw events chunk it is reading:
// the records not yet converted, converted a piece at a time into a batch
// whose body the events chunk decoder then reads.
type rawChunk struct {
	on     bool
	chunks int // raw chunks read intact
	thread uint32
	rest   []byte // records not yet converted; they alias the chunk's body
	start  int    // offset of rest in the chunk's body, for errors
	st     RawState
	batch  *Batch
	clock  *TickClock
	flat   *FlatClock
}

// rawPiece bounds the events a Reader converts at once: the batch it keeps.
const rawPiece = 1 << 20

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
	rc.flat.TickArgs = [maxEventKind + 1]uint8{}
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
		rc.flat.TickArgs[k] = m
		i += 2
	}
	if rc.batch == nil {
		rc.batch = newBatch(&r.kinds, 0, 0)
		rc.batch.SetMax(rawPiece)
	}
	rc.on, rc.thread, rc.rest, rc.start = true, uint32(th), raw[i:], i
	rc.st.Reset()
	return r.nextRawPiece()
}

// nextRawPiece converts the next piece of the raw chunk's records and
// opens it as an events chunk body. The thread's events stay in time order:
// the batch starts at the thread's end so far and clamps earlier times.
func (r *Reader) nextRawPiece() error {
	rc := &r.rawc
	b := rc.batch
	b.Rebind(rc.thread, r.threadEnd[rc.thread])
	n, err := b.AddRaw(rc.rest, &rc.st, rc.flat)
	if err != nil && err != ErrBatchFull {
		return fmt.Errorf("raw events chunk, records from body byte %d: %w", rc.start, err)
	}
	rc.rest, rc.start = rc.rest[n:], rc.start+n
	return r.openEvents(b.body(), "raw events chunk")
}

// endRawPiece is endChunk for a piece of a raw chunk: it opens the next
// piece, if any (reporting whether it did).
func (r *Reader) endRawPiece() (bool, error) {
	rc := &r.rawc
	if len(rc.rest) == 0 {
		rc.on = false
		rc.chunks++
		return false, nil
	}
	return true, r.nextRawPiece()
}

// clockSyncs feeds the sync points of a clock chunk to the raw records'
// clock.
func (r *Reader) clockSyncs(syncs []ClockSync) {
	for _, s := range syncs {
		r.rawc.clock.Add(s.TSC, s.Mono)
	}
}
