// Package summary builds the nvprof/iprof-style report of one trace or a
// whole run from the analysis's rows: per kernel, memory traffic per direction,
// allocations, kernel builds, host API calls, per device and per rank with
// cross-rank imbalance, busy time as the union of intervals beside plain
// sums, and drops; for traces with OpenMP events, an openmp section per
// kernel (openmp.go).
//
// Use one Collector per trace file (they may run in parallel), then Merge
// them into a Report.
package summary

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

type devKey struct {
	rank   int64
	device string
}

type kernelStats struct {
	host, dev Dist
}

type copyStats struct {
	Dist
	bytes uint64
	busy  Union
}

type buildStats struct {
	Dist
	hits, misses, failed int64
}

type deviceStats struct {
	kernels       int64
	kernelSum     int64 // device-side time where known, else host span
	kernelBusy    Union
	copies        int64
	copyBytes     uint64
	copySum       int64
	copyBusy      Union
	allBusy       pairUnion // kernelBusy's and copyBusy's
	allocs, frees int64
	allocBytes    uint64
	peak          int64
	leaked        int64
	leakedBytes   uint64
}

type rankStats struct {
	host      string
	pid       int64
	files     int
	events    uint64
	first     int64
	last      int64
	seen      bool
	kernels   int64
	kernelSum int64 // host-side
	mpiSum    int64 // time in MPI calls
	apiSum    int64
	apiBusy   Union
	copyBytes uint64
	dropped   uint64 // from stats chunks
	dropRows  uint64 // from dropped events
	dropBy    map[string]uint64
	complete  bool
	problems  int
	untracked int64 // allocations not kept (analysis.MaxLive)
	devices   int   // device rows of this collector (maxDevices)
}

// Collector gathers one trace's rows. Not safe for concurrent use: give each
// trace its own.
type Collector struct {
	kernels map[string]*kernelStats
	copies  map[string]*copyStats
	builds  map[string]*buildStats
	api     map[string]*Dist
	devices map[devKey]*deviceStats
	ranks   map[int64]*rankStats
	mem     map[int64]*analysis.MemoryInUse
	// What the task graphs' bounds cost the traces finished (openmp.go).
	taskGraph analysis.GraphStats

	// Caches for Add, so that a row costs no string building or lookup:
	// the last process's rank and its devices by id (known ones only, as a
	// def may come later), API calls by kind, copies by direction argument.
	lastP   *analysis.Process
	lastRS  *rankStats
	devByID []*deviceStats
	apiBy   [256]*Dist
	copyBy  [16]*copyStats
	kernBy  []kernSlot // the last process's kernels by id

	mpi     map[string]*mpiStats  // MPI calls by function (mpi.go)
	steps   map[string]*stepStats // user regions holding MPI calls (mpi.go)
	threads []*threadSteps        // the current trace's threads' latest calls (mpi.go)

	omp   map[*analysis.Process]*ompProc // OpenMP rows of traces not yet finished (openmp.go)
	ompBy map[string]*ompStats           // OpenMP figures by kernel

	// share bounds what the busy-time unions of the traces being summed
	// hold together, whatever their number of devices; the nameCuts bound
	// the by-name tables (names.go).
	share                                        unionShare
	kernelCut, buildCut, stepCut, ompCut, mpiCut nameCut

	pipe   pipe
	inline bool // Add sums on the caller's goroutine (NewInlineCollector)
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{
		kernels: map[string]*kernelStats{}, copies: map[string]*copyStats{}, builds: map[string]*buildStats{},
		api: map[string]*Dist{}, devices: map[devKey]*deviceStats{}, ranks: map[int64]*rankStats{},
		mem: map[int64]*analysis.MemoryInUse{}, mpi: map[string]*mpiStats{}, steps: map[string]*stepStats{},
	}
}

// NewInlineCollector returns an empty Collector whose Add sums each row
// before it returns, on the caller's goroutine. For a run that reads as
// many traces at once as there are cores: NewCollector's goroutine then
// finds no idle core, and handing it the rows cost 6 % more CPU (median of
// 9 interleaved runs on the workload trace: 13.2 against 12.5 Mevents per
// CPU-second) and its batches up to 10 MiB.
func NewInlineCollector() *Collector {
	c := NewCollector()
	c.inline = true
	return c
}

