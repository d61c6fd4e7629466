package summary

import (
	"math"
	"math/bits"
	"slices"
)

// maxSamples is how many values a Dist keeps exactly; past that it keeps a
// histogram, and its median is exact to within 1/64 (1.6 %).
const maxSamples = 1 << 16

// Dist collects a distribution of durations (ns) in bounded memory.
type Dist struct {
	N        int64
	Sum      int64
	Min, Max int64
	mean, m2 float64 // Welford
	samples  []int64
	hist     []uint64 // nil until samples overflow
}

func (d *Dist) Add(v int64) {
	if v < 0 {
		v = 0
	}
	if d.N == 0 || v < d.Min {
		d.Min = v
	}
	if v > d.Max {
		d.Max = v
	}
	d.N++
	d.Sum += v
	delta := float64(v) - d.mean
	d.mean += delta / float64(d.N)
	d.m2 += delta * (float64(v) - d.mean)
	if d.hist == nil {
		d.samples = append(d.samples, v)
		if len(d.samples) > maxSamples {
			d.toHist()
		}
		return
	}
	d.hist[bucket(v)]++
}

func (d *Dist) toHist() {
	d.hist = make([]uint64, 65*64)
	for _, s := range d.samples {
		d.hist[bucket(s)]++
	}
	d.samples = nil
}

// bucket: 64 linear sub-buckets per power of two.
func bucket(v int64) int {
	u := uint64(v)
	if u < 64 {
		return int(u)
	}
	n := bits.Len64(u) // >= 7
	return (n-6)*64 + int(u>>(n-7))&63
}

// bucketMid is the middle of a bucket's range.
func bucketMid(b int) int64 {
	if b < 64 {
		return int64(b)
	}
	n := b/64 + 6
	lo := (uint64(64) | uint64(b%64)) << (n - 7)
	return int64(lo + (uint64(1)<<(n-7))/2)
}

// Merge adds o's values to d.
func (d *Dist) Merge(o *Dist) {
	if o.N == 0 {
		return
	}
	if d.N == 0 {
		d.Min, d.Max = o.Min, o.Max
	}
	d.Min, d.Max = min(d.Min, o.Min), max(d.Max, o.Max)
	n := d.N + o.N
	delta := o.mean - d.mean
	d.m2 += o.m2 + delta*delta*float64(d.N)*float64(o.N)/float64(n)
	d.mean += delta * float64(o.N) / float64(n)
	d.N, d.Sum = n, d.Sum+o.Sum
	switch {
	case d.hist == nil && o.hist == nil && len(d.samples)+len(o.samples) <= maxSamples:
		d.samples = append(d.samples, o.samples...)
		return
	case d.hist == nil:
		d.toHist()
	}
	for _, s := range o.samples {
		d.hist[bucket(s)]++
	}
	for i, c := range o.hist {
		d.hist[i] += c
	}
}

// Avg returns the mean.
func (d *Dist) Avg() float64 {
	if d.N == 0 {
		return 0
	}
	return float64(d.Sum) / float64(d.N)
}

// Stddev returns the population standard deviation.
func (d *Dist) Stddev() float64 {
	if d.N == 0 {
		return 0
	}
	return math.Sqrt(d.m2 / float64(d.N))
}

// Median returns the median (the lower middle value for an even count).
func (d *Dist) Median() int64 {
	if d.N == 0 {
		return 0
	}
	if d.hist == nil {
		slices.Sort(d.samples)
		return d.samples[(len(d.samples)-1)/2]
	}
	want := uint64(d.N-1)/2 + 1
	var seen uint64
	for i, c := range d.hist {
		seen += c
		if seen >= want {
			return min(max(bucketMid(i), d.Min), d.Max)
		}
	}
	return d.Max
}

// Union measures the union of intervals (busy time) in bounded memory.
// Intervals may come in any order, though mostly in start order: those go
// straight onto a sorted, merged list; the others wait in a small buffer
// that is sorted and merged in when it fills. Intervals that end more than
// Lag ns before the latest start seen, or the oldest when more than
// maxUnion are held, are retired into a running total; the part of a later
// interval that falls before the retired horizon is not counted.
type Union struct {
	Lag    int64
	sorted [][2]int64 // by start, disjoint
	// Out-of-order intervals wait in lanes, each ascending by start (the
	// rows of one thread, or the launches that waited for device time),
	// or when no lane takes one, in spill.
	lanes   [][][2]int64
	nl      int             // lanes in use
	last    [maxLanes]int64 // each lane's last start
	spill   [][2]int64
	nloose  int
	loose   [][2]int64 // all of them, as ascending runs starting at runs
	runs    []int
	scratch [][2]int64
	buf     [][2]int64
	retired int64
	horizon int64 // everything before it is retired
	latest  int64
}

// DefaultLag is Union.Lag's default: 10 s of trace time.
const DefaultLag = 10e9

const (
	looseMax = 1 << 16
	maxUnion = 1 << 19
)

func (u *Union) Add(start, end int64) {
	if end <= start {
		return
	}
	u.latest = max(u.latest, start)
	n := len(u.sorted)
	switch {
	case n == 0 || start >= u.sorted[n-1][0]:
		if n > 0 && start <= u.sorted[n-1][1] {
			u.sorted[n-1][1] = max(u.sorted[n-1][1], end)
		} else {
			u.sorted = append(u.sorted, [2]int64{start, end})
		}
	default:
		u.addLoose(start, end)
	}
	if u.nloose >= looseMax || len(u.sorted) >= 2*maxUnion {
		u.compact()
	}
}

