package analysis

import (
	"slices"

	"github.com/libocca/occa-tools/formats/trace"
)

// OMP is what an OpenMP row (FORMAT.md §4, kinds 26..41) adds to its Row:
// Row.OMP, nil on every other row. Row.Corr is OMP.ID, Row.Kernel the
// kernel of the OCCA launch the row happened in where the Pairer could tell
// (the launch was still open when the row began; 0 otherwise), Row.Name the
// name of OMP.Type ("loop", "barrier_implicit", "in", ...).
//
// The rows, by Row.Kind:
//
//   - OmpThreadBegin: an OpenMP thread's lifetime. ID, Type (thread type).
//   - OmpParallelBegin: a parallel region. ID = Parallel, Parent (the
//     encountering task), TeamSize (the requested team size), Flags, Launch.
//   - OmpImplicitTaskBegin: one thread's part of a parallel region. ID =
//     Task, Parallel, ThreadNum, TeamSize (actual), Launch.
//   - OmpWorkBegin: a worksharing region. ID, Type (work type), Parallel,
//     Task (the binding task), Count; ThreadNum, TeamSize, Launch from the
//     binding task (implicit: its thread number and team; explicit: its
//     launch).
//   - OmpSyncBegin, OmpSyncWaitBegin: a sync region and the part of it spent
//     waiting. As work, Type = sync kind; a wait's TaskTime is the time
//     explicit tasks ran on its thread while it waited.
//   - OmpTaskSchedule: one execution segment of an explicit task: from the
//     task_schedule that names it next_task to the one on the same thread
//     that names it prior_task. ID = Task, Parent, Flags, Launch, Created
//     (the task's creation time, 0 unknown), Row.Status = the prior_status
//     that ended the segment (TaskComplete, TaskSwitch, ...), Completed when
//     that status completed the task. A segment still running when the
//     trace ends is a half (Dur = Unpaired).
//   - OmpTaskCreate: ID = Task, Parent, Flags, HasDeps, Launch, Created.
//   - OmpTaskDepend: one depend clause item. ID = Task, Address, Type
//     (dependence type).
//   - OmpTaskDependence: a dependence pair the OpenMP runtime reported. ID =
//     Task = the sink, SrcTask = the task it waited for.
//
// task_schedule events themselves are no rows: they delimit segments. A
// segment of a task whose creation the trace does not have yet waits for it
// (at most MaxPendingSegments of them, then they go out without it); one whose
// creation never comes goes out at the end with Parent and Created 0. The
// schedule events also name implicit and initial tasks: the Pairer tells
// them apart as the tasks a thread switches away from with no segment of
// theirs open (a thread's own implicit or initial task), and the implicit
// tasks open on the thread.
type OMP struct {
	ID        uint64
	Parallel  uint64
	Task      uint64
	Parent    uint64
	SrcTask   uint64
	ThreadNum uint32
	TeamSize  uint32
	Type      uint64
	Count     uint64
	Flags     uint64
	Launch    uint64
	Address   uint64
	Created   int64
	TaskTime  int64
	Completed bool
	HasDeps   bool
}

// MaxPendingSegments bounds the task segments a Pairer holds back until
// their task's creation is read.
const MaxPendingSegments = 1 << 16

// MaxTasks bounds the created tasks a Pairer remembers until their
// completion (about 70 bytes each). Past it (tasks created and never
// completed, by the hundred thousand) it forgets them all: their later
// segments go out as those of a task whose creation is not in the trace.
const MaxTasks = 1 << 18

// Values of omp_task_schedule's prior_status (OMPT's ompt_task_status_t).
const (
	TaskComplete     = 1
	TaskYield        = 2
	TaskCancel       = 3
	TaskDetach       = 4
	TaskEarlyFulfill = 5
	TaskLateFulfill  = 6
	TaskSwitch       = 7
)

// TaskCompleted reports whether a segment that ended with prior_status
// status completed its task.
func TaskCompleted(status uint64) bool { return status == TaskComplete || status == TaskEarlyFulfill }

