package summary

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/libocca/occa-tools/formats/trace"
)

// A partial summary is what a Collector holds once its traces are read,
// written to a file so that the shards of a run, summarized on different
// nodes (summary -shard i/n -partial FILE), merge into the summary of the
// whole run (summary FILE...). Every figure in it merges exactly (Absorb),
// so the merged report is the one an unsharded summary prints.
//
// The file is JSON: {"format": PartialFormat, "version": PartialVersion,
// "traces": [...], ...}, the collector's tables by name. It is read back
// as untrusted input: its size is bounded (MaxPartialBytes), and a value
// that no collector could hold is an error naming the file and the key.

// PartialFormat is the value of a partial summary's "format" key, which
// tells it from a trace.
const PartialFormat = "occa-tools partial summary"

// PartialVersion is the layout version of partial summaries; a reader
// takes only its own.
const PartialVersion = 1

// MaxPartialBytes bounds the size of a partial summary a reader takes:
// 10,000 ranks take a few MiB.
const MaxPartialBytes = 1 << 30

// TraceID names one trace summed into a partial: what tells two traces of
// one process apart from traces of two (as convert and summary check).
type TraceID struct {
	Path      string `json:"path"`
	Host      string `json:"host"`
	PID       int64  `json:"pid"`
	Rank      int64  `json:"rank"`
	WallStart int64  `json:"wall_start_ns"`
}

type partialFile struct {
	Format  string                    `json:"format"`
	Version int                       `json:"version"`
	Shard   string                    `json:"shard"`
	Traces  []TraceID                 `json:"traces"`
	Kernels map[string]*partialKernel `json:"kernels"`
	Copies  map[string]*partialCopy   `json:"copies"`
	Builds  map[string]*partialBuild  `json:"builds"`
	API     map[string]*distJSON      `json:"api"`
	MPI     map[string]*partialMPI    `json:"mpi"`
	Steps   map[string]*partialStep   `json:"steps"`
	OpenMP  map[string]*partialOMP    `json:"openmp"`
	Devices []*partialDevice          `json:"devices"`
	Ranks   map[string]*partialRank   `json:"ranks"` // by rank, in decimal
}

type distJSON struct {
	N       int64      `json:"n"`
	Sum     int64      `json:"sum"`
	Min     int64      `json:"min"`
	Max     int64      `json:"max"`
	SqHi    uint64     `json:"sq_hi"`
	SqLo    uint64     `json:"sq_lo"`
	Samples []int64    `json:"samples,omitempty"`
	Hist    [][2]int64 `json:"hist,omitempty"` // bucket, count; only buckets in use
}

type partialKernel struct {
	Host   distJSON `json:"host"`
	Device distJSON `json:"device"`
}

type partialCopy struct {
	distJSON
	Bytes uint64 `json:"bytes"`
	Busy  int64  `json:"busy_ns"`
}

type partialMPI struct {
	distJSON
	Kind  string `json:"kind"`
	Bytes uint64 `json:"bytes"`
}

type partialStep struct {
	Regions   int64 `json:"regions"`
	Truncated int64 `json:"truncated"`
	Time      int64 `json:"time_ns"`
	MPI       int64 `json:"mpi_ns"`
}

type partialBuild struct {
	distJSON
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	Failed int64 `json:"failed"`
}

type partialOMP struct {
	Launches   int64   `json:"launches"`
	Regions    int64   `json:"regions"`
	Implicit   int64   `json:"implicit"`
	MaxBusy    int64   `json:"max_busy_ns"`
	MeanBusy   float64 `json:"mean_busy_ns"`
	ImplicitNS int64   `json:"implicit_ns"`
	IdleNS     int64   `json:"idle_ns"`
	Created    int64   `json:"created"`
	Completed  int64   `json:"completed"`
	TaskNS     int64   `json:"task_ns"`
	CriticalNS int64   `json:"critical_ns"`
	Tasks      int64   `json:"tasks"`
}

type partialDevice struct {
	Rank        int64  `json:"rank"`
	Device      string `json:"device"`
	Kernels     int64  `json:"kernels"`
	KernelSum   int64  `json:"kernel_sum_ns"`
	KernelBusy  int64  `json:"kernel_busy_ns"`
	Copies      int64  `json:"copies"`
	CopyBytes   uint64 `json:"copy_bytes"`
	CopySum     int64  `json:"copy_sum_ns"`
	CopyBusy    int64  `json:"copy_busy_ns"`
	AllBusy     int64  `json:"busy_ns"`
	Allocs      int64  `json:"allocs"`
	Frees       int64  `json:"frees"`
	AllocBytes  uint64 `json:"alloc_bytes"`
	Peak        int64  `json:"peak_bytes"`
	Leaked      int64  `json:"leaked"`
	LeakedBytes uint64 `json:"leaked_bytes"`
}