func byStart(a, b [2]int64) int {
	switch {
	case a[0] < b[0]:
		return -1
	case a[0] > b[0]:
		return 1
	}
	return 0
}

// maxLanes is how many ascending lanes hold out-of-order intervals.
const maxLanes = 16

func (u *Union) addLoose(start, end int64) {
	best := -1
	var bestStart int64
	for i, last := range u.last[:u.nl] {
		if last <= start && (best < 0 || last > bestStart) {
			best, bestStart = i, last
		}
	}
	if best < 0 {
		if u.nl == maxLanes {
			u.spill = append(u.spill, [2]int64{start, end})
			u.nloose++
			return
		}
		if u.nl == len(u.lanes) {
			u.lanes = append(u.lanes, nil)
		}
		best = u.nl
		u.nl++
	}
	l := u.lanes[best]
	if n := len(l); n > 0 && start <= l[n-1][1] { // overlaps the lane's last: the union is the same
		l[n-1][1] = max(l[n-1][1], end)
		return
	}
	u.lanes[best] = append(l, [2]int64{start, end})
	u.last[best] = start
	u.nloose++
}

// sortLoose sorts loose by start. It arrives as a few ascending runs (the
// rows of one thread, or of the launches that waited for device time), so
// merging the runs pairwise costs far less than a sort.
func (u *Union) sortLoose() {
	u.loose, u.runs = u.loose[:0], u.runs[:0]
	for i := range u.nl {
		u.runs = append(u.runs, len(u.loose))
		u.loose = append(u.loose, u.lanes[i]...)
		u.lanes[i] = u.lanes[i][:0]
	}
	if len(u.spill) > 0 {
		slices.SortFunc(u.spill, byStart)
		u.runs = append(u.runs, len(u.loose))
		u.loose = append(u.loose, u.spill...)
		u.spill = u.spill[:0]
	}
	u.nl, u.nloose = 0, 0
	src, dst := u.loose, u.buf[:0]
	bounds := append(u.runs, len(src))
	for len(bounds) > 2 {
		dst = dst[:0]
		nb := bounds[:0]
		for i := 0; i+1 < len(bounds); i += 2 {
			nb = append(nb, len(dst))
			if i+2 >= len(bounds) {
				dst = append(dst, src[bounds[i]:bounds[i+1]]...)
				continue
			}
			a, b := src[bounds[i]:bounds[i+1]], src[bounds[i+1]:bounds[i+2]]
			for len(a) > 0 && len(b) > 0 {
				if b[0][0] < a[0][0] {
					dst = append(dst, b[0])
					b = b[1:]
				} else {
					dst = append(dst, a[0])
					a = a[1:]
				}
			}
			dst = append(dst, a...)
			dst = append(dst, b...)
		}
		bounds = append(nb, len(dst))
		src, dst = dst, src
	}
	u.runs = bounds[:0]
	u.loose, u.buf = src, dst[:0]
}

func (u *Union) compact() {
	if u.nloose > 0 {
		u.sortLoose()
		// Only the tail of sorted from the first loose start on changes.
		k, _ := slices.BinarySearchFunc(u.sorted, u.loose[0], byStart)
		if k > 0 {
			k-- // the interval before may overlap
		}
		tail := append(u.scratch[:0], u.sorted[k:]...)
		out := u.sorted[:k]
		add := func(iv [2]int64) {
			if n := len(out); n > 0 && iv[0] <= out[n-1][1] {
				out[n-1][1] = max(out[n-1][1], iv[1])
				return
			}
			out = append(out, iv)
		}
		i, j := 0, 0
		for i < len(tail) || j < len(u.loose) {
			if j == len(u.loose) || i < len(tail) && tail[i][0] <= u.loose[j][0] {
				add(tail[i])
				i++
			} else {
				add(u.loose[j])
				j++
			}
		}
		u.scratch, u.sorted = tail[:0], out
		u.loose, u.runs = u.loose[:0], u.runs[:0]
	}
	lag := u.Lag
	if lag == 0 {
		lag = DefaultLag
	}
	cut := u.latest - lag
	i := 0
	for ; i < len(u.sorted) && (u.sorted[i][1] < cut || len(u.sorted)-i > maxUnion); i++ {
		iv := u.sorted[i]
		if iv[1] > u.horizon {
			u.retired += iv[1] - max(iv[0], u.horizon)
			u.horizon = iv[1]
		}
	}
	if i > 0 {
		u.sorted = append(u.sorted[:0], u.sorted[i:]...)
	}
}

// Total returns the busy time.
func (u *Union) Total() int64 {
	u.compact()
	t := u.retired
	for _, iv := range u.sorted {
		t += iv[1] - max(iv[0], min(u.horizon, iv[1]))
	}
	return t
}

// Merge adds o's intervals to u.
func (u *Union) Merge(o *Union) {
	o.compact()
	if n := len(o.sorted); n > 0 && u.empty() {
		// What the Adds below would build, without them: o.sorted is sorted,
		// disjoint and at most maxUnion long, so no Add would compact.
		u.sorted = append(u.sorted[:0], o.sorted...)
		u.retired, u.latest = o.retired, max(u.latest, o.sorted[n-1][0])
		return
	}
	u.retired += o.retired
	for _, iv := range o.sorted {
		u.Add(iv[0], iv[1])
	}
}

// empty reports whether u has taken nothing yet.
func (u *Union) empty() bool {
	return len(u.sorted) == 0 && u.nloose == 0 && u.retired == 0 && u.horizon == 0 && u.latest == 0
}
