package table

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// Records appended to Tail and given to Commit come out in order and
// whole: those that fit in the buffer's rest, those that outgrow it (append
// moves them, to an array that may have room for more), and one longer
// than the buffer; mixed with Write,
// WriteString and WriteByte. A failed write is the error of every Commit
// after it, and the buffer stays its size.
func TestFileCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records")
	f, err := CreateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 40000 {
		rec := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%97)
		switch {
		case i == 20000:
			rec = bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB
		case i%1000 == 1:
			f.WriteString("s")
			f.WriteByte('b')
			f.Write([]byte("w"))
			want = append(want, "sbw"...)
		}
		b := f.Tail()
		for _, c := range rec { // a byte at a time, as an encoder appends
			b = append(b, c)
		}
		// AppendInt makes room for more than it writes: b may be moved,
		// and still be shorter than the buffer's rest.
		b = AppendInt(b, -int64(i))
		if err := f.Commit(b); err != nil {
			t.Fatal(err)
		}
		want = strconv.AppendInt(append(want, rec...), -int64(i), 10)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%d bytes (%v), want %d", len(got), err, len(want))
	}
	// Each rest of the buffer near a record's length: AppendInt moves the
	// record when the rest lacks its slack, which it may not use.
	for rest := range 40 {
		path := filepath.Join(t.TempDir(), "rest")
		if f, err = CreateFile(path); err != nil {
			t.Fatal(err)
		}
		fill := strings.Repeat("f", fileBuffer-rest)
		f.WriteString(fill)
		f.Commit(AppendInt(append(f.Tail(), "rec "...), -123456789))
		f.Close()
		if got, err := os.ReadFile(path); err != nil || string(got) != fill+"rec -123456789" {
			t.Fatalf("rest %d: %q (%v) after the fill, want %q", rest, got[min(len(got), len(fill)):], err, "rec -123456789")
		}
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fail a write")
	}
	if f, err = CreateFile("/dev/full"); err != nil {
		t.Fatal(err)
	}
	var errs int
	for range 30000 { // 3 MiB
		if err := f.Commit(append(f.Tail(), bytes.Repeat([]byte("x"), 100)...)); errors.Is(err, syscall.ENOSPC) {
			errs++
		}
		if cap(f.buf) != fileBuffer {
			t.Fatalf("buffer of %d bytes after a failed write", cap(f.buf))
		}
	}
	// A write longer than the buffer after the failure: taken no more.
	if _, err := f.Write(bytes.Repeat([]byte("y"), 3<<20)); !errors.Is(err, syscall.ENOSPC) || cap(f.buf) != fileBuffer {
		t.Errorf("Write of 3 MiB after a failure: %v, buffer of %d bytes", err, cap(f.buf))
	}
	// Nor by any other way to write: each returns the error and the
	// buffer stays empty.
	n, err := f.WriteString("z")
	if n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteString after a failure = %d, %v, want 0, ENOSPC", n, err)
	}
	if err := f.WriteByte('z'); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteByte after a failure = %v, want ENOSPC", err)
	}
	if err := f.Commit(append(f.Tail(), 'z')); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Commit after a failure = %v, want ENOSPC", err)
	}
	if len(f.buf) != 0 {
		t.Errorf("%d bytes buffered after a failure, want none", len(f.buf))
	}
	if err := f.Close(); !errors.Is(err, syscall.ENOSPC) || errs < 30000-fileBuffer/100 {
		t.Errorf("Close() = %v after %d Commits failed, want ENOSPC after at least %d", err, errs, 30000-fileBuffer/100)
	}
}
