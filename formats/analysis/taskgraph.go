package analysis

// The task graph: what a trace's OpenMP rows (OMP) say about explicit
// tasks: the dependence graph, from the depend clauses with OpenMP's
// semantics united with the pairs the OpenMP runtime reported, and its
// critical path. The Pairer builds it from the rows it sends out
// (Result.Tasks), once for every output: the dependences table, the
// Perfetto flows and the summary's critical path.

import (
	"cmp"
	"slices"

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

type addrKey struct{ parent, address uint64 }

// addrState is what the sibling tasks created so far say about one list
// item: the last writer group (one out or inout task, or a run of
// inoutset or mutexinoutset tasks, of kind wtype), what that run's members
// depend on, and the in tasks since the group.
type addrState struct {
	writers  []uint64
	wtype    uint64
	setPreds []uint64
	readers  []uint64
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
// each once, with FromDepend and the address that first gave it.
func DependEdges(tasks []TaskDeps) []Edge {
	state := map[addrKey]*addrState{}
	type parentState struct {
		addrs  []*addrState
		allMem uint64 // the last omp_all_memory task
	}
	parents := map[uint64]*parentState{}
	var out []Edge
	seen := map[[2]uint64]bool{}
	add := func(src, sink, addr uint64) {
		if src == sink || seen[[2]uint64{src, sink}] {
			return
		}
		seen[[2]uint64{src, sink}] = true
		out = append(out, Edge{Src: src, Sink: sink, Source: FromDepend, Address: addr})
	}
	for _, t := range tasks {
		for _, d := range t.Deps {
			typ := d.Type
			switch typ {
			case DepIn, DepOut, DepInOut, DepInOutSet, DepMutexInOutSet:
			case DepOutAllMemory, DepInOutAllMemory:
				ps := parents[t.Parent]
				if ps == nil {
					ps = &parentState{}
					parents[t.Parent] = ps
				}
				if len(ps.addrs) == 0 && ps.allMem != 0 {
					add(ps.allMem, t.ID, d.Address)
				}
				for _, st := range ps.addrs {
					for _, w := range st.writers {
						add(w, t.ID, d.Address)
					}
					for _, r := range st.readers {
						add(r, t.ID, d.Address)
					}
					*st = addrState{writers: []uint64{t.ID}, wtype: DepOut}
				}
				ps.allMem = t.ID
				continue
			default:
				continue
			}
			k := addrKey{t.Parent, d.Address}
			st := state[k]
			if st == nil {
				ps := parents[t.Parent]
				if ps == nil {
					ps = &parentState{}
					parents[t.Parent] = ps
				}
				st = &addrState{}
				if ps.allMem != 0 {
					st.writers, st.wtype = []uint64{ps.allMem}, DepOut
				}
				state[k] = st
				ps.addrs = append(ps.addrs, st)
			}
			if typ == DepInOut {
				typ = DepOut
			}
			switch typ {
			case DepIn:
				for _, w := range st.writers {
					add(w, t.ID, d.Address)
				}
				if n := len(st.readers); n == 0 || st.readers[n-1] != t.ID {
					st.readers = append(st.readers, t.ID)
				}
			case DepOut:
				for _, w := range st.writers {
					add(w, t.ID, d.Address)
				}
				for _, r := range st.readers {
					add(r, t.ID, d.Address)
				}
				*st = addrState{writers: []uint64{t.ID}, wtype: typ}
			default: // a set type
				if st.wtype == typ && len(st.readers) == 0 {
					for _, p := range st.setPreds {
						add(p, t.ID, d.Address)
					}
					if st.writers[len(st.writers)-1] != t.ID {
						st.writers = append(st.writers, t.ID)
					}
					continue
				}
				preds := append(slices.Clip(st.writers), st.readers...)
				for _, p := range preds {
					add(p, t.ID, d.Address)
				}
				*st = addrState{writers: []uint64{t.ID}, wtype: typ, setPreds: preds}
			}
		}
	}
	return out
}

// Task is what the rows of a trace say about one explicit task.
type Task struct {
	ID, Parent uint64
	Created    int64 // creation time (monotonic ns); 0 unknown
	Launch     uint64
	Kernel     uint64 // the launch's kernel where the Pairer could tell, else 0
	Exec       int64  // summed length of its ended execution segments
	Segments   int    // execution segments, ended or not
	Completed  bool   // a segment completed it
	HasCreate  bool   // the trace has its omp_task_create
	Deps       []Dep  // its depend clause, in order

	first int64 // time of the first row naming it
	seq   int   // order of the first row naming it
}

// Graph gathers one trace's tasks from its rows.
type Graph struct {
	tasks map[uint64]*Task
	pairs [][2]uint64 // reported dependences, in order
	n     int
}

// NewGraph returns an empty Graph.
func NewGraph() *Graph { return &Graph{tasks: map[uint64]*Task{}} }

func (g *Graph) task(id uint64, t int64) *Task {
	tk := g.tasks[id]
	if tk == nil {
		tk = &Task{ID: id, first: t, seq: g.n}
		g.n++
		g.tasks[id] = tk
	}
	return tk
}

// Add takes a row; it keeps what task creates, segments, depend items and
// reported dependences say, and reports whether r was one of them.
func (g *Graph) Add(r *Row) bool {
	o := r.OMP
	if o == nil {
		return false
	}
	switch r.Kind {
	case trace.OmpTaskCreate:
		t := g.task(o.Task, r.Start)
		t.Parent, t.Created, t.Launch, t.HasCreate = o.Parent, r.Start, o.Launch, true
		if r.Kernel != 0 {
			t.Kernel = r.Kernel
		}
	case trace.OmpTaskSchedule:
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
		t := g.task(o.Task, r.Start)
		t.Deps = append(t.Deps, Dep{o.Address, o.Type})
	case trace.OmpTaskDependence:
		g.task(o.SrcTask, r.Start)
		g.task(o.Task, r.Start)
		g.pairs = append(g.pairs, [2]uint64{o.SrcTask, o.Task})
	default:
		return false
	}
	return true
}

// Empty reports whether the graph has no task.
func (g *Graph) Empty() bool { return len(g.tasks) == 0 }

// Tasks returns the tasks in creation order: by creation time, tasks whose
// create the trace lacks by the time of the first row naming them, ties in
// the order the rows came.
func (g *Graph) Tasks() []*Task {
	ts := make([]*Task, 0, len(g.tasks))
	for _, t := range g.tasks {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *Task) int {
		if c := cmp.Compare(a.time(), b.time()); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return ts
}

func (t *Task) time() int64 {
	if t.HasCreate {
		return t.Created
	}
	return t.first
}

// Edges returns the dependence edges: those of the depend clauses
// (DependEdges, siblings in creation order) united with the pairs the
// runtime reported, each once with its sources, ordered by the creation
// of their sink, then of their source.
func (g *Graph) Edges() []Edge {
	ts := g.Tasks()
	order := make(map[uint64]int, len(ts))
	in := make([]TaskDeps, 0, len(ts))
	for i, t := range ts {
		order[t.ID] = i
		if len(t.Deps) > 0 {
			in = append(in, TaskDeps{t.ID, t.Parent, t.Deps})
		}
	}
	edges := DependEdges(in)
	at := make(map[[2]uint64]int, len(edges))
	for i, e := range edges {
		at[[2]uint64{e.Src, e.Sink}] = i
	}
	for _, p := range g.pairs {
		if p[0] == p[1] {
			continue
		}
		if i, ok := at[p]; ok {
			edges[i].Source |= FromRuntime
			continue
		}
		at[p] = len(edges)
		edges = append(edges, Edge{Src: p[0], Sink: p[1], Source: FromRuntime})
	}
	slices.SortStableFunc(edges, func(a, b Edge) int {
		if c := cmp.Compare(order[a.Sink], order[b.Sink]); c != 0 {
			return c
		}
		return cmp.Compare(order[a.Src], order[b.Src])
	})
	return edges
}

// LongestPaths returns, for each task, the length of the longest path of
// edges ending with it, each task on the path weighing its Exec (its own
// included). An edge whose source was not created before its sink (which
// no OpenMP dependence is) is left out, so the graph stays acyclic.
func (g *Graph) LongestPaths(edges []Edge) map[uint64]int64 {
	ts := g.Tasks()
	order := make(map[uint64]int, len(ts))
	for i, t := range ts {
		order[t.ID] = i
	}
	preds := map[uint64][]uint64{}
	for _, e := range edges {
		if order[e.Src] < order[e.Sink] {
			preds[e.Sink] = append(preds[e.Sink], e.Src)
		}
	}
	dist := make(map[uint64]int64, len(ts))
	for _, t := range ts {
		var best int64
		for _, p := range preds[t.ID] {
			best = max(best, dist[p])
		}
		dist[t.ID] = best + t.Exec
	}
	return dist
}

// Task returns the task with id, or nil.
func (g *Graph) Task(id uint64) *Task { return g.tasks[id] }
