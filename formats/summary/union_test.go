package summary

import (
	"math/rand/v2"
	"testing"
)

// TestUnionExact checks Union against the straightforward union on random
// interval sets: several ascending streams interleaved in batches, nested,
// touching, empty and huge intervals, and some in random order. Those with
// a small Lag retire all the time; their intervals start less than Lag
// before the latest start seen, so that retiring cuts none of them and the
// union stays exact.
func TestUnionExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for round := range 300 {
		var u Union
		lag := int64(0) // DefaultLag
		if round%2 == 1 {
			u.Lag = 1 + rng.Int64N(200000)
			lag = u.Lag
		}
		streams := 1 + rng.IntN(24)
		times := make([]int64, streams)
		for i := range times {
			times[i] = 1e6 + rng.Int64N(1e4)
		}
		var ivs [][2]int64
		latest := int64(0)
		n := rng.IntN(1 << uint(4+rng.IntN(14)))
		if round < 4 {
			n = 6 * looseMax // compacting, and with a Lag retiring, many times
		}
		for len(ivs) < n {
			st := rng.IntN(streams)
			for range 1 + rng.IntN(300) {
				times[st] += rng.Int64N(3000)
				s := times[st]
				var e int64
				switch rng.IntN(16) {
				case 0: // empty, or backwards
					e = s - rng.Int64N(2)
				case 1: // touching the last one
					if len(ivs) > 0 {
						s = ivs[len(ivs)-1][1]
					}
					e = s + 1 + rng.Int64N(100)
				case 2: // nested in the last one
					if len(ivs) > 0 {
						l := ivs[len(ivs)-1]
						s = l[0] + rng.Int64N(max(l[1]-l[0], 1))
						e = s + rng.Int64N(max(l[1]-s, 1))
					}
				case 3: // far out of order
					s = max(0, s-rng.Int64N(2e6))
					e = s + rng.Int64N(5000)
				case 4: // huge
					e = s + rng.Int64N(1<<40)
				default:
					e = s + rng.Int64N(4000)
				}
				if lag != 0 {
					// Retiring counts only what ends lag before the latest start.
					s = max(s, latest-lag+1)
					e = max(e, s-1)
				}
				latest = max(latest, s)
				ivs = append(ivs, [2]int64{s, e})
				u.Add(s, e)
			}
		}
		if len(u.sorted) > 2*maxUnion || u.nloose > looseMax {
			t.Fatalf("round %d: holds %d sorted, %d loose", round, len(u.sorted), u.nloose)
		}
		if got, want := u.Total(), naiveUnion(ivs); got != want {
			t.Fatalf("round %d (lag %d, %d streams, %d intervals): union %d, want %d", round, lag, streams, len(ivs), got, want)
		}
	}
}

// TestUnionBounded checks that a Union far out of order with a small Lag
// stays within its bounds; and, where no interval starts Lag before the
// latest start, that it is exact: that neither retiring nor taking back the
// room that retiring leaves loses anything.
func TestUnionBounded(t *testing.T) {
	for _, exact := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(13, 14))
		u := Union{Lag: 5000}
		var ivs [][2]int64
		now, latest := int64(1e6), int64(0)
		for range 600000 {
			now += rng.Int64N(50)
			s := max(0, now-rng.Int64N(1e5))
			if exact { // a third out of order, by less than Lag
				s = now - rng.Int64N(u.Lag)*int64(b2i(rng.IntN(3) == 0))
				s = max(s, latest-u.Lag+1)
			}
			latest = max(latest, s)
			iv := [2]int64{s, s + rng.Int64N(300)}
			if exact { // mostly disjoint, so that many are held
				iv[1] = s + rng.Int64N(40)
			}
			ivs = append(ivs, iv)
			u.Add(iv[0], iv[1])
			if len(u.sorted) > 2*maxUnion || u.nloose > looseMax || cap(u.buf) > 2*maxUnion+2*looseMax {
				t.Fatalf("holds %d sorted (array %d), %d loose", len(u.sorted), cap(u.buf), u.nloose)
			}
		}
		got, all := u.Total(), naiveUnion(ivs)
		if exact && got != all || got > all || got < all/2 {
			t.Fatalf("exact %v: union %d, of %d", exact, got, all)
		}
	}
}