// Values of omp_task_depend's dependence_type (OMPT's ompt_dependence_type_t).
const (
	DepIn            = 1
	DepOut           = 2
	DepInOut         = 3
	DepMutexInOutSet = 4
	DepSource        = 5
	DepSink          = 6
	DepInOutSet      = 7
	// OpenMP 5.2's omp_all_memory (LLVM reports its address as all ones).
	DepOutAllMemory   = 34
	DepInOutAllMemory = 35
)

var (
	threadTypeNames = [...]string{1: "initial", 2: "worker", 3: "other", 4: "unknown"}
	workTypeNames   = [...]string{1: "loop", 2: "sections", 3: "single_executor", 4: "single_other", 5: "workshare",
		6: "distribute", 7: "taskloop", 8: "scope", 10: "loop_static", 11: "loop_dynamic", 12: "loop_guided", 13: "loop_other"}
	syncKindNames = [...]string{1: "barrier", 2: "barrier_implicit", 3: "barrier_explicit", 4: "barrier_implementation",
		5: "taskwait", 6: "taskgroup", 7: "reduction", 8: "barrier_implicit_workshare", 9: "barrier_implicit_parallel",
		10: "barrier_teams"}
	depTypeNames = [...]string{1: "in", 2: "out", 3: "inout", 4: "mutexinoutset", 5: "source", 6: "sink", 7: "inoutset",
		34: "out_all_memory", 35: "inout_all_memory"}
)

func name(names []string, v uint64) string {
	if v < uint64(len(names)) {
		return names[v]
	}
	return ""
}

// OMPTypeName names an OpenMP row's OMP.Type: the thread type of a thread
// row, the work type of a work row, the sync kind of a sync or wait row, the
// dependence type of a depend row; "" for other rows and unknown values.
func OMPTypeName(k trace.Kind, t uint64) string {
	switch k {
	case trace.OmpThreadBegin:
		return name(threadTypeNames[:], t)
	case trace.OmpWorkBegin:
		return name(workTypeNames[:], t)
	case trace.OmpSyncBegin, trace.OmpSyncWaitBegin:
		return name(syncKindNames[:], t)
	case trace.OmpTaskDepend:
		return name(depTypeNames[:], t)
	}
	return ""
}

// ompState is what a Pairer keeps of OpenMP events; nil until the first.
type ompState struct {
	row     OMP // the OMP of the row being sent (pr.row's)
	threads map[uint32]*ompThread
	lastT   uint32
	last    *ompThread
	tasks   map[uint64]*ompTask // created tasks not yet completed
	// Segments waiting for their task's create, by task; order lists the
	// tasks in the order their first segment came (some may be gone).
	pending  map[uint64][]pendingSeg
	order    []uint64
	npending int
	// The last launch whose kernel was found.
	lastLaunch, lastKernel uint64
	clamp                  clampState // ompclamp.go
}

type ompTask struct {
	parent, flags, launch, kernel uint64
	created                       int64
	hasDeps                       bool
}

type ompThread struct {
	implicit depthStack[ompFrame] // open implicit tasks, innermost last
	waits    depthStack[ompWait]  // open sync waits, innermost last
	seg      ompSeg               // the explicit task running, if open
	base     uint64               // the task the thread last switched away from with no segment open
}

type ompFrame struct {
	id, parallel, launch, kernel uint64
	num, team                    uint32
}

type ompWait struct {
	id    uint64
	tasks int64 // explicit task time inside the wait so far
}

type ompSeg struct {
	task  uint64
	start int64
	wait  uint64 // the innermost wait open when it began, 0 none
	open  bool
}

type pendingSeg struct {
	row Row
	omp OMP
}

func (pr *Pairer) ompState() *ompState {
	if pr.omp == nil {
		pr.omp = &ompState{threads: map[uint32]*ompThread{}, tasks: map[uint64]*ompTask{},
			pending: map[uint64][]pendingSeg{}}
	}
	return pr.omp
}

