package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strconv"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Reader reads a trace file (FORMAT.md) front to back. It never panics on
// broken input: every problem is an *Error naming the offset and chunk.
type Reader struct {
	win     window
	hdr     Header
	dec     *zstd.Decoder
	salvage bool

	next     int    // index of the next chunk
	chunk    int    // index of the current chunk
	chunkOff int64  // offset of the current chunk
	intact   int    // chunks read without error
	zbuf     []byte // for the decompressed bodies
	raw      []byte // the current chunk's body
	typ      byte   // type of the current chunk, 0 when between chunks
	p        int    // next byte of raw
	left     uint64 // events or defs of the current chunk still to decode
	total    uint64 // events or defs the current chunk declared

	// Events chunk state (FORMAT.md §5).
	thread    uint32
	time      int64
	corr      uint64
	prev      [maxEventKind + 1][MaxArgs]uint64
	threadEnd map[uint32]int64
	rawc      rawChunk // the raw events chunk being read (FORMAT.md §5a)

	kinds kindTab // the file's kind table (FORMAT.md §4)
	// eventHead and rawHead tell the head bytes an event of an events
	// chunk, and a raw record, may start with: a kind of the file (a timed
	// one that AddFlat encodes, for a raw record), S only when the S flag
	// covers any of its arguments, C only when it has a correlation id.
	// One load where three checks of its kind's entry stalled on that
	// entry's load.
	eventHead, rawHead [256]bool

	dict      Dict
	clock     []ClockSync
	stats     *Stats
	lastFinal bool  // the last chunk read was a final stats chunk
	err       error // sticky

	skipped  int64
	problems []*Error
}

// ReaderOption configures a Reader.
type ReaderOption func(*Reader)

// WithSalvage makes the reader carry on past broken chunks: it records the
// problem (see Problems), scans forward for the next chunk whose checksum
// holds, and ends with io.EOF at the end of input. For recovering what is
// left of a damaged trace; Complete says whether it was closed cleanly.
func WithSalvage(on bool) ReaderOption { return func(r *Reader) { r.salvage = on } }

// NewReader reads and checks the file header (FORMAT.md §1, §2).
func NewReader(rd io.Reader, opts ...ReaderOption) (*Reader, error) {
	r := &Reader{win: window{r: rd}, threadEnd: make(map[uint32]int64)}
	for _, o := range opts {
		o(r)
	}
	if err := r.readHeader(); err != nil {
		return nil, err
	}
	dec, err := sharedDecoder()
	if err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	r.dec = dec
	return r, nil
}

// sharedDecoder is one zstd decoder for every Reader: DecodeAll is safe for
// concurrent use, and tools that open one trace per rank would otherwise
// build a decoder per file.
var sharedDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0), // GOMAXPROCS readers at once
		zstd.WithDecoderMaxMemory(MaxRaw),
		zstd.WithDecoderMaxWindow(MaxRaw),
		zstd.WithDecodeAllCapLimit(true)) // never decode past the declared length
})

// Open opens the trace file at path. Close the returned Closer when done.
// Errors name the file.
func Open(path string, opts ...ReaderOption) (*Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := NewReader(f, opts...)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, f, nil
}

// Header returns the file header.
func (r *Reader) Header() *Header { return &r.hdr }

// Dict returns the definitions read so far.
func (r *Reader) Dict() *Dict { return &r.dict }

// Stats returns the last stats chunk read, or nil.
func (r *Reader) Stats() *Stats { return r.stats }

// Complete reports whether the last chunk read so far was a final stats
// chunk: after io.EOF, whether the trace was closed cleanly.
func (r *Reader) Complete() bool { return r.lastFinal }

// Chunks returns the number of chunks read intact so far.
func (r *Reader) Chunks() int { return r.intact }

// Offset returns the offset of the chunk being read.
func (r *Reader) Offset() int64 { return r.chunkOff }

// Skipped returns the number of bytes a salvaging reader passed over.
func (r *Reader) Skipped() int64 { return r.skipped }

// Problems returns the errors a salvaging reader carried on past.
func (r *Reader) Problems() []*Error { return r.problems }

