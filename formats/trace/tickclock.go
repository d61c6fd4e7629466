package trace

import (
	"math"
	"math/bits"
	"sort"
)

// TickClock converts raw ticks (TSC, or CLOCK_MONOTONIC ns when the TSC is not
// used) to CLOCK_MONOTONIC nanoseconds. It is piecewise linear through sync
// points, each a (ticks, monotonic) pair read together: a tick between two
// points is interpolated, so the mapping follows the monotonic clock's own
// rate (including NTP slewing) and is the same whichever cycle converts it.
// Ticks past the last point use the last segment's slope.
type TickClock struct {
	identity bool
	points   []syncPoint // increasing ticks; the oldest are dropped past maxPoints
	// seg is the segment of the last conversion, for the next: the line
	// through two points in fixed point, which is interpolate's exact
	// result unless the fraction's low word carries (then Nanos takes the
	// exact path). A conversion is then two multiplications instead of a
	// 128-bit division. Span 0: none cached.
	seg Linear
}

type syncPoint struct {
	ticks uint64
	mono  int64
}

// maxPoints bounds memory; with one point per writer cycle (at most one a
// millisecond) it still covers the span of any buffer still in flight.
const maxPoints = 4096

// NewTickClock returns a Clock; identity means ticks already are monotonic ns.
func NewTickClock(identity bool) *TickClock {
	c := &TickClock{identity: identity}
	if identity {
		c.seg = Linear{Span: math.MaxUint64, Q: 1}
	}
	return c
}

// Flat returns the clock as Batch.AddRaw takes it: the segment of
// the last conversion, then Nanos.
func (c *TickClock) Flat() *FlatClock {
	return &FlatClock{Fast: &c.seg, Slow: c.Nanos}
}

// Add records a sync point. Points that do not advance both clocks are
// ignored.
func (c *TickClock) Add(ticks uint64, mono int64) {
	if c.identity {
		return
	}
	if n := len(c.points); n > 0 {
		last := c.points[n-1]
		if ticks <= last.ticks || mono <= last.mono {
			return
		}
	}
	if len(c.points) == maxPoints {
		copy(c.points, c.points[maxPoints/2:])
		c.points = c.points[:maxPoints/2]
	}
	c.points = append(c.points, syncPoint{ticks, mono})
	c.seg.Span = 0 // the last segment changed
}

// Points returns the sync points held (oldest first).
func (c *TickClock) Points() int { return len(c.points) }

// Nanos converts ticks to CLOCK_MONOTONIC ns.
func (c *TickClock) Nanos(ticks uint64) int64 {
	if c.identity {
		return int64(ticks)
	}
	// Records come in runs from one thread's buffer: consecutive ticks
	// mostly fall in the segment of the previous conversion.
	if ns, ok := c.seg.Nanos(ticks); ok {
		return ns
	}
	return c.nanosSlow(ticks)
}

func (c *TickClock) nanosSlow(ticks uint64) int64 {
	n := len(c.points)
	switch n {
	case 0:
		return int64(ticks)
	case 1:
		// No rate yet: only reachable before the writer's first cycle.
		return c.points[0].mono + int64(ticks-c.points[0].ticks)
	}
	// The segment: the last one for ticks past its start (recent ones),
	// else found by bisection, so that a file whose records jump between
	// far apart ticks costs its reader 12 steps a record, not 4096.
	i := n - 1
	if ticks < c.points[i-1].ticks {
		j := sort.Search(n, func(k int) bool { return c.points[k].ticks > ticks })
		i = max(1, j)
	}
	a, b := c.points[i-1], c.points[i]
	c.cache(a, b, i == n-1)
	return interpolate(a, b, ticks)
}

// cache makes the segment from a to b the fast path's; the last segment
// also serves ticks up to one segment's length past b (the last slope).
func (c *TickClock) cache(a, b syncPoint, last bool) {
	dt, dm := b.ticks-a.ticks, uint64(b.mono-a.mono)
	span := dt
	if last && dt < 1<<62 {
		span = 2 * dt
	}
	if dm >= 1<<62 || span > (1<<62)/(dm/dt+1) { // x*q could overflow
		c.seg.Span = 0
		return
	}
	frac, _ := bits.Div64(dm%dt, 0, dt)
	c.seg = Linear{From: a.ticks, Mono: a.mono, Span: span, Q: dm / dt, Frac: frac}
}

// interpolate evaluates the line through a and b at ticks with 128-bit
// intermediates, so days of ticks lose no precision.
func interpolate(a, b syncPoint, ticks uint64) int64 {
	dt := b.ticks - a.ticks
	dm := uint64(b.mono - a.mono)
	if ticks >= a.ticks {
		hi, lo := bits.Mul64(ticks-a.ticks, dm)
		if hi >= dt { // absurdly far past b: saturate rather than overflow
			return b.mono + int64(ticks-b.ticks)
		}
		q, _ := bits.Div64(hi, lo, dt)
		return a.mono + int64(q)
	}
	hi, lo := bits.Mul64(a.ticks-ticks, dm)
	if hi >= dt {
		return a.mono - int64(a.ticks-ticks)
	}
	q, _ := bits.Div64(hi, lo, dt)
	return a.mono - int64(q)
}

// Ticks is the inverse of Nanos on the last segment's line: the ticks at
// which the clock reads mono (an edge to compare raw ticks against).
// Saturates at 0 and at the largest uint64.
func (c *TickClock) Ticks(mono int64) uint64 {
	n := len(c.points)
	if c.identity || n == 0 {
		return uint64(max(mono, 0))
	}
	b := c.points[n-1]
	if n == 1 { // no rate yet: one tick a nanosecond
		if mono >= b.mono {
			return b.ticks + uint64(mono-b.mono)
		}
		return b.ticks - min(b.ticks, uint64(b.mono-mono))
	}
	a := c.points[n-2]
	dt, dm := b.ticks-a.ticks, uint64(b.mono-a.mono)
	if mono >= b.mono {
		hi, lo := bits.Mul64(uint64(mono-b.mono), dt)
		if hi >= dm {
			return math.MaxUint64
		}
		q, _ := bits.Div64(hi, lo, dm)
		if q > math.MaxUint64-b.ticks {
			return math.MaxUint64
		}
		return b.ticks + q
	}
	hi, lo := bits.Mul64(uint64(b.mono-mono), dt)
	if hi >= dm {
		return 0
	}
	q, _ := bits.Div64(hi, lo, dm)
	return b.ticks - min(b.ticks, q)
}
