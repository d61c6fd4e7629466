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

type mpiStats struct {
	Dist
	kind  trace.Kind // the row kind: call, point-to-point, collective or wait
	bytes uint64
}

// addMPI sums an MPI call's row (paired) into the function's figures and
// its rank's time in MPI.
func (c *Collector) addMPI(rs *rankStats, r *analysis.Row) {
	ms := c.mpi[r.Name]
	if ms == nil {
		ms = &mpiStats{kind: r.Kind}
		c.mpi[r.Name] = ms
	}
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
