package analysis

// The task graph: what a trace's OpenMP rows (OMP) say about explicit
// tasks: the dependence graph, from the depend clauses with OpenMP's
// semantics united with the pairs the OpenMP runtime reported, and its
// critical path. Each output that needs it (the dependences table, the
// Perfetto flows, the summary's task figures) follows it through the rows
// it gets with a Graph, in bounded memory whatever the trace's length.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/libocca/occa-tools/formats/trace"
)

// Dep is one list item of a task's depend clause.
type Dep struct {
	Address uint64
	Type    uint64 // DepIn, DepOut, ...
}

// TaskDeps is a task and its depend clause, as DependEdges takes it.
type TaskDeps struct {
	ID, Parent uint64
	Deps       []Dep
}

// Source says where an edge comes from: a bit set.
type Source uint8

const (
	FromDepend  Source = 1 << iota // reconstructed from the depend clauses
	FromRuntime                    // reported by the OpenMP runtime (omp_task_dependence)
)

// String returns "depend", "runtime" or "both".
func (s Source) String() string {
	switch s {
	case FromDepend:
		return "depend"
	case FromRuntime:
		return "runtime"
	case FromDepend | FromRuntime:
		return "both"
	}
	return ""
}

// Edge is a dependence: Sink could not start before Src completed.
type Edge struct {
	Src, Sink uint64
	Source    Source
	// Address is the list item whose clauses gave the edge (the first one
	// when several did); 0 for an edge only the runtime reported.
	Address uint64
}

// What a Graph holds is bounded; past a bound it keeps going with less
// and counts what that cost (GraphStats).
const (
	// MaxLiveTasks bounds the tasks a Graph follows at once (about 230
	// bytes each): LLVM's libomp running a chain of 300,000 tasks created
	// by one thread had 233,000 created and not completed at once. Past it
	// the oldest are retired, down to half of it, whether they and the
	// tasks they depend on completed or not (GraphStats.Forced); rows
	// naming them later are left out of the task figures (GraphStats.Late).
	MaxLiveTasks = 1 << 18
	// MaxLiveEdges bounds the dependences held for the tasks followed (32
	// bytes each); one past it is dropped (GraphStats.EdgesDropped).
	MaxLiveEdges = 1 << 19
	// MaxRetiredPaths bounds the retired tasks a Graph remembers (about 60
	// bytes each): their paths for the tasks that depend on them, and
	// their launches for their rows that come late (Graph.Late). A
	// dependence on a task forgotten adds nothing to the path of its sink
	// (GraphStats.PathsCut); a row of one starts a task anew.
	MaxRetiredPaths = 1 << 18
	// MaxDependItems bounds the state of the depend clauses: the list
	// items of each parent task and the tasks each item names (8 to 60
	// bytes each). Past it the state is cleared (GraphStats.DependResets):
	// the dependences between tasks created before and after are missing.
	MaxDependItems = 1 << 17
	// A Graph looks for tasks to retire once it follows sweepMin, then each
	// time the number doubled since: sorting what it follows costs a few
	// hundred nanoseconds a task, amortized.
	sweepMin = 1 << 14
)

type addrKey struct{ parent, address uint64 }

// addrState is what the sibling tasks created so far say about one list
// item: the last writer group (one out or inout task, or a run of
// inoutset or mutexinoutset tasks, of kind wtype), what that run's members
// depend on, and the in tasks since the group.
type addrState struct {
	address  uint64
	writers  []uint64
	wtype    uint64
	setPreds []uint64
	readers  []uint64
}

// size is what the state counts against MaxDependItems.
func (st *addrState) size() int { return 1 + len(st.writers) + len(st.setPreds) + len(st.readers) }

type parentState struct {
	addrs  []*addrState
	allMem uint64 // the last omp_all_memory task
}

// dependState is what the depend clauses read so far say, per parent task.
type dependState struct {
	addrs   map[addrKey]*addrState
	parents map[uint64]*parentState
	items   int // summed sizes, parents included
}

func (s *dependState) parent(id uint64) *parentState {
	if s.parents == nil {
		s.addrs, s.parents = map[addrKey]*addrState{}, map[uint64]*parentState{}
	}
	ps := s.parents[id]
	if ps == nil {
		ps = &parentState{}
		s.parents[id] = ps
		s.items++
	}
	return ps
}