func getOr[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

func (c *Collector) rank(p *analysis.Process) *rankStats {
	if p == c.lastP {
		return c.lastRS
	}
	c.lastP, c.lastRS, c.devByID = p, nil, c.devByID[:0]
	clear(c.kernBy)
	rs := c.ranks[p.Rank]
	if rs == nil {
		rs = &rankStats{host: p.Header.Host, pid: p.Header.PID, dropBy: map[string]uint64{}}
		rs.apiBusy.share = &c.share
		c.ranks[p.Rank] = rs
	}
	c.lastRS = rs
	return rs
}

// device returns the stats of device id of p's rank; call rank(p) first.
func (c *Collector) device(p *analysis.Process, id uint64) *deviceStats {
	if id < uint64(len(c.devByID)) && c.devByID[id] != nil {
		return c.devByID[id]
	}
	ds := c.deviceNamed(c.lastRS, p.Rank, deviceName(p, id))
	if id < 1<<10 && (id == 0 || p.Dict.SharedDevice(id).Known) {
		if id >= uint64(len(c.devByID)) {
			c.devByID = append(c.devByID, make([]*deviceStats, int(id)+1-len(c.devByID))...)
		}
		c.devByID[id] = ds
	}
	return ds
}

// maxDevices is how many devices a rank's trace has rows of: the others
// (only a damaged or hostile trace has more: device ids are event
// arguments) are summed in one row named otherDevices. Each costs about 3
// KiB, and 200,000 device ids in an 800 KB trace took summary's heap to
// 1 GiB.
const maxDevices = 1024

var otherDevices = "(devices past the first " + strconv.Itoa(maxDevices) + ")"

// deviceNamed returns the stats of rank's device name, rs being its stats.
func (c *Collector) deviceNamed(rs *rankStats, rank int64, name string) *deviceStats {
	ds := c.devices[devKey{rank, name}]
	if ds != nil {
		return ds
	}
	if rs.devices >= maxDevices {
		name = otherDevices
		if ds = c.devices[devKey{rank, name}]; ds != nil {
			return ds
		}
	}
	ds = &deviceStats{}
	ds.kernelBusy.share, ds.copyBusy.share = &c.share, &c.share
	ds.allBusy.link(&ds.kernelBusy, &ds.copyBusy)
	c.devices[devKey{rank, name}] = ds
	rs.devices++
	return ds
}

// copyStats returns the stats of copies with direction argument dir.
func (c *Collector) copyStats(dir uint64) *copyStats {
	cs := getOr(c.copies, trace.CopyDirectionName(dir))
	cs.busy.share = &c.share
	return cs
}

// kernSlot caches a kernel's stats by id, with the name they are under: a
// kernel's name may change when its def comes late.
type kernSlot struct {
	name string
	ks   *kernelStats
}

// kernel returns the stats of kernel id called name; call rank(p) first.
func (c *Collector) kernel(id uint64, name string) *kernelStats {
	if id < uint64(len(c.kernBy)) && c.kernBy[id].ks != nil && c.kernBy[id].name == name {
		return c.kernBy[id].ks
	}
	trims := c.kernelCut.trims
	k := named(c.kernels, &c.kernelCut, name, otherKernels, mergeKernel)
	if c.kernelCut.trims != trims {
		clear(c.kernBy)
	}
	if id < 1<<12 {
		if id >= uint64(len(c.kernBy)) {
			c.kernBy = append(c.kernBy, make([]kernSlot, int(id)+1-len(c.kernBy))...)
		}
		c.kernBy[id] = kernSlot{name, k}
	}
	return k
}

func deviceName(p *analysis.Process, id uint64) string {
	if id == 0 {
		return "host"
	}
	return p.Dict.SharedDevice(id).Name() // on the summing goroutine (async.go)
}

// add takes one row.
func (c *Collector) add(p *analysis.Process, r *analysis.Row) {
	if compact(r) {
		var e ent
		e.set(r)
		c.addEnt(p, &e)
		return
	}
	rs := c.rank(p)
	c.span(rs, r.Kind, r.Start, r.Dur)
	paired := r.Dur != analysis.Unpaired
	switch r.Kind {
	case trace.BuildBegin:
		if !paired {
			return
		}
		bs := named(c.builds, &c.buildCut, r.Name, otherKernels, mergeBuild)
		bs.Add(r.Dur)
		switch {
		case r.Status != trace.StatusOK:
			bs.failed++
		case r.Aux == trace.CacheHit:
			bs.hits++
		case r.Aux == trace.CacheMiss:
			bs.misses++
		}
	case trace.MemoryAllocBegin, trace.MemoryFreeBegin:
		m := c.mem[p.Rank]
		if m == nil {
			m = analysis.NewMemoryInUse()
			c.mem[p.Rank] = m
		}
		ch := r.MemoryChange()
		if dev, _, ok := m.Add(&ch); ok {
			ds := c.device(p, dev)
			if r.Kind == trace.MemoryAllocBegin {
				ds.allocs++
				ds.allocBytes += r.Bytes
			} else {
				ds.frees++
			}
			ds.peak = max(ds.peak, m.Peak[dev])
		}
	case trace.Dropped:
		rs.dropRows += r.Bytes
		rs.dropBy[r.Name] += r.Bytes
	case trace.MpiCallBegin, trace.MpiP2PBegin, trace.MpiCollectiveBegin, trace.MpiWaitBegin:
		if paired {
			c.addMPI(rs, r)
			c.stepCall(r.Thread, r.Start, r.Dur)
		}
	case trace.RegionPush:
		if paired {
			c.stepRegion(r)
		}
	default:
		if r.OMP != nil {
			c.addOMP(p, r)
		}
	}
}

// apiKind tells the kinds whose paired rows are host API calls: the
// begins, but not OpenMP's.
var apiKind = func() (a [256]bool) {
	for k := range a {
		s := trace.Kind(k).Spec()
		a[k] = s != nil && s.Begin && s.Domain != trace.DomainOpenMP
	}
	return a
}()

// span sums what every row gives: the rank's time range, and for a paired
// API call its time and busy interval.
func (c *Collector) span(rs *rankStats, kind trace.Kind, start, dur int64) {
	end := start + max(dur, 0)
	if !rs.seen || start < rs.first {
		rs.first = start
	}
	rs.seen = true
	rs.last = max(rs.last, end)
	if dur != analysis.Unpaired && apiKind[kind] {
		d := c.apiBy[kind]
		if d == nil {
			d = getOr(c.api, analysis.KindName(kind))
			c.apiBy[kind] = d
		}
		d.Add(dur)
		rs.apiSum += dur
		rs.apiBusy.Add(start, end)
	}
}

// addEnt takes a launch or a copy.
func (c *Collector) addEnt(p *analysis.Process, e *ent) {
	rs := c.rank(p)
	c.span(rs, e.kind, e.start, e.dur)
	if e.dur == analysis.Unpaired {
		return
	}
	end := e.start + e.dur
	switch e.kind {
	case trace.RunBegin:
		k := c.kernel(e.id, e.name)
		k.host.Add(e.dur)
		rs.kernels++
		rs.kernelSum += e.dur
		c.runDevice(p, k, e)
	case trace.CopyBegin:
		var cs *copyStats
		if e.id < uint64(len(c.copyBy)) {
			if cs = c.copyBy[e.id]; cs == nil {
				cs = c.copyStats(e.id)
				c.copyBy[e.id] = cs
			}
		} else {
			cs = c.copyStats(e.id)
		}
		cs.Add(e.dur)
		cs.bytes += e.bytes
		cs.busy.Add(e.start, end)
		rs.copyBytes += e.bytes
		ds := c.device(p, e.dev)
		ds.copies++
		ds.copyBytes += e.bytes
		ds.copySum += e.dur
		ds.copyBusy.Add(e.start, end)
	}
}

// runDevice sums the device side of launch e of kernel k.
func (c *Collector) runDevice(p *analysis.Process, k *kernelStats, e *ent) {
	ds := c.device(p, e.dev)
	ds.kernels++
	s, d := e.start, e.dur
	if e.ddur >= 0 {
		k.dev.Add(e.ddur)
		d = e.ddur
		if e.bytes != 0 {
			s = int64(e.bytes)
		}
	}
	ds.kernelSum += d
	ds.kernelBusy.Add(s, s+d)
}

// seal keeps the totals of the device's busy times only (Union.Seal).
func (ds *deviceStats) seal() {
	ds.allBusy.Seal() // first: it retires all the two others hold
	ds.kernelBusy.Seal()
	ds.copyBusy.Seal()
}

// Finish records what analysis.Read learned about the trace besides its rows.
func (c *Collector) Finish(res *analysis.Result) {
	c.sync()
	p := res.Process
	c.ompFinish(p)
	rs := c.rank(p)
	rs.files++
	rs.events += res.Events
	rs.dropped += res.Dropped()
	rs.complete = res.Complete
	rs.problems += len(res.Problems)
	if res.Stats != nil {
		for i, n := range res.Stats.Dropped {
			if n != 0 && rs.dropBy[trace.DropReasonName(uint64(i))] < n {
				rs.dropBy[trace.DropReasonName(uint64(i))] = n
			}
		}
	}
	if m := c.mem[p.Rank]; m != nil {
		for _, a := range m.Live() {
			ds := c.deviceNamed(rs, p.Rank, deviceName(p, a.Device))
			ds.leaked++
			ds.leakedBytes += a.Bytes
		}
		rs.untracked += m.Untracked
		delete(c.mem, p.Rank)
	}
	// The trace's busy times are final: keep their totals only, so that
	// a run of any number of ranks is summed in bounded memory. Busy time
	// is per process: two traces of one rank add up.
	c.threads = nil
	rs.apiBusy.Seal()
	for k, ds := range c.devices {
		if k.rank == p.Rank {
			ds.seal()
		}
	}
	for _, cs := range c.copies {
		cs.busy.Seal()
	}
}

// Merge combines collectors (one per trace) into one.
func Merge(cs ...*Collector) *Collector {
	out := NewCollector()
	for _, c := range cs {
		out.Absorb(c)
	}
	return out
}

// Absorb adds what c holds to a, and leaves c empty. The sum does not
// depend on the order in which collectors are absorbed: every figure is
// an exact integer sum, minimum or maximum (Dist), and busy times are
// totals, sealed per trace at Finish; so a run summed in any order, or in
// shards merged later, gives the same report.
func (a *Collector) Absorb(c *Collector) {
	c.sync()
	c.ompFinishAll()
	for k, v := range c.kernels {
		mergeKernel(named(a.kernels, &a.kernelCut, k, otherKernels, mergeKernel), v)
	}
	for k, v := range c.copies {
		o := getOr(a.copies, k)
		o.Dist.Merge(&v.Dist)
		o.bytes += v.bytes
		o.busy.Merge(&v.busy)
	}
	for k, v := range c.builds {
		mergeBuild(named(a.builds, &a.buildCut, k, otherKernels, mergeBuild), v)
	}
	for k, v := range c.api {
		getOr(a.api, k).Merge(v)
	}
	for k, v := range c.mpi {
		named(a.mpi, &a.mpiCut, k, otherFunctions, mergeMPI).merge(v)
	}
	for k, v := range c.steps {
		named(a.steps, &a.stepCut, k, otherRegions, mergeStep).merge(v)
	}
	for k, v := range c.ompBy {
		if a.ompBy == nil {
			a.ompBy = map[string]*ompStats{}
		}
		named(a.ompBy, &a.ompCut, k, otherKernels, mergeOMP).merge(v)
	}
	for k, v := range c.devices {
		o := a.devices[k]
		if o == nil {
			a.devices[k] = v
			continue
		}
		v.seal() // its unions merge as totals: allBusy is made of the two others
		o.kernels += v.kernels
		o.kernelSum += v.kernelSum
		o.kernelBusy.Merge(&v.kernelBusy)
		o.copies += v.copies
		o.copyBytes += v.copyBytes
		o.copySum += v.copySum
		o.copyBusy.Merge(&v.copyBusy)
		o.allBusy.Merge(&v.allBusy)
		o.allocs, o.frees, o.allocBytes = o.allocs+v.allocs, o.frees+v.frees, o.allocBytes+v.allocBytes
		o.peak = max(o.peak, v.peak)
		o.leaked, o.leakedBytes = o.leaked+v.leaked, o.leakedBytes+v.leakedBytes
	}
	for k, v := range c.ranks {
		o := a.ranks[k]
		if o == nil {
			a.ranks[k] = v
			continue
		}
		// Two files with one rank: add them up, and name the rank after
		// the same one of its processes whatever the order.
		if v.pid < o.pid || v.pid == o.pid && v.host < o.host {
			o.host, o.pid = v.host, v.pid
		}
		o.files += v.files
		o.events += v.events
		o.first, o.last = min(o.first, v.first), max(o.last, v.last)
		o.kernels += v.kernels
		o.kernelSum += v.kernelSum
		o.mpiSum += v.mpiSum
		o.apiSum += v.apiSum
		o.apiBusy.Merge(&v.apiBusy)
		o.copyBytes += v.copyBytes
		o.dropped += v.dropped
		o.dropRows += v.dropRows
		for r, n := range v.dropBy {
			o.dropBy[r] += n
		}
		o.complete = o.complete && v.complete
		o.problems += v.problems
		o.untracked += v.untracked
	}
	*c = *NewCollector()
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
