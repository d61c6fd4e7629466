package analysis

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// A task program longer than a sweep, read in one pass: tasks created
// with random clauses on a few variables, each completing a while after
// its creation (after the tasks it depends on), the runtime reporting the
// dependences on tasks not yet completed. The Graph, retiring tasks as it
// goes, gives every task the dependences and the path that the whole
// graph gives: DependEdges over all the clauses, the pairs, and the
// longest path over all of it in creation order.
func TestGraphStreamsLikeWhole(t *testing.T) {
	const n, lag = 4 * sweepMin, sweepMin + 1000 // sweeps find some tasks pending and some to retire
	rng := rand.New(rand.NewPCG(1, 2))
	types := []uint64{in, in, out, inout, mutex, set}
	all := make([]TaskDeps, n)
	exec := make([]int64, n)
	for i := range all {
		all[i] = TaskDeps{ID: uint64(1000 + i), Parent: 9}
		for range 1 + rng.IntN(3) {
			all[i].Deps = append(all[i].Deps, Dep{Address: uint64(0xa + rng.IntN(6)), Type: types[rng.IntN(len(types))]})
		}
		exec[i] = int64(1 + rng.IntN(100))
	}
	// The whole graph.
	whole := map[[2]uint64]Source{}
	preds := map[uint64][]uint64{}
	for _, e := range DependEdges(all) {
		whole[[2]uint64{e.Src, e.Sink}] = FromDepend
		preds[e.Sink] = append(preds[e.Sink], e.Src)
	}
	reported := func(src, sink uint64) bool { return sink-src < lag && (src+sink)%3 == 0 } // not yet completed, and some only
	for k := range whole {
		if reported(k[0], k[1]) {
			whole[k] |= FromRuntime
		}
	}
	path := map[uint64]int64{}
	for i, td := range all {
		var best int64
		for _, p := range preds[td.ID] {
			best = max(best, path[p])
		}
		path[td.ID] = best + exec[i]
	}

	gr := graphRows{NewGraph()}
	maxLive := 0
	ts := retired(gr.g, func() {
		for i := range n + lag {
			if i < n {
				td := all[i]
				gr.create(td.ID, int64(10*i))
				for _, d := range td.Deps {
					gr.dep(td.ID, d.Address, d.Type)
				}
				for _, p := range preds[td.ID] {
					if reported(p, td.ID) {
						gr.pair(p, td.ID)
					}
				}
			}
			if j := i - lag; j >= 0 {
				gr.run(all[j].ID, int64(10*i), exec[j])
			}
			maxLive = max(maxLive, len(gr.g.live))
		}
		if gr.g.order == 0 {
			t.Error("no task retired before the end")
		}
	})
	if len(ts) != n {
		t.Fatalf("%d tasks retired, want %d", len(ts), n)
	}
	if maxLive > 2*(lag+1) {
		t.Errorf("followed up to %d tasks at once, want at most %d: completed tasks are retired as the rows come", maxLive, 2*(lag+1))
	}
	got := 0
	for _, tk := range ts {
		if tk.Path != path[tk.ID] {
			t.Errorf("task %d: path %d, want %d", tk.ID, tk.Path, path[tk.ID])
		}
		if !slices.IsSortedFunc(tk.Preds, func(a, b Edge) int { return cmp.Compare(a.Src, b.Src) }) {
			t.Errorf("task %d: dependences %v not in their sources' creation order", tk.ID, tk.Preds)
		}
		for _, e := range tk.Preds {
			if s, ok := whole[[2]uint64{e.Src, e.Sink}]; !ok || s != e.Source || e.Address == 0 {
				t.Errorf("edge %+v: the whole graph has it %v with source %v", e, ok, s)
			}
			got++
		}
	}
	if got != len(whole) {
		t.Errorf("%d edges, want %d", got, len(whole))
	}
	if gr.g.Stats != (GraphStats{}) {
		t.Errorf("stats %+v, want none", gr.g.Stats)
	}
}

// Tasks created by the hundred thousand and never completed: the Graph
// follows at most MaxLiveTasks, retiring the oldest unfinished; the rows
// that come for them later are counted, not taken as new tasks.
func TestGraphUnfinishedBound(t *testing.T) {
	const n = MaxLiveTasks + MaxLiveTasks/2
	gr := graphRows{NewGraph()}
	completed := 0
	var lateExec, lateCompleted int64
	gr.g.Late = func(launch uint64, exec int64, completed bool) {
		lateExec += exec
		if completed {
			lateCompleted++
		}
	}
	ts := retired(gr.g, func() {
		for i := range n {
			gr.create(uint64(i+1), int64(i))
			if len(gr.g.live) > MaxLiveTasks {
				t.Fatalf("after %d creates: %d tasks followed", i+1, len(gr.g.live))
			}
		}
		if gr.g.Stats.Forced == 0 || gr.g.Stats.Forced+int64(len(gr.g.live)) != n {
			t.Fatalf("%d forced, %d followed; want %d in all", gr.g.Stats.Forced, len(gr.g.live), n)
		}
		for i := range n {
			gr.run(uint64(i+1), int64(n+i), 1)
		}
	})
	for _, tk := range ts {
		if tk.Completed {
			completed++
		}
	}
	st := gr.g.Stats
	if len(ts) != n || st.Late != st.Forced || int64(completed) != n-st.Forced {
		t.Errorf("%d retired, %d completed, stats %+v: want %d retired, late = forced, the others completed", len(ts), completed, st, n)
	}
	if p := st.Problem(); p == "" {
		t.Error("no problem reported")
	}
	var exec int64
	for _, tk := range ts {
		exec += tk.Exec
	}
	if lateCompleted != st.Forced || exec+lateExec != n {
		t.Errorf("late segments: %d completing, exec %d + %d; want %d completing, %d in all", lateCompleted, exec, lateExec, st.Forced, n)
	}
}

