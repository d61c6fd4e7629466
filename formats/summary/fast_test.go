package summary

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// naiveUnion is the straightforward busy time: sort, merge, sum.
func naiveUnion(ivs [][2]int64) int64 {
	ivs = slices.Clone(ivs)
	slices.SortFunc(ivs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var t, lo, hi int64
	open := false
	for _, iv := range ivs {
		if iv[1] <= iv[0] {
			continue
		}
		if open && iv[0] <= hi {
			hi = max(hi, iv[1])
			continue
		}
		if open {
			t += hi - lo
		}
		lo, hi, open = iv[0], iv[1], true
	}
	if open {
		t += hi - lo
	}
	return t
}

func TestUnionRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		// Several ascending streams (threads, delayed launches) interleaved
		// in batches, plus some intervals in random order.
		streams := 1 + rng.IntN(40)
		times := make([]int64, streams)
		var ivs [][2]int64
		var u Union
		n := 1000 + rng.IntN(100000)
		for len(ivs) < n {
			s := rng.IntN(streams)
			for range 1 + rng.IntN(2000) {
				times[s] += 1 + rng.Int64N(5000)
				iv := [2]int64{times[s], times[s] + rng.Int64N(8000)}
				if rng.IntN(50) == 0 {
					iv[0] = max(0, iv[0]-rng.Int64N(1e6))
				}
				ivs = append(ivs, iv)
				u.Add(iv[0], iv[1])
			}
		}
		if got, want := u.Total(), naiveUnion(ivs); got != want {
			t.Fatalf("round %d (%d streams, %d intervals): union %d, want %d", round, streams, len(ivs), got, want)
		}
	}
}

// TestBusyRandom checks the busy columns against the straightforward union
// of the rows, on a trace of several threads interleaved in batches whose
// launches wait for device time, so that rows come out of order.
func TestBusyRandom(t *testing.T) {
	const threads = 4
	gens := make([]*tracetest.Gen, threads)
	for i := range gens {
		gens[i] = tracetest.NewGen(uint64(i + 11))
		gens[i].Corr = uint64(i) << 40
	}
	rng := rand.New(rand.NewPCG(3, 4))
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	c := NewCollector()
	var api, kern, cp [][2]int64
	pr := analysis.NewPairer(p, func(p *analysis.Process, r *analysis.Row) error {
		if r.Dur != analysis.Unpaired && r.Kind.Spec() != nil && r.Kind.Spec().Begin {
			api = append(api, [2]int64{r.Start, r.Start + r.Dur})
			switch r.Kind {
			case trace.RunBegin:
				s, d := r.Start, r.Dur
				if r.DevDur >= 0 {
					d = r.DevDur
					if r.DevStart != 0 {
						s = r.DevStart
					}
				}
				kern = append(kern, [2]int64{s, s + d})
			case trace.CopyBegin:
				cp = append(cp, [2]int64{r.Start, r.Start + r.Dur})
			}
		}
		return c.Add(p, r)
	})
	pr.Window = 5000
	var e trace.Event
	for range 400 {
		th := rng.IntN(threads)
		for range 1 + rng.IntN(3000) {
			gens[th].Next(&e)
			e.Thread = uint32(th)
			if err := pr.Add(&e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	rep := c.Report()
	dev := rep.Table("devices").Rows
	// Without defs the launches run on device#1 and the copies on the host.
	if len(dev) != 2 {
		t.Fatalf("devices: %v", dev)
	}
	for _, ch := range []struct {
		name string
		got  any
		ivs  [][2]int64
	}{
		{"api_busy", rep.Table("ranks").Rows[0][slices.Index(rep.Table("ranks").Columns, "api_busy_ns")], api},
		{"kernel_busy", dev[0][4], kern},
		{"device busy", dev[0][9], kern},
		{"copy_busy", dev[1][8], cp},
		{"host busy", dev[1][9], cp},
		{"copies busy", rep.Table("copies").Rows[0][4], cp},
	} {
		if want := naiveUnion(ch.ivs); ch.got != Dur(want) {
			t.Errorf("%s: %v, want %d", ch.name, ch.got, want)
		}
	}
}

// TestUnionMergeEmpty checks that merging into an empty Union (which copies)
// gives what merging into one that holds an interval (which adds) gives.
func TestUnionMergeEmpty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var o Union
	var ivs [][2]int64
	for range maxUnion - 1000 { // in random order: more, and the oldest are retired
		s := rng.Int64N(1e9)
		iv := [2]int64{s, s + rng.Int64N(3000)}
		ivs = append(ivs, iv)
		o.Add(iv[0], iv[1])
	}
	var a, b Union
	a.Merge(&o)
	b.Add(1, 2)
	b.Merge(&o)
	if got, want := a.Total(), naiveUnion(ivs); got != want {
		t.Fatalf("merged into empty: %d, want %d", got, want)
	}
	if got, want := b.Total(), naiveUnion(append(ivs, [2]int64{1, 2})); got != want {
		t.Fatalf("merged into non-empty: %d, want %d", got, want)
	}
}

// TestUnionFarOutOfOrder checks Union on input far out of order: starts up
// to 50 us back with gaps up to 3 us, more interleaved streams than lanes.
// Times start well above 0: trace times are never negative, and Union counts
// nothing before 0.
func TestUnionFarOutOfOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ivs [][2]int64
	var u Union
	now := int64(1e6)
	for range 400000 {
		now += 1 + rng.Int64N(3000)
		s := now - rng.Int64N(50000)
		iv := [2]int64{s, s + rng.Int64N(5000)}
		ivs = append(ivs, iv)
		u.Add(iv[0], iv[1])
	}
	if got, want := u.Total(), naiveUnion(ivs); got != want {
		t.Fatalf("union %d, want %d", got, want)
	}
}

// TestMergeUnion checks the branch-free merge of two sorted, disjoint lists
// against the straightforward union.
func TestMergeUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	list := func() [][2]int64 {
		var l [][2]int64
		var t int64
		for range rng.IntN(200) {
			t += 1 + rng.Int64N(100)
			e := t + 1 + rng.Int64N(100)
			l = append(l, [2]int64{t, e})
			t = e
		}
		return l
	}
	for range 2000 {
		a, b := list(), list()
		pre := [][2]int64{{-10, -5}}
		got := mergeUnion(pre, a, b)
		if got[0] != pre[0] {
			t.Fatalf("changed what out held: %v", got[0])
		}
		var sum int64
		for i, iv := range got[1:] {
			if iv[1] <= iv[0] || i > 0 && iv[0] <= got[i][1] {
				t.Fatalf("not sorted and disjoint at %d: %v", i, got)
			}
			sum += iv[1] - iv[0]
		}
		if want := naiveUnion(append(slices.Clone(a), b...)); sum != want {
			t.Fatalf("union %d, want %d", sum, want)
		}
	}
}
