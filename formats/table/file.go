package table

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// File is an output file (a CSV table, a JSON trace) behind a 1 MiB
// buffer. A record is appended straight into the buffer (Tail, Commit),
// where bufio.Writer would take it from a buffer of the writer's own and
// copy it (a twentieth of writing CSV). Closed files give their buffers
// back to a pool: a run of 10,000 ranks writes 10,000 files, and
// allocating and clearing a megabyte for each took a sixth of converting
// them to CSV.
type File struct {
	f   *os.File
	buf []byte // what is not written yet; nil once closed
	err error  // the first write error, kept until Close
}

const fileBuffer = 1 << 20

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, fileBuffer); return &b }}

// CreateFile creates the file at path, and its directory.
func CreateFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &File{f: f, buf: (*buffers.Get().(*[]byte))[:0]}, nil
}

// Name is the file's path.
func (t *File) Name() string { return t.f.Name() }

// Tail returns the buffer's free part, empty, for one record to be
// appended to and handed to Commit before anything else is written.
func (t *File) Tail() []byte {
	n := len(t.buf)
	return t.buf[n:n:cap(t.buf)]
}

// Commit writes b, appended to what Tail returned. Mostly b is in the
// buffer already; one that outgrew the buffer's rest on the way was moved
// (by append or slices.Grow, which may have made room for more than b
// holds now), and is copied after the buffer is written out.
func (t *File) Commit(b []byte) error {
	n := len(t.buf)
	if len(b) > 0 && n < cap(t.buf) && &b[0] == &t.buf[:n+1][n] && t.err == nil {
		t.buf = t.buf[:n+len(b)] // b's capacity is the buffer's rest
		return nil
	}
	_, err := t.Write(b)
	return err
}

// Write appends p to the buffer, writing the buffer out when it is full;
// the error is the first write's that failed, as bufio.Writer's, and
// after it nothing more is taken.
func (t *File) Write(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	if len(t.buf)+len(p) > cap(t.buf) {
		if err := t.Flush(); err != nil {
			return 0, err
		}
		if len(p) > cap(t.buf) {
			var n int
			n, t.err = t.f.Write(p)
			return n, t.err
		}
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// WriteString is Write of a string.
func (t *File) WriteString(s string) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	if len(t.buf)+len(s) > cap(t.buf) {
		return t.Write([]byte(s))
	}
	t.buf = append(t.buf, s...)
	return len(s), nil
}

// WriteByte is Write of one byte.
func (t *File) WriteByte(c byte) error {
	if t.err != nil {
		return t.err
	}
	if len(t.buf) == cap(t.buf) {
		if err := t.Flush(); err != nil {
			return err
		}
	}
	t.buf = append(t.buf, c)
	return nil
}

// Flush writes out the buffer. After an error it writes nothing more.
func (t *File) Flush() error {
	if len(t.buf) > 0 && t.err == nil {
		_, t.err = t.f.Write(t.buf)
	}
	t.buf = t.buf[:0]
	return t.err
}

// Close writes out what is buffered and closes the file; an error names
// it. The File is not written after; a second Close is os.ErrClosed.
func (t *File) Close() error {
	if t.buf == nil {
		return fmt.Errorf("%s: %w", t.f.Name(), os.ErrClosed)
	}
	err := t.Flush()
	if e := t.f.Close(); err == nil {
		err = e
	}
	b := t.buf[:0]
	buffers.Put(&b)
	t.buf = nil
	if err != nil {
		return fmt.Errorf("%s: %w", t.f.Name(), err)
	}
	return nil
}
