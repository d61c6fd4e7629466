package trace

import (
	"bytes"
	"io"
)

// window is the reader's view of the input: a buffer that can be looked into
// ahead of the read position and grows only as data arrives, so a declared
// length can never make the reader allocate more than the input holds. The
// salvager needs the look-ahead to retry from a byte after a false chunk magic.
type window struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unconsumed byte in buf
	base int64 // file offset of buf[0]
	err  error // read error (io.EOF at the end)

	zeros int // reads that returned 0, nil
}

// minBuf is the window's first size; it doubles as chunks need, so a small
// or hostile input costs little and a large trace settles at about twice its
// largest chunk.
const minBuf = 4 << 10

// offset returns the file offset of the read position.
func (w *window) offset() int64 { return w.base + int64(w.pos) }

// avail returns the unconsumed bytes held.
func (w *window) avail() []byte { return w.buf[w.pos:] }

// fill makes at least n unconsumed bytes available if the input has them and
// returns what is available (possibly fewer at the end of input). The result
// is valid until the next fill or skip.
func (w *window) fill(n int) []byte {
	for len(w.buf)-w.pos < n && w.err == nil {
		if w.pos > 0 && (w.pos >= len(w.buf)/2 || cap(w.buf)-w.pos < n) {
			// Drop consumed bytes before growing.
			m := copy(w.buf, w.buf[w.pos:])
			w.base += int64(w.pos)
			w.buf, w.pos = w.buf[:m], 0
		}
		if len(w.buf) == cap(w.buf) {
			// Double, never jumping straight to a declared size: the
			// buffer grows only as fast as data actually arrives.
			nb := make([]byte, len(w.buf), max(2*cap(w.buf), minBuf))
			copy(nb, w.buf)
			w.buf = nb
		}
		k, err := w.r.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+k]
		switch {
		case err != nil:
			w.err = err
		case k == 0:
			w.zeros++
			if w.zeros > 100 { // io.Reader discourages 0, nil; do not spin on it
				w.err = io.ErrNoProgress
			}
		}
	}
	return w.avail()[:min(n, len(w.buf)-w.pos)]
}

// skip consumes n available bytes.
func (w *window) skip(n int) { w.pos += n }

// atEOF reports whether no byte follows the read position.
func (w *window) atEOF() bool { return len(w.fill(1)) == 0 }

// readErr returns the read error other than io.EOF, if any.
func (w *window) readErr() error {
	if w.err == io.EOF {
		return nil
	}
	return w.err
}

const scanStep = 64 << 10

// indexMagic returns the index, relative to the read position, of the next
// chunk magic at or after from, or -1 at the end of input. It reads ahead in
// steps so scanning a long damaged stretch needs bounded memory.
func (w *window) indexMagic(from int) int {
	for {
		avail := w.fill(from + len(chunkMagic))
		if len(avail) < from+len(chunkMagic) {
			if i := bytes.Index(avail[min(from, len(avail)):], []byte(chunkMagic)); i >= 0 {
				return from + i
			}
			return -1
		}
		avail = w.fill(from + scanStep)
		if i := bytes.Index(avail[from:], []byte(chunkMagic)); i >= 0 {
			return from + i
		}
		// Nothing here: consume what cannot start a magic.
		drop := len(avail) - (len(chunkMagic) - 1)
		w.skip(drop)
		from = max(from-drop, 0)
	}
}