type partialRank struct {
	Host      string            `json:"host"`
	PID       int64             `json:"pid"`
	Files     int               `json:"files"`
	Events    uint64            `json:"events"`
	First     int64             `json:"first_ns"`
	Last      int64             `json:"last_ns"`
	Seen      bool              `json:"seen"`
	Kernels   int64             `json:"kernels"`
	KernelSum int64             `json:"kernel_sum_ns"`
	MPISum    int64             `json:"mpi_ns"`
	APISum    int64             `json:"api_sum_ns"`
	APIBusy   int64             `json:"api_busy_ns"`
	CopyBytes uint64            `json:"copy_bytes"`
	Dropped   uint64            `json:"dropped"`
	DropRows  uint64            `json:"drop_rows"`
	DropBy    map[string]uint64 `json:"drop_by"`
	Complete  bool              `json:"complete"`
	Problems  int               `json:"problems"`
	Untracked int64             `json:"untracked_allocs,omitempty"`
}

func (d *Dist) toJSON() distJSON {
	j := distJSON{N: d.N, Sum: d.Sum, Min: d.Min, Max: d.Max, SqHi: d.sqHi, SqLo: d.sqLo, Samples: d.samples}
	for b, n := range d.hist {
		if n != 0 {
			j.Hist = append(j.Hist, [2]int64{int64(b), int64(n)})
		}
	}
	if d.hist != nil && j.Hist == nil {
		j.Hist = [][2]int64{}
	}
	return j
}

// fromJSON makes d from j, checking that j is a Dist's: counts that add up,
// buckets that exist, values within [min, max].
func (d *Dist) fromJSON(j *distJSON) error {
	*d = Dist{N: j.N, Sum: j.Sum, Min: j.Min, Max: j.Max, sqHi: j.SqHi, sqLo: j.SqLo}
	switch {
	case j.N < 0 || j.Min < 0 || j.Max < j.Min && j.N > 0:
		return fmt.Errorf("count %d, min %d, max %d: not a distribution", j.N, j.Min, j.Max)
	case j.Hist == nil && int64(len(j.Samples)) != j.N:
		return fmt.Errorf("%d samples for a count of %d", len(j.Samples), j.N)
	case j.Hist == nil && len(j.Samples) > maxSamples:
		return fmt.Errorf("%d samples, more than the %d kept", len(j.Samples), maxSamples)
	case j.Hist != nil && len(j.Samples) > 0:
		return fmt.Errorf("both samples and a histogram")
	}
	for _, v := range j.Samples {
		if v < j.Min || v > j.Max {
			return fmt.Errorf("sample %d outside [%d, %d]", v, j.Min, j.Max)
		}
	}
	if j.Hist == nil {
		d.samples = slices.Clone(j.Samples)
		return nil
	}
	d.hist = make([]uint64, histBuckets)
	var total uint64
	for _, bn := range j.Hist {
		if bn[0] < 0 || bn[0] >= histBuckets || bn[1] <= 0 {
			return fmt.Errorf("histogram bucket %d count %d: no such bucket or not a count", bn[0], bn[1])
		}
		d.hist[bn[0]] += uint64(bn[1])
		total += uint64(bn[1])
	}
	if total != uint64(j.N) {
		return fmt.Errorf("histogram counts %d values for a count of %d", total, j.N)
	}
	return nil
}

