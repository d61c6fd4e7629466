package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Writer writes a trace file (FORMAT.md). Its methods must be called from one
// goroutine, except EncodeBatch, which several goroutines may call at once
// on different batches (see WithConcurrency).
//
// Each chunk goes to the io.Writer in one Write call, so an unbuffered file
// is fine.
//
// Write errors. A failed Write of the file header fails NewWriter. A failed
// Write of a chunk is returned, and then:
//
//   - If the io.Writer wrote nothing (it returned n == 0, or it wrote part of
//     the chunk, took it back and says so through Rewinder), the file still
//     ends at a chunk boundary and the Writer stays usable: the chunk is
//     lost, and nothing else changes. Offset, Stats and the thread's time
//     order are as before the call; a batch is reset and its events are not
//     counted (the caller counts them as lost, e.g. as DropWriteError).
//     Later chunks follow once writing works again (disk space is freed).
//   - Otherwise part of the chunk reached the file, which is broken from
//     there: the error is sticky, every later method returns it, and Err
//     reports it. A reader reads the trace up to that chunk.
type Writer struct {
	w         io.Writer
	codec     byte          // how chunks are compressed (Level.codec)
	enc       *zstd.Encoder // codecZstd only
	tab       *kindTab      // the kind table written in the header
	off       int64
	err       error // sticky: the first write error that left a partial chunk
	closed    bool
	stats     Stats
	threadEnd map[uint32]int64 // last event time written per thread
	body      []byte           // scratch for defs, clock and stats bodies
	chunk     []byte           // scratch for their chunks
	s2Scratch []byte           // raw chunks: S2 output of one piece (appendS2Joined)
}

// Rewinder is implemented by an io.Writer that takes back what a failed
// Write wrote (for a file: truncates it to its length before the Write).
// After a Write that returned an error and n > 0, the Writer calls Rewound;
// true means the destination is as it was before that Write, so the Writer
// stays usable (see Writer). An io.Writer that rolls back can also just
// return n == 0, which the Writer takes to mean that nothing was written.
type Rewinder interface {
	Rewound() bool
}

// WriterOption configures a Writer.
type WriterOption func(*writerOptions) error

type writerOptions struct {
	level       Level
	concurrency int
	kinds       []KindDesc // the kind table to write with; nil: KindTable(). Set by tests only.
}

// encoderWindow is the zstd window the Writer compresses with: a smaller
// one than a chunk's body is a valid frame that any reader decodes (readers
// accept windows up to MaxRaw).
const encoderWindow = 1 << 20

// WithLevel sets the compression level. Default LevelFastest.
func WithLevel(l Level) WriterOption {
	return func(o *writerOptions) error {
		if l == 0 || l >= levelEnd {
			return fmt.Errorf("trace: WithLevel: invalid level %d (want LevelFastest..LevelBest)", l)
		}
		o.level = l
		return nil
	}
}

// WithConcurrency sets how many EncodeBatch calls may compress at once; each
// costs one zstd encoder's memory. Default 1, range 1..64.
func WithConcurrency(n int) WriterOption {
	return func(o *writerOptions) error {
		if n < 1 || n > 64 {
			return fmt.Errorf("trace: WithConcurrency: %d is out of range 1..64", n)
		}
		o.concurrency = n
		return nil
	}
}

// NewWriter writes the file header for h to w and returns a Writer for the
// chunks. h's Major, Minor and Kinds are ignored: the header carries this
// package's version and KindTable().
func NewWriter(w io.Writer, h *Header, opts ...WriterOption) (*Writer, error) {
	o := writerOptions{level: LevelFastest, concurrency: 1}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	tab, descs := compiledTab, compiledDescs
	if o.kinds != nil {
		var err error
		if tab, err = writerTab(o.kinds); err != nil {
			return nil, fmt.Errorf("trace: kind table: %v", err)
		}
		descs = o.kinds
	}
	tw := &Writer{w: w, tab: tab, codec: o.level.codec(), threadEnd: make(map[uint32]int64)}
	if tw.codec == codecZstd {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(o.level.zstd()),
			zstd.WithEncoderConcurrency(o.concurrency),
			zstd.WithEncoderCRC(false), // the chunk CRC covers the payload
			zstd.WithZeroFrames(true),
			// A chunk is compressed on its own, and one thread's batch is rarely
			// over 1 MiB: a larger window only costs memory (8 MiB of history
			// per encoder by default).
			zstd.WithWindowSize(encoderWindow),
			zstd.WithLowerEncoderMem(true),
			zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			return nil, fmt.Errorf("trace: %v", err)
		}
		tw.enc = enc
	}

	// FORMAT.md §1.
	body := h.appendBody(nil, descs)
	if len(body) > MaxHeaderBody {
		return nil, fmt.Errorf("trace: header is %d bytes, over the %d limit: shorten the config text or command line", len(body), MaxHeaderBody)
	}
	buf := make([]byte, 0, fileHeaderSize+len(body))
	buf = append(buf, magic...)
	buf = binary.LittleEndian.AppendUint16(buf, FormatMajor)
	buf = binary.LittleEndian.AppendUint16(buf, FormatMinor)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(body)))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(body, castagnoli))
	buf = append(buf, body...)
	if n, err := w.Write(buf); err != nil || n != len(buf) {
		if err == nil {
			err = io.ErrShortWrite
		}
		return nil, fmt.Errorf("trace: writing the file header: %w", err)
	}
	tw.off = int64(len(buf))
	return tw, nil
}

