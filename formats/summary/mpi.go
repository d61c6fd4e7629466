package summary

import (
	"fmt"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// MPI: the calls the PMPI library recorded (runtime/mpi), per MPI
// function: calls, time, bytes; per rank, the time in MPI beside the time
// in kernels (the ranks table's mpi_ns), and its imbalance across ranks.
// Time in Wait* and Test* is the time waiting for non-blocking calls.
//
// Steps: a program marks its steps with user regions (occa_tools_region_*:
// "timestep", "solve"); the steps table gives, per region name, the share
// of the regions' time spent in the MPI calls made inside them, on the
// region's thread. A thread's MPI calls come in time order, each when it
// ends, so the time inside [start, end) is a difference of running sums,
// read from the last stepRing calls; a region that began before those
// (more calls inside it than that) is counted as truncated. Kernel time is
// not split by step: a launch waiting for its device time reaches the
// summary after the region that made it.

type mpiStats struct {
	Dist
	kind  trace.Kind // the row kind: call, point-to-point, collective or wait
	bytes uint64
}

// addMPI sums an MPI call's row (paired) into the function's figures and
// its rank's time in MPI.
func (c *Collector) addMPI(rs *rankStats, r *analysis.Row) {
	ms := named(c.mpi, &c.mpiCut, r.Name, otherFunctions, mergeMPI)
	ms.kind = max(ms.kind, r.Kind) // as merge does: the row of other functions has several
	ms.Add(r.Dur)
	ms.bytes += r.Bytes
	rs.mpiSum += r.Dur
}

func (s *mpiStats) merge(o *mpiStats) {
	s.Dist.Merge(&o.Dist)
	s.bytes += o.bytes
	s.kind = max(s.kind, o.kind) // one function is one kind; max keeps merging order-free
}

// mpiTable is the mpi section, nil without MPI calls.
func (c *Collector) mpiTable() *Table {
	if len(c.mpi) == 0 {
		return nil
	}
	var mpi, kernels, span int64
	for _, rs := range c.ranks {
		mpi += rs.mpiSum
		kernels += rs.kernelSum
		span += rs.last - rs.first
	}
	t := &Table{Name: "mpi",
		Title:   fmt.Sprintf("MPI calls (ranks' time: %.2f %% in MPI, %.2f %% in kernel launches; wait = Wait*, Test*)", pct(mpi, span), pct(kernels, span)),
		Columns: []string{"function", "kind", "calls", "total_ns", "percent", "avg_ns", "median_ns", "min_ns", "max_ns", "bytes"}}
	for _, n := range sortedKeys(c.mpi) {
		m := c.mpi[n]
		t.Rows = append(t.Rows, []any{n, analysis.KindName(m.kind)[len("mpi_"):], m.N, Dur(m.Sum), pct(m.Sum, mpi), Dur(m.Avg()),
			Dur(m.Median()), Dur(m.Min), Dur(m.Max), Bytes(m.bytes)})
	}
	return t
}

// stepRing is how many of a thread's latest calls are kept to find what a
// region ending now holds.
const stepRing = 1 << 12

// maxStepThreads bounds the threads whose calls are kept.
const maxStepThreads = 1 << 10

// stepMark is a call's start and the running sum before it.
type stepMark struct {
	start, mpi int64
}

// threadSteps is one thread's latest MPI calls, a ring, and its running
// sum.
type threadSteps struct {
	ring    []stepMark
	head, n int
	mpi     int64
	evicted bool // calls have left the ring
}

func (ts *threadSteps) push(start, mpi int64) {
	if ts.ring == nil {
		ts.ring = make([]stepMark, stepRing)
	}
	i := (ts.head + ts.n) % stepRing
	if ts.n == stepRing {
		ts.head = (ts.head + 1) % stepRing
		ts.evicted = true
	} else {
		ts.n++
	}
	ts.ring[i] = stepMark{start, ts.mpi}
	ts.mpi += mpi
}

// inside returns the MPI time of the calls that started at or after start,
// and whether all of them are still in the ring.
func (ts *threadSteps) inside(start int64) (mpi int64, whole bool) {
	if ts.n == 0 {
		return 0, true
	}
	at := func(k int) *stepMark { return &ts.ring[(ts.head+k)%stepRing] }
	lo, hi := 0, ts.n // the first call starting at or after start
	for lo < hi {
		if m := (lo + hi) / 2; at(m).start < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	whole = lo > 0 || !ts.evicted
	if lo == ts.n {
		return 0, whole
	}
	return ts.mpi - at(lo).mpi, whole
}

type stepStats struct {
	regions, truncated int64
	time, mpi          int64
}

func (s *stepStats) merge(o *stepStats) {
	s.regions += o.regions
	s.truncated += o.truncated
	s.time += o.time
	s.mpi += o.mpi
}

// threadOf returns the steps state of thread t of the current trace, nil
// past maxStepThreads.
func (c *Collector) threadOf(t uint32) *threadSteps {
	if t >= maxStepThreads {
		return nil
	}
	if int(t) >= len(c.threads) {
		c.threads = append(c.threads, make([]*threadSteps, int(t)+1-len(c.threads))...)
	}
	if c.threads[t] == nil {
		c.threads[t] = &threadSteps{}
	}
	return c.threads[t]
}

// stepCall records an MPI call of thread t.
func (c *Collector) stepCall(t uint32, start, mpi int64) {
	if ts := c.threadOf(t); ts != nil {
		ts.push(start, mpi)
	}
}

// stepRegion sums what the region row r holds into its name's step.
func (c *Collector) stepRegion(r *analysis.Row) {
	ts := c.threadOf(r.Thread)
	if ts == nil {
		return
	}
	mpi, whole := ts.inside(r.Start)
	if mpi == 0 && whole {
		return // not a step: no MPI call in it
	}
	st := named(c.steps, &c.stepCut, r.Name, otherRegions, mergeStep)
	st.regions++
	if !whole {
		st.truncated++
		return
	}
	st.time += r.Dur
	st.mpi += mpi
}

// stepTable is the steps section, nil without steps.
func (c *Collector) stepTable() *Table {
	if len(c.steps) == 0 {
		return nil
	}
	t := &Table{Name: "steps",
		Title:   "Steps: user regions holding MPI calls (the calls' time inside them, on their thread; truncated: regions holding more than 4096 calls, left out of the sums)",
		Columns: []string{"region", "regions", "total_ns", "mpi_ns", "mpi_percent", "truncated"}}
	for _, n := range sortedKeys(c.steps) {
		s := c.steps[n]
		t.Rows = append(t.Rows, []any{n, s.regions, Dur(s.time), Dur(s.mpi), pct(s.mpi, s.time), s.truncated})
	}
	return t
}