func (r *Reader) readHeader() error {
	hdrErr := func(off int64, err error) error { return &Error{Offset: off, Chunk: -1, Err: err} }
	b := r.win.fill(fileHeaderSize)
	if err := r.win.readErr(); err != nil {
		return hdrErr(0, fmt.Errorf("reading: %w", err))
	}
	if len(b) == 0 {
		return hdrErr(0, wrapf(ErrNotTrace, "the file is empty: not an occa-tools trace (was the traced process killed before it wrote anything?)"))
	}
	if err := checkMagic(b); err != nil {
		return hdrErr(0, err)
	}
	if len(b) < 12 {
		return hdrErr(int64(len(b)), cutf("the file ends inside the header (%d of %d bytes)", len(b), fileHeaderSize))
	}
	r.hdr.Major = binary.LittleEndian.Uint16(b[8:])
	r.hdr.Minor = binary.LittleEndian.Uint16(b[10:])
	if r.hdr.Major < oldestMajor || r.hdr.Major > FormatMajor {
		return hdrErr(8, wrapf(ErrVersion, "trace format version %d.%d is not supported: this occa-tools reads formats %d.x to %d.x; read it with the occa-tools release that wrote it (the header names it) or a newer one",
			r.hdr.Major, r.hdr.Minor, oldestMajor, FormatMajor))
	}
	if len(b) < fileHeaderSize {
		return hdrErr(int64(len(b)), cutf("the file ends inside the header (%d of %d bytes)", len(b), fileHeaderSize))
	}
	n := binary.LittleEndian.Uint32(b[12:])
	sum := binary.LittleEndian.Uint32(b[16:])
	if n > MaxHeaderBody {
		return hdrErr(12, fmt.Errorf("declared header length %d is over the %d limit", n, MaxHeaderBody))
	}
	b = r.win.fill(fileHeaderSize + int(n))
	if err := r.win.readErr(); err != nil {
		return hdrErr(0, fmt.Errorf("reading: %w", err))
	}
	if len(b) < fileHeaderSize+int(n) {
		return hdrErr(int64(len(b)), cutf("the file ends inside the header (%d of %d bytes)", len(b), fileHeaderSize+int(n)))
	}
	body := b[fileHeaderSize:]
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return hdrErr(fileHeaderSize, wrapf(ErrChecksum, "header checksum mismatch (stored %08x, computed %08x): the header is damaged", sum, got))
	}
	if err := r.hdr.parseBody(body); err != nil {
		return hdrErr(fileHeaderSize, err)
	}
	kinds := kindsOf(r.hdr.Kinds)
	if err := kinds.compat; err != nil {
		by := "an occa-tools that did not record its version"
		if r.hdr.ToolVersion != "" {
			by = "occa-tools " + strconv.Quote(r.hdr.ToolVersion)
		}
		return hdrErr(fileHeaderSize, wrapf(ErrVersion, "the file's kind table is incompatible with this reader's: %v; the trace was written by %s, whose format should have had a new major version: read it with that release", err, by))
	}
	r.kinds = *kinds.tab
	for h := range r.rawHead {
		ki := &r.kinds[h&kindMask]
		flags := (h&HeadS == 0 || ki.refs != 0) && (h&HeadC == 0 || ki.corr >= 0)
		r.eventHead[h] = ki.valid && flags
		r.rawHead[h] = ki.flatN >= 0 && flags
	}
	r.rawc.clock = NewTickClock(r.hdr.ClockSource != "tsc")
	r.win.skip(fileHeaderSize + int(n))
	return nil
}

// RawChunks returns how many of those were raw events chunks (FORMAT.md
// §5a): whole buffers the runtime wrote as its threads recorded them.
func (r *Reader) RawChunks() int { return r.rawc.chunks }

// checkMagic explains a wrong magic: text-mode transfer, 7-bit transfer, or
// not a trace at all (FORMAT.md §1).
func checkMagic(b []byte) error {
	m := b[:min(len(b), len(magic))]
	if string(m) == magic {
		return nil
	}
	if len(m) < len(magic) && string(m) == magic[:len(m)] {
		return cutf("the file ends inside the magic number (%d of %d bytes)", len(m), len(magic))
	}
	if len(m) >= 4 && string(m[1:4]) == magic[1:4] {
		switch {
		case m[0] == magic[0]&0x7f:
			return wrapf(ErrNotTrace, "the file's first byte lost its high bit: it went through a 7-bit text transfer; copy it again in binary mode")
		case lineEndingsChanged(b[4:]):
			return wrapf(ErrNotTrace, "the file's line endings were converted: it went through a text-mode transfer; copy it again in binary mode")
		}
	}
	return wrapf(ErrNotTrace, "not an occa-tools trace (the file starts with % x, a trace with % x)", m, []byte(magic))
}

