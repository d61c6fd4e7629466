package main

import (
	"io"
	"os"
)

// guardedFile keeps the trace file readable after a failed write (disk full,
// quota): it cuts a partly written chunk off again, so the file always ends
// at a chunk boundary and later chunks can still follow when space returns.
type guardedFile struct {
	f   *os.File
	off int64
}

func newGuardedFile(f *os.File) *guardedFile { return &guardedFile{f: f} }

func (g *guardedFile) Write(p []byte) (int, error) {
	n, err := g.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			g.f.Truncate(g.off)
			g.f.Seek(g.off, io.SeekStart)
		}
		return 0, err
	}
	g.off += int64(n)
	return n, nil
}

func (g *guardedFile) Sync() error  { return g.f.Sync() }
func (g *guardedFile) Close() error { return g.f.Close() }
