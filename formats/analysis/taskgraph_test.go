package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// Tasks are numbered 1.. in creation order; variables are addresses
// 0xa, 0xb, ...; parent 100 unless a case says otherwise.
const (
	in    = DepIn
	out   = DepOut
	inout = DepInOut
	mutex = DepMutexInOutSet
	set   = DepInOutSet
)

func task(id uint64, deps ...uint64) TaskDeps {
	t := TaskDeps{ID: id, Parent: 100}
	for i := 0; i < len(deps); i += 2 {
		t.Deps = append(t.Deps, Dep{Type: deps[i], Address: deps[i+1]})
	}
	return t
}

func edgeList(es []Edge) string {
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%d-%d", e.Src, e.Sink))
	}
	return strings.Join(s, " ")
}

func TestDependEdges(t *testing.T) {
	const a, b, c, d = 0xa, 0xb, 0xc, 0xd
	for _, tc := range []struct {
		name  string
		tasks []TaskDeps
		want  string
	}{
		{"diamond", []TaskDeps{task(1, out, a), task(2, in, a, out, b), task(3, in, a, out, c), task(4, in, b, in, c, out, d)},
			"1-2 1-3 2-4 3-4"},
		{"diamond as LLVM reports it (out as inout)", []TaskDeps{task(1, inout, a), task(2, in, a, inout, b), task(3, in, a, inout, c),
			task(4, in, b, in, c, inout, d)}, "1-2 1-3 2-4 3-4"},
		{"chain of 5 inout", []TaskDeps{task(1, inout, a), task(2, inout, a), task(3, inout, a), task(4, inout, a), task(5, inout, a)},
			"1-2 2-3 3-4 4-5"},
		{"readers between writers", []TaskDeps{task(1, out, a), task(2, in, a), task(3, in, a), task(4, out, a), task(5, in, a)},
			"1-2 1-3 1-4 2-4 3-4 4-5"},
		{"first reader has nothing to wait for", []TaskDeps{task(1, in, a), task(2, in, a), task(3, out, a)}, "1-3 2-3"},
		{"distinct variables are independent", []TaskDeps{task(1, out, a), task(2, out, b), task(3, in, a), task(4, in, b)}, "1-3 2-4"},
		{"inoutset run: no edges inside, all members before the next in",
			[]TaskDeps{task(1, out, a), task(2, set, a), task(3, set, a), task(4, set, a), task(5, in, a)},
			"1-2 1-3 1-4 2-5 3-5 4-5"},
		{"inoutset run after readers depends on them", []TaskDeps{task(1, out, a), task(2, in, a), task(3, set, a), task(4, set, a), task(5, out, a)},
			"1-2 1-3 2-3 1-4 2-4 3-5 4-5"},
		{"a reader splits an inoutset run", []TaskDeps{task(1, set, a), task(2, in, a), task(3, set, a)}, "1-2 1-3 2-3"},
		{"mutexinoutset runs like inoutset", []TaskDeps{task(1, mutex, a), task(2, mutex, a), task(3, in, a), task(4, mutex, a)},
			"1-3 2-3 1-4 2-4 3-4"},
		{"mutexinoutset and inoutset are different runs", []TaskDeps{task(1, mutex, a), task(2, set, a), task(3, mutex, a)}, "1-2 2-3"},
		{"only siblings depend on each other", []TaskDeps{task(1, out, a), {ID: 2, Parent: 7, Deps: []Dep{{a, in}}}, task(3, in, a)}, "1-3"},
		{"an edge given by two variables comes once, with the first",
			[]TaskDeps{task(1, out, a, out, b), task(2, in, a, in, b)}, "1-2"},
		{"no self edge from two items of one task", []TaskDeps{task(1, in, a, out, a), task(2, in, a)}, "1-2"},
		{"omp_all_memory: after every address, before every later one",
			[]TaskDeps{task(1, out, a), task(2, in, b), task(3, DepOutAllMemory, ^uint64(0)), task(4, in, a), task(5, out, c)},
			"1-3 2-3 3-4 3-5"},
		{"omp_all_memory with nothing else", []TaskDeps{task(1, DepInOutAllMemory, ^uint64(0)),
			task(2, DepInOutAllMemory, ^uint64(0)), task(3, in, a)}, "1-2 2-3"},
		{"doacross and unknown types give none", []TaskDeps{task(1, DepSource, a), task(2, DepSink, a), task(3, 99, a)}, ""},
		{"no tasks", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DependEdges(tc.tasks)
			if s := edgeList(got); s != tc.want {
				t.Errorf("edges %q, want %q", s, tc.want)
			}
			for _, e := range got {
				if e.Source != FromDepend || e.Address == 0 {
					t.Errorf("edge %+v: want source depend and an address", e)
				}
			}
		})
	}
}