// WritePartial writes what c holds as a partial summary of the traces
// listed, shard naming the part of the run ("2/8").
func (c *Collector) WritePartial(w io.Writer, shard string, traces []TraceID) error {
	c.sync()
	c.ompFinishAll()
	c.trimTables()
	f := partialFile{Format: PartialFormat, Version: PartialVersion, Shard: shard, Traces: traces,
		Kernels: map[string]*partialKernel{}, Copies: map[string]*partialCopy{}, Builds: map[string]*partialBuild{},
		API: map[string]*distJSON{}, MPI: map[string]*partialMPI{}, Steps: map[string]*partialStep{}, OpenMP: map[string]*partialOMP{}, Ranks: map[string]*partialRank{}}
	if f.Traces == nil {
		f.Traces = []TraceID{}
	}
	for k, v := range c.kernels {
		f.Kernels[k] = &partialKernel{v.host.toJSON(), v.dev.toJSON()}
	}
	for k, v := range c.copies {
		f.Copies[k] = &partialCopy{v.Dist.toJSON(), v.bytes, v.busy.Total()}
	}
	for k, v := range c.builds {
		f.Builds[k] = &partialBuild{v.Dist.toJSON(), v.hits, v.misses, v.failed}
	}
	for k, v := range c.api {
		j := v.toJSON()
		f.API[k] = &j
	}
	for k, v := range c.mpi {
		f.MPI[k] = &partialMPI{v.Dist.toJSON(), v.kind.String(), v.bytes}
	}
	for k, v := range c.steps {
		f.Steps[k] = &partialStep{v.regions, v.truncated, v.time, v.mpi}
	}
	for k, v := range c.ompBy {
		f.OpenMP[k] = &partialOMP{v.launches, v.regions, v.implicit, v.maxBusy, v.meanBusy, v.implicitNS, v.idleNS,
			v.created, v.completed, v.taskNS, v.criticalNS, v.tasks}
	}
	for _, k := range slices.SortedFunc(maps.Keys(c.devices), func(a, b devKey) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.device, b.device))
	}) {
		v := c.devices[k]
		f.Devices = append(f.Devices, &partialDevice{k.rank, k.device, v.kernels, v.kernelSum, v.kernelBusy.Total(), v.copies,
			v.copyBytes, v.copySum, v.copyBusy.Total(), v.allBusy.Total(), v.allocs, v.frees, v.allocBytes, v.peak, v.leaked, v.leakedBytes})
	}
	for k, v := range c.ranks {
		f.Ranks[strconv.FormatInt(k, 10)] = &partialRank{v.host, v.pid, v.files, v.events, v.first, v.last, v.seen, v.kernels,
			v.kernelSum, v.mpiSum, v.apiSum, v.apiBusy.Total(), v.copyBytes, v.dropped, v.dropRows, v.dropBy, v.complete, v.problems, v.untracked}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(&f)
}

// IsPartial reports whether the file at path is a partial summary (and
// not a trace).
func IsPartial(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(head[:n], []byte(`{"format":"`+PartialFormat+`"`))
}

