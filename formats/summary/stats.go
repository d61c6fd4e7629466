package summary

import (
	"cmp"
	"math"
	"math/big"
	"math/bits"
	"slices"
)

// maxSamples is how many values a Dist keeps exactly (32 KiB); past that it
// keeps a histogram (33 KiB), and its median is exact to within 1/64
// (1.6 %). Both merge exactly: a merged Dist is the Dist of all the values,
// in whatever order the parts were merged.
const maxSamples = 1 << 12

// Dist collects a distribution of durations (ns) in bounded memory. Its
// count, sum, sum of squares, minimum and maximum are exact integers, so
// that the mean and the standard deviation do not depend on the order in
// which traces were summed and merged.
type Dist struct {
	N          int64
	Sum        int64
	Min, Max   int64
	sqHi, sqLo uint64 // the sum of the squares, 128 bits
	samples    []int64
	hist       []uint64 // nil until samples overflow
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
	hi, lo := bits.Mul64(uint64(v), uint64(v))
	var carry uint64
	d.sqLo, carry = bits.Add64(d.sqLo, lo, 0)
	d.sqHi += hi + carry
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
	d.hist = make([]uint64, histBuckets)
	for _, s := range d.samples {
		d.hist[bucket(s)]++
	}
	d.samples = nil
}

// histBuckets is a histogram's length: 64 buckets per power of two.
const histBuckets = 65 * 64

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
	d.N, d.Sum = d.N+o.N, d.Sum+o.Sum
	var carry uint64
	d.sqLo, carry = bits.Add64(d.sqLo, o.sqLo, 0)
	d.sqHi += o.sqHi + carry
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

