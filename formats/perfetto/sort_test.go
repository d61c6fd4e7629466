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
				hs[i] = held{start: rng.Int63n(span) - span/2, dur: rng.Int63n(4) - 1, seq: uint64(i), idx: int32(i)}
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
