package parquet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// pageCodec's frames decode to their input at every size, and up to a
// window (every page parquet-go buffers) they are byte for byte what
// parquet-go's own codec at the same level writes, so that the smaller
// window changes no file. Each size is encoded twice, the second time by a
// pooled encoder that has already encoded.
func TestPageCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	page := func(n int) []byte { // compressible: runs of a few symbols, like encoded columns
		b := make([]byte, n)
		for i := range b {
			if i > 8 && rng.IntN(4) > 0 {
				b[i] = b[i-8]
			} else {
				b[i] = byte(rng.IntN(16))
			}
		}
		return b
	}
	reference := &pqzstd.Codec{Level: pqzstd.SpeedFastest}
	for _, n := range []int{0, 1, 1000, 128 << 10, 128<<10 + 1, 256 << 10, 300 << 10, pageWindow, pageWindow + 1, 3 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			src := page(n)
			var first []byte
			for round := range 2 {
				got, err := pageCodec.Encode(nil, src)
				if err != nil {
					t.Fatal(err)
				}
				back, err := pageCodec.Decode(nil, got)
				if err != nil || !bytes.Equal(back, src) {
					t.Fatalf("round %d: %d bytes decode to %d bytes (%v), want the %d encoded", round, len(got), len(back), err, n)
				}
				if round == 1 && !bytes.Equal(got, first) {
					t.Fatalf("a pooled encoder wrote %d bytes, a fresh one %d", len(got), len(first))
				}
				first = got
			}
			if n <= pageWindow {
				want, err := reference.Encode(nil, src)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(first, want) {
					t.Errorf("%d bytes: %d encoded, parquet-go's codec %d", n, len(first), len(want))
				}
			}
		})
	}
}
