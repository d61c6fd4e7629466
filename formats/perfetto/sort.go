package perfetto

// sortHeld sorts hs (in arrival order, so by seq) by cmpHeld: an LSD radix
// sort on start, stable, so rows of equal start stay in seq order; then
// each run of equal starts is put enclosing-first by an insertion sort on
// dur (runs are short). tmp is scratch of any length; the (maybe grown)
// scratch is returned.
func sortHeld(hs, tmp []held) []held {
	n := len(hs)
	if n < 2 {
		return tmp
	}
	lo, hi := hs[0].start, hs[0].start
	sorted := true
	for i := 1; i < n; i++ {
		s := hs[i].start
		if s < hs[i-1].start {
			sorted = false
		}
		lo = min(lo, s)
		hi = max(hi, s)
	}
	if !sorted {
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
	}
	// Equal starts: the longer (enclosing) first, stable.
	for i := 1; i < n; i++ {
		if hs[i].start != hs[i-1].start || hs[i].dur <= hs[i-1].dur {
			continue
		}
		h := hs[i]
		j := i
		for j > 0 && hs[j-1].start == h.start && hs[j-1].dur < h.dur {
			hs[j] = hs[j-1]
			j--
		}
		hs[j] = h
	}
	return tmp
}
