package perfetto

// OpenMP rows (analysis.OMP, FORMAT.md §4) on the thread tracks.
//
// Every OpenMP span is a slice on its thread's track (lanes as for calls):
//   - "parallel" on the thread that began the region (annotations parallel,
//     parent, team = the requested team size, launch);
//   - "implicit task N/T" (thread number / actual team size; task,
//     parallel, launch);
//   - a worksharing region by its type, "loop", "sections",
//     "single (executor)", "loop (static)", ... (task, parallel, count,
//     launch);
//   - a sync region by its kind, "barrier (implicit)", "taskwait", ...,
//     and "wait" for the part of it spent waiting (task, parallel, launch;
//     a wait's task_time);
//   - "task <id>" for each execution segment of an explicit task (task,
//     parent, launch, status = the prior_status that ended it).
//
// A thread's begin is an instant "OpenMP thread (<type>)", a task's
// creation an instant "task create" (task, parent, launch); depend items
// and reported dependences are no events of their own: they are flows.
//
// A worker's late implicit-task end (libomp's) comes already clamped to
// its region's end from the Pairer (formats/analysis, ompclamp.go), as in
// every output.
//
// Flows:
//   - one per dependence edge of the trace's task graph (analysis.Graph,
//     which the writer follows through the rows: the depend clauses and
//     the pairs the runtime reported), from the source task's completing
//     segment to the sink task's first segment. A sink's edges are known
//     when its first segment comes; a source's only once its last sink's
//     is read, which may be long after its own: the completing segments of
//     tasks with depend items are held back (their lanes chosen in order
//     like the others'), and written with their flows at the end, or, the
//     oldest half, when MaxHeldSegments are held. A sink whose first
//     segment comes after its source's was written that way gets no flow
//     from it (Writer.LostFlows counts those).
//   - one from an OCCA kernel launch (the run slice) to each implicit task
//     of each parallel region in it (the rows' launch is the run's
//     correlation id). The reader learns the regions of a launch from the
//     implicit task of thread 0, which ends before the launch does.
//
// Traces without OpenMP rows pay a nil check per row.