// ReadPartial reads the partial summary at path into a Collector, and
// returns it with the traces it summed. Errors name the file and the key.
func ReadPartial(path string) (*Collector, []TraceID, error) {
	fail := func(format string, args ...any) (*Collector, []TraceID, error) {
		return nil, nil, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Size() > MaxPartialBytes {
		return fail("%d bytes, more than a partial summary has (%d at most): not a partial summary", st.Size(), int64(MaxPartialBytes))
	}
	var f partialFile
	dec := json.NewDecoder(io.LimitReader(fh, MaxPartialBytes))
	if err := dec.Decode(&f); err != nil {
		off := dec.InputOffset()
		return fail("at byte %d: %v: not a partial summary written by occa-tools summary -partial, or damaged", off, err)
	}
	switch {
	case f.Format != PartialFormat:
		return fail("format %q: not a partial summary", f.Format)
	case f.Version != PartialVersion:
		return fail("partial summary version %d; this occa-tools reads version %d: summarize the traces again with this version", f.Version, PartialVersion)
	}
	c := NewCollector()
	dist := func(key string, j *distJSON, d *Dist) error {
		if j == nil {
			return fmt.Errorf("%s: %s: missing", path, key)
		}
		if err := d.fromJSON(j); err != nil {
			return fmt.Errorf("%s: %s: %v", path, key, err)
		}
		return nil
	}
	for k, v := range f.Kernels {
		ks := &kernelStats{}
		if v == nil {
			return fail("kernels.%s: missing", k)
		}
		if err := dist("kernels."+k+".host", &v.Host, &ks.host); err != nil {
			return nil, nil, err
		}
		if err := dist("kernels."+k+".device", &v.Device, &ks.dev); err != nil {
			return nil, nil, err
		}
		c.kernels[k] = ks
	}
	for k, v := range f.Copies {
		if v == nil || v.Busy < 0 {
			return fail("copies.%s: missing, or a negative busy time", k)
		}
		cs := &copyStats{bytes: v.Bytes}
		if err := dist("copies."+k, &v.distJSON, &cs.Dist); err != nil {
			return nil, nil, err
		}
		cs.busy.retired = v.Busy
		c.copies[k] = cs
	}
	for k, v := range f.Builds {
		if v == nil {
			return fail("builds.%s: missing", k)
		}
		bs := &buildStats{hits: v.Hits, misses: v.Misses, failed: v.Failed}
		if err := dist("builds."+k, &v.distJSON, &bs.Dist); err != nil {
			return nil, nil, err
		}
		c.builds[k] = bs
	}
	for k, v := range f.API {
		d := &Dist{}
		if err := dist("api."+k, v, d); err != nil {
			return nil, nil, err
		}
		c.api[k] = d
	}
	for k, v := range f.MPI {
		if v == nil {
			return fail("mpi.%s: missing", k)
		}
		ms := &mpiStats{bytes: v.Bytes}
		if ms.kind = mpiKinds[v.Kind]; ms.kind == 0 {
			return fail("mpi.%s: kind %q is not an MPI call's", k, v.Kind)
		}
		if err := dist("mpi."+k, &v.distJSON, &ms.Dist); err != nil {
			return nil, nil, err
		}
		c.mpi[k] = ms
	}
	for k, v := range f.Steps {
		if v == nil {
			return fail("steps.%s: missing", k)
		}
		c.steps[k] = &stepStats{v.Regions, v.Truncated, v.Time, v.MPI}
	}
	for k, v := range f.OpenMP {
		if v == nil || math.IsNaN(v.MeanBusy) || math.IsInf(v.MeanBusy, 0) {
			return fail("openmp.%s: missing, or not a number", k)
		}
		if c.ompBy == nil {
			c.ompBy = map[string]*ompStats{}
		}
		c.ompBy[k] = &ompStats{v.Launches, v.Regions, v.Implicit, v.MaxBusy, v.MeanBusy, v.ImplicitNS, v.IdleNS,
			v.Created, v.Completed, v.TaskNS, v.CriticalNS, v.Tasks}
	}
	for i, v := range f.Devices {
		if v == nil {
			return fail("devices[%d]: missing", i)
		}
		k := devKey{v.Rank, v.Device}
		if c.devices[k] != nil {
			return fail("devices[%d]: rank %d device %q twice", i, v.Rank, v.Device)
		}
		ds := &deviceStats{kernels: v.Kernels, kernelSum: v.KernelSum, copies: v.Copies, copyBytes: v.CopyBytes, copySum: v.CopySum,
			allocs: v.Allocs, frees: v.Frees, allocBytes: v.AllocBytes, peak: v.Peak, leaked: v.Leaked, leakedBytes: v.LeakedBytes}
		ds.kernelBusy.retired, ds.copyBusy.retired, ds.allBusy.retired = v.KernelBusy, v.CopyBusy, v.AllBusy
		ds.allBusy.link(&ds.kernelBusy, &ds.copyBusy)
		c.devices[k] = ds
	}
	for k, v := range f.Ranks {
		rank, err := strconv.ParseInt(k, 10, 64)
		if err != nil || v == nil {
			return fail("ranks.%s: not a rank", k)
		}
		rs := &rankStats{host: v.Host, pid: v.PID, files: v.Files, events: v.Events, first: v.First, last: v.Last, seen: v.Seen,
			kernels: v.Kernels, kernelSum: v.KernelSum, mpiSum: v.MPISum, apiSum: v.APISum, copyBytes: v.CopyBytes, dropped: v.Dropped,
			dropRows: v.DropRows, dropBy: v.DropBy, complete: v.Complete, problems: v.Problems, untracked: v.Untracked}
		if rs.dropBy == nil {
			rs.dropBy = map[string]uint64{}
		}
		rs.apiBusy.retired = v.APIBusy
		c.ranks[rank] = rs
	}
	c.trimTables() // a file written by hand may hold any number of names
	return c, f.Traces, nil
}

// mpiKinds are the kinds of MPI call rows by name, as partial summaries
// write them.
var mpiKinds = map[string]trace.Kind{}

func init() {
	for _, k := range []trace.Kind{trace.MpiCallBegin, trace.MpiP2PBegin, trace.MpiCollectiveBegin, trace.MpiWaitBegin} {
		mpiKinds[k.String()] = k
	}
}
