package main

import (
	"io"
	"os"
)

// guardedFile keeps the trace file readable after a failed write (disk full,
// quota): it cuts a partly written chunk off again, so the file ends at a
// chunk boundary and later chunks can follow when space returns. It tells
// the trace writer what happened through Write's count and Rewound
// (trace.Rewinder): a chunk taken back fully is a lost chunk, one that could
// not be taken back is a broken file.
type guardedFile struct {
	f       *os.File
	off     int64
	rewound bool
}

func newGuardedFile(f *os.File) *guardedFile { return &guardedFile{f: f} }

func (g *guardedFile) Write(p []byte) (int, error) {
	n, err := g.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	g.rewound = false
	if err != nil && n > 0 {
		if g.f.Truncate(g.off) == nil {
			if _, serr := g.f.Seek(g.off, io.SeekStart); serr == nil {
				g.rewound = true
			}
		}
		if !g.rewound {
			g.off += int64(n)
		}
		return n, err
	}
	g.off += int64(n)
	return n, err
}

// Rewound reports whether the last failed Write was taken back whole.
func (g *guardedFile) Rewound() bool { return g.rewound }

func (g *guardedFile) Sync() error  { return g.f.Sync() }
func (g *guardedFile) Close() error { return g.f.Close() }
