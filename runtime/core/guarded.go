package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// guardedFile keeps the trace file readable after a failed write (disk full,
// quota): it cuts a partly written chunk off again, so the file ends at a
// chunk boundary and later chunks can follow when space returns. It tells
// the trace writer what happened through Write's count and Rewound
// (trace.Rewinder): a chunk taken back fully is a lost chunk, one that could
// not be taken back is a broken file.
//
// It also writes only while its descriptor is still the trace file: an
// application that closes every descriptor with the raw system call (past
// runtime/src/fds.c) may have reused the number for a file of its own, and
// a chunk written there would corrupt it. Then the trace stops, with an
// error the writer reports and counts.
type guardedFile struct {
	f        *os.File
	fd       int
	dev, ino uint64
	gone     error // set once the descriptor is no longer the trace file
	off      int64
	rewound  bool
}

func newGuardedFile(f *os.File) *guardedFile {
	g := &guardedFile{f: f, fd: int(f.Fd())}
	var st syscall.Stat_t
	if syscall.Fstat(g.fd, &st) == nil {
		g.dev, g.ino = uint64(st.Dev), st.Ino
	}
	return g
}

// still reports whether the descriptor is the trace file still.
func (g *guardedFile) still() error {
	if g.gone != nil {
		return g.gone
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(g.fd, &st); err != nil || uint64(st.Dev) != g.dev || st.Ino != g.ino {
		g.gone = fmt.Errorf("the program closed the trace file's descriptor %d (and may have reused it): nothing more is written there", g.fd)
	}
	return g.gone
}

func (g *guardedFile) Write(p []byte) (int, error) {
	g.rewound = false
	if err := g.still(); err != nil {
		g.rewound = true // nothing of p reached the file
		return 0, err
	}
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

func (g *guardedFile) Sync() error {
	if err := g.still(); err != nil {
		return err
	}
	return g.f.Sync()
}

// Close never closes a descriptor that is no longer the trace file's: it
// is the application's now.
func (g *guardedFile) Close() error {
	if err := g.still(); err != nil {
		return err
	}
	return g.f.Close()
}