// Offset returns the number of bytes written so far: the offset in the file
// of the next chunk.
func (w *Writer) Offset() int64 { return w.off }

// BytesWritten returns the number of bytes written so far.
func (w *Writer) BytesWritten() uint64 { return uint64(w.off) }

// Events returns the number of events written so far.
func (w *Writer) Events() uint64 { return w.stats.TotalEvents() }

// Batch returns an empty batch for thread. Its events may not be earlier than
// the last event written for thread.
func (w *Writer) Batch(thread uint32) *Batch {
	b := NewBatch(thread, w.threadEnd[thread])
	b.tab = w.tab
	return b
}

// Err returns the sticky error that made the Writer unusable, or nil while
// it is usable (see Writer: a write that left nothing behind is not sticky).
func (w *Writer) Err() error { return w.err }

// WriteBatch compresses b, appends it to the file as one events chunk and
// resets b. An empty batch writes nothing. When the write fails, or the
// Writer is closed or broken, b is reset too and its events are not counted
// as written (see Writer).
func (w *Writer) WriteBatch(b *Batch) error {
	if err := w.usable(); err != nil {
		b.Reset()
		return err
	}
	if b.rawRecords != nil {
		// Every raw batch is compressed into one chunk buffer of the
		// Writer's: as large as a runtime buffer, too large to keep one
		// per batch.
		var err error
		if w.chunk, err = w.encodeRawChunk(w.chunk[:0], b); err != nil {
			b.Reset()
			return err
		}
		b.chunk, b.encoded = w.chunk, true
		err = w.WriteEncoded(b)
		b.chunk = nil
		return err
	}
	if _, err := w.EncodeBatch(b); err != nil {
		return err
	}
	return w.WriteEncoded(b)
}

// EncodeBatch compresses b into a complete events chunk, kept in b, and
// returns it (valid until b is reset). It is the expensive half of
// WriteBatch and is safe to call from several goroutines at once on
// different batches; WriteEncoded then appends the chunks in the order the
// caller chooses. An empty batch encodes to nothing.
func (w *Writer) EncodeBatch(b *Batch) ([]byte, error) {
	if b.tab != w.tab {
		return nil, errors.New("trace: EncodeBatch: the batch was made for another kind table: get batches from Writer.Batch")
	}
	if b.encoded {
		return b.chunk, nil
	}
	if b.rawRecords != nil {
		return nil, errors.New("trace: EncodeBatch: a raw batch (Batch.SetRaw) is written by WriteBatch")
	}
	if b.n == 0 {
		b.chunk = b.chunk[:0]
	} else {
		b.chunk = w.encodeChunk(b.chunk[:0], chunkEvents, b.body())
	}
	if len(b.chunk) > chunkHeaderSize+MaxPayload {
		// Unreachable while maxBatchRaw is well below MaxPayload.
		n := len(b.chunk) - chunkHeaderSize
		b.chunk = b.chunk[:0]
		return nil, fmt.Errorf("trace: batch compresses to %d bytes, over the %d limit", n, MaxPayload)
	}
	b.encoded = true
	return b.chunk, nil
}

// ForgetThreads lets go of what the writer keeps of each thread whose last
// batch ended before t (ns): the end that the thread's next batch is
// checked against. A process that makes a thread per task would otherwise
// keep an entry per thread it ever had. A later batch of a forgotten
// thread is not checked.
func (w *Writer) ForgetThreads(t int64) {
	for th, end := range w.threadEnd {
		if end < t {
			delete(w.threadEnd, th)
		}
	}
}

