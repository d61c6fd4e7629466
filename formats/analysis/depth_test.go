package analysis

import (
	"math/rand"
	"slices"
	"testing"
)

// A depthStack does what a slice that drops its first item when full does,
// over random pushes and truncations that keep it full for long stretches,
// and its array never grows past MaxDepth and a quarter.
func TestDepthStack(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var s depthStack[int]
	var model []int
	next, drops := 0, 0
	for step := range 200_000 {
		if rng.Intn(2000) > 0 || len(model) == 0 {
			next++
			dropped, full := s.push(next)
			var want int
			wantFull := len(model) == MaxDepth
			if wantFull {
				want, model = model[0], model[1:]
				drops++
			}
			model = append(model, next)
			if full != wantFull || dropped != want {
				t.Fatalf("step %d: push dropped %d, %v; want %d, %v", step, dropped, full, want, wantFull)
			}
		} else {
			n := rng.Intn(len(model) + 1)
			s.truncate(n)
			model = model[:n]
		}
		if !slices.Equal(s.items(), model) {
			t.Fatalf("step %d: %d items, want %d (first %v, want %v)", step, len(s.items()), len(model), s.items()[:min(3, len(s.items()))], model[:min(3, len(model))])
		}
		if c := cap(s.buf); c > MaxDepth+MaxDepth/4 {
			t.Fatalf("step %d: the array holds %d", step, c)
		}
	}
	if drops < 100_000 {
		t.Errorf("%d pushes onto a full stack, want a stretch of them", drops)
	}
}
