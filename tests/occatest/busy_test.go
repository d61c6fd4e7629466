package occatest

import "testing"

func TestBusy(t *testing.T) {
	for _, c := range []struct {
		spans [][2]int64
		want  int64
	}{
		{nil, 0},
		{[][2]int64{{5, 9}}, 4},
		{[][2]int64{{0, 10}, {20, 25}}, 15},          // apart
		{[][2]int64{{20, 25}, {0, 10}, {5, 12}}, 17}, // unsorted, overlapping
		{[][2]int64{{0, 10}, {2, 3}}, 10},            // nested
		{[][2]int64{{0, 10}, {10, 15}}, 15},          // touching
		{[][2]int64{{-30, -10}, {-20, 0}}, 30},       // before 0
	} {
		if got := Busy(c.spans); got != c.want {
			t.Errorf("Busy(%v) = %d, want %d", c.spans, got, c.want)
		}
	}
}
