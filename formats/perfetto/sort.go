package perfetto

import "math/bits"

// sortHeld sorts hs (in arrival order, so by seq) by cmpHeld: an LSD radix
// sort on start (digits of at most 13 bits), stable, so rows of equal
// start stay in seq order; then each run of equal starts is put
// enclosing-first by an insertion sort on dur (runs are short). tmp is
// scratch of any length; the (maybe grown) scratch is returned.
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
		// As few passes as digits of at most maxBits cover the span (a
		// reorder flush's starts span a few ms: 2 passes), each digit as
		// narrow as that allows.
		const maxBits = 13
		nb := bits.Len64(span)
		passes := (nb + maxBits - 1) / maxBits
		width := uint((nb + passes - 1) / passes)
		mask := uint64(1)<<width - 1
		var countArr [1 << maxBits]int
		count := countArr[:1<<width]
		for shift := uint(0); shift < 64 && span>>shift != 0; shift += width {
			clear(count)
			for i := range src {
				count[(uint64(src[i].start-lo)>>shift)&mask]++
			}
			sum := 0
			for i := range count {
				c := count[i]
				count[i] = sum
				sum += c
			}
			for i := range src {
				k := (uint64(src[i].start-lo) >> shift) & mask
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
