package table

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// File is an output file (a CSV table, a JSON trace) behind a 1 MiB
// buffer. Closed files give their buffers back to a pool: a run of 10,000
// ranks writes 10,000 files, and allocating and clearing a megabyte for
// each took a sixth of converting them to CSV.
type File struct {
	*bufio.Writer
	f *os.File
}

var buffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

// CreateFile creates the file at path, and its directory.
func CreateFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := buffers.Get().(*bufio.Writer)
	bw.Reset(f)
	return &File{Writer: bw, f: f}, nil
}

// Name is the file's path.
func (t *File) Name() string { return t.f.Name() }

// Close writes out what is buffered and closes the file; an error names
// it. The File is not written after; a second Close is os.ErrClosed.
func (t *File) Close() error {
	if t.Writer == nil {
		return fmt.Errorf("%s: %w", t.f.Name(), os.ErrClosed)
	}
	err := t.Flush()
	if e := t.f.Close(); err == nil {
		err = e
	}
	t.Writer.Reset(nil)
	buffers.Put(t.Writer)
	t.Writer = nil
	if err != nil {
		return fmt.Errorf("%s: %w", t.f.Name(), err)
	}
	return nil
}