// lineEndingsChanged reports whether rest, the file after "\x89OCT", holds
// the magic's "\r\n\x1a\n" after a CRLF→LF or LF→CRLF conversion.
func lineEndingsChanged(rest []byte) bool {
	for _, s := range []string{"\n\x1a\n", "\r\r\n\x1a\r\n", "\r\n\x1a\r\n"} {
		if bytes.HasPrefix(rest, []byte(s)) {
			return true
		}
	}
	return false
}

// ReadEvent returns the next event, absorbing definitions into Dict and
// stats into Stats on the way. It returns io.EOF at the clean end of the
// trace and an *Error for broken or truncated input.
func (r *Reader) ReadEvent() (e Event, err error) {
	err = r.ReadEventTo(&e)
	return
}

// ReadEventTo is ReadEvent into *e, for loops that keep one Event: a
// returned Event is copied once more into the caller's (a tenth of the
// pairing's time). On error *e is undefined.
func (r *Reader) ReadEventTo(e *Event) (err error) {
	if r.left > 0 && (r.typ == chunkEvents || r.typ == chunkRaw) {
		if r.typ == chunkEvents {
			err = r.decodeEvent(e)
		} else {
			err = r.decodeRawEvent(e)
		}
		if err == nil {
			return
		}
		if err = r.contentError(err); err != nil {
			return
		}
	}
	*e, err = r.readEventSlow()
	return
}

// readEventSlow is ReadEvent between chunks. Apart so that ReadEvent's frame
// stays small: a Record in it costs the hot path a quarter of its time.
func (r *Reader) readEventSlow() (Event, error) {
	for {
		rec, err := r.Next()
		if err != nil {
			return Event{}, err
		}
		if rec.Type == RecordEvent {
			return rec.Event, nil
		}
	}
}

// Next returns the next record in file order: each event, each def, and one
// record per clock or stats chunk. Defs are also absorbed into Dict and stats
// into Stats. It returns io.EOF at the clean end of the trace and an *Error
// for broken or truncated input; after an error it returns the same error.
func (r *Reader) Next() (Record, error) {
	var rec Record
	if r.err != nil {
		return rec, r.err
	}
	for {
		if r.left > 0 {
			var err error
			switch r.typ {
			case chunkEvents:
				rec.Type = RecordEvent
				err = r.decodeEvent(&rec.Event)
			case chunkRaw:
				rec.Type = RecordEvent
				err = r.decodeRawEvent(&rec.Event)
			case chunkDefs:
				rec.Type = RecordDef
				if err = r.decodeDef(&rec.Def); err == nil {
					r.dict.add(&rec.Def)
				}
			}
			if err == nil {
				return rec, nil
			}
			if err = r.contentError(err); err != nil {
				return rec, err
			}
			continue
		}
		if r.typ != 0 {
			if err := r.endChunk(); err != nil {
				if err = r.contentError(err); err != nil {
					return rec, err
				}
				continue
			}
		}
		typ, err := r.nextChunk()
		if err != nil {
			return rec, err
		}
		switch typ {
		case chunkClock:
			rec.Type, rec.Clock = RecordClock, r.clock
			return rec, nil
		case chunkStats:
			rec.Type, rec.Stats = RecordStats, r.stats
			return rec, nil
		}
	}
}

// openEvents starts reading an events chunk whose body is r.raw.
func (r *Reader) openEvents() error {
	body := r.raw
	th, i, ok1 := uvarint(body, 0)
	base, i, ok2 := uvarint(body, i)
	n, i, ok3 := uvarint(body, i)
	switch {
	case !ok1 || !ok2 || !ok3:
		return errors.New("events chunk: bad varint in its prefix")
	case th > math.MaxUint32:
		return fmt.Errorf("events chunk: thread index %d is out of range", th)
	case base > math.MaxInt64:
		return fmt.Errorf("events chunk: base time %d is out of range", base)
	case n > uint64(len(body)-i)/2: // an event takes at least 2 bytes
		return fmt.Errorf("events chunk: declares %d events but has room for at most %d", n, (len(body)-i)/2)
	}
	if end, ok := r.threadEnd[uint32(th)]; ok && n > 0 && int64(base) < end {
		return fmt.Errorf("thread %d: batch starts at %d ns, before its previous batch ended at %d ns (time going backwards)", th, base, end)
	}
	r.thread, r.time, r.corr = uint32(th), int64(base), 0
	r.prev = [maxEventKind + 1][MaxArgs]uint64{}
	r.p, r.left, r.total, r.typ = i, n, n, chunkEvents
	return nil
}

