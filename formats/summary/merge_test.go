package summary

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// A Dist merged from parts, in any order, is the Dist of all the values:
// the same count, sum, minimum, maximum, median and standard deviation, to
// the bit, below and above the exact-samples limit.
func TestDistMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{7, maxSamples, 3 * maxSamples} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = rng.Int64N(5e9) // up to 5 s: squares pass 2^64
		}
		var whole Dist
		for _, v := range vals {
			whole.Add(v)
		}
		for order := range 3 {
			parts := make([]*Dist, 5)
			for i := range parts {
				parts[i] = &Dist{}
			}
			for i, v := range vals {
				parts[(i*7+order)%5].Add(v)
			}
			rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			var m Dist
			for _, p := range parts {
				m.Merge(p)
			}
			if m.N != whole.N || m.Sum != whole.Sum || m.Min != whole.Min || m.Max != whole.Max ||
				m.Median() != whole.Median() || math.Float64bits(m.Stddev()) != math.Float64bits(whole.Stddev()) {
				t.Errorf("n=%d order %d: merged %d %d %d %d %d %v, whole %d %d %d %d %d %v", n, order,
					m.N, m.Sum, m.Min, m.Max, m.Median(), m.Stddev(), whole.N, whole.Sum, whole.Min, whole.Max, whole.Median(), whole.Stddev())
			}
		}
		// The standard deviation is that of the values, computed exactly.
		sum, sq := new(big.Float).SetPrec(200), new(big.Float).SetPrec(200)
		for _, v := range vals {
			f := new(big.Float).SetPrec(200).SetInt64(v)
			sum.Add(sum, f)
			sq.Add(sq, f.Mul(f, f))
		}
		nf := new(big.Float).SetPrec(200).SetInt64(int64(n))
		mean := new(big.Float).SetPrec(200).Quo(sum, nf)
		variance := new(big.Float).SetPrec(200).Quo(sq, nf)
		variance.Sub(variance, mean.Mul(mean, mean))
		want, _ := variance.Sqrt(variance).Float64()
		if got := whole.Stddev(); math.Abs(got-want) > want*1e-12 {
			t.Errorf("n=%d: stddev %v, want %v", n, got, want)
		}
	}
}

// Traces absorbed into a total in any order give the same report, byte for
// byte, in every format; absorbing leaves the collector empty.
func TestAbsorbOrder(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, o := range []tracetest.SmallOptions{{Rank: 1}, {Rank: 2}, {}, {PID: 4243}, {Rank: 5, NoDefs: true}, {Rank: 6, NoClose: true}} {
		paths = append(paths, writeSmall(t, dir, fmt.Sprintf("t%d.occatrace", i), o))
	}
	var want map[string][]byte
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {3, 0, 5, 1, 4, 2}} {
		total := NewCollector()
		for _, i := range order {
			c := NewCollector()
			res, err := analysis.Read(paths[i], i, analysis.Options{}, c.Add)
			if res == nil {
				t.Fatal(err)
			}
			c.Finish(res)
			total.Absorb(c)
			if len(c.kernels)+len(c.devices)+len(c.ranks) != 0 {
				t.Fatalf("absorbed collector still holds %d kernels, %d devices, %d ranks", len(c.kernels), len(c.devices), len(c.ranks))
			}
		}
		rep := total.Report()
		got := map[string][]byte{}
		for _, f := range Formats {
			var b bytes.Buffer
			if err := rep.Write(&b, f, ""); err != nil {
				t.Fatal(err)
			}
			got[f] = b.Bytes()
		}
		if want == nil {
			want = got
			if !bytes.Contains(got["table"], []byte("\n5 ranks, ")) { // rank 3 has two traces
				t.Errorf("report: %s", got["table"])
			}
			continue
		}
		for _, f := range Formats {
			if !bytes.Equal(got[f], want[f]) {
				t.Errorf("order %v: %s report differs:\n%s\nwant\n%s", order, f, got[f], want[f])
			}
		}
	}
}

// Sealing keeps a union's total and lets go of its intervals.
func TestUnionSeal(t *testing.T) {
	var u Union
	for i := range int64(100000) {
		u.Add(i*10, i*10+3)
	}
	u.Add(5, 1e6+7) // overlaps everything after 5
	want := u.Total()
	u.Seal()
	if got := u.Total(); got != want || want != int64(3+1e6+7-5) {
		t.Errorf("total %d after seal, %d before, want %d", got, want, int64(3+1e6+7-5))
	}
	if len(u.sorted)+cap(u.sorted)+len(u.lanes)+cap(u.spill) != 0 {
		t.Errorf("sealed union holds %d intervals (cap %d), %d lanes, spill cap %d", len(u.sorted), cap(u.sorted), len(u.lanes), cap(u.spill))
	}
	var o Union
	o.Add(0, 10)
	o.Merge(&u)
	if got := o.Total(); got != want+10 {
		t.Errorf("merged %d, want %d", got, want+10)
	}
}

// The steps table: per region name, the MPI time of the calls inside the
// regions on their thread; a region without MPI calls is no step, and one
// holding more calls than are kept is counted as truncated.
func TestSteps(t *testing.T) {
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	c := NewCollector()
	add := func(r analysis.Row) {
		r.DevDur = -1
		if err := c.Add(p, &r); err != nil {
			t.Fatal(err)
		}
	}
	mpi := func(thread uint32, start, dur int64) {
		add(analysis.Row{Kind: trace.MpiP2PBegin, Thread: thread, Start: start, Dur: dur, Name: "send"})
	}
	region := func(thread uint32, name string, start, dur int64) {
		add(analysis.Row{Kind: trace.RegionPush, Thread: thread, Start: start, Dur: dur, Name: name})
	}
	mpi(0, 10, 10)
	mpi(0, 30, 5)
	region(0, "step", 5, 35) // 15 ns of MPI
	mpi(0, 50, 10)
	region(0, "step", 45, 25) // 10 ns
	region(0, "other", 80, 10)
	region(1, "step", 0, 100) // thread 1 made no call
	for i := range int64(stepRing + 1) {
		mpi(2, 1000+2*i, 1)
	}
	region(2, "long", 999, 10000) // holds more calls than are kept
	rep := c.Report()
	var got []string
	for _, r := range rep.Table("steps").Rows {
		got = append(got, strings.TrimSpace(fmt.Sprintln(r...)))
	}
	want := []string{"long 1 0 0 0 1", "step 2 60 25 41.666666666666664 0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("steps: %q, want %q", got, want)
	}
}