// A parent that never ends, whose children write a new variable each: the
// depend state is cleared once past MaxDependItems, so a dependence on a
// variable written before is missing and one after is found.
func TestGraphDependBound(t *testing.T) {
	const n = MaxDependItems/2 + 10 // each variable holds its state and its writer
	gr := graphRows{NewGraph()}
	ts := retired(gr.g, func() {
		for i := range n {
			gr.create(uint64(i+1), int64(i))
			gr.dep(uint64(i+1), uint64(0x1000+i), out)
			if gr.g.deps.items > MaxDependItems {
				t.Fatalf("after %d tasks: %d depend items", i+1, gr.g.deps.items)
			}
		}
		gr.create(n+1, n)
		gr.dep(n+1, 0x1000, in)
		gr.dep(n+1, 0x1000+n-1, in)
	})
	if gr.g.Stats.DependResets != 1 {
		t.Errorf("%d resets, want 1", gr.g.Stats.DependResets)
	}
	last := ts[len(ts)-1]
	if last.ID != n+1 || len(last.Preds) != 1 || last.Preds[0].Src != n {
		t.Errorf("last task %d: dependences %+v, want one, on task %d", last.ID, last.Preds, n)
	}
}

// A chain longer than the paths remembered: each link needs only the one
// before, so the path stays exact; a dependence on the first task, at the
// end, finds its path forgotten and counts it.
func TestGraphRetiredBound(t *testing.T) {
	const n = MaxRetiredPaths + 1000
	gr := graphRows{NewGraph()}
	var last *Task
	gr.g.Retire = func(tk *Task) {
		if tk.ID == n && tk.Path != 3*n {
			t.Errorf("chain's end: path %d, want %d", tk.Path, 3*n)
		}
		last = tk
	}
	for i := range n {
		id := uint64(i + 1)
		gr.create(id, int64(2*i))
		if i > 0 {
			gr.pair(id-1, id)
		}
		gr.run(id, int64(2*i+1), 3)
	}
	gr.create(n+1, 2*n)
	gr.pair(1, n+1)
	gr.run(n+1, 2*n+1, 5)
	gr.g.Flush()
	if len(gr.g.retired) > MaxRetiredPaths {
		t.Errorf("%d paths remembered", len(gr.g.retired))
	}
	if last.ID != n+1 || last.Path != 5 || gr.g.Stats.PathsCut != 1 {
		t.Errorf("last task %d path %d, %d paths cut: want task %d, path 5, 1 cut", last.ID, last.Path, gr.g.Stats.PathsCut, n+1)
	}
	if st := gr.g.Stats; st.Forced != 0 || st.Late != 0 || st.DependResets != 0 || st.EdgesDropped != 0 {
		t.Errorf("stats %+v, want only the path cut", st)
	}
}

// FuzzGraph feeds a Graph rows made from the fuzz input (creates, depend
// items, reported pairs and segments of a few tasks, in any order, at any
// times) and checks what it retires: each task once, with the rows it
// came with (its segments' time), its dependences each once and none on
// itself, and a path of at least its own time, made of the paths of the
// sources retired before it; and that every segment's time is in a task
// retired or handed to Late.
func FuzzGraph(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 1, 3, 1, 2, 3, 4, 1, 2, 7, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		gr := graphRows{NewGraph()}
		paths := map[uint64]int64{}
		exec := map[uint64]int64{}
		var all, late int64
		gr.g.Late = func(_ uint64, x int64, _ bool) { late += x }
		gr.g.Retire = func(tk *Task) {
			if _, ok := paths[tk.ID]; ok {
				t.Fatalf("task %d retired twice", tk.ID)
			}
			var best int64
			seen := map[uint64]bool{}
			for _, e := range tk.Preds {
				if e.Sink != tk.ID || e.Src == tk.ID || seen[e.Src] || e.Source == 0 {
					t.Fatalf("task %d: edge %+v", tk.ID, e)
				}
				seen[e.Src] = true
				if p, ok := paths[e.Src]; ok {
					best = max(best, p)
				}
			}
			if tk.Exec != exec[tk.ID] || tk.Path != best+tk.Exec {
				t.Fatalf("task %d: exec %d path %d, want exec %d path %d", tk.ID, tk.Exec, tk.Path, exec[tk.ID], best+tk.Exec)
			}
			paths[tk.ID] = tk.Path
		}
		for i := 0; i+2 < len(data); i += 3 {
			id, x, at := uint64(data[i+1]%16)+1, uint64(data[i+2]), int64(i)
			if data[i]%2 == 0 {
				at = -at // rows out of time order
			}
			switch data[i] % 5 {
			case 0:
				gr.create(id, at)
			case 1:
				gr.dep(id, 0xa+x%4, []uint64{in, out, inout, mutex, set, DepOutAllMemory, DepSource, 99}[x/4%8])
			case 2:
				gr.pair(x%16+1, id)
			case 3, 4:
				if _, ok := paths[id]; !ok {
					exec[id] += int64(x)
				}
				all += int64(x)
				gr.row(Row{Kind: trace.OmpTaskSchedule, Start: at, Dur: int64(x)}, OMP{ID: id, Task: id, Parent: 9, Completed: data[i]%5 == 4})
			}
		}
		gr.g.Flush()
		if len(gr.g.live) != 0 || gr.g.edges != 0 {
			t.Fatalf("after Flush: %d tasks, %d edges followed", len(gr.g.live), gr.g.edges)
		}
		var retiredExec int64
		for _, x := range exec {
			retiredExec += x
		}
		if retiredExec+late != all {
			t.Fatalf("segments' time %d: %d in tasks retired, %d late", all, retiredExec, late)
		}
	})
}