// endChunk checks that the finished chunk holds nothing more and closes it.
func (r *Reader) endChunk() error {
	typ := r.typ
	r.typ = 0
	if (typ == chunkEvents || typ == chunkRaw) && r.total > 0 {
		r.threadEnd[r.thread] = r.time
	}
	if r.p != len(r.raw) {
		return fmt.Errorf("%d unexpected bytes after the last record of the chunk", len(r.raw)-r.p)
	}
	if typ == chunkRaw {
		r.rawc.chunks++
	}
	r.intact++
	return nil
}

// contentError handles a problem inside a chunk whose framing is intact: a
// salvaging reader records it and drops the rest of the chunk; otherwise the
// error sticks.
func (r *Reader) contentError(err error) error {
	e := &Error{Offset: r.chunkOff, Chunk: r.chunk, Err: err}
	if r.typ == chunkEvents && r.left < r.total || r.typ == chunkRaw && r.total > 0 {
		// Keep the thread's order check honest for the events returned.
		r.threadEnd[r.thread] = r.time
	}
	r.typ, r.left = 0, 0
	if r.salvage {
		r.problems = append(r.problems, e)
		return nil
	}
	r.err = e
	return e
}

// nextChunk reads and opens the next chunk, returning its type. In salvage
// mode it skips broken stretches; at the end of input it returns io.EOF or
// the "no final stats" error.
func (r *Reader) nextChunk() (byte, error) {
	for {
		off := r.win.offset()
		typ, err := r.readChunk()
		if err == nil {
			if typ == 0 {
				continue // unknown type, skipped
			}
			return typ, nil
		}
		if err == io.EOF {
			r.err = io.EOF
			return 0, io.EOF
		}
		e, ok := err.(*Error)
		if !ok || !r.salvage || r.win.readErr() != nil {
			// An I/O error is no damage to skip, even when salvaging.
			r.err = err
			return 0, err
		}
		r.problems = append(r.problems, e)
		if e.Truncated() && r.win.atEOF() {
			r.err = io.EOF
			return 0, io.EOF
		}
		if !r.resync() {
			// At the end of input: what is left cannot hold a chunk.
			r.win.skip(len(r.win.avail()))
			r.skipped += r.win.offset() - off
			r.err = io.EOF
			return 0, io.EOF
		}
		r.skipped += r.win.offset() - off
	}
}

// resync moves the window to the next chunk magic, after the current
// position, that starts a chunk whose lengths and checksum hold.
func (r *Reader) resync() bool {
	from := 1
	for {
		i := r.win.indexMagic(from)
		if i < 0 {
			return false
		}
		// indexMagic may have consumed bytes; i is relative to the new position.
		if r.chunkAt(i) {
			r.win.skip(i)
			return true
		}
		from = i + 1
	}
}

// chunkAt reports whether a well-formed chunk starts i bytes after the read
// position (FORMAT.md §3).
func (r *Reader) chunkAt(i int) bool {
	b := r.win.fill(i + chunkHeaderSize)
	if len(b) < i+chunkHeaderSize {
		return false
	}
	h := b[i : i+chunkHeaderSize]
	plen := binary.LittleEndian.Uint32(h[5:])
	rlen := binary.LittleEndian.Uint32(h[9:])
	if plen > MaxPayload || rlen > MaxRaw {
		return false
	}
	b = r.win.fill(i + chunkHeaderSize + int(plen))
	if len(b) < i+chunkHeaderSize+int(plen) {
		return false
	}
	h = b[i : i+chunkHeaderSize]
	crc := crc32.Update(0, castagnoli, h[4:13])
	crc = crc32.Update(crc, castagnoli, b[i+chunkHeaderSize:i+chunkHeaderSize+int(plen)])
	return crc == binary.LittleEndian.Uint32(h[13:])
}

