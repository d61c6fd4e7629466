package deflate

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"
)

// inflate decodes a deflate stream with Go's own decoder, which checks
// every code, length, distance and block header.
func inflate(t testing.TB, stream []byte) []byte {
	t.Helper()
	got, err := io.ReadAll(flate.NewReader(bytes.NewReader(stream)))
	if err != nil {
		t.Fatalf("inflating %d bytes: %v", len(stream), err)
	}
	return got
}

// roundTrip encodes src after a prefix (which Encode must keep), checks
// the bound and that the stream inflates to src, and returns the stream.
func roundTrip(t testing.TB, src []byte) []byte {
	t.Helper()
	prefix := []byte("kept")
	out := Encode(bytes.Clone(prefix), src)
	if !bytes.Equal(out[:len(prefix)], prefix) {
		t.Fatalf("%d bytes: the prefix became %q", len(src), out[:len(prefix)])
	}
	stream := out[len(prefix):]
	if len(stream) > MaxEncodedLen(len(src)) {
		t.Fatalf("%d bytes: %d encoded, over MaxEncodedLen %d", len(src), len(stream), MaxEncodedLen(len(src)))
	}
	if got := inflate(t, stream); !bytes.Equal(got, src) {
		t.Fatalf("%d bytes: inflated to %d bytes that differ", len(src), len(got))
	}
	return stream
}

// packets is n bytes shaped like a trace's packets: records of a few
// fixed bytes and a few that change (a small delta, a growing counter).
func packets(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b []byte
	for corr := uint64(1); len(b) < n; corr++ {
		b = append(b, 0x0a, 0x13, 0x40, byte(rng.IntN(100)), 0x50, 0x01, 0x68, 0x02, 0x5a, 0x09, 0x48, 0x01, 0x58)
		b = binary.AppendUvarint(b, uint64(rng.IntN(4)+1))
		b = binary.AppendUvarint(append(b, 0x50), uint64(rng.IntN(12)))
		b = binary.AppendUvarint(append(b, 0x22, 0x06, 0x08, 0x01, 0x18), corr)
	}
	return b[:n]
}

// noise returns n random bytes: incompressible, and nothing in them repeats
// by chance for long.
func noise(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// The empty input is one final block of fixed codes holding only its end:
// the two bytes every zlib writes for it at a fixed-code level.
func TestEncodeEmpty(t *testing.T) {
	if got := Encode(nil, nil); !bytes.Equal(got, []byte{0x03, 0x00}) {
		t.Fatalf("Encode of nothing = % x, want 03 00", got)
	}
}

// Every short length, on random, constant and packet-shaped bytes, round
// trips; so do the tails of the fast loop (fewer than 8 bytes left).
func TestEncodeShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 600 {
		roundTrip(t, noise(rng, n))
		roundTrip(t, bytes.Repeat([]byte{'x'}, n))
		roundTrip(t, packets(n, uint64(n)))
	}
}

// Matches of every length from 4 to 258, at distances from 1 to the
// window's end, each between two literals that break them: every length
// code, every distance code and their extra bits go through Go's decoder.
func TestEncodeEveryLengthAndDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var src []byte
	for l := minMatch; l <= maxMatch; l++ {
		chunk := noise(rng, l)
		src = append(src, chunk...)
		src = append(src, noise(rng, 3)...)
		src = append(src, chunk...)
		src = append(src, noise(rng, 3)...)
	}
	// A stretch of d random bytes said three times over: its repeats lie
	// d bytes back.
	for _, d := range []int{1, 2, 3, 4, 5, 8, 9, 100, 257, 1024, 4097, 16385, 24577, maxDist - 1, maxDist} {
		chunk := noise(rng, d)
		for range 3 {
			src = append(src, chunk...)
		}
		src = append(src, noise(rng, 3)...)
	}
	stream := roundTrip(t, src)
	if len(stream) >= len(src) {
		t.Errorf("%d bytes with repeats encoded to %d: no match was used", len(src), len(stream))
	}
}

// A repeat one byte beyond the window is not matched: the stream stays
// valid (Go's decoder rejects a distance past 32 KiB).
func TestEncodeWindowEdge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	chunk := noise(rng, 64)
	for _, gap := range []int{maxDist - 64, maxDist - 63, maxDist - 65} {
		roundTrip(t, append(append(append([]byte(nil), chunk...), noise(rng, gap)...), chunk...))
	}
}

// Random input is longer under fixed codes than stored: Encode stores it,
// exactly MaxEncodedLen bytes, in blocks of at most 65,535.
func TestEncodeIncompressible(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{maxStored - 1, maxStored, maxStored + 1, 3 << 20} {
		src := noise(rng, n)
		if got := len(roundTrip(t, src)); got != MaxEncodedLen(n) {
			t.Errorf("%d random bytes: %d encoded, want the stored size %d", n, got, MaxEncodedLen(n))
		}
	}
}

// Long runs and packet-shaped data, megabytes of each, shrink to what the
// fixed codes give them: a run of zeros to about 1/100 (a match of 258
// takes 20 bits), packets to under a half (their random fields are a
// seventh of them).
func TestEncodeCompresses(t *testing.T) {
	zeros := make([]byte, 4<<20)
	if got := len(roundTrip(t, zeros)); got > len(zeros)/100 {
		t.Errorf("%d zeros encoded to %d bytes", len(zeros), got)
	}
	pk := packets(4<<20, 11)
	if got := len(roundTrip(t, pk)); got*2 > len(pk) {
		t.Errorf("%d bytes of packets encoded to %d", len(pk), got)
	}
}

// Input longer than a segment goes in several blocks of codes, each with a
// table of its own, the last one final.
func TestEncodeSegments(t *testing.T) {
	defer func(n int) { segment = n }(segment)
	segment = 1000
	for _, n := range []int{999, 1000, 1001, 2000, 2500, 10_000} {
		roundTrip(t, packets(n, uint64(n)))
	}
	// A block begins wherever the last one's bits ended in a byte.
	for size := 1000; size < 1040; size++ {
		segment = size
		roundTrip(t, packets(6000, 14))
	}
	segment = 1000
	rng := rand.New(rand.NewPCG(12, 13))
	random := noise(rng, 5000)
	if got := len(roundTrip(t, random)); got != MaxEncodedLen(len(random)) {
		t.Errorf("%d random bytes in segments: %d encoded, want the stored size %d", len(random), got, MaxEncodedLen(len(random)))
	}
}

func FuzzEncode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("abcabcabcabcabcabcabcabc"))
	f.Add(packets(3000, 1))
	f.Fuzz(func(t *testing.T, src []byte) {
		roundTrip(t, src)
		// Repeated, so that some of it lies far back and matches.
		roundTrip(t, bytes.Repeat(src, 1+40000/(len(src)+1)))
	})
}