// TestUnionShare checks that unions sharing a unionShare hold at most
// about 10*sharedHeld intervals in their arrays together, however many of
// them hold many, and stay exact on intervals that come in start order or
// a little late; a sealed union leaves the share.
func TestUnionShare(t *testing.T) {
	const unions, each = 40, 200000
	var share unionShare
	us := make([]Union, unions)
	for i := range us {
		us[i].share = &share
	}
	held := func() (n int) {
		for i := range us {
			u := &us[i]
			n += cap(u.buf) + cap(u.scratch) + cap(u.spill) + cap(u.bufs[0]) + cap(u.bufs[1])
			for _, l := range u.lanes {
				n += cap(l)
			}
		}
		return n
	}
	most := 0
	for k := range each {
		for i := range us {
			// Disjoint, and in start order but for every third, which
			// comes one place late (held, so exact).
			j := int64(k)
			if k%3 == 1 {
				j++
			} else if k%3 == 2 {
				j--
			}
			s := j*100 + int64(i)
			us[i].Add(s, s+10)
		}
		if k%1000 == 999 {
			most = max(most, held())
		}
	}
	if share.big != unions || share.held != sharedHeld/unions {
		t.Fatalf("share: %d unions joined, each holds %d; want %d, %d", share.big, share.held, unions, sharedHeld/unions)
	}
	if most > 10*sharedHeld {
		t.Fatalf("the unions' arrays held %d intervals, over %d", most, 10*sharedHeld)
	}
	for i := range us {
		if got := us[i].Total(); got != each*10 {
			t.Fatalf("union %d: busy %d, want %d", i, got, each*10)
		}
		us[i].Seal()
	}
	if share.big != 0 || share.held != maxUnion {
		t.Fatalf("after Seal: %d unions joined, each holds %d; want 0, %d", share.big, share.held, maxUnion)
	}
}

// TestPairUnionExact checks a pairUnion and its two sources against the
// straightforward unions. Each source takes short intervals with gaps
// between them (what a lost retirement would show), mostly ascending, a
// quarter up to Lag late. With a small Lag or few intervals held (a share
// split many ways), one source retiring makes the other retire every few
// hundred intervals; nothing may be lost, since nothing comes Lag late
// and Lag spans fewer intervals than a source holds.
func TestPairUnionExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for round := range 150 {
		var share *unionShare
		lag := int64(DefaultLag)
		switch round % 3 {
		case 1:
			lag = 1 + rng.Int64N(100000)
		case 2:
			share, lag = fewHeld(), 1+rng.Int64N(20000)
		}
		src, p := newPair(share)
		src[0].Lag, src[1].Lag = lag, lag
		n := 1 << (6 + rng.IntN(10))
		var dealt [2][][2]int64
		var all [][2]int64
		var now, latest int64 = 1e12, 0 // well after 0: a Union counts nothing before 0, its first horizon
		for range n {
			k := rng.IntN(2)
			now += rng.Int64N(200)
			s := now
			if rng.IntN(4) == 0 {
				s = max(now-rng.Int64N(lag), latest-lag+1)
			}
			latest = max(latest, s)
			iv := [2]int64{s, s + 1 + rng.Int64N(60)}
			src[k].Add(iv[0], iv[1])
			dealt[k] = append(dealt[k], iv)
			all = append(all, iv)
		}
		for k := range src {
			if got, want := src[k].Total(), naiveUnion(dealt[k]); got != want {
				t.Fatalf("round %d (lag %d, %d intervals): source %d's union %d, want %d", round, lag, n, k, got, want)
			}
		}
		if got, want := p.Total(), naiveUnion(all); got != want {
			t.Fatalf("round %d (lag %d, %d intervals): the pair's union %d, want %d", round, lag, n, got, want)
		}
		for k := range src { // the pair's total retired all they held
			if got, want := src[k].Total(), naiveUnion(dealt[k]); got != want || len(src[k].sorted) != 0 {
				t.Fatalf("round %d: after the pair's total, source %d's union %d holding %d, want %d holding 0", round, k, got, len(src[k].sorted), want)
			}
		}
	}
}

