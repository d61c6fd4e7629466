package perfetto

import (
	"bytes"
	"os"
	"testing"
)

// Compressed wraps the very packets of the plain output: each top-level
// packet holds only compressed_packets, and inflated with Go's own zlib
// they are the plain file's packets byte for byte, over several buffers;
// the file is a fraction of the plain one's size.
func TestCompressed(t *testing.T) {
	path := genTrace(t, 80000)
	plain := convertFile(t, path)
	_, out := convertWith(t, path, Compressed())
	packed, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var outer int
	for _, pf := range fields(t, packed) {
		if inner := fields(t, pf.b); len(inner) != 1 || inner[0].num != fPktCompressed {
			t.Fatalf("a top-level packet with %d fields, the first %d", len(inner), inner[0].num)
		}
		outer++
	}
	if want := len(plain)/outFlush + 1; outer < want {
		t.Errorf("%d compressed packets for %d bytes; want at least %d", outer, len(plain), want)
	}
	if got := unpack(t, packed); !bytes.Equal(got, plain) {
		t.Errorf("unpacked: %d bytes; the plain output has %d, and they differ", len(got), len(plain))
	}
	if len(packed)*3 > len(plain) {
		t.Errorf("compressed %d bytes for %d plain: not a third", len(packed), len(plain))
	}
}