// dropParent forgets the list items of parent's children: a parent that
// ended (an implicit task) or completed creates no more of them.
func (s *dependState) dropParent(parent uint64) {
	ps := s.parents[parent]
	if ps == nil {
		return
	}
	for _, st := range ps.addrs {
		s.items -= st.size()
		delete(s.addrs, addrKey{parent, st.address})
	}
	s.items--
	delete(s.parents, parent)
}

// DependEdges returns the dependences that the depend clauses of tasks,
// given in creation order, make under OpenMP's rules: tasks depend only on
// sibling tasks (of the same parent) created before them, per list item
// (address):
//
//   - in depends on the last writer group: the last out, inout, or the
//     last run of inoutset or of mutexinoutset tasks;
//   - out and inout depend on the last writer group and on every in since;
//   - inoutset and mutexinoutset behave like in among a run of their own
//     type (no edges inside the run: mutexinoutset tasks exclude each
//     other but are not ordered) and like out against the others: a run
//     depends on what came before it, an in or an out after it on all its
//     members.
//   - omp_all_memory (OpenMP 5.2, an out_all_memory or inout_all_memory
//     item) is an out on every list item: it depends on the last writer
//     group and the in tasks since of every address of its siblings so far,
//     and becomes the writer of every address, those named later included.
//
// Of the spec's dependences this leaves out only those implied through the
// last writer group (which depends on everything before it): a chain of
// inout tasks gives one edge per link. Source and sink (doacross) items and
// unknown types give none. The edges come in creation order of their sink,
// each once, with FromDepend and the address that first gave it. A Graph
// applies the same rules to the depend rows as they come: in creation
// order for the children of a task that stays on one thread (an implicit
// task, a tied task); an untied task that moves to another thread may
// have its children's rows read out of order (its threads' chunks come in
// the order they were written), and their dependences computed in that
// order.
func DependEdges(tasks []TaskDeps) []Edge {
	g := &Graph{}
	var out []Edge
	for _, td := range tasks {
		t := &Task{ID: td.ID, Parent: td.Parent}
		for _, d := range td.Deps {
			g.dependItem(t, d)
		}
		out = append(out, t.Preds...)
	}
	return out
}

// dependItem applies list item d of t's depend clause: t gets the
// dependences it makes (DependEdges).
func (g *Graph) dependItem(t *Task, d Dep) {
	s := &g.deps
	typ := d.Type
	switch typ {
	case DepIn, DepOut, DepInOut, DepInOutSet, DepMutexInOutSet:
	case DepOutAllMemory, DepInOutAllMemory:
		ps := s.parent(t.Parent)
		if len(ps.addrs) == 0 && ps.allMem != 0 {
			g.pred(t, ps.allMem, FromDepend, d.Address)
		}
		for _, st := range ps.addrs {
			g.dependOn(t, st.writers, d.Address)
			g.dependOn(t, st.readers, d.Address)
			s.items -= st.size()
			*st = addrState{address: st.address, writers: []uint64{t.ID}, wtype: DepOut}
			s.items += st.size()
		}
		ps.allMem = t.ID
		g.boundDepends()
		return
	default:
		return
	}
	k := addrKey{t.Parent, d.Address}
	st := s.addrs[k]
	if st == nil {
		ps := s.parent(t.Parent)
		st = &addrState{address: d.Address}
		if ps.allMem != 0 {
			st.writers, st.wtype = []uint64{ps.allMem}, DepOut
		}
		s.addrs[k] = st
		ps.addrs = append(ps.addrs, st)
	} else {
		s.items -= st.size()
	}
	if typ == DepInOut {
		typ = DepOut
	}
	switch typ {
	case DepIn:
		g.dependOn(t, st.writers, d.Address)
		if n := len(st.readers); n == 0 || st.readers[n-1] != t.ID {
			st.readers = append(st.readers, t.ID)
		}
	case DepOut:
		g.dependOn(t, st.writers, d.Address)
		g.dependOn(t, st.readers, d.Address)
		*st = addrState{address: st.address, writers: []uint64{t.ID}, wtype: typ}
	default: // a set type
		if st.wtype == typ && len(st.readers) == 0 {
			g.dependOn(t, st.setPreds, d.Address)
			if st.writers[len(st.writers)-1] != t.ID {
				st.writers = append(st.writers, t.ID)
			}
			break
		}
		preds := append(slices.Clip(st.writers), st.readers...)
		g.dependOn(t, preds, d.Address)
		*st = addrState{address: st.address, writers: []uint64{t.ID}, wtype: typ, setPreds: preds}
	}
	s.items += st.size()
	g.boundDepends()
}

