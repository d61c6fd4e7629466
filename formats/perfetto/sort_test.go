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

// Rows nearly in order, as a trace's arrive, sort by insertion alone; the
// same rows with their last quarter reversed, far past insertionMoves,
// have their sorted prefix finished by the radix sort. Both as cmpHeld,
// ties included (rows in pairs of one start, slices of three lengths).
func TestSortHeldNearlySorted(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	const n = 10000
	for _, far := range []bool{false, true} {
		hs := make([]held, n)
		for i := range hs {
			// Each four rows start at 2g+1, 2g+1, 2g, 2g: one move a row.
			hs[i] = held{start: int64(i/4*2 + (i%4^3)/2), dur: rng.Int63n(3)}
		}
		if far {
			slices.Reverse(hs[3*n/4:])
		}
		for i := range hs {
			hs[i].seq = uint64(i)
		}
		want := slices.Clone(hs)
		slices.SortFunc(want, cmpHeld)
		sortHeld(hs, nil)
		if !slices.Equal(hs, want) {
			t.Fatalf("far %v: sortHeld differs from cmpHeld", far)
		}
	}
}

// Many rows at one start, each as long as or longer than the one before
// (slices begun at one tick of a coarse clock, ended one after another):
// enclosing-first is nearly the reverse of arrival, with equal lengths
// kept in arrival order.
func TestSortHeldTies(t *testing.T) {
	for _, n := range []int{tieRun, tieRun + 1, 65536} {
		hs := make([]held, n)
		for i := range hs {
			hs[i] = held{start: 7, dur: int64(i / 2), seq: uint64(i + 1)}
		}
		want := slices.Clone(hs)
		slices.SortFunc(want, cmpHeld)
		sortHeld(hs, nil)
		if !slices.Equal(hs, want) {
			t.Fatalf("n=%d: sortHeld differs from cmpHeld", n)
		}
		// The longest first; of the two rows of one length, the earlier.
		if last := int64((n - 1) / 2); hs[0].dur != last || hs[n-1] != (held{start: 7, dur: 0, seq: 2}) {
			t.Fatalf("n=%d: first %+v, last %+v", n, hs[0], hs[n-1])
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
