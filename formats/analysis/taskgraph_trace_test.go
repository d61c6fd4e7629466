package analysis

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/trace"
)

type readBack struct {
	tasks     []*Task // in the order they retired
	byID      map[uint64]*Task
	regions   map[uint64]int // parallel region -> implicit tasks (rows, halves included)
	parallels int
	segments  map[uint64][]*Row
}

func read(t *testing.T, path string) *readBack {
	t.Helper()
	rb := &readBack{regions: map[uint64]int{}, segments: map[uint64][]*Row{}, byID: map[uint64]*Task{}}
	g := NewGraph()
	g.Retire = func(t *Task) { rb.tasks = append(rb.tasks, t); rb.byID[t.ID] = t }
	_, err := Read(path, 0, Options{}, func(p *Process, r *Row) error {
		g.Add(r)
		switch r.Kind {
		case trace.OmpParallelBegin:
			rb.parallels++
		case trace.OmpImplicitTaskBegin:
			rb.regions[r.OMP.Parallel]++
		case trace.OmpTaskSchedule:
			c := *r
			o := *r.OMP
			c.OMP = &o
			rb.segments[o.Task] = append(rb.segments[o.Task], &c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.Flush(); g.Empty() || g.Stats != (GraphStats{}) {
		t.Fatalf("%s: no task graph, or one past its bounds (%+v)", path, g.Stats)
	}
	return rb
}

func edgeStrings(es []Edge) []string {
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%d-%d %s %#x", e.Src, e.Sink, e.Source, e.Address))
	}
	return s
}

// A real trace: t1.c (formats/omp/testdata) run with LLVM's libomp under the runtime
// (openmp.scope = "all"): a parallel for, then a single that creates the
// diamond a -> b, c -> d with depend clauses.
func TestRealDiamond(t *testing.T) {
	rb := read(t, filepath.Join("..", "omp", "testdata", "t1.occatrace"))
	// Tasks in creation order are a, b, c, d.
	ts := rb.tasks
	if len(ts) != 4 {
		t.Fatalf("%d tasks, want 4", len(ts))
	}
	a, b, c, d := ts[0].ID, ts[1].ID, ts[2].ID, ts[3].ID
	var got [][2]uint64
	for _, e := range allPreds(ts) {
		got = append(got, [2]uint64{e.Src, e.Sink})
		if e.Source&FromDepend == 0 {
			t.Errorf("edge %+v not from the depend clauses", e)
		}
	}
	if want := [][2]uint64{{a, b}, {a, c}, {b, d}, {c, d}}; !slices.Equal(got, want) {
		t.Errorf("edges %v, want the diamond %v", got, want)
	}
	for _, tk := range ts {
		segs := rb.segments[tk.ID]
		if len(segs) != 1 || !segs[0].OMP.Completed || segs[0].Dur <= 0 || segs[0].OMP.Created != tk.Created {
			t.Errorf("task %d: segments %v, want one completed segment", tk.ID, segs)
		}
		if !tk.HasCreate || !tk.Completed || tk.Segments != 1 || tk.Parent != ts[0].Parent {
			t.Errorf("task %+v: want created, completed, one segment, a sibling of the others", tk)
		}
	}
	if rb.parallels != 2 || len(rb.regions) != 2 {
		t.Errorf("%d parallel rows, implicit tasks by region %v: want 2 regions", rb.parallels, rb.regions)
	}
	for par, n := range rb.regions {
		if n != 2 {
			t.Errorf("region %d: %d implicit tasks, want 2", par, n)
		}
	}
}

func TestSyntheticEdges(t *testing.T) {
	path := omptest.SmallFile(t)
	rb := read(t, path)
	got := edgeStrings(allPreds(rb.tasks))
	want := []string{"310-311 both 0xa0", "310-312 both 0xa0", "311-313 depend 0xb0", "312-313 both 0xc0", "313-314 runtime 0x0",
		"510-511 both 0xe0", "511-512 depend 0xe0"}
	if !slices.Equal(got, want) {
		t.Errorf("edges\n%q\nwant\n%q", got, want)
	}
	for id, w := range map[uint64]int64{310: 10e3, 311: 25e3, 312: 30e3, 313: 60e3, 314: 65e3, 510: 10e3, 511: 20e3, 512: 30e3, 520: 0} {
		if tk := rb.byID[id]; tk == nil || tk.Path != w {
			t.Errorf("longest path to %d: %+v, want %d", id, tk, w)
		}
	}
	for id, w := range map[uint64]struct {
		exec      int64
		segs      int32
		completed bool
	}{310: {10e3, 1, true}, 311: {15e3, 2, true}, 312: {20e3, 1, true}, 313: {30e3, 1, true}, 314: {5e3, 1, true},
		510: {10e3, 1, true}, 511: {10e3, 1, true}, 512: {10e3, 1, true}, 520: {0, 1, false}} {
		tk := rb.byID[id]
		if tk == nil || tk.Exec != w.exec || tk.Segments != w.segs || tk.Completed != w.completed || !tk.HasCreate {
			t.Errorf("task %d: %+v, want %+v", id, tk, w)
		}
	}
}

// A second real trace: t2.c (testdata), 300 tasks with random in, out,
// inout and mutexinoutset clauses on 6 variables, 4 threads, then a
// taskloop. Every pair libomp reported is among the edges reconstructed
// from the clauses (it reports only some), and every task ran once to
// completion.
func TestRealRandomClauses(t *testing.T) {
	rb := read(t, filepath.Join("..", "omp", "testdata", "t2.occatrace"))
	ts := rb.tasks
	if len(ts) != 308 { // 300 tasks, 8 of the taskloop
		t.Errorf("%d tasks, want 308", len(ts))
	}
	for _, tk := range ts {
		if !tk.HasCreate || !tk.Completed || tk.Segments != 1 || tk.Exec <= 0 {
			t.Errorf("task %+v: want created, one completed segment", tk)
		}
	}
	by := map[Source]int{}
	for _, e := range allPreds(ts) {
		by[e.Source]++
	}
	if by[FromRuntime] != 0 || by[FromDepend|FromRuntime] == 0 || by[FromDepend] == 0 {
		t.Errorf("edges by source %v: want none from the runtime alone", by)
	}
}
