package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/libocca/occa-tools/formats/analysis"
)

// Cell types: a table cell is an int64 count, a Dur (ns), a Bytes, a
// float64 (a percentage or a ratio), a Rate (bytes/s) or a string.
type (
	// Dur is a duration in ns.
	Dur int64
	// Bytes is a byte count.
	Bytes uint64
	// Rate is a bandwidth in bytes per second.
	Rate float64
)

// Table is one section of the report. Column names are snake_case with the
// unit as suffix (total_ns, bytes), as CSV and JSON print them.
type Table struct {
	Name    string // "kernels", "copies", ...
	Title   string
	Columns []string
	Rows    [][]any
	// Sparse lists columns that the text and markdown tables leave out when
	// every row holds zero there (device times of a trace that has none);
	// CSV and JSON keep every column, so scripts see one schema.
	Sparse []string
}

// Report is the whole summary.
type Report struct {
	Ranks    int
	Events   uint64
	Dropped  uint64 // events lost in all ranks (stats chunks, or dropped events when larger)
	DropRank int    // ranks with drops
	Warnings []string
	Tables   []*Table
}

// Table returns the table called name, or nil.
func (r *Report) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func pct(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

func rate(bytes uint64, ns int64) Rate {
	if ns <= 0 {
		return 0
	}
	return Rate(float64(bytes) * 1e9 / float64(ns))
}

// Report builds the report.
func (c *Collector) Report() *Report {
	c.sync()
	c.ompFinishAll()
	c.trimTables()
	rep := &Report{}
	for _, rs := range c.ranks {
		rep.Ranks++
		rep.Events += rs.events
		d := max(rs.dropped, rs.dropRows)
		rep.Dropped += d
		if d > 0 {
			rep.DropRank++
		}
	}
	if rep.Dropped > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d events were DROPPED in %d of %d ranks: every figure below undercounts (see the drops table)", rep.Dropped, rep.DropRank, rep.Ranks))
	}
	for _, k := range sortedKeys(c.ranks) {
		rs := c.ranks[k]
		if !rs.complete {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("rank %d: trace incomplete (not closed cleanly)", k))
		}
		if rs.problems > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("rank %d: %d damaged parts skipped", k, rs.problems))
		}
		if rs.untracked > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("rank %d: %d allocations made while %d were live were not followed: the memory table's never-freed figures undercount",
				k, rs.untracked, analysis.MaxLive))
		}
	}

	// Kernels.
	var kernelTotal int64
	for _, k := range c.kernels {
		kernelTotal += k.host.Sum
	}
	kt := &Table{Name: "kernels", Title: "Kernels (host-side launch to return; device-side where the trace has device times)",
		Columns: []string{"kernel", "calls", "total_ns", "percent", "avg_ns", "median_ns", "min_ns", "max_ns", "stddev_ns",
			"device_calls", "device_total_ns", "device_avg_ns", "device_median_ns", "device_min_ns", "device_max_ns"},
		Sparse: []string{"device_calls", "device_total_ns", "device_avg_ns", "device_median_ns", "device_min_ns", "device_max_ns"}}
	for _, n := range c.kernelNames() {
		k := c.kernels[n]
		h, d := &k.host, &k.dev
		kt.Rows = append(kt.Rows, []any{n, h.N, Dur(h.Sum), pct(h.Sum, kernelTotal), Dur(h.Avg()), Dur(h.Median()), Dur(h.Min), Dur(h.Max), Dur(h.Stddev()),
			d.N, Dur(d.Sum), Dur(d.Avg()), Dur(d.Median()), Dur(d.Min), Dur(d.Max)})
	}
	rep.Tables = append(rep.Tables, kt)
	if ot := c.ompTable(); ot != nil {
		rep.Tables = append(rep.Tables, ot)
	}

	// Copies.
	ct := &Table{Name: "copies", Title: "Memory traffic per direction (bandwidth = bytes / summed time)",
		Columns: []string{"direction", "count", "bytes", "total_ns", "busy_ns", "avg_ns", "min_ns", "max_ns", "bandwidth_bytes_per_s"}}
	for _, n := range sortedKeys(c.copies) {
		cs := c.copies[n]
		ct.Rows = append(ct.Rows, []any{n, cs.N, Bytes(cs.bytes), Dur(cs.Sum), Dur(cs.busy.Total()), Dur(cs.Avg()), Dur(cs.Min), Dur(cs.Max), rate(cs.bytes, cs.Sum)})
	}
	rep.Tables = append(rep.Tables, ct)

	// Builds.
	bt := &Table{Name: "builds", Title: "Kernel builds",
		Columns: []string{"kernel", "builds", "total_ns", "avg_ns", "max_ns", "cache_hits", "cache_misses", "failed"}}
	for _, n := range sortedKeys(c.builds) {
		b := c.builds[n]
		bt.Rows = append(bt.Rows, []any{n, b.N, Dur(b.Sum), Dur(b.Avg()), Dur(b.Max), b.hits, b.misses, b.failed})
	}
	rep.Tables = append(rep.Tables, bt)

	// Host API calls by kind.
	at := &Table{Name: "api", Title: "Host-side calls by kind",
		Columns: []string{"call", "calls", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns"}}
	for _, n := range sortedKeys(c.api) {
		d := c.api[n]
		at.Rows = append(at.Rows, []any{n, d.N, Dur(d.Sum), Dur(d.Avg()), Dur(d.Median()), Dur(d.Min), Dur(d.Max)})
	}
	rep.Tables = append(rep.Tables, at)
	if mt := c.mpiTable(); mt != nil {
		rep.Tables = append(rep.Tables, mt)
	}
	if st := c.stepTable(); st != nil {
		rep.Tables = append(rep.Tables, st)
	}

	// Devices.
	dt := &Table{Name: "devices", Title: "Per device (busy = union of a process's intervals, summed over processes; sums count overlapping work more than once)",
		Columns: []string{"rank", "device", "kernels", "kernel_sum_ns", "kernel_busy_ns", "copies", "copy_bytes", "copy_sum_ns", "copy_busy_ns", "busy_ns", "utilization_percent"}}
	mt := &Table{Name: "memory", Title: "Allocations per device",
		Columns: []string{"rank", "device", "allocs", "frees", "bytes_allocated", "peak_bytes", "never_freed", "never_freed_bytes"}}
	dkeys := make([]devKey, 0, len(c.devices))
	for k := range c.devices {
		dkeys = append(dkeys, k)
	}
	slices.SortFunc(dkeys, func(a, b devKey) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		return strings.Compare(a.device, b.device)
	})
	for _, k := range dkeys {
		ds := c.devices[k]
		if ds.kernels+ds.copies > 0 {
			busy := ds.allBusy.Total()
			var span int64
			if rs := c.ranks[k.rank]; rs != nil {
				span = rs.last - rs.first
			}
			dt.Rows = append(dt.Rows, []any{k.rank, k.device, ds.kernels, Dur(ds.kernelSum), Dur(ds.kernelBusy.Total()), ds.copies, Bytes(ds.copyBytes),
				Dur(ds.copySum), Dur(ds.copyBusy.Total()), Dur(busy), pct(busy, span)})
		}
		if ds.allocs+ds.frees+ds.leaked > 0 {
			mt.Rows = append(mt.Rows, []any{k.rank, k.device, ds.allocs, ds.frees, Bytes(ds.allocBytes), Bytes(ds.peak), ds.leaked, Bytes(ds.leakedBytes)})
		}
	}
	rep.Tables = append(rep.Tables, dt, mt)

	// Ranks.
	rt := &Table{Name: "ranks", Title: "Per rank",
		Columns: []string{"rank", "host", "pid", "events", "span_ns", "kernels", "kernel_sum_ns", "mpi_ns", "api_sum_ns", "api_busy_ns", "copy_bytes", "dropped", "complete"},
		Sparse:  []string{"mpi_ns"}}
	var kSums, mpis, busys, bytes []float64
	rankIDs := sortedKeys(c.ranks)
	for _, k := range rankIDs {
		rs := c.ranks[k]
		busy := rs.apiBusy.Total()
		rt.Rows = append(rt.Rows, []any{k, rs.host, rs.pid, int64(rs.events), Dur(rs.last - rs.first), rs.kernels, Dur(rs.kernelSum), Dur(rs.mpiSum),
			Dur(rs.apiSum), Dur(busy), Bytes(rs.copyBytes), int64(max(rs.dropped, rs.dropRows)), fmt.Sprint(rs.complete)})
		kSums = append(kSums, float64(rs.kernelSum))
		mpis = append(mpis, float64(rs.mpiSum))
		busys = append(busys, float64(busy))
		bytes = append(bytes, float64(rs.copyBytes))
	}
	rep.Tables = append(rep.Tables, rt)
	if len(c.ranks) > 1 {
		it := &Table{Name: "imbalance", Title: "Across ranks (imbalance = max / mean - 1; min_rank and max_rank: the first rank with the min and the max)",
			Columns: []string{"metric", "min", "min_rank", "mean", "max", "max_rank", "imbalance"}}
		type metric struct {
			name string
			v    []float64
		}
		metrics := []metric{{"kernel_sum_ns", kSums}, {"api_busy_ns", busys}, {"copy_bytes", bytes}}
		if len(c.mpi) > 0 {
			metrics = append(metrics, metric{"mpi_ns", mpis})
		}
		for _, m := range metrics {
			lo, hi := slices.Index(m.v, slices.Min(m.v)), slices.Index(m.v, slices.Max(m.v))
			mean := 0.0
			for _, x := range m.v {
				mean += x / float64(len(m.v))
			}
			imb := 0.0
			if mean > 0 {
				imb = m.v[hi]/mean - 1
			}
			it.Rows = append(it.Rows, []any{m.name, m.v[lo], rankIDs[lo], mean, m.v[hi], rankIDs[hi], imb})
		}
		rep.Tables = append(rep.Tables, it)
	}

	// Drops.
	dr := &Table{Name: "drops", Title: "Dropped events (string_table_full and definition_queue_full count names lost: their events are in the trace)",
		Columns: []string{"rank", "reason", "events"}}
	for _, k := range sortedKeys(c.ranks) {
		rs := c.ranks[k]
		for _, reason := range sortedKeys(rs.dropBy) {
			if n := rs.dropBy[reason]; n > 0 {
				dr.Rows = append(dr.Rows, []any{k, reason, int64(n)})
			}
		}
	}
	rep.Tables = append(rep.Tables, dr)
	return rep
}