// TestPairUnionBounded: where intervals come later than the sources hold
// (few held, far out of order), the unions lose time, but never count
// more than the straightforward unions, nor the pair more than its
// sources together; and they lose a bounded part.
func TestPairUnionBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for round := range 50 {
		src, p := newPair(fewHeld())
		var dealt [2][][2]int64
		var all [][2]int64
		now := int64(1e12)
		for range 20000 {
			k := rng.IntN(2)
			now += rng.Int64N(200)
			s := now
			if rng.IntN(4) == 0 {
				s -= rng.Int64N(1e6) // up to 10,000 intervals late
			}
			iv := [2]int64{s, s + 1 + rng.Int64N(60)}
			src[k].Add(iv[0], iv[1])
			dealt[k] = append(dealt[k], iv)
			all = append(all, iv)
		}
		pt, a, b := p.Total(), src[0].Total(), src[1].Total()
		na, nb, nall := naiveUnion(dealt[0]), naiveUnion(dealt[1]), naiveUnion(all)
		if pt > a+b || pt > nall || a > na || b > nb || pt < nall/2 || a < na/2 || b < nb/2 {
			t.Fatalf("round %d: pair %d, sources %d and %d; straightforward %d, %d and %d", round, pt, a, b, nall, na, nb)
		}
	}
}

// newPair returns two unions sharing share (nil: none) and their pair.
func newPair(share *unionShare) (*[2]Union, *pairUnion) {
	src, p := new([2]Union), new(pairUnion)
	p.link(&src[0], &src[1])
	src[0].share, src[1].share = share, share
	return src, p
}

// fewHeld returns a share that lets a union hold minUnion intervals, as
// when it is split among many unions that hold many.
func fewHeld() *unionShare {
	s := &unionShare{big: sharedHeld / minUnion}
	s.split()
	return s
}

// FuzzPairUnion gives a pair's two sources intervals made from the
// fuzzer's bytes (four each: the source, a step forward, how late, a
// length), none later than Lag (at most 128 ns, so that a window of Lag
// holds fewer intervals than a source may) and, after the first byte
// asks for it, with minUnion intervals held, so that the sources retire
// each other all the time. The pair and both sources must equal the
// straightforward unions.
func FuzzPairUnion(f *testing.F) {
	f.Add([]byte{1, 40, 0, 10, 0, 5, 1, 3, 0, 9, 0, 1, 200, 4, 1, 0, 255, 60})
	f.Add([]byte{0, 255, 1, 255, 255, 255})
	// Long enough that the sources, holding minUnion, retire many times,
	// with gaps between the intervals for a lost retirement to show in.
	rng := rand.New(rand.NewPCG(19, 20))
	long := []byte{1, 255}
	for range 4000 {
		long = append(long, byte(rng.IntN(2)), byte(100+rng.IntN(156)), byte(rng.IntN(256)), byte(rng.IntN(40)))
	}
	f.Add(long)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		var share *unionShare
		if data[0]&1 == 1 {
			share = fewHeld()
		}
		src, p := newPair(share)
		lag := 1 + int64(data[1]>>1)
		src[0].Lag, src[1].Lag = lag, lag
		var dealt [2][][2]int64
		var all [][2]int64
		var now, latest int64 = 1e12, 0 // well after 0: a Union counts nothing before 0
		for b := data[2:]; len(b) >= 4; b = b[4:] {
			k := int(b[0] & 1)
			now += 1 + int64(b[1])
			s := max(now-int64(b[2]), latest-lag+1)
			latest = max(latest, s)
			iv := [2]int64{s, s + int64(b[3])}
			src[k].Add(iv[0], iv[1])
			dealt[k] = append(dealt[k], iv)
			all = append(all, iv)
		}
		pair := p.Total()
		for k := range src {
			if got, want := src[k].Total(), naiveUnion(dealt[k]); got != want {
				t.Fatalf("source %d's union %d, want %d", k, got, want)
			}
		}
		if want := naiveUnion(all); pair != want {
			t.Fatalf("the pair's union %d, want %d", pair, want)
		}
	})
}
