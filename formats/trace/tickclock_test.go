package trace

import (
	"math"
	"math/rand"
	"testing"
)

func TestTickClockIdentity(t *testing.T) {
	c := NewTickClock(true)
	c.Add(5, 99)
	if got := c.Nanos(123456); got != 123456 {
		t.Errorf("identity Nanos = %d", got)
	}
}

func TestTickClockInterpolates(t *testing.T) {
	c := NewTickClock(false)
	// 2.5 GHz: 2500 ticks per microsecond.
	c.Add(1_000_000, 10_000)
	c.Add(3_500_000, 11_000)
	c.Add(6_000_000, 12_000)
	cases := []struct {
		ticks uint64
		want  int64
	}{
		{1_000_000, 10_000},
		{2_250_000, 10_500},
		{3_500_000, 11_000},
		{4_750_000, 11_500},
		{6_000_000, 12_000},
		{8_500_000, 13_000}, // past the last point: last slope
		{0, 9_600},          // before the first: first slope
	}
	for _, tc := range cases {
		if got := c.Nanos(tc.ticks); got != tc.want {
			t.Errorf("Nanos(%d) = %d, want %d", tc.ticks, got, tc.want)
		}
	}
}

// Segments with different rates still give a monotonic mapping, and a
// point added later does not move ticks already inside known segments.
func TestTickClockMonotonicAcrossSegments(t *testing.T) {
	c := NewTickClock(false)
	c.Add(0, 0)
	c.Add(1000, 400)  // slope 0.4
	c.Add(2000, 1000) // slope 0.6
	before := c.Nanos(1500)
	c.Add(3000, 1500)
	if after := c.Nanos(1500); after != before {
		t.Errorf("Nanos(1500) moved from %d to %d after a later point", before, after)
	}
	prev := int64(math.MinInt64)
	for tick := uint64(0); tick <= 4000; tick += 7 {
		n := c.Nanos(tick)
		if n < prev {
			t.Fatalf("Nanos(%d) = %d < %d", tick, n, prev)
		}
		prev = n
	}
}

func TestTickClockIgnoresBackwardPoints(t *testing.T) {
	c := NewTickClock(false)
	c.Add(100, 100)
	c.Add(200, 300)
	c.Add(150, 400) // ticks went back: ignored
	c.Add(300, 300) // mono did not advance: ignored
	if c.Points() != 2 {
		t.Errorf("points = %d, want 2", c.Points())
	}
}

// Days of TSC ticks at 3 GHz keep nanosecond precision (128-bit products).
func TestTickClockLargeValues(t *testing.T) {
	c := NewTickClock(false)
	const hz = 3_000_000_000
	base := uint64(1) << 50
	c.Add(base, 1_000_000_000)
	c.Add(base+hz, 2_000_000_000)
	day := uint64(86400) * hz
	if got, want := c.Nanos(base+day), int64(1_000_000_000+86400*1_000_000_000); got != want {
		t.Errorf("a day later = %d, want %d", got, want)
	}
}

func TestTickClockBoundsMemory(t *testing.T) {
	c := NewTickClock(false)
	for i := uint64(1); i <= 3*maxPoints; i++ {
		c.Add(i*1000, int64(i*400))
	}
	if c.Points() > maxPoints {
		t.Errorf("points = %d, over %d", c.Points(), maxPoints)
	}
	if got := c.Nanos(3 * maxPoints * 1000); got != 3*maxPoints*400 {
		t.Errorf("latest point maps to %d", got)
	}
}

// The cached fixed-point segment gives exactly interpolate's result, for
// TSCs faster and slower than 1 GHz, whatever order the ticks come in.
func TestTickClockFastPathExact(t *testing.T) {
	// 3 ticks a nanosecond: the fixed-point fraction 2^64/3 rounds down,
	// so at tick 3 the product falls just short of 1 ns (the carry case).
	c := NewTickClock(false)
	c.Add(0, 0)
	c.Add(3000, 1000)
	c.Add(6000, 2000)
	c.Nanos(1) // caches the first segment
	if got := c.Nanos(3); got != 1 {
		t.Errorf("Nanos(3) at 3 ticks/ns = %d, want 1", got)
	}
	r := rand.New(rand.NewSource(1))
	for _, ticksPerSecond := range []uint64{25_000_000, 1_000_000_000, 2_596_130_000, 3_900_000_000} {
		c := NewTickClock(false)
		var pts []syncPoint
		tick, mono := uint64(1)<<40, int64(1)<<40
		for i := 0; i < 50; i++ {
			c.Add(tick, mono)
			pts = append(pts, syncPoint{tick, mono})
			ns := int64(1e6 + r.Intn(1e9)) // 1 ms to 1 s apart, rates jittered
			tick += uint64(float64(ns) * float64(ticksPerSecond) / 1e9 * (1 + (r.Float64()-0.5)*1e-4))
			mono += ns
		}
		for n := 0; n < 10_000; n++ {
			// A run of ticks in one segment, as in a span: the first takes
			// the exact path and caches the segment, the others use it.
			i := 1 + r.Intn(len(pts)-1)
			a, b := pts[i-1], pts[i]
			for k := 0; k < 20; k++ {
				x := a.ticks + uint64(r.Int63n(int64(b.ticks-a.ticks)))
				if got, want := c.Nanos(x), interpolate(a, b, x); got != want {
					t.Fatalf("%d Hz: Nanos(%d) = %d, want %d (segment %d)", ticksPerSecond, x, got, want, i)
				}
			}
		}
	}
}

// TestTickClockFindsTheSegment: with many points, every tick converts
// through the segment a scan from the newest point finds (the one whose
// start is the latest at or before it, the first segment before them all,
// the last after them), whichever segment the previous conversion cached.
func TestTickClockFindsTheSegment(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	c := NewTickClock(false)
	ticks, mono := uint64(1_000_000), int64(5_000)
	for range 3000 {
		c.Add(ticks, mono)
		ticks += uint64(1 + rng.Intn(1<<20))
		mono += int64(1 + rng.Intn(1<<19))
	}
	p := c.points
	for range 20000 {
		x := p[0].ticks - 1000 + uint64(rng.Int63n(int64(ticks-p[0].ticks+2000)))
		i := len(p) - 1
		for i > 1 && x < p[i-1].ticks {
			i--
		}
		if got, want := c.Nanos(x), interpolate(p[i-1], p[i], x); got != want {
			t.Fatalf("Nanos(%d) = %d, want %d (segment %d)", x, got, want, i)
		}
	}
}