// WriteEncoded appends a batch encoded by EncodeBatch to the file, counts
// its events and resets it. It refuses (writing nothing) a batch that starts
// before the thread's previous batch ended (FORMAT.md §5): a thread's
// batches must be written in time order. When the write fails, or the
// Writer is closed or broken, the batch is reset uncounted (see Writer).
func (w *Writer) WriteEncoded(b *Batch) error {
	if err := w.usable(); err != nil {
		b.Reset()
		return err
	}
	if !b.encoded {
		return errors.New("trace: WriteEncoded: the batch was not encoded: call EncodeBatch first")
	}
	if b.n == 0 {
		b.Reset()
		return nil
	}
	// A raw chunk's reader clamps its times to the thread's end itself.
	if end, ok := w.threadEnd[b.thread]; ok && b.base < end && b.rawRecords == nil {
		return fmt.Errorf("trace: thread %d: batch starts at %d ns, before the thread's previous batch ended at %d ns; write each thread's batches in time order", b.thread, b.base, end)
	}
	if err := w.write(b.chunk); err != nil {
		b.Reset()
		return err
	}
	w.threadEnd[b.thread] = max(w.threadEnd[b.thread], b.last)
	w.stats.End = max(w.stats.End, b.last)
	w.stats.Clamped += b.clamped
	for k, c := range b.counts {
		w.stats.Events[k] += uint64(c)
	}
	b.Reset()
	return nil
}

// WriteDefs writes defs as one or more defs chunks (FORMAT.md §6). A
// DefString text longer than MaxString is cut to MaxString bytes at a
// character boundary. It stops at the first chunk whose write fails: the defs
// of the chunks before it are written, the others are not.
func (w *Writer) WriteDefs(defs []Def) error {
	if err := w.usable(); err != nil {
		return err
	}
	var n uint64
	body := w.body[:0]
	for i := range defs {
		d := &defs[i]
		ki := &w.tab[d.Kind]
		if d.Kind <= maxEventKind || !ki.valid {
			return fmt.Errorf("trace: WriteDefs: defs[%d] has kind %v, not a definition kind", i, d.Kind)
		}
		body = append(body, byte(d.Kind))
		for j := 0; j < int(ki.n); j++ {
			if ki.types[j] == ArgInt {
				body = appendVarint(body, int64(d.Args[j]))
			} else {
				body = appendUvarint(body, d.Args[j])
			}
		}
		if ki.text {
			text := d.Text
			if len(text) > MaxString {
				cut := MaxString
				for cut > 0 && !utf8.RuneStart(text[cut]) {
					cut--
				}
				text = text[:cut]
			}
			body = appendUvarint(body, uint64(len(text)))
			body = append(body, text...)
		}
		n++
		if len(body) >= maxBatchRaw || i == len(defs)-1 {
			if err := w.writeCold(chunkDefs, n, body); err != nil {
				return err
			}
			n, body = 0, body[:0]
		}
	}
	w.body = body
	return nil
}

// WriteClock writes sync points as a clock chunk (FORMAT.md §7).
func (w *Writer) WriteClock(syncs []ClockSync) error {
	if err := w.usable(); err != nil {
		return err
	}
	body := w.body[:0]
	var n uint64
	for i, s := range syncs {
		body = appendUvarint(body, s.TSC)
		body = appendVarint(body, s.Mono)
		n++
		if len(body) >= maxBatchRaw || i == len(syncs)-1 {
			if err := w.writeCold(chunkClock, n, body); err != nil {
				return err
			}
			n, body = 0, body[:0]
		}
	}
	w.body = body
	return nil
}

// WriteStats writes a stats chunk (FORMAT.md §8) with s's Dropped counters
// and the writer's own event counts, clamp count, size and end time (s's
// values for those are ignored, except a later s.End, and s.Clamped, which
// is added: the times the caller's producers clamped so far). With s.Final set it
// closes the trace, as Close does, unless the write fails without a trace
// (see Writer): then the Writer stays open and Close may be tried again.
func (w *Writer) WriteStats(s *Stats) error {
	if err := w.usable(); err != nil {
		return err
	}
	w.stats.Dropped = s.Dropped
	w.stats.End = max(w.stats.End, s.End)
	w.stats.Bytes = uint64(w.off)
	w.stats.Final = s.Final
	out := w.stats
	out.Clamped += s.Clamped
	err := w.writeChunk(chunkStats, out.appendBody(w.body[:0]))
	if s.Final && (err == nil || w.err != nil) {
		w.closed = true
	}
	return err
}

