package perfetto

import (
	"cmp"
	"slices"
)

// insertionMoves is how many places a row may move, on average, while
// sortHeld sorts by insertion. Rows arrive nearly sorted, each once its
// slice has ended: on the workload's trace (make bench-cores) under one
// move a row and none more than 11 places back, where insertion takes
// about one pass and a radix sort two or three over the rows. Past the
// budget, rows that far out of order (slices that enclose thousands of
// others, or a hostile file) go to the radix sort, whose time does not
// depend on the order: the insertion's is bounded by the budget and one
// row's move.
const insertionMoves = 4

// sortHeld sorts hs (in arrival order, so by seq) by cmpHeld: stably by
// start, rows of equal start staying in seq order, by insertion or else an
// LSD radix sort on start; then each run of equal starts is put
// enclosing-first (sortTies). tmp is scratch of any length; the (maybe
// grown) scratch is returned.
func sortHeld(hs, tmp []held) []held {
	n := len(hs)
	if n < 2 {
		return tmp
	}
	budget := insertionMoves * n
	k := 1
	for ; k < n && budget >= 0; k++ {
		h := hs[k]
		m := k
		for m > 0 && hs[m-1].start > h.start {
			hs[m] = hs[m-1]
			m--
		}
		hs[m] = h
		budget -= k - m
	}
	// A stable sort's prefix leaves equal starts in seq order: the radix
	// sort takes the rows as they are now.
	if k < n {
		tmp = radixHeld(hs, tmp)
	}
	sortTies(hs)
	return tmp
}

// radixHeld sorts hs stably by start, 11 bits a pass over the span of its
// starts, and returns the (maybe grown) scratch.
func radixHeld(hs, tmp []held) []held {
	n := len(hs)
	lo, hi := hs[0].start, hs[0].start
	for i := 1; i < n; i++ {
		lo = min(lo, hs[i].start)
		hi = max(hi, hs[i].start)
	}
	if cap(tmp) < n {
		tmp = make([]held, n)
	}
	tmp = tmp[:n]
	span := uint64(hi - lo)
	src, dst := hs, tmp
	const bits = 11
	const buckets = 1 << bits
	var count [buckets]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += bits {
		count = [buckets]int{}
		for i := range src {
			count[(uint64(src[i].start-lo)>>shift)&(buckets-1)]++
		}
		sum := 0
		for i := range count {
			c := count[i]
			count[i] = sum
			sum += c
		}
		for i := range src {
			k := (uint64(src[i].start-lo) >> shift) & (buckets - 1)
			dst[count[k]] = src[i]
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &hs[0] {
		copy(hs, src)
	}
	return tmp
}

// tieRun is the longest run of equal starts sortTies puts in order by
// insertion; a longer one goes to slices.SortStableFunc.
const tieRun = 32

// sortTies puts each run of equal starts of hs (in start order, and by seq
// within a start) enclosing-first, stable. Runs are short in traces of
// real programs; a trace with thousands of slices begun at one tick (a
// coarse clock, or a hostile file) would take quadratic time by insertion
// alone: 1.5 s for one reorder flush of 65,536 such rows.
func sortTies(hs []held) {
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j].start == hs[i].start {
			j++
		}
		if run := hs[i:j]; len(run) > tieRun {
			slices.SortStableFunc(run, func(a, b held) int { return cmp.Compare(b.dur, a.dur) })
		} else {
			for k := 1; k < len(run); k++ {
				h := run[k]
				m := k
				for m > 0 && run[m-1].dur < h.dur {
					run[m] = run[m-1]
					m--
				}
				run[m] = h
			}
		}
		i = j
	}
}