// dependOn records that t depends on each of srcs through list item addr.
func (g *Graph) dependOn(t *Task, srcs []uint64, addr uint64) {
	for _, src := range srcs {
		g.pred(t, src, FromDepend, addr)
	}
}

// boundDepends clears the depend state past MaxDependItems.
func (g *Graph) boundDepends() {
	if g.deps.items > MaxDependItems {
		g.deps = dependState{}
		g.Stats.DependResets++
	}
}

// Task is what the rows of a trace say about one explicit task.
type Task struct {
	ID, Parent uint64
	// Created is its creation time (monotonic ns), or for a task whose
	// create the trace lacks, the time of the first row naming it.
	Created int64
	Launch  uint64
	Kernel  uint64 // the launch's kernel where the Pairer could tell, else 0
	Exec    int64  // summed length of its ended execution segments
	// Preds are its dependences (Sink is ID): from its depend clause and
	// the pairs the runtime reported, each once with its sources. Once the
	// task is retired they are in the order their sources were.
	Preds []Edge
	// Path is the length of the longest path of dependences ending with
	// it, each task on it weighing its Exec (its own included); set when
	// it is retired.
	Path      int64
	Segments  int32 // execution segments, ended or not
	Completed bool  // a segment completed it
	HasCreate bool  // the trace has its omp_task_create

	// Fields by size: a Graph holds up to MaxLiveTasks of them.
	retired bool
	predAt  map[uint64]int // Preds' index by source, once it has many
}

// GraphStats counts what a Graph's bounds cost.
type GraphStats struct {
	Forced       int64 // tasks retired before they completed, or before the tasks they depend on (MaxLiveTasks)
	Late         int64 // rows naming a task already retired, left out of the task figures
	EdgesDropped int64 // dependences past MaxLiveEdges
	PathsCut     int64 // dependences on a task whose path was forgotten (MaxRetiredPaths)
	DependResets int64 // times the depend state was cleared (MaxDependItems)
}

// Add adds o's counts to s.
func (s *GraphStats) Add(o GraphStats) {
	s.Forced += o.Forced
	s.Late += o.Late
	s.EdgesDropped += o.EdgesDropped
	s.PathsCut += o.PathsCut
	s.DependResets += o.DependResets
}

// Problem says in one sentence what the bounds cost, "" when nothing.
func (s GraphStats) Problem() string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf(what, n))
		}
	}
	add(s.Forced, "%d tasks were set aside before they or the tasks they depend on completed, past the "+fmt.Sprint(MaxLiveTasks)+" followed at once")
	add(s.Late, "%d task rows came after their task was set aside (their times still count)")
	add(s.EdgesDropped, "%d dependences were dropped, past the "+fmt.Sprint(MaxLiveEdges)+" held at once")
	add(s.PathsCut, "%d dependences named a task whose path was forgotten")
	add(s.DependResets, "the depend clauses' state was cleared %d times, past "+fmt.Sprint(MaxDependItems)+" list items")
	if len(parts) == 0 {
		return ""
	}
	return "the task graph passed its memory bounds: " + strings.Join(parts, "; ") +
		"; critical paths may be short and dependences missing"
}

// Graph follows one trace's explicit tasks through its rows. It holds a
// task from its first row until the task completed and the tasks it
// depends on were retired, then retires it: works out its path, hands it
// to Retire and forgets it but for its path. Flush retires the rest.
// Tasks retire in creation order (by creation time, tasks whose create the
// trace lacks by the time of the first row naming them, ties in the order
// the rows came), except that a task held up by one not completed waits
// for it. A trace whose tasks fit the bounds gets exact figures.
type Graph struct {
	// Retire, when set, is called with each task as it is retired; the
	// Graph forgets the task then.
	Retire func(*Task)
	// Late, when set, is called with each execution segment of a task
	// retired already (one set aside past MaxLiveTasks): its launch, the
	// segment's length (0 when it never ended) and whether it completed
	// the task, so that task times and completions stay exact.
	Late  func(launch uint64, exec int64, completed bool)
	Stats GraphStats

	live     map[uint64]*Task
	queue    []*Task          // the live tasks in the order they were first seen, and some retired
	edges    int              // in live tasks' Preds
	retired  map[uint64]int32 // task -> its slot in ring
	ring     []retiredTask    // in retirement order, then a ring of MaxRetiredPaths
	ringAt   int
	deps     dependState
	n        int // tasks seen
	order    int64
	sweepAt  int
	sweeping bool
	scratch  []sweepItem
}

type retiredTask struct {
	id, launch uint64
	path       int64
	order      int64
	completed  bool
}