// Close writes the final stats chunk, carrying the Dropped counters of the
// last WriteStats call. It does not close the underlying io.Writer. Closing
// twice is a no-op, except after a Close whose chunk was lost without a trace
// (see Writer): then Close tries again.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	s := Stats{Dropped: w.stats.Dropped, Final: true}
	return w.WriteStats(&s)
}

// Stats returns the counters as the next stats chunk would carry them.
func (w *Writer) Stats() Stats {
	s := w.stats
	s.Bytes = uint64(w.off)
	return s
}

func (w *Writer) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("trace: write after Close")
	}
	return nil
}

// writeCold writes a defs or clock chunk: count, then body.
func (w *Writer) writeCold(typ byte, n uint64, body []byte) error {
	full := appendUvarint(make([]byte, 0, 10+len(body)), n)
	return w.writeChunk(typ, append(full, body...))
}

func (w *Writer) writeChunk(typ byte, body []byte) error {
	w.chunk = w.encodeChunk(w.chunk[:0], typ, body)
	return w.write(w.chunk)
}

// encodeChunk appends to dst a chunk of type typ holding body (FORMAT.md §3).
func (w *Writer) encodeChunk(dst []byte, typ byte, body []byte) []byte {
	dst = w.appendChunkHeader(dst, typ, len(body))
	if w.codec == codecS2 {
		n := len(dst)
		dst = slices.Grow(dst, s2.MaxEncodedLen(len(body)))
		dst = dst[:n+len(s2.Encode(dst[n:cap(dst)], body))]
	} else {
		dst = w.enc.EncodeAll(body, dst)
	}
	sealChunk(dst)
	return dst
}

// appendChunkHeader appends the header of a chunk of type typ whose body
// is n bytes uncompressed; sealChunk fills in its payload length and CRC.
func (w *Writer) appendChunkHeader(dst []byte, typ byte, n int) []byte {
	dst = append(dst, chunkMagic...)
	dst = append(dst, typ|w.codec<<codecShift)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // payload length, sealChunk's
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	return binary.LittleEndian.AppendUint32(dst, 0) // CRC, sealChunk's
}

// sealChunk fills in the payload length and the CRC of the chunk that is
// all of c.
func sealChunk(c []byte) {
	h := c[:chunkHeaderSize]
	binary.LittleEndian.PutUint32(h[5:], uint32(len(c)-chunkHeaderSize))
	crc := crc32.Update(0, castagnoli, h[4:13])
	crc = crc32.Update(crc, castagnoli, c[chunkHeaderSize:])
	binary.LittleEndian.PutUint32(h[13:], crc)
}

// write appends one whole chunk to the file. See Writer for what a failure
// means.
func (w *Writer) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.w.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err == nil {
		w.off += int64(n)
		return nil
	}
	if n <= 0 || w.rewound() {
		return fmt.Errorf("trace: writing a %d-byte chunk at offset %d: %w (the chunk is lost; the file still ends at a chunk boundary and later chunks may follow)", len(b), w.off, err)
	}
	n = min(n, len(b))
	w.err = fmt.Errorf("trace: writing a %d-byte chunk at offset %d: %w; %d of its bytes reached the file, which is broken from there: no more chunks can be written", len(b), w.off, err, n)
	w.off += int64(n)
	return w.err
}

func (w *Writer) rewound() bool {
	r, ok := w.w.(Rewinder)
	return ok && r.Rewound()
}

// appendBody encodes s (FORMAT.md §8).
func (s *Stats) appendBody(b []byte) []byte {
	var flags uint64
	if s.Final {
		flags |= 1
	}
	b = appendUvarint(b, flags)
	b = appendVarint(b, s.End)
	b = appendUvarint(b, s.Bytes)
	b = appendUvarint(b, s.Clamped)
	b = appendNonZero(b, s.Events[:])
	b = appendNonZero(b, s.Dropped[:])
	return b
}

// appendNonZero writes the count of non-zero counters, then (index, value)
// for each.
func appendNonZero(b []byte, c []uint64) []byte {
	n := 0
	for _, v := range c {
		if v != 0 {
			n++
		}
	}
	b = appendUvarint(b, uint64(n))
	for i, v := range c {
		if v != 0 {
			b = appendUvarint(b, uint64(i))
			b = appendUvarint(b, v)
		}
	}
	return b
}
