package trace

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestAppendS2Joined: the block of a literal prefix and rest's elements
// decodes, with S2's own decoder, to exactly prefix then rest, for every
// length class of the literal's tag and for rest compressible, random or
// a run of one byte (each piece then starts with a match at distance 1,
// which S2 may only code as a repeat after a copy of the same piece: the
// decoder's repeat distance carries from the piece before).
func TestAppendS2Joined(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, np := range []int{0, 1, 59, 60, 61, 255, 256, 257, 300} {
		for _, nr := range []int{0, 1, 17, 4096, s2Piece - 1, s2Piece, s2Piece + 5, 600_000} {
			for _, fill := range []string{"pattern", "random", "run"} {
				prefix, rest := make([]byte, np), make([]byte, nr)
				rng.Read(prefix)
				switch fill {
				case "random":
					rng.Read(rest)
				case "pattern":
					for i := range rest {
						rest[i] = byte(i % 7 * (i % 3))
					}
				case "run":
					for i := range rest {
						rest[i] = 0x5a
					}
				}
				block, _ := appendS2Joined([]byte("kept"), nil, prefix, rest)
				if string(block[:4]) != "kept" {
					t.Fatalf("prefix %d, rest %d: dst's bytes changed", np, nr)
				}
				got, err := s2.Decode(nil, block[4:])
				if err != nil {
					t.Fatalf("prefix %d, rest %d (%s): %v", np, nr, fill, err)
				}
				if !bytes.Equal(got, append(prefix, rest...)) {
					t.Fatalf("prefix %d, rest %d (%s): decodes to other bytes", np, nr, fill)
				}
			}
		}
	}
}