// readChunk reads the chunk at the window position (FORMAT.md §3) and
// prepares its body. It returns type 0 for a chunk of unknown type. It
// consumes nothing when the framing is broken, so a salvager can rescan.
func (r *Reader) readChunk() (byte, error) {
	off := r.win.offset()
	idx := r.next
	fail := func(err error) (byte, error) { return 0, &Error{Offset: off, Chunk: idx, Err: err} }
	h := r.win.fill(chunkHeaderSize)
	if err := r.win.readErr(); err != nil && len(h) < chunkHeaderSize {
		return fail(fmt.Errorf("reading: %w", err))
	}
	if len(h) == 0 {
		if r.lastFinal {
			return 0, io.EOF
		}
		return fail(noFinalError(r.intact))
	}
	if len(h) >= len(chunkMagic) && string(h[:len(chunkMagic)]) != chunkMagic {
		return fail(fmt.Errorf("no chunk starts here (found % x, a chunk starts with % x); the file is damaged", h[:4], []byte(chunkMagic)))
	}
	if len(h) < chunkHeaderSize {
		return fail(cutf("the file ends inside a chunk header (%d of %d bytes): the process was killed while writing or the file was cut", len(h), chunkHeaderSize))
	}
	typ, codec := h[4], byte(codecZstd)
	if r.hdr.Major >= 2 {
		typ, codec = h[4]&typeMask, h[4]>>codecShift
	}
	plen := binary.LittleEndian.Uint32(h[5:])
	rlen := binary.LittleEndian.Uint32(h[9:])
	sum := binary.LittleEndian.Uint32(h[13:])
	if plen > MaxPayload {
		return fail(fmt.Errorf("declared payload length %d is over the %d limit", plen, MaxPayload))
	}
	if rlen > MaxRaw {
		return fail(fmt.Errorf("declared uncompressed length %d is over the %d limit", rlen, MaxRaw))
	}
	b := r.win.fill(chunkHeaderSize + int(plen))
	if len(b) < chunkHeaderSize+int(plen) {
		if err := r.win.readErr(); err != nil {
			return fail(fmt.Errorf("reading: %w", err))
		}
		return fail(cutf("the file ends inside a chunk (%d of its %d payload bytes): the process was killed while writing or the file was cut", len(b)-chunkHeaderSize, plen))
	}
	payload := b[chunkHeaderSize:]
	crc := crc32.Update(0, castagnoli, b[4:13])
	if crc = crc32.Update(crc, castagnoli, payload); crc != sum {
		return fail(wrapf(ErrChecksum, "chunk checksum mismatch (stored %08x, computed %08x): the chunk is damaged", sum, crc))
	}

	// The framing holds: from here on the chunk is consumed whatever its body.
	r.win.skip(chunkHeaderSize + int(plen))
	r.next++
	r.chunk, r.chunkOff = idx, off
	r.lastFinal = false
	if typ < chunkDefs || typ > chunkRaw {
		r.intact++
		return 0, nil // a later minor version's chunk type (FORMAT.md §3)
	}
	if cap(r.zbuf) < int(rlen) {
		r.zbuf = make([]byte, 0, rlen)
	}
	// A content problem returns type 0: a salvager carries on with the
	// next chunk, anyone else gets the sticky error.
	raw, err := r.decompress(codec, payload, r.zbuf[:0:rlen])
	if err != nil {
		return 0, r.contentError(err)
	}
	if len(raw) != int(rlen) {
		return 0, r.contentError(fmt.Errorf("the chunk decompresses to %d bytes, its header says %d", len(raw), rlen))
	}
	r.raw, r.p = raw, 0
	if err := r.openBody(typ); err != nil {
		return 0, r.contentError(err)
	}
	return typ, nil
}

// decompress decodes a chunk's payload into dst, whose capacity is the
// declared uncompressed length: neither codec writes past it.
func (r *Reader) decompress(codec byte, payload, dst []byte) ([]byte, error) {
	switch codec {
	case codecZstd:
		raw, err := r.dec.DecodeAll(payload, dst)
		if err != nil {
			return nil, fmt.Errorf("decompressing the chunk (zstd): %v", err)
		}
		return raw, nil
	case codecS2:
		n, err := s2.DecodedLen(payload)
		if err != nil {
			return nil, fmt.Errorf("decompressing the chunk (S2): %v", err)
		}
		if n != cap(dst) {
			return nil, fmt.Errorf("the chunk decompresses to %d bytes, its header says %d", n, cap(dst))
		}
		raw, err := s2.Decode(dst[:n], payload)
		if err != nil {
			return nil, fmt.Errorf("decompressing the chunk (S2): %v", err)
		}
		return raw, nil
	}
	return nil, fmt.Errorf("the chunk's codec %d is unknown (FORMAT.md §3 has 0 zstd and 1 S2): read the file with the occa-tools release that wrote it", codec)
}