// retiredTask returns what the graph remembers of retired task id.
func (g *Graph) retiredTask(id uint64) (retiredTask, bool) {
	i, ok := g.retired[id]
	if !ok {
		return retiredTask{}, false
	}
	return g.ring[i], true
}

// NewGraph returns an empty Graph.
func NewGraph() *Graph {
	g := &Graph{}
	g.init()
	return g
}

// init makes g's maps; a zero Graph gets them at its first row, its
// callbacks kept.
func (g *Graph) init() {
	g.live, g.retired, g.sweepAt = map[uint64]*Task{}, map[uint64]int32{}, sweepMin
}

// task returns the task followed with id, a new one when id was never
// seen, nil when it was retired.
func (g *Graph) task(id uint64, t int64) *Task {
	if tk := g.live[id]; tk != nil {
		return tk
	}
	if _, ok := g.retired[id]; ok {
		g.Stats.Late++
		return nil
	}
	tk := &Task{ID: id, Created: t}
	g.n++
	g.live[id] = tk
	g.queue = append(g.queue, tk)
	return tk
}

// lateSegment hands Late a segment of task rt, retired already.
func (g *Graph) lateSegment(rt *retiredTask, r *Row) {
	g.Stats.Late++
	completed := r.OMP.Completed && !rt.completed
	rt.completed = rt.completed || r.OMP.Completed
	if g.Late != nil {
		var exec int64
		if r.Dur != Unpaired {
			exec = r.Dur
		}
		g.Late(rt.launch, exec, completed)
	}
}

// pred records that t depends on src.
func (g *Graph) pred(t *Task, src uint64, from Source, addr uint64) {
	if src == t.ID {
		return
	}
	i, ok := -1, false
	if t.predAt != nil {
		i, ok = t.predAt[src]
	} else {
		for j := range t.Preds {
			if t.Preds[j].Src == src {
				i, ok = j, true
				break
			}
		}
	}
	if ok {
		e := &t.Preds[i]
		e.Source |= from
		if e.Address == 0 {
			e.Address = addr
		}
		return
	}
	if g.edges >= MaxLiveEdges {
		g.Stats.EdgesDropped++
		return
	}
	g.edges++
	t.Preds = append(t.Preds, Edge{Src: src, Sink: t.ID, Source: from, Address: addr})
	if t.predAt == nil && len(t.Preds) > 16 {
		t.predAt = make(map[uint64]int, 2*len(t.Preds))
		for j, e := range t.Preds {
			t.predAt[e.Src] = j
		}
	} else if t.predAt != nil {
		t.predAt[src] = len(t.Preds) - 1
	}
}

// Add takes a row: task creates, segments, depend items and reported
// dependences make the graph; an implicit task's end ends the depend
// state of its children.
func (g *Graph) Add(r *Row) {
	o := r.OMP
	if o == nil {
		return
	}
	if g.live == nil {
		g.init()
	}
	switch r.Kind {
	case trace.OmpTaskCreate:
		t := g.task(o.Task, r.Start)
		if t == nil {
			return
		}
		t.Parent, t.Created, t.Launch, t.HasCreate = o.Parent, r.Start, o.Launch, true
		if r.Kernel != 0 {
			t.Kernel = r.Kernel
		}
	case trace.OmpTaskSchedule:
		if i, ok := g.retired[o.Task]; ok {
			g.lateSegment(&g.ring[i], r)
			return
		}
		t := g.task(o.Task, r.Start)
		t.Segments++
		if r.Dur != Unpaired {
			t.Exec += r.Dur
		}
		t.Completed = t.Completed || o.Completed
		if !t.HasCreate {
			t.Parent, t.Launch = o.Parent, o.Launch
		}
	case trace.OmpTaskDepend:
		if t := g.task(o.Task, r.Start); t != nil {
			g.dependItem(t, Dep{o.Address, o.Type})
		}
	case trace.OmpTaskDependence:
		if _, ok := g.retired[o.SrcTask]; !ok { // a source retired is one that completed
			g.task(o.SrcTask, r.Start)
		}
		if t := g.task(o.Task, r.Start); t != nil {
			g.pred(t, o.SrcTask, FromRuntime, 0)
		}
	case trace.OmpImplicitTaskBegin:
		if r.Dur != Unpaired {
			g.deps.dropParent(o.Task)
		}
		return
	default:
		return
	}
	if len(g.live) >= g.sweepAt {
		g.sweep(false)
	}
}