func (o *ompState) thread(t uint32) *ompThread {
	if o.last != nil && o.lastT == t {
		return o.last
	}
	th := o.threads[t]
	if th == nil {
		th = &ompThread{}
		o.threads[t] = th
	}
	o.lastT, o.last = t, th
	return th
}

func (th *ompThread) implicitFrame(id uint64) *ompFrame {
	frames := th.implicit.items()
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].id == id {
			return &frames[i]
		}
	}
	return nil
}

// launchKernel returns the kernel of launch l when its run_begin is still
// open: in thread's slot (the launch the thread runs) or in the map.
func (pr *Pairer) launchKernel(l uint64, thread uint32) uint64 {
	o := pr.omp
	if l == 0 {
		return 0
	}
	if l == o.lastLaunch {
		return o.lastKernel
	}
	var b *trace.Event
	if int(thread) < len(pr.slots) && pr.slots[thread].used && pr.slots[thread].e.Args[0] == l {
		b = &pr.slots[thread].e
	} else if ob, ok := pr.open[l]; ok {
		b = &ob
	}
	if b == nil || b.Kind != trace.RunBegin {
		return 0
	}
	o.lastLaunch, o.lastKernel = l, b.Args[1]
	return b.Args[1]
}

// ompBegin takes the begin of an OpenMP pair. The kernel of a parallel
// region's or implicit task's launch travels in the begin's unused
// Args[5].
func (pr *Pairer) ompBegin(e *trace.Event) error {
	o := pr.ompState()
	a := &e.Args
	switch e.Kind {
	case trace.OmpParallelBegin, trace.OmpImplicitTaskBegin:
		if e.Kind == trace.OmpParallelBegin {
			o.clamp.set(a[0], region{thread: e.Thread, state: regionOpen})
		}
		ev := *e
		ev.Args[5] = pr.launchKernel(a[4], e.Thread)
		if e.Kind == trace.OmpImplicitTaskBegin {
			th := o.thread(e.Thread)
			// On a full stack, the outermost is forgotten.
			th.implicit.push(ompFrame{id: a[0], parallel: a[1], num: uint32(a[2]), team: uint32(a[3]),
				launch: a[4], kernel: ev.Args[5]})
		}
		return pr.begin(&ev)
	case trace.OmpSyncWaitBegin:
		th := o.thread(e.Thread)
		th.waits.push(ompWait{id: a[0]})
	}
	return pr.begin(e)
}

// fillOMP fills r (made by fill) from the begin b of an OpenMP pair and its
// end e (nil for a half begin; b is made up, with only its id, for a half
// end). An end closes its implicit task or wait on the thread.
func (pr *Pairer) fillOMP(r *Row, b, e *trace.Event) {
	o := pr.ompState()
	m := &o.row
	a := &b.Args
	*m = OMP{ID: a[0]}
	r.OMP, r.Corr = m, a[0]
	var th *ompThread
	if e != nil {
		th = o.thread(e.Thread)
	}
	switch b.Kind {
	case trace.OmpThreadBegin:
		m.Type = a[1]
	case trace.OmpParallelBegin:
		m.Parallel, m.Parent, m.TeamSize, m.Flags, m.Launch = a[0], a[1], uint32(a[2]), a[3], a[4]
		r.Kernel = a[5]
	case trace.OmpImplicitTaskBegin:
		m.Task, m.Parallel, m.ThreadNum, m.TeamSize, m.Launch = a[0], a[1], uint32(a[2]), uint32(a[3]), a[4]
		r.Kernel = a[5]
		if th != nil {
			frames := th.implicit.items()
			for i := len(frames) - 1; i >= 0; i-- {
				if f := frames[i]; f.id == a[0] {
					m.Parallel, m.ThreadNum, m.TeamSize, m.Launch, r.Kernel = f.parallel, f.num, f.team, f.launch, f.kernel
					th.implicit.truncate(i)
					break
				}
			}
		}
	case trace.OmpWorkBegin:
		m.Type, m.Parallel, m.Task, m.Count = a[1], a[2], a[3], a[4]
		pr.ompContext(r, m, b.Thread)
	case trace.OmpSyncBegin, trace.OmpSyncWaitBegin:
		m.Type, m.Parallel, m.Task = a[1], a[2], a[3]
		if th != nil && b.Kind == trace.OmpSyncWaitBegin {
			waits := th.waits.items()
			for i := len(waits) - 1; i >= 0; i-- {
				if waits[i].id == a[0] {
					m.TaskTime = waits[i].tasks
					th.waits.truncate(i)
					break
				}
			}
		}
		pr.ompContext(r, m, b.Thread)
	}
	r.Name = OMPTypeName(b.Kind, m.Type)
}

