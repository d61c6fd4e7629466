package trace

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestAppendS2Joined: the block of a literal prefix and rest's elements
// decodes, with S2's own decoder, to exactly prefix then rest, for every
// length class of the literal's tag and for rest compressible or not.
func TestAppendS2Joined(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, np := range []int{0, 1, 59, 60, 61, 255, 256, 257, 300} {
		for _, nr := range []int{0, 1, 17, 4096, s2Piece - 1, s2Piece, 600_000} {
			for _, random := range []bool{false, true} {
				prefix, rest := make([]byte, np), make([]byte, nr)
				rng.Read(prefix)
				if random {
					rng.Read(rest)
				} else {
					for i := range rest {
						rest[i] = byte(i % 7 * (i % 3))
					}
				}
				block, _ := appendS2Joined([]byte("kept"), nil, prefix, rest)
				if string(block[:4]) != "kept" {
					t.Fatalf("prefix %d, rest %d: dst's bytes changed", np, nr)
				}
				got, err := s2.Decode(nil, block[4:])
				if err != nil {
					t.Fatalf("prefix %d, rest %d (random %v): %v", np, nr, random, err)
				}
				if !bytes.Equal(got, append(prefix, rest...)) {
					t.Fatalf("prefix %d, rest %d (random %v): decodes to other bytes", np, nr, random)
				}
			}
		}
	}
}
