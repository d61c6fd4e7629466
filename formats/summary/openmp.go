package summary

import (
	"cmp"
	"maps"
	"slices"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// The OpenMP section: per OCCA kernel (and for OpenMP outside launches),
// from the OpenMP rows (analysis.OMP).
//
// Parallel regions: an implicit task's busy time is its length less its
// idle time, the time its own sync waits (barriers, taskwait, ...) lasted
// less the time explicit tasks ran on its thread during them (a thread
// that runs tasks in a barrier is not idle). A region's imbalance is the
// busiest thread's busy time over the mean busy time of its team; a
// kernel's is the sum over its regions of the former over the sum of the
// latter (so long regions weigh more). The wait share is the summed idle
// time over the summed implicit task time. The Pairer ends a worker's
// implicit task and waits with their parallel region (LLVM's libomp
// reports a worker's end only when the thread goes on to the next region,
// so the workers of a program's last region never end): the summary, the
// tables and the timelines give them the same length. One whose end is
// still missing (its region's end is not in the trace either) counts up to
// the begin of its last, unfinished wait, the time it reached that
// barrier; one with no such wait counts as a task but not in the times.
//
// Tasks: explicit tasks created and completed, their summed execution
// (segments), and the critical path of the dependence graph (analysis.Graph,
// each task weighing its execution): per launch the longest path among the
// launch's tasks, summed over the kernel's launches; the tasks created
// outside launches are one graph.

// OutsideKernels names the OpenMP activity outside OCCA kernel launches.
const OutsideKernels = "(outside kernels)"

// UnknownKernel names a launch whose kernel the trace does not give.
const UnknownKernel = "(unknown kernel)"

type ompStats struct {
	launches           int64
	regions, implicit  int64
	maxBusy            int64   // summed over regions: the busiest thread's busy time
	meanBusy           float64 // summed over regions: the team's mean busy time
	implicitNS, idleNS int64
	created, completed int64
	taskNS, criticalNS int64
	tasks              int64 // tasks with a row, created here or not
}

func (s *ompStats) merge(o *ompStats) {
	s.launches += o.launches
	s.regions += o.regions
	s.implicit += o.implicit
	s.maxBusy += o.maxBusy
	s.meanBusy += o.meanBusy
	s.implicitNS += o.implicitNS
	s.idleNS += o.idleNS
	s.created += o.created
	s.completed += o.completed
	s.taskNS += o.taskNS
	s.criticalNS += o.criticalNS
	s.tasks += o.tasks
}

// What a trace's OpenMP state holds is bounded, whatever its length: a
// run of OCCA's OpenMP mode makes a parallel region per launch, millions
// in a long run.
const (
	// maxOMPLaunches bounds the launches whose kernel, count and critical
	// path are held (about 50 bytes each). Past it the oldest is summed and
	// forgotten; the task graph retires what it can each quarter of it, so
	// a launch's tasks that completed are summed before it is forgotten. A
	// row of a launch forgotten (a task still running 200,000 launches
	// later) counts the launch again.
	maxOMPLaunches = 1 << 18
	// maxOMPRegions bounds the parallel regions whose rows have not all
	// come (a damaged trace's); past it the oldest half are summed as at
	// the end of the trace.
	maxOMPRegions = 1 << 16
	// maxOMPWaits bounds the implicit tasks whose waits are held for the
	// task's row; past it they are dropped, their idle time with them
	// (only a trace that lost its implicit task ends has so many).
	maxOMPWaits = 1 << 16
)

// ompProc is one trace's OpenMP state while its rows come.
type ompProc struct {
	regions  map[uint64]*ompRegion // parallel regions not yet summed
	idle     map[uint64]int64      // implicit task -> idle time of its waits so far
	lastWait map[uint64]int64      // implicit task -> begin of its last unfinished wait
	launches map[uint64]ompLaunch  // the last maxLaunches launches with OpenMP rows
	ring     []uint64              // their ids, a ring in the order they came
	ringAt   int
	fresh    int // launches come since the task graph's last sweep
	// maxLaunches is maxOMPLaunches (a test's may be smaller).
	maxLaunches int
	tasks       *analysis.Graph // explicit tasks, summed as they retire
	outside     int64           // the longest path of the tasks created outside launches
}

// ompLaunch is what the summary holds of a launch with OpenMP rows.
type ompLaunch struct {
	kernel   uint64 // where a row told
	counted  bool   // in its kernel's launches
	critical int64  // the longest path of its tasks retired so far
}

type ompRegion struct {
	launch, kernel uint64
	team, n        int // team size, implicit task rows seen
	busy           []int64
	implicit, idle int64
	parallel       bool           // its parallel row came
	open           []openImplicit // implicit tasks with no end
}

// openImplicit is an implicit task whose end the trace lacks.
type openImplicit struct {
	task        uint64
	start, idle int64
}

func (c *Collector) ompProc(p *analysis.Process) *ompProc {
	if c.omp == nil {
		c.omp = map[*analysis.Process]*ompProc{}
	}
	op := c.omp[p]
	if op == nil {
		op = &ompProc{regions: map[uint64]*ompRegion{}, idle: map[uint64]int64{}, lastWait: map[uint64]int64{},
			launches: map[uint64]ompLaunch{}, maxLaunches: maxOMPLaunches, tasks: analysis.NewGraph()}
		op.tasks.Retire = func(t *analysis.Task) { c.ompTask(p, op, t) }
		op.tasks.Late = func(launch uint64, exec int64, completed bool) {
			s := c.ompStats(p, op, launch, 0)
			s.taskNS += exec
			if completed {
				s.completed++
			}
		}
		c.omp[p] = op
	}
	return op
}

// addOMP takes an OpenMP row.
func (c *Collector) addOMP(p *analysis.Process, r *analysis.Row) {
	op := c.ompProc(p)
	o := r.OMP
	if r.Kernel != 0 && o.Launch != 0 && (r.Kind == trace.OmpParallelBegin || r.Kind == trace.OmpTaskCreate) {
		l := c.ompLaunch(p, op, o.Launch)
		l.kernel = r.Kernel
		op.launches[o.Launch] = l
	}
	op.tasks.Add(r)
	paired := r.Dur != analysis.Unpaired
	switch r.Kind {
	case trace.OmpParallelBegin:
		reg := op.region(o.Parallel)
		reg.parallel, reg.launch = true, o.Launch
		if r.Kernel != 0 {
			reg.kernel = r.Kernel
		}
		c.ompRegionDone(p, op, o.Parallel, reg, false)
	case trace.OmpImplicitTaskBegin:
		reg := op.region(o.Parallel)
		reg.n++
		reg.team = max(reg.team, int(o.TeamSize))
		reg.launch = o.Launch
		if r.Kernel != 0 {
			reg.kernel = r.Kernel
		}
		idle := op.idle[o.Task]
		delete(op.idle, o.Task)
		if paired {
			delete(op.lastWait, o.Task)
			reg.busy = append(reg.busy, r.Dur-idle)
			reg.implicit += r.Dur
			reg.idle += idle
		} else {
			reg.open = append(reg.open, openImplicit{o.Task, r.Start, idle})
		}
		c.ompRegionDone(p, op, o.Parallel, reg, false)
	case trace.OmpSyncWaitBegin:
		switch {
		case o.TeamSize == 0 || o.Task == 0: // not a wait of an implicit task
		case paired:
			if len(op.idle) >= maxOMPWaits {
				clear(op.idle)
			}
			op.idle[o.Task] += max(0, r.Dur-o.TaskTime)
		default:
			if len(op.lastWait) >= maxOMPWaits {
				clear(op.lastWait)
			}
			op.lastWait[o.Task] = max(op.lastWait[o.Task], r.Start)
		}
	}
	if len(op.regions) > maxOMPRegions {
		ids := slices.Sorted(maps.Keys(op.regions))
		for _, id := range ids[:len(ids)/2] {
			c.ompRegionDone(p, op, id, op.regions[id], true)
		}
	}
}

// ompLaunch returns what is held of launch (not 0), making room for it.
func (c *Collector) ompLaunch(p *analysis.Process, op *ompProc, launch uint64) ompLaunch {
	if l, ok := op.launches[launch]; ok {
		return l
	}
	if op.fresh++; op.fresh >= op.maxLaunches/4 {
		op.fresh = 0
		op.tasks.Sweep()
		if l, ok := op.launches[launch]; ok { // a task of it retired
			return l
		}
	}
	if len(op.ring) < op.maxLaunches {
		op.ring = append(op.ring, launch)
	} else {
		c.ompLaunchDone(p, op, op.ring[op.ringAt])
		op.ring[op.ringAt] = launch
		op.ringAt = (op.ringAt + 1) % op.maxLaunches
	}
	l := ompLaunch{}
	op.launches[launch] = l
	return l
}

// ompLaunchDone adds launch's critical path to its kernel's and forgets
// the launch.
func (c *Collector) ompLaunchDone(p *analysis.Process, op *ompProc, launch uint64) {
	if l := op.launches[launch]; l.critical > 0 {
		c.ompStats(p, op, launch, l.kernel).criticalNS += l.critical
	}
	delete(op.launches, launch)
}

func (op *ompProc) region(id uint64) *ompRegion {
	reg := op.regions[id]
	if reg == nil {
		reg = &ompRegion{}
		op.regions[id] = reg
	}
	return reg
}

// ompRegionDone sums region reg once its parallel row and its team's
// implicit tasks have all come, and none lacks its end (a wait half may
// still come for it), or when last is set (at the end of the trace).
func (c *Collector) ompRegionDone(p *analysis.Process, op *ompProc, id uint64, reg *ompRegion, last bool) {
	if !last && (!reg.parallel || reg.n < reg.team || len(reg.open) > 0) {
		return
	}
	delete(op.regions, id)
	for _, o := range reg.open {
		if w, ok := op.lastWait[o.task]; ok && w >= o.start {
			reg.busy = append(reg.busy, w-o.start-o.idle)
			reg.implicit += w - o.start
			reg.idle += o.idle
		}
		delete(op.lastWait, o.task)
	}
	s := c.ompStats(p, op, reg.launch, reg.kernel)
	s.regions++
	s.implicit += int64(reg.n)
	s.implicitNS += reg.implicit
	s.idleNS += reg.idle
	if len(reg.busy) > 0 {
		var sum int64
		for _, b := range reg.busy {
			sum += b
		}
		s.maxBusy += slices.Max(reg.busy)
		s.meanBusy += float64(sum) / float64(len(reg.busy))
	}
}

// ompStats returns the stats of launch's kernel, counting the launch once.
func (c *Collector) ompStats(p *analysis.Process, op *ompProc, launch, kernel uint64) *ompStats {
	name := OutsideKernels
	var l ompLaunch
	if launch != 0 {
		l = c.ompLaunch(p, op, launch)
		if kernel == 0 {
			kernel = l.kernel
		}
		name = UnknownKernel
		if kernel != 0 {
			name = p.Dict.SharedKernel(kernel).Name // on the summing goroutine (async.go)
		}
	}
	if c.ompBy == nil {
		c.ompBy = map[string]*ompStats{}
	}
	s := named(c.ompBy, &c.ompCut, name, otherKernels, mergeOMP)
	if launch != 0 && !l.counted {
		l.counted = true
		op.launches[launch] = l
		s.launches++
	}
	return s
}

// ompTask sums a task the graph retired.
func (c *Collector) ompTask(p *analysis.Process, op *ompProc, t *analysis.Task) {
	s := c.ompStats(p, op, t.Launch, t.Kernel)
	s.tasks++
	if t.HasCreate {
		s.created++
	}
	if t.Completed {
		s.completed++
	}
	s.taskNS += t.Exec
	if t.Launch == 0 {
		op.outside = max(op.outside, t.Path)
		return
	}
	l := c.ompLaunch(p, op, t.Launch)
	l.critical = max(l.critical, t.Path)
	op.launches[t.Launch] = l
}

// ompFinish sums what is left of p's OpenMP rows once they have all come:
// regions whose rows did not all come, the tasks not yet retired, and the
// critical paths of the launches.
func (c *Collector) ompFinish(p *analysis.Process) {
	op := c.omp[p]
	if op == nil {
		return
	}
	delete(c.omp, p)
	for _, id := range slices.Sorted(maps.Keys(op.regions)) {
		c.ompRegionDone(p, op, id, op.regions[id], true)
	}
	op.tasks.Flush()
	for _, l := range slices.Sorted(maps.Keys(op.launches)) {
		c.ompLaunchDone(p, op, l)
	}
	if op.outside > 0 {
		c.ompStats(p, op, 0, 0).criticalNS += op.outside
	}
	c.taskGraph.Add(op.tasks.Stats)
}

// TaskGraph says what the task graphs' bounds cost the traces finished so
// far (analysis.GraphStats).
func (c *Collector) TaskGraph() analysis.GraphStats { return c.taskGraph }

// ompFinishAll sums the OpenMP rows of the traces not finished (Finish not
// called), in rank order.
func (c *Collector) ompFinishAll() {
	ps := slices.Collect(maps.Keys(c.omp))
	slices.SortFunc(ps, func(a, b *analysis.Process) int {
		if a.Rank != b.Rank {
			return cmp.Compare(a.Rank, b.Rank)
		}
		return cmp.Compare(a.Path, b.Path)
	})
	for _, p := range ps {
		c.ompFinish(p)
	}
}

// ompTable builds the OpenMP section, nil when no row made it.
func (c *Collector) ompTable() *Table {
	if len(c.ompBy) == 0 {
		return nil
	}
	t := &Table{Name: "openmp",
		Title: "OpenMP per kernel (busy = implicit task time less waits not running tasks; imbalance = busiest thread / mean, over parallel regions; critical path = longest task dependence chain, summed over launches)",
		Columns: []string{"kernel", "launches", "regions", "implicit_tasks", "imbalance", "wait_percent", "implicit_ns",
			"wait_ns", "tasks_created", "tasks_completed", "task_ns", "critical_path_ns", "parallelism"}}
	names := sortedKeys(c.ompBy)
	slices.SortStableFunc(names, func(a, b string) int {
		sa, sb := c.ompBy[a], c.ompBy[b]
		return -cmp.Compare(sa.implicitNS+sa.taskNS, sb.implicitNS+sb.taskNS)
	})
	for _, n := range names {
		s := c.ompBy[n]
		imb, par := 0.0, 0.0
		if s.meanBusy > 0 {
			imb = float64(s.maxBusy) / s.meanBusy
		}
		if s.criticalNS > 0 {
			par = float64(s.taskNS) / float64(s.criticalNS)
		}
		t.Rows = append(t.Rows, []any{n, s.launches, s.regions, s.implicit, imb, pct(s.idleNS, s.implicitNS), Dur(s.implicitNS),
			Dur(s.idleNS), s.created, s.completed, Dur(s.taskNS), Dur(s.criticalNS), par})
	}
	return t
}