// ompContext fills what a work or sync row takes from its binding task.
func (pr *Pairer) ompContext(r *Row, m *OMP, thread uint32) {
	o := pr.omp
	if f := o.thread(thread).implicitFrame(m.Task); f != nil {
		m.ThreadNum, m.TeamSize, m.Launch, r.Kernel = f.num, f.team, f.launch, f.kernel
		if m.Parallel == 0 {
			m.Parallel = f.parallel
		}
	} else if t := o.tasks[m.Task]; t != nil {
		m.Launch, r.Kernel = t.launch, t.kernel
	}
}

// ompInstant takes an OpenMP instant.
func (pr *Pairer) ompInstant(e *trace.Event) error {
	o := pr.ompState()
	a := &e.Args
	r, m := &pr.row, &o.row
	*r = Row{Kind: e.Kind, Thread: e.Thread, Start: e.Time, Corr: a[0], DevDur: -1, OMP: m}
	*m = OMP{ID: a[0], Task: a[0]}
	switch e.Kind {
	case trace.OmpTaskCreate:
		k := pr.launchKernel(a[4], e.Thread)
		t := &ompTask{parent: a[1], flags: a[2], launch: a[4], kernel: k, created: e.Time, hasDeps: a[3] != 0}
		if len(o.tasks) >= MaxTasks {
			clear(o.tasks)
		}
		o.tasks[a[0]] = t
		t.fill(r, m)
		if err := pr.emit(r); err != nil {
			return err
		}
		return pr.release(a[0], t)
	case trace.OmpTaskSchedule:
		return pr.schedule(e)
	case trace.OmpTaskDependence:
		r.Corr, m.ID, m.Task, m.SrcTask = a[1], a[1], a[1], a[0]
	case trace.OmpTaskDepend:
		m.Address, m.Type = a[1], a[2]
		r.Name = OMPTypeName(e.Kind, a[2])
	}
	return pr.emit(r)
}

func (t *ompTask) fill(r *Row, m *OMP) {
	m.Parent, m.Flags, m.Launch, m.Created, m.HasDeps = t.parent, t.flags, t.launch, t.created, t.hasDeps
	r.Kernel = t.kernel
}

// schedule takes a task_schedule: it ends the segment of prior_task open
// on the thread and opens one of next_task unless that is the thread's own
// (implicit or initial) task.
func (pr *Pairer) schedule(e *trace.Event) error {
	o := pr.omp
	th := o.thread(e.Thread)
	prior, status, next := e.Args[0], e.Args[1], e.Args[2]
	switch {
	case th.seg.open && th.seg.task == prior:
		if err := pr.segment(th, e.Thread, e.Time, status); err != nil {
			return err
		}
	case th.seg.open: // the schedule that ended it is not in the trace
		if err := pr.segment(th, e.Thread, Unpaired, 0); err != nil {
			return err
		}
	case prior != 0 && (status == TaskSwitch || status == TaskYield):
		th.base = prior
	}
	if next != 0 && next != th.base && th.implicitFrame(next) == nil {
		th.seg = ompSeg{task: next, start: e.Time, open: true}
		if waits := th.waits.items(); len(waits) > 0 {
			th.seg.wait = waits[len(waits)-1].id
		}
	}
	return nil
}