func TestEdgeAddress(t *testing.T) {
	es := DependEdges([]TaskDeps{task(1, out, 0xa, out, 0xb), task(2, in, 0xb, in, 0xa)})
	if len(es) != 1 || es[0].Address != 0xb {
		t.Errorf("got %+v, want one edge 1-2 at 0xb (the first item of the sink that gives it)", es)
	}
}

func TestSourceString(t *testing.T) {
	for s, want := range map[Source]string{FromDepend: "depend", FromRuntime: "runtime", FromDepend | FromRuntime: "both", 0: ""} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", s, got, want)
		}
	}
}

// retired feeds g rows through add, then flushes it: the tasks in the
// order they retired.
func retired(g *Graph, add func()) []*Task {
	var ts []*Task
	g.Retire = func(t *Task) { ts = append(ts, t) }
	add()
	g.Flush()
	return ts
}

func allPreds(ts []*Task) []Edge {
	var es []Edge
	for _, t := range ts {
		es = append(es, t.Preds...)
	}
	return es
}

type graphRows struct{ g *Graph }

func (gr graphRows) row(k Row, o OMP) { k.OMP = &o; gr.g.Add(&k) }

func (gr graphRows) create(id uint64, at int64) {
	gr.row(Row{Kind: trace.OmpTaskCreate, Start: at}, OMP{ID: id, Task: id, Parent: 9})
}

func (gr graphRows) dep(id, addr, typ uint64) {
	gr.row(Row{Kind: trace.OmpTaskDepend}, OMP{ID: id, Task: id, Address: addr, Type: typ})
}

func (gr graphRows) pair(src, sink uint64) {
	gr.row(Row{Kind: trace.OmpTaskDependence, Start: 5}, OMP{ID: sink, Task: sink, SrcTask: src})
}

func (gr graphRows) run(id uint64, at, dur int64) {
	gr.row(Row{Kind: trace.OmpTaskSchedule, Start: at, Dur: dur}, OMP{ID: id, Task: id, Parent: 9, Completed: true})
}

func TestLongestPaths(t *testing.T) {
	gr := graphRows{NewGraph()}
	exec := map[uint64]int64{1: 10, 2: 15, 3: 20, 4: 30, 5: 5}
	ts := retired(gr.g, func() {
		for id := uint64(1); id <= 5; id++ {
			gr.create(id, int64(id))
		}
		for _, e := range [][2]uint64{{1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}, {5, 1}} { // 5-1 backwards: left out
			gr.pair(e[0], e[1])
		}
		for id := uint64(1); id <= 5; id++ {
			gr.run(id, 10*int64(id), exec[id])
		}
	})
	want := map[uint64]int64{1: 10, 2: 25, 3: 30, 4: 60, 5: 65}
	if len(ts) != 5 {
		t.Fatalf("%d tasks retired, want 5", len(ts))
	}
	for i, tk := range ts {
		if tk.ID != uint64(i+1) || tk.Path != want[tk.ID] {
			t.Errorf("retired #%d: task %d path %d, want task %d path %d", i, tk.ID, tk.Path, i+1, want[uint64(i+1)])
		}
	}
	if gr.g.Stats != (GraphStats{}) {
		t.Errorf("stats %+v, want none", gr.g.Stats)
	}
}

// The union of reconstructed and reported edges, by creation order.
func TestGraphEdges(t *testing.T) {
	gr := graphRows{NewGraph()}
	ts := retired(gr.g, func() {
		// Created in the order 30, 10, 20 (ids do not give the order).
		gr.create(30, 1)
		gr.dep(30, 0xa, out)
		gr.create(10, 2)
		gr.dep(10, 0xa, in)
		gr.pair(30, 10)
		gr.create(20, 3)
		gr.dep(20, 0xa, out)
		gr.pair(30, 20) // implied through 10 by the clauses: the runtime reports it
		gr.pair(40, 20) // a task the trace has no create of
	})
	var got []string
	for _, e := range allPreds(ts) {
		got = append(got, fmt.Sprintf("%d-%d %s %#x", e.Src, e.Sink, e.Source, e.Address))
	}
	want := []string{"30-10 both 0xa", "30-20 both 0xa", "10-20 depend 0xa", "40-20 runtime 0x0"}
	if !slices.Equal(got, want) {
		t.Errorf("edges\n%q\nwant\n%q", got, want)
	}
}