// Empty reports whether the graph has seen no task.
func (g *Graph) Empty() bool { return g.n == 0 }

// Task returns the task followed with id, nil when there is none (never
// seen, or retired).
func (g *Graph) Task(id uint64) *Task { return g.live[id] }

// Completed reports whether task id completed, as far as the graph knows
// (it forgets the tasks retired longest ago, MaxRetiredPaths).
func (g *Graph) Completed(id uint64) bool {
	if t := g.live[id]; t != nil {
		return t.Completed
	}
	r, _ := g.retiredTask(id)
	return r.completed
}

// Sweep retires the tasks that completed and whose sources were retired.
// Add does so as the graph grows; a reader that holds something per
// task's launch calls it to bound how long tasks wait to be retired.
func (g *Graph) Sweep() {
	if len(g.live) > 0 && !g.sweeping { // not from Retire
		g.sweep(false)
	}
}

// Flush retires every task still followed.
func (g *Graph) Flush() {
	if len(g.live) > 0 {
		g.sweep(true)
	}
}

// sweep retires, in creation order, the tasks that completed and whose
// sources were retired, every task with all, and the oldest down to half
// of MaxLiveTasks past it.
func (g *Graph) sweep(all bool) {
	g.sweeping = true
	defer func() { g.sweeping = false }()
	live := g.queue[:0]
	for _, t := range g.queue {
		if !t.retired {
			live = append(live, t)
		}
	}
	clear(g.queue[len(live):])
	g.queue = live
	// By value, nearly in order already (the queue is in first-row order,
	// the ties' order): the sort compares without reaching into each
	// task, in about linear time.
	ts := g.scratch[:0]
	for i, t := range live {
		ts = append(ts, sweepItem{t.Created, int32(i)})
	}
	slices.SortFunc(ts, func(a, b sweepItem) int {
		if c := cmp.Compare(a.time, b.time); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	for _, it := range ts {
		if t := live[it.at]; all || t.Completed && g.sourcesRetired(t) {
			g.retire(t)
		}
	}
	if len(g.live) > MaxLiveTasks {
		for _, it := range ts {
			if len(g.live) <= MaxLiveTasks/2 {
				break
			}
			if t := live[it.at]; !t.retired {
				g.Stats.Forced++
				g.retire(t)
			}
		}
	}
	g.scratch = ts[:0]
	if all {
		clear(g.queue)
		g.queue = g.queue[:0]
	}
	g.sweepAt = min(max(sweepMin, 2*len(g.live)), MaxLiveTasks+1)
}

type sweepItem struct {
	time int64
	at   int32 // in the queue
}

func (g *Graph) sourcesRetired(t *Task) bool {
	for _, e := range t.Preds {
		if g.live[e.Src] != nil {
			return false
		}
	}
	return true
}

// retire works out t's path, hands it to Retire and forgets it.
func (g *Graph) retire(t *Task) {
	const after, before = int64(1) << 62, -1 // the order of a source followed, forgotten
	srcOrder := func(src uint64) int64 {
		if r, ok := g.retiredTask(src); ok {
			return r.order
		}
		if g.live[src] != nil {
			return after
		}
		return before
	}
	slices.SortStableFunc(t.Preds, func(a, b Edge) int { return cmp.Compare(srcOrder(a.Src), srcOrder(b.Src)) })
	var best int64
	for _, e := range t.Preds {
		// A source still followed was created after t or did not complete:
		// no OpenMP dependence, and left out so the graph stays acyclic.
		if r, ok := g.retiredTask(e.Src); ok {
			best = max(best, r.path)
		} else if g.live[e.Src] == nil {
			g.Stats.PathsCut++
		}
	}
	t.Path = best + t.Exec
	g.order++
	g.remember(retiredTask{t.ID, t.Launch, t.Path, g.order, t.Completed})
	delete(g.live, t.ID)
	t.retired = true
	g.edges -= len(t.Preds)
	if t.Completed {
		g.deps.dropParent(t.ID)
	}
	if g.Retire != nil {
		g.Retire(t)
	}
}

// remember keeps a retired task's path, forgetting the oldest past
// MaxRetiredPaths.
func (g *Graph) remember(r retiredTask) {
	i := len(g.ring)
	if i < MaxRetiredPaths {
		g.ring = append(g.ring, r)
	} else {
		i = g.ringAt
		delete(g.retired, g.ring[i].id)
		g.ring[i] = r
		g.ringAt = (i + 1) % MaxRetiredPaths
	}
	g.retired[r.id] = int32(i)
}