// segment sends out the segment open on th, ending at end (Unpaired: a
// half) with status.
func (pr *Pairer) segment(th *ompThread, thread uint32, end int64, status uint64) error {
	o := pr.omp
	s := th.seg
	th.seg.open = false
	r, m := &pr.row, &o.row
	*r = Row{Kind: trace.OmpTaskSchedule, Thread: thread, Start: s.start, Dur: Unpaired, Corr: s.task, Status: status,
		DevDur: -1, OMP: m}
	*m = OMP{ID: s.task, Task: s.task}
	if end != Unpaired {
		r.Dur = end - s.start
		m.Completed = TaskCompleted(status)
		if s.wait != 0 {
			waits := th.waits.items()
			for i := range waits {
				if waits[i].id == s.wait {
					waits[i].tasks += r.Dur
				}
			}
		}
	}
	t := o.tasks[s.task]
	if t == nil {
		if _, ok := o.pending[s.task]; !ok {
			if len(o.order) >= 2*MaxPendingSegments { // keep each pending task's first entry only
				seen := make(map[uint64]bool, len(o.pending))
				o.order = slices.DeleteFunc(o.order, func(t uint64) bool {
					_, ok := o.pending[t]
					drop := !ok || seen[t]
					seen[t] = true
					return drop
				})
			}
			o.order = append(o.order, s.task)
		}
		o.pending[s.task] = append(o.pending[s.task], pendingSeg{*r, *m})
		if o.npending++; o.npending > MaxPendingSegments {
			return pr.flushPending()
		}
		return nil
	}
	t.fill(r, m)
	if r.Dur != Unpaired && (m.Completed || status == TaskCancel || status == TaskLateFulfill) {
		delete(o.tasks, s.task)
	}
	return pr.emit(r)
}

// release sends out the segments of task that waited for its create.
func (pr *Pairer) release(task uint64, t *ompTask) error {
	o := pr.omp
	segs, ok := o.pending[task]
	if !ok {
		return nil
	}
	delete(o.pending, task)
	o.npending -= len(segs)
	for i := range segs {
		s := &segs[i]
		s.row.OMP = &s.omp
		t.fill(&s.row, &s.omp)
		if s.row.Dur != Unpaired && (s.omp.Completed || s.row.Status == TaskCancel) {
			delete(o.tasks, task)
		}
		if err := pr.emit(&s.row); err != nil {
			return err
		}
	}
	return nil
}

// flushPending sends out every waiting segment without its create.
func (pr *Pairer) flushPending() error {
	o := pr.omp
	order := o.order
	o.order = nil
	for _, task := range order {
		segs, ok := o.pending[task]
		if !ok {
			continue
		}
		delete(o.pending, task)
		o.npending -= len(segs)
		for i := range segs {
			segs[i].row.OMP = &segs[i].omp
			if err := pr.emit(&segs[i].row); err != nil {
				return err
			}
		}
	}
	return nil
}

// ompFlush sends out, at the end of the trace, the segments still waiting
// for their create and then those still running, as halves, by thread.
func (pr *Pairer) ompFlush() error {
	o := pr.omp
	if o == nil {
		return nil
	}
	if err := pr.flushPending(); err != nil {
		return err
	}
	threads := make([]uint32, 0, len(o.threads))
	for t, th := range o.threads {
		if th.seg.open {
			threads = append(threads, t)
		}
	}
	slices.Sort(threads)
	for _, t := range threads {
		if err := pr.segment(o.threads[t], t, Unpaired, 0); err != nil {
			return err
		}
	}
	return pr.flushPending() // those whose task was never created
}

// ompFlushHeld sends out, after the halves, the rows still held for their
// region's end.
func (pr *Pairer) ompFlushHeld() error {
	if pr.omp == nil {
		return nil
	}
	return pr.releaseAll()
}

// ompReset forgets the open implicit tasks and waits once Flush has sent
// out the halves (which read them).
func (pr *Pairer) ompReset() {
	if o := pr.omp; o != nil {
		for _, th := range o.threads {
			th.implicit.truncate(0)
			th.waits.truncate(0)
			th.base = 0
		}
		o.clamp = clampState{}
	}
}
