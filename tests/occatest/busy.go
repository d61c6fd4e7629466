package occatest

import (
	"cmp"
	"slices"
)

// Busy returns the length of the union of the intervals [start, end): the
// time in which at least one of them runs.
func Busy(spans [][2]int64) int64 {
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var busy, end int64
	for i, x := range s {
		if i == 0 || x[0] > end {
			busy += x[1] - x[0]
		} else if x[1] > end {
			busy += x[1] - end
		}
		if i == 0 || x[1] > end {
			end = x[1]
		}
	}
	return busy
}