import (
	"strconv"
	"strings"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// Flow id kinds (hash's second part); 7 is the launch -> device flow.
const (
	flowLaunchOMP = 13
	flowDepend    = 11
)

// launchRegion is a parallel region in a launch, as the reader sends it.
type launchRegion struct {
	launch, parallel uint64
	team             uint32
}

// ompSlab holds the copies of the OMP of the rows added: *r.OMP is valid
// only during Add.
const ompSlab = 256

// ompHeldDur is the length by which an OpenMP row is ordered among rows
// of the same start: a wait sorts after its sync region of the same span.
func ompHeldDur(kind trace.Kind, dur int64) int64 {
	if kind == trace.OmpSyncWaitBegin && dur > 0 {
		return dur - 1
	}
	return dur
}

// addOMP copies the OpenMP part of the row just appended to b and returns
// its ompHeldDur.
func (w *Writer) addOMP(b *batch, r *analysis.Row) int64 {
	if len(w.ompSlab) == cap(w.ompSlab) {
		w.ompSlab = make([]analysis.OMP, 0, ompSlab)
	}
	w.ompSlab = append(w.ompSlab, *r.OMP)
	m := &w.ompSlab[len(w.ompSlab)-1]
	b.rows[len(b.rows)-1].OMP = m
	if r.Kind == trace.OmpImplicitTaskBegin && m.ThreadNum == 0 && m.Launch != 0 && m.Parallel != 0 {
		b.launches = append(b.launches, launchRegion{launch: m.Launch, parallel: m.Parallel, team: m.TeamSize})
	}
	return ompHeldDur(r.Kind, r.Dur)
}

type launchOMP struct {
	regions []launchRegion
	written bool // the run slice carries the flows
	left    int  // implicit tasks not yet written
}

// MaxHeldSegments bounds the completing task segments held back for their
// flows (deferredSlice, about 100 bytes each).
const MaxHeldSegments = 1 << 14

// deferredSlice is a completing task segment held back for its flows. Its
// name is interned when it is written: the names interned before may have
// been forgotten since (Writer.forgetInterned).
type deferredSlice struct {
	start, end                   int64
	depth                        int // on its lane
	track                        uint64
	task, parent, launch, status uint64
	out, in                      []uint64
}

type ompWriter struct {
	launches map[uint64]*launchOMP
	tasks    *analysis.Graph
	deferred []deferredSlice
	written  int            // deferred segments written before the end (they precede deferred[0])
	last     map[uint64]int // task -> its completing segment, counted from the first deferred
	lost     int64          // flows whose source completed with no segment held
	implName map[[2]uint32]uint64
	ann      []kv
	term     [1]uint64
}

type kv struct {
	a int
	v uint64
}

func (w *Writer) ompState() *ompWriter {
	if w.omp == nil {
		w.omp = &ompWriter{launches: map[uint64]*launchOMP{}, tasks: analysis.NewGraph(),
			last: map[uint64]int{}, implName: map[[2]uint32]uint64{}}
	}
	return w.omp
}

// addLaunches takes the regions of launches the reader sent.
func (w *Writer) addLaunches(rs []launchRegion) {
	o := w.ompState()
	for _, r := range rs {
		l := o.launches[r.launch]
		if l == nil {
			l = &launchOMP{}
			o.launches[r.launch] = l
		}
		l.regions = append(l.regions, r)
		l.left += int(r.team)
	}
}

// launchFlows returns the flows from launch corr to its implicit tasks,
// once; nil when it has no OpenMP region. The launch may be written after
// its implicit tasks (a launch with more rows inside than the reorder
// buffer holds): trace processors order the flow's ends by time.
func (w *Writer) launchFlows(corr uint64) []uint64 {
	l := w.omp.launches[corr]
	if l == nil || l.written {
		return nil
	}
	var ids []uint64
	for _, r := range l.regions {
		for k := uint32(0); k < r.team; k++ {
			ids = append(ids, hash(uint64(w.p.Rank), flowLaunchOMP, corr, r.parallel, uint64(k)))
		}
	}
	l.written = true
	if l.left == 0 {
		delete(w.omp.launches, corr)
	}
	return ids
}

// implicitFlow returns the flow into implicit task m from its launch, or 0
// when the reader saw no region of that launch.
func (w *Writer) implicitFlow(m *analysis.OMP) uint64 {
	l := w.omp.launches[m.Launch]
	if m.Launch == 0 || l == nil {
		return 0
	}
	for _, r := range l.regions {
		if r.parallel == m.Parallel && m.ThreadNum < r.team {
			if l.left--; l.left <= 0 && l.written {
				delete(w.omp.launches, m.Launch)
			}
			return hash(uint64(w.p.Rank), flowLaunchOMP, m.Launch, r.parallel, uint64(m.ThreadNum))
		}
	}
	return 0
}

// ompName turns a type name "a_b" into "a (b)".
func ompName(s string) string {
	if i := strings.IndexByte(s, '_'); i > 0 {
		return s[:i] + " (" + s[i+1:] + ")"
	}
	return s
}

// writeOMP writes an OpenMP row.
func (w *Writer) writeOMP(r *ringRow) {
	o := w.ompState()
	m := r.OMP
	p := w.p
	row := analysis.Row{Kind: r.Kind, Thread: r.Thread, Start: r.Start, Dur: r.Dur, OMP: m} // what the graph reads
	if r.Kind == trace.OmpTaskSchedule {
		// After its flows are found (flowsIn): a segment that completes
		// its task may let the graph retire it.
		defer o.tasks.Add(&row)
	} else {
		o.tasks.Add(&row)
	}
	ann := o.ann[:0]
	var name, term uint64
	flowsInto := false // the first segment of a task with depend items
	switch r.Kind {
	case trace.OmpThreadBegin:
		w.ompInstant(r, w.iid(r.Kind, formOMPThread, r.Name), nil)
		return
	case trace.OmpTaskCreate:
		ann = append(ann, kv{annotTask, m.Task}, kv{annotParent, m.Parent}, kv{annotLaunch, m.Launch})
		w.ompInstant(r, w.iid(r.Kind, formPlain, "task create"), ann)
		o.ann = ann
		return
	case trace.OmpTaskDepend, trace.OmpTaskDependence:
		return
	case trace.OmpParallelBegin:
		name = w.iid(r.Kind, formPlain, "parallel")
		ann = append(ann, kv{annotParallel, m.ID}, kv{annotParent, m.Parent}, kv{annotTeam, uint64(m.TeamSize)},
			kv{annotLaunch, m.Launch})
	case trace.OmpImplicitTaskBegin:
		key := [2]uint32{m.ThreadNum, m.TeamSize}
		if name = o.implName[key]; name == 0 {
			s := "implicit task " + strconv.FormatUint(uint64(m.ThreadNum), 10) + "/" + strconv.FormatUint(uint64(m.TeamSize), 10)
			name = w.iid(r.Kind, formPlain, s)
			o.implName[key] = name
		}
		ann = append(ann, kv{annotTask, m.Task}, kv{annotParallel, m.Parallel}, kv{annotLaunch, m.Launch})
		if r.Dur != analysis.Unpaired {
			term = w.implicitFlow(m)
		}
	case trace.OmpWorkBegin, trace.OmpSyncBegin, trace.OmpSyncWaitBegin:
		if r.Kind == trace.OmpSyncWaitBegin {
			name = w.iid(r.Kind, formPlain, "wait")
		} else {
			name = w.iid(r.Kind, formOMP, r.Name)
		}
		ann = append(ann, kv{annotTask, m.Task}, kv{annotParallel, m.Parallel})
		if r.Kind == trace.OmpWorkBegin {
			ann = append(ann, kv{annotIters, m.Count})
		}
		if r.Kind == trace.OmpSyncWaitBegin {
			ann = append(ann, kv{annotTaskTime, uint64(m.TaskTime)})
		}
		ann = append(ann, kv{annotLaunch, m.Launch})
	case trace.OmpTaskSchedule:
		if r.Dur == analysis.Unpaired {
			break
		}
		name = w.iid(r.Kind, formTask, strconv.FormatUint(m.Task, 10))
		if m.HasDeps {
			// The graph takes this row after it (writeOMP's defer): a
			// task followed with no segment yet is at its first.
			t := o.tasks.Task(m.Task)
			first := t != nil && t.Segments == 0
			if m.Completed {
				w.holdCompleting(r, first)
				return
			}
			flowsInto = first
		}
		ann = append(ann, kv{annotTask, m.Task}, kv{annotParent, m.Parent}, kv{annotLaunch, m.Launch},
			kv{annotStatus, r.Status})
	default:
		return
	}
	o.ann = ann
	if r.Dur == analysis.Unpaired {
		w.instant(p.WallTime(r.Start), typeInstant, w.thread(r.Thread).uuid, w.iid(r.Kind, formUnpaired, ""), 0)
		return
	}
	ts := p.WallTime(r.Start)
	l := w.pickLane(w.thread(r.Thread).lanes, ts, ts+r.Dur)
	if l == nil {
		return
	}
	var terms []uint64
	if term != 0 {
		o.term[0] = term
		terms = o.term[:]
	} else if flowsInto {
		terms = w.flowsIn(m.Task)
	}
	w.ompEvent(ts, typeSliceBegin, l.uuid, name, nil, terms, ann)
	w.sliceEnd(ts+r.Dur, len(l.stack)-1, l.uuid, 0)
}

func (w *Writer) ompInstant(r *ringRow, name uint64, ann []kv) {
	w.ompEvent(w.p.WallTime(r.Start), typeInstant, w.thread(r.Thread).uuid, name, nil, nil, ann)
}

// pickLane returns the first lane of ls where [start, end) nests (a new
// lane when none), and pushes the interval on it. A lane set holds at most
// MaxLanes lanes and a lane at most maxDepth open slices: an interval that
// fits none gets nil and is left out of the trace, counted in w.leftOut.
func (w *Writer) pickLane(ls *laneSet, start, end int64) *lane {
	i := 0
	for ; i < len(ls.lanes); i++ {
		l := &ls.lanes[i]
		for len(l.stack) > 0 && l.stack[len(l.stack)-1] <= start {
			l.stack = l.stack[:len(l.stack)-1]
		}
		if n := len(l.stack); n == 0 || l.stack[n-1] >= end && n < maxDepth {
			break
		}
	}
	if i == len(ls.lanes) {
		if i == MaxLanes {
			w.leftOut++
			return nil
		}
		u := w.named(ls.parent, ls.name+" #"+strconv.Itoa(i+1), 1000+i)
		ls.lanes = append(ls.lanes, lane{uuid: u})
	}
	l := &ls.lanes[i]
	l.stack = append(l.stack, end)
	return l
}

// MaxLanes and maxDepth bound a lane set: slices that overlap without
// nesting, as a damaged or hostile trace may have by the thousand, would
// otherwise each open a track and make each pick scan them all (quadratic
// time, a track per slice). Real traces stay far below: a stream's
// concurrent kernels, a thread's nested calls.
const (
	MaxLanes = 256
	maxDepth = 256
)

// ompEvent writes a track event through placeholders: name 0 for none,
// flows leaving, one terminating flow (0 none) and debug annotations
// (those with a zero value left out).
func (w *Writer) ompEvent(ts int64, typ, track, name uint64, flows, terms []uint64, ann []kv) {
	for _, a := range ann {
		if a.v != 0 {
			w.annot(a.a)
		}
	}
	p := w.begin(ts)
	t := w.teStart(typ, track)
	if name != 0 {
		w.out = putVarint(append(w.out, fTENameIID<<3), name)
	}
	for _, f := range flows {
		w.fixed64(fTEFlowIDs, f)
	}
	for _, f := range terms {
		w.fixed64(fTETermFlowIDs, f)
	}
	for _, a := range ann {
		if a.v != 0 {
			w.debugUint(a.a, a.v)
		}
	}
	w.teEnd(t)
	w.end(p)
}

// holdCompleting holds r, the completing segment of a task with depend
// items (its first too when first is set), for the flows out of it.
func (w *Writer) holdCompleting(r *ringRow, first bool) {
	o, m := w.omp, r.OMP
	ts := w.p.WallTime(r.Start)
	l := w.pickLane(w.thread(r.Thread).lanes, ts, ts+r.Dur)
	if l == nil { // left out, and so are its flows
		return
	}
	d := deferredSlice{start: ts, end: ts + r.Dur, depth: len(l.stack) - 1, track: l.uuid,
		task: m.Task, parent: m.Parent, launch: m.Launch, status: r.Status}
	if first {
		d.in = w.flowsIn(m.Task)
	}
	o.last[m.Task] = o.written + len(o.deferred)
	o.deferred = append(o.deferred, d)
}

// flowsIn returns the flows into task's first segment, one from the held
// completing segment of each task it depends on, which gets the flow out.
func (w *Writer) flowsIn(task uint64) []uint64 {
	o := w.omp
	t := o.tasks.Task(task)
	if t == nil {
		return nil
	}
	var in []uint64
	for _, e := range t.Preds {
		at, ok := o.last[e.Src]
		if !ok {
			if o.tasks.Completed(e.Src) { // its segment was written, or left out
				o.lost++
			}
			continue
		}
		id := hash(uint64(w.p.Rank), flowDepend, e.Src, e.Sink)
		d := &o.deferred[at-o.written]
		d.out = append(d.out, id)
		in = append(in, id)
	}
	return in
}

// ompHeldFull writes the oldest half of the held segments once
// MaxHeldSegments are held, between two rows (release).
func (w *Writer) ompHeldFull() {
	o := w.omp
	if o == nil || len(o.deferred) < MaxHeldSegments {
		return
	}
	now := w.now
	w.writeDeferred(MaxHeldSegments / 2)
	w.rewind() // the rows go on from where they were
	w.now = now
}

// ompFinish writes the held segments.
func (w *Writer) ompFinish() {
	if w.omp != nil {
		w.writeDeferred(len(w.omp.deferred))
	}
}

// writeDeferred writes the first n held segments with their flows.
func (w *Writer) writeDeferred(n int) {
	o := w.omp
	if n == 0 {
		return
	}
	// They lie before what was written: the clock starts again from 0.
	w.drain()
	w.rewind()
	for i := range o.deferred[:n] {
		d := &o.deferred[i]
		w.advance(d.start)
		ann := []kv{{annotTask, d.task}, {annotParent, d.parent}, {annotLaunch, d.launch}, {annotStatus, d.status}}
		name := w.iid(trace.OmpTaskSchedule, formTask, strconv.FormatUint(d.task, 10))
		w.ompEvent(d.start, typeSliceBegin, d.track, name, nil, d.in, ann)
		w.endFlows(d.end, d.depth, d.track, d.out)
		delete(o.last, d.task)
	}
	w.drain()
	o.written += n
	o.deferred = append(o.deferred[:0], o.deferred[n:]...)
	clear(o.deferred[len(o.deferred):cap(o.deferred)])
}