// Stddev returns the population standard deviation: sqrt(N·Σv² - (Σv)²) / N,
// with the difference taken exactly.
func (d *Dist) Stddev() float64 {
	if d.N == 0 {
		return 0
	}
	sq := new(big.Int).SetUint64(d.sqHi)
	sq.Lsh(sq, 64).Or(sq, new(big.Int).SetUint64(d.sqLo))
	sq.Mul(sq, big.NewInt(d.N))
	sum := big.NewInt(d.Sum)
	sq.Sub(sq, sum.Mul(sum, sum))
	v, _ := new(big.Float).SetInt(sq).Float64()
	return math.Sqrt(max(v, 0)) / float64(d.N)
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
// straight onto a sorted, merged list; the others wait in ascending lanes
// that are merged in when they hold looseMax. Intervals that end more than
// Lag ns before the latest start seen, or the oldest when more than
// maxUnion are held, are retired into a running total; the part of a later
// interval that falls before the retired horizon is not counted. Unions
// that share a unionShare hold fewer than maxUnion each when many of them
// hold many (unionShare).
type Union struct {
	Lag    int64
	share  *unionShare // nil: maxUnion, whatever other unions hold
	pair   *pairUnion  // retires with the other source of pair
	joined bool        // counted in share.big
	sorted [][2]int64  // by start, disjoint
	// sorted's array from its start: retiring leaves a gap before sorted,
	// taken back when sorted needs room, rather than moving sorted each
	// time.
	buf [][2]int64
	// Out-of-order intervals wait in lanes, each ascending by start and
	// disjoint (the rows of one thread, or the launches that waited for
	// device time), or when no lane takes one, in spill.
	lanes   [][][2]int64
	nl      int             // lanes in use
	cur     int             // the lane last added to
	last    [maxLanes]int64 // each lane's last start, ascending
	spill   [][2]int64
	nloose  int
	bufs    [2][][2]int64 // for merging the lanes
	scratch [][2]int64
	retired int64
	horizon int64 // everything before it is retired
	latest  int64
}

// DefaultLag is Union.Lag's default: 10 s of trace time.
const DefaultLag = 10e9

// A unionShare bounds what the unions of one collector hold together. A
// trace may have up to maxDevices devices, each with two unions of up to
// maxUnion intervals (6 MiB of arrays; the union of both is a pairUnion):
// 24 devices of 300,000 launches each, with three unions then, took
// summary's heap to 277 MiB. Up to sharedHeld/maxUnion unions that hold
// more than bigUnion intervals hold maxUnion each, as any union
// alone does; past that they split sharedHeld evenly (at least minUnion
// each) and retire their oldest intervals sooner. Their arrays then hold
// at most about 10 * sharedHeld intervals (160 MiB) together: their sorted
// lists up to 6 * sharedHeld, the rest in lanes and merge buffers.
type unionShare struct {
	big  int // unions that joined: they hold, or held, more than bigUnion
	held int // what each may hold; 0 until the first join: maxUnion
}

const (
	sharedHeld = 8 * maxUnion // 1 Mi intervals
	bigUnion   = 64           // a new list's first array
	minUnion   = 256
)

func (s *unionShare) join()  { s.big++; s.split() }
func (s *unionShare) leave() { s.big--; s.split() }

// split shares sharedHeld among the unions that joined.
func (s *unionShare) split() { s.held = min(maxUnion, max(minUnion, sharedHeld/max(s.big, 1))) }

// held is how many intervals u keeps before retiring its oldest.
func (u *Union) held() int {
	if u.share == nil || u.share.held == 0 {
		return maxUnion
	}
	return u.share.held
}

const (
	looseMax = 1 << 16
	maxUnion = 1 << 17
)

func (u *Union) Add(start, end int64) {
	if end <= start {
		return
	}
	u.latest = max(u.latest, start)
	n := len(u.sorted)
	if n > 0 && start < u.sorted[n-1][0] {
		u.addLoose(start, end)
		if held := u.held(); u.nloose >= min(looseMax, held) || n >= 2*held {
			u.compact()
		}
		return
	}
	if n > 0 && start <= u.sorted[n-1][1] { // extends the last: nothing more is held
		u.sorted[n-1][1] = max(u.sorted[n-1][1], end)
		return
	}
	if n == cap(u.sorted) {
		u.room(1)
	}
	u.sorted = push(u.sorted, start, end)
	if n+1 >= 2*u.held() {
		u.compact()
	}
}

func byStart(a, b [2]int64) int {
	return cmp.Compare(a[0], b[0])
}

// maxLanes is how many ascending lanes hold out-of-order intervals.
const maxLanes = 16

func (u *Union) addLoose(start, end int64) {
	// The lane whose last start is the latest not after start. The lanes
	// are in the order of their last starts, which taking that lane keeps;
	// consecutive intervals mostly come from one thread, ascending, and so
	// go to the lane that took the last one.
	best := u.cur
	if best >= u.nl || u.last[best] > start || best+1 < u.nl && u.last[best+1] <= start {
		// The lanes take turns too irregularly for branches to guess.
		best = -1
		for i := range u.nl {
			best += b2i(u.last[i] <= start)
		}
	}
	if best < 0 {
		if u.nl == maxLanes {
			u.spill = append(u.spill, [2]int64{start, end})
			u.nloose++
			return
		}
		// A new lane, first in order.
		if u.nl == len(u.lanes) {
			u.lanes = append(u.lanes, nil)
		}
		spare := u.lanes[u.nl]
		copy(u.lanes[1:u.nl+1], u.lanes[:u.nl])
		copy(u.last[1:u.nl+1], u.last[:u.nl])
		u.lanes[0] = spare
		best = 0
		u.nl++
	}
	u.cur = best
	l := u.lanes[best]
	if n := len(l); n > 0 && start <= l[n-1][1] { // overlaps the lane's last: the union is the same
		l[n-1][1] = max(l[n-1][1], end)
		return
	}
	u.lanes[best] = push(l, start, end)
	u.last[best] = start
	u.nloose++
}

// push appends [start, end) to l. Not append(l, [2]int64{start, end}): that
// stores the pair in two halves and loads it back whole, which stalls.
func push(l [][2]int64, start, end int64) [][2]int64 {
	n := len(l)
	if n == cap(l) {
		l = grow(l, 1)
	}
	l = l[:n+1]
	l[n][0], l[n][1] = start, end
	return l
}

// grow makes room for n more in l, doubling its capacity when it must
// grow: l can be long, and append grows a long slice by a quarter only.
func grow(l [][2]int64, n int) [][2]int64 {
	if len(l)+n <= cap(l) {
		return l
	}
	c := max(min(2*cap(l), 2*maxUnion+2*looseMax), len(l)+n, 64)
	return append(make([][2]int64, 0, c), l...)
}

// mergeUnion appends to out the union of a and b, each sorted by start and
// disjoint, as intervals sorted by start and disjoint (touching ones
// merged). It merges nothing into what out held before.
func mergeUnion(out, a, b [][2]int64) [][2]int64 {
	if len(a) == 0 {
		return mergeRest(out, len(out), b)
	}
	if len(b) == 0 {
		return mergeRest(out, len(out), a)
	}
	n0 := len(out)
	// Branch-free: the choice between a and b, and whether an interval
	// extends the one being built (cs, ce), are as good as random. Each
	// round stores (cs, ce) at out[n] and moves n on when it is done.
	out = grow(out, len(a)+len(b)+1)[:n0+len(a)+len(b)+1]
	i, j, n := 0, 0, n0
	cs, ce := a[0][0], a[0][1]
	if b[0][0] < cs {
		cs, ce = b[0][0], b[0][1]
		j++
	} else {
		i++
	}
	for i < len(a) && j < len(b) {
		s, e := a[i][0], a[i][1]
		bs, be := b[j][0], b[j][1]
		tb := bs < s
		if tb {
			s, e = bs, be
		}
		i += 1 - b2i(tb)
		j += b2i(tb)
		out[n][0], out[n][1] = cs, ce
		nw := s > ce
		ce = max(ce, e)
		if nw {
			cs, ce = s, e
		}
		n += b2i(nw)
	}
	out[n][0], out[n][1] = cs, ce
	n++
	rest := a[i:]
	if j < len(b) {
		rest = b[j:]
	}
	return mergeRest(out[:n], n0, rest)
}

func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// mergeRest appends disjoint, sorted rest to out, merging into out's last
// interval (when it is past n0) those that overlap it.
func mergeRest(out [][2]int64, n0 int, rest [][2]int64) [][2]int64 {
	// Once one of rest starts past what out holds, so do all that follow.
	for len(rest) > 0 {
		n := len(out)
		if n == n0 || rest[0][0] > out[n-1][1] {
			break
		}
		out[n-1][1] = max(out[n-1][1], rest[0][1])
		rest = rest[1:]
	}
	return append(out, rest...)
}

// mergeLoose merges the lanes and the spill into one sorted, disjoint list
// and empties them. The lanes are few and long, so merging them pairwise
// costs far less than a sort; intervals that overlap merge on the way.
func (u *Union) mergeLoose() [][2]int64 {
	runs := make([][][2]int64, 0, maxLanes+1)
	runs = append(runs, u.lanes[:u.nl]...)
	if len(u.spill) > 0 {
		slices.SortFunc(u.spill, byStart)
		// Make it disjoint, as the lanes are.
		out := u.spill[:1]
		for _, iv := range u.spill[1:] {
			if n := len(out); iv[0] <= out[n-1][1] {
				out[n-1][1] = max(out[n-1][1], iv[1])
			} else {
				out = append(out, iv)
			}
		}
		runs = append(runs, out)
	}
	// Merge pairs of runs into one buffer, then pairs of those into the
	// other, until one run is left.
	b := 0
	for len(runs) > 1 {
		dst := u.bufs[b][:0]
		for i := 0; i < len(runs); i += 2 {
			n := len(dst)
			if i+1 == len(runs) {
				dst = append(dst, runs[i]...)
			} else {
				dst = mergeUnion(dst, runs[i], runs[i+1])
			}
			runs[i/2] = dst[n:len(dst):len(dst)]
		}
		runs = runs[:(len(runs)+1)/2]
		u.bufs[b] = dst
		b ^= 1
	}
	for i := range u.nl {
		u.lanes[i] = u.lanes[i][:0]
	}
	u.spill = u.spill[:0]
	u.nl, u.nloose = 0, 0
	return runs[0]
}

// room makes room in sorted for n more, moving it to the start of its
// array before growing that.
func (u *Union) room(n int) {
	switch {
	case len(u.sorted)+n <= cap(u.sorted):
	case len(u.sorted)+n <= cap(u.buf):
		u.sorted = append(u.buf[:0], u.sorted...)
	default:
		if u.share != nil && !u.joined && len(u.sorted)+n > bigUnion {
			u.joined = true
			u.share.join()
		}
		u.sorted = grow(u.sorted, n)
		u.buf = u.sorted[:0]
	}
}

// compact merges the loose intervals into the sorted list, and retires
// what ends more than Lag before the latest start, and the oldest of more
// than u may hold.
func (u *Union) compact() {
	u.mergeIn()
	lag := u.Lag
	if lag == 0 {
		lag = DefaultLag
	}
	cut := u.latest - lag
	held := u.held()
	n := 0
	for n < len(u.sorted) && (u.sorted[n][1] < cut || len(u.sorted)-n > held) {
		n++
	}
	switch {
	case n == 0:
	case u.pair == nil:
		u.retire(n)
	default:
		// Nothing starting at cut or later is cut off by retiring what
		// starts before it: the one interval that may cross it goes too,
		// and covers what follows up to the new horizon.
		u.pair.retireBefore(max(cut, u.sorted[n-1][1]))
	}
	if held < maxUnion {
		u.shrink(held)
	}
}

// retire adds the first n intervals held to the total, from the horizon
// on, and returns that part of them (in u's array, until u takes more).
func (u *Union) retire(n int) [][2]int64 {
	done := u.sorted[:n]
	u.sorted = u.sorted[n:]
	// The intervals are sorted and disjoint: only the first that ends
	// past the horizon can start before it.
	for len(done) > 0 && done[0][1] <= u.horizon {
		done = done[1:]
	}
	if len(done) == 0 {
		return nil
	}
	done[0][0] = max(done[0][0], u.horizon)
	for _, iv := range done {
		u.retired += iv[1] - iv[0]
	}
	u.horizon = done[len(done)-1][1]
	return done
}

// mergeIn merges the loose intervals into the sorted list.
func (u *Union) mergeIn() {
	if u.nloose == 0 {
		return
	}
	loose := u.mergeLoose()
	u.room(len(loose) + 1) // so that merging into sorted keeps its array
	// Only the tail of sorted from the first loose start on changes.
	k, _ := slices.BinarySearchFunc(u.sorted, loose[0], byStart)
	if k > 0 {
		k-- // the interval before may overlap
	}
	tail := append(u.scratch[:0], u.sorted[k:]...)
	// What sorted holds before k ends before tail and loose start.
	u.sorted = mergeUnion(u.sorted[:k], tail, loose)
	u.scratch = tail[:0]
}

// shrink lets go of arrays grown while u could hold more than held: what
// it holds from now on fits in arrays of about 2*held (its lanes and merge
// buffers grow back as they need to).
func (u *Union) shrink(held int) {
	if c := 2*held + min(looseMax, held) + 1; cap(u.buf) > 2*c {
		u.sorted = append(make([][2]int64, 0, c), u.sorted...)
		u.buf = u.sorted[:0]
	}
	for i := range u.lanes {
		if cap(u.lanes[i]) > 2*held && len(u.lanes[i]) == 0 {
			u.lanes[i] = nil
		}
	}
	for i := range u.bufs {
		if cap(u.bufs[i]) > 2*held {
			u.bufs[i] = nil
		}
	}
	if cap(u.scratch) > 4*held {
		u.scratch = nil
	}
	if cap(u.spill) > 2*held && len(u.spill) == 0 {
		u.spill = nil
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
		u.room(n)
		u.sorted = append(u.sorted[:0], o.sorted...)
		u.retired, u.latest = o.retired, max(u.latest, o.sorted[n-1][0])
		return
	}
	u.retired += o.retired
	for _, iv := range o.sorted {
		u.Add(iv[0], iv[1])
	}
}

// Seal reduces u to its total, letting go of its intervals: for a union
// that takes no more intervals (its trace has been read). A later Add
// counts on top of the total, as a separate union would.
func (u *Union) Seal() {
	if u.joined {
		u.share.leave()
	}
	*u = Union{Lag: u.Lag, share: u.share, pair: u.pair, retired: u.Total()}
}

// empty reports whether u has taken nothing yet.
func (u *Union) empty() bool {
	return len(u.sorted) == 0 && u.nloose == 0 && u.retired == 0 && u.horizon == 0 && u.latest == 0
}

// A pairUnion is the union of two Unions, its sources (a device's kernels
// and its copies), kept as a running total of what they retire rather
// than as a union of its own: it costs a step of one merge per interval
// they retire, rather than a union's work per interval given to them (a
// fifth of summary, where launches overlap). For that the sources retire
// together: when one retires what starts before a time, so does the
// other, and the two parts, each sorted, merge in start order into the
// total. What a source is given later that starts before the time is
// counted by it, and by the pair only from the end of what the pair holds
// on: the pair is exact where its sources are and nothing comes later
// than they retire, as a Union is.
type pairUnion struct {
	sources    [2]*Union
	retired    int64 // the runs closed
	start, end int64 // the open run
	open       bool
}

// link makes p the union of a and b.
func (p *pairUnion) link(a, b *Union) {
	p.sources = [2]*Union{a, b}
	a.pair, b.pair = p, p
}

// retireBefore retires from both sources what starts before t.
func (p *pairUnion) retireBefore(t int64) {
	var parts [2][][2]int64
	for k, u := range p.sources {
		u.mergeIn()
		n, _ := slices.BinarySearchFunc(u.sorted, [2]int64{t, 0}, byStart)
		parts[k] = u.retire(n)
	}
	p.merge(parts[0], parts[1])
}

// merge adds a and b, each sorted, to the total in start order.
func (p *pairUnion) merge(a, b [][2]int64) {
	for len(a) > 0 && len(b) > 0 {
		if a[0][0] <= b[0][0] {
			p.add(a[0])
			a = a[1:]
		} else {
			p.add(b[0])
			b = b[1:]
		}
	}
	for _, iv := range a {
		p.add(iv)
	}
	for _, iv := range b {
		p.add(iv)
	}
}

// add counts iv's part that the intervals before it did not cover, where
// it starts no earlier than they did; else its part past the open run.
func (p *pairUnion) add(iv [2]int64) {
	switch {
	case !p.open:
		p.start, p.end, p.open = iv[0], iv[1], true
	case iv[0] > p.end:
		p.retired += p.end - p.start
		p.start, p.end = iv[0], iv[1]
	default:
		p.end = max(p.end, iv[1])
	}
}

// Total returns the busy time of both sources together. It retires all
// they hold, as their Seal would.
func (p *pairUnion) Total() int64 {
	if p.sources[0] != nil {
		p.retireBefore(math.MaxInt64) // every interval starts before its end
	}
	t := p.retired
	if p.open {
		t += p.end - p.start
	}
	return t
}

// Seal reduces p to its total (Union.Seal).
func (p *pairUnion) Seal() {
	p.retired, p.open = p.Total(), false
}

// Merge adds o's total to p.
func (p *pairUnion) Merge(o *pairUnion) {
	p.retired += o.Total()
}
