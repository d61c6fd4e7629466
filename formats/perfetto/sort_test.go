package perfetto

import (
	"math/rand"
	"slices"
	"testing"
)

func TestSortHeld(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var tmp []held
	for _, n := range []int{0, 1, 2, 5, 100, 5000} {
		for _, span := range []int64{1, 3, 1000, 1 << 40, 1 << 62} {
			hs := make([]held, n)
			for i := range hs {
				hs[i] = held{start: rng.Int63n(span) - span/2, dur: rng.Int63n(4) - 1, seq: uint64(i)}
			}
			want := slices.Clone(hs)
			slices.SortFunc(want, cmpHeld)
			tmp = sortHeld(hs, tmp)
			if !slices.Equal(hs, want) {
				t.Fatalf("n=%d span=%d: sortHeld differs from cmpHeld", n, span)
			}
		}
	}
}

func TestPutTime(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 1<<56 - 1, 1 << 56, 1763784000123456789, 1<<63 - 1, -1} {
		if got, want := putTime(nil, v), putVarint(nil, uint64(v)); !slices.Equal(got, want) {
			t.Errorf("putTime(%d) = %x, want %x", v, got, want)
		}
	}
}
