package table

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A File writes what it is given, in its directory made on the way; a
// buffer given back holds nothing of its earlier file; a write that fails
// is Close's error, naming the file, and so is a second Close.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: past the buffer
	for i, want := range [][]byte{big, []byte("short"), nil} {
		path := filepath.Join(dir, "sub", string(rune('a'+i)))
		f, err := CreateFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name() != path {
			t.Errorf("Name() = %q, want %q", f.Name(), path)
		}
		f.Write(want)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); !errors.Is(err, os.ErrClosed) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("second Close() = %v, want %s's os.ErrClosed", err, path)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (%v), want %d", path, len(got), err, len(want))
		}
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fail a write")
	}
	f, err := CreateFile("/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("a line")
	if err := f.Close(); err == nil || !strings.HasPrefix(err.Error(), "/dev/full: ") || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close() = %v, want /dev/full's ENOSPC", err)
	}
}