// noFinalError is the error for a trace that ends at a chunk boundary
// without its final stats (FORMAT.md §3).
func noFinalError(chunks int) error {
	return &sentinelError{
		msg: fmt.Sprintf("%v: the process was killed or is still running; %d chunks readable", ErrNoFinalStats, chunks),
		err: errNoFinal,
	}
}

// errNoFinal matches both ErrNoFinalStats and io.ErrUnexpectedEOF.
var errNoFinal = multiError{ErrNoFinalStats, io.ErrUnexpectedEOF}

type multiError []error

func (m multiError) Error() string   { return m[0].Error() }
func (m multiError) Unwrap() []error { return m }

// openBody reads the start of a chunk body: the prefix of an events or defs
// chunk, or all of a clock or stats chunk.
func (r *Reader) openBody(typ byte) error {
	raw := r.raw
	switch typ {
	case chunkEvents: // FORMAT.md §5
		return r.openEvents()
	case chunkRaw: // FORMAT.md §5a
		return r.openRaw()
	case chunkDefs: // FORMAT.md §6
		n, i, ok := uvarint(raw, 0)
		if !ok {
			return errors.New("defs chunk: bad count varint")
		}
		if n > uint64(len(raw)-i) {
			return fmt.Errorf("defs chunk: declares %d defs but has room for at most %d", n, len(raw)-i)
		}
		r.p, r.left, r.total, r.typ = i, n, n, typ
	case chunkClock: // FORMAT.md §7
		n, i, ok := uvarint(raw, 0)
		if !ok || n > uint64(len(raw)-i)/2 {
			return errors.New("clock chunk: bad count")
		}
		r.clock = r.clock[:0]
		for k := uint64(0); k < n; k++ {
			var tsc, mono uint64
			tsc, i, ok = uvarint(raw, i)
			if ok {
				mono, i, ok = uvarint(raw, i)
			}
			if !ok {
				return fmt.Errorf("clock chunk: bad varint in sync point %d", k)
			}
			r.clock = append(r.clock, ClockSync{TSC: tsc, Mono: unzigzag(mono)})
		}
		r.clockSyncs(r.clock)
		r.p, r.typ, r.left = i, typ, 0
	case chunkStats: // FORMAT.md §8
		s, err := parseStats(raw)
		if err != nil {
			return err
		}
		r.stats = s
		r.p, r.typ, r.left = len(raw), typ, 0 // later fields ignored
		r.lastFinal = s.Final
	}
	return nil
}

func parseStats(b []byte) (*Stats, error) {
	var s Stats
	var v [4]uint64
	i := 0
	for k := range v {
		var ok bool
		if v[k], i, ok = uvarint(b, i); !ok {
			return nil, errors.New("stats chunk: bad varint")
		}
	}
	s.Final = v[0]&1 != 0
	s.End, s.Bytes, s.Clamped = unzigzag(v[1]), v[2], v[3]
	for part := 0; part < 2; part++ {
		n, j, ok := uvarint(b, i)
		if !ok || n > uint64(len(b)-j)/2 {
			return nil, errors.New("stats chunk: bad counter count")
		}
		i = j
		for ; n > 0; n-- {
			var idx, c uint64
			idx, i, ok = uvarint(b, i)
			if ok {
				c, i, ok = uvarint(b, i)
			}
			if !ok {
				return nil, errors.New("stats chunk: bad varint in a counter")
			}
			if part == 0 {
				if idx >= NumKindCounters {
					return nil, fmt.Errorf("stats chunk: event count for kind %d, beyond the timed kinds", idx)
				}
				s.Events[idx] += c
			} else {
				if idx >= NumReasonCounters {
					idx = 0 // a reason this version does not know
				}
				s.Dropped[idx] += c
			}
		}
	}
	return &s, nil
}
