// Package openmp checks the runtime's OMPT tool end to end: OpenMP programs
// (programs.c, built with clang -fopenmp against LLVM's libomp, `make
// test-programs`) run traced, and their OpenMP events are counted exactly and
// checked for nesting, ids, launches and depend clauses.
package openmp

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/occatest"
	"github.com/libocca/occa-tools/tests/testproc"
)

var programs string // build/tests/omp-programs

func TestMain(m *testing.M) {
	build := os.Getenv("OCCA_TOOLS_BUILD")
	if build == "" {
		build, _ = filepath.Abs("../../build")
	}
	programs = filepath.Join(build, "tests", "omp-programs")
	if _, err := os.Stat(programs); err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "tests/openmp: %s is missing: install clang and libomp-dev, then `make test-programs`\n", programs)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "tests/openmp: skipped: %s is missing (needs clang and libomp-dev)\n", programs)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// capture is one traced run: its events in file order and its dictionary.
type capture struct {
	events []trace.Event
	counts map[trace.Kind]int
	stdout string
	path   string
}

// edges returns the task dependence edges formats/analysis reconstructs from
// the trace (its task graph), as "i->j" between tasks numbered in creation
// order (from 0).
func (c *capture) edges(t *testing.T, tasks []uint64) []string {
	t.Helper()
	g := analysis.NewGraph()
	var edges []analysis.Edge
	g.Retire = func(t *analysis.Task) { edges = append(edges, t.Preds...) }
	_, err := analysis.Read(c.path, 0, analysis.Options{}, func(_ *analysis.Process, r *analysis.Row) error { g.Add(r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if g.Flush(); g.Empty() {
		t.Fatalf("%s: no task graph", c.path)
	}
	index := map[uint64]int{}
	for i, id := range tasks {
		index[id] = i
	}
	var out []string
	for _, e := range edges {
		if e.Source&analysis.FromDepend == 0 {
			t.Errorf("edge %d -> %d reported by the runtime is not implied by the depend clauses", e.Src, e.Sink)
		}
		out = append(out, fmt.Sprintf("%d->%d", index[e.Src], index[e.Sink]))
	}
	sort.Strings(out)
	return out
}

func (c *capture) of(k trace.Kind) []trace.Event {
	var out []trace.Event
	for _, e := range c.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// run traces programs with args under config (TOML, output directory
// added) and returns its single trace.
func run(t *testing.T, config string, args ...string) *capture {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(cfg, []byte(config+"\n[output]\ndirectory = \""+dir+"/out\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := testproc.Command(t, programs, args...)
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfg, "OMP_MAX_ACTIVE_LEVELS=2", "OMP_DYNAMIC=false")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "ok ") {
		t.Fatalf("omp-programs %v: %v, output %q\n%s", args, err, out, stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "out", "*.occatrace"))
	if len(files) != 1 {
		t.Fatalf("want 1 trace, got %v\n%s", files, stderr.String())
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if ev.Stats.Dropped != [trace.NumReasonCounters]uint64{} {
		t.Fatalf("%s: stats %+v", files[0], ev.Stats)
	}
	c := &capture{events: ev.Events, counts: map[trace.Kind]int{}, stdout: string(out), path: files[0]}
	for _, e := range c.events {
		c.counts[e.Kind]++
	}
	checkNesting(t, c)
	return c
}

// checkNesting checks that on every thread the OpenMP begins and ends nest
// like a stack and each end names its begin.
func checkNesting(t *testing.T, c *capture) {
	t.Helper()
	stacks := map[uint32][]trace.Event{}
	for _, e := range c.events {
		spec := e.Kind.Spec()
		if spec == nil || spec.Domain != trace.DomainOpenMP || spec.Pair == trace.KindInvalid {
			continue
		}
		if spec.Begin {
			stacks[e.Thread] = append(stacks[e.Thread], e)
			continue
		}
		s := stacks[e.Thread]
		if len(s) == 0 {
			t.Errorf("thread %d: %s id %d at %d ns has no open begin", e.Thread, e.Kind, e.Args[0], e.Time)
			continue
		}
		top := s[len(s)-1]
		if top.Kind != spec.Pair || top.Args[0] != e.Args[0] || e.Time < top.Time {
			t.Errorf("thread %d: %s id %d closes %s id %d", e.Thread, e.Kind, e.Args[0], top.Kind, top.Args[0])
		}
		stacks[e.Thread] = s[:len(s)-1]
	}
	for th, s := range stacks {
		if len(s) != 0 {
			t.Errorf("thread %d: %d OpenMP begins never ended (first: %s)", th, len(s), s[0].Kind)
		}
	}
}

func wantCounts(t *testing.T, c *capture, want map[trace.Kind]int) {
	t.Helper()
	for k := trace.OmpThreadBegin; k <= trace.OmpTaskDepend; k++ {
		if k == trace.OmpTaskDependence {
			continue // reported only for dependences still pending: timing-dependent
		}
		if c.counts[k] != want[k] {
			t.Errorf("%s: %d events, want %d", k, c.counts[k], want[k])
		}
	}
}

const all = "[openmp]\nscope = \"all\""

// isImplicitBarrier: LLVM 14 reports implicit barriers as kind 2 (OpenMP 5.0),
// newer ones as 8 (workshare) or 9 (parallel).
func isImplicitBarrier(k uint64) bool { return k == 2 || k == 8 || k == 9 }

func TestParallelFor(t *testing.T) {
	c := run(t, all, "parallel-for", "3", "100")
	wantCounts(t, c, map[trace.Kind]int{
		trace.OmpThreadBegin: 3, trace.OmpThreadEnd: 3,
		trace.OmpParallelBegin: 2, trace.OmpParallelEnd: 2,
		trace.OmpImplicitTaskBegin: 6, trace.OmpImplicitTaskEnd: 6,
		trace.OmpWorkBegin: 3, trace.OmpWorkEnd: 3,
		// region 1: the region's barrier on 3 threads; region 2: the
		// explicit barrier and the region's barrier on 3 threads
		trace.OmpSyncBegin: 9, trace.OmpSyncEnd: 9, trace.OmpSyncWaitBegin: 9, trace.OmpSyncWaitEnd: 9,
	})
	par := c.of(trace.OmpParallelBegin)
	for _, p := range par {
		if p.Args[2] != 3 || p.Args[4] != 0 {
			t.Errorf("parallel %d: requested team %d, launch %d; want 3, 0", p.Args[0], p.Args[2], p.Args[4])
		}
	}
	// Each region has implicit tasks 0, 1, 2 of a team of 3.
	nums := map[uint64][]uint64{}
	for _, it := range c.of(trace.OmpImplicitTaskBegin) {
		nums[it.Args[1]] = append(nums[it.Args[1]], it.Args[2])
		if it.Args[3] != 3 {
			t.Errorf("implicit task %d: team size %d, want 3", it.Args[0], it.Args[3])
		}
	}
	for _, p := range par {
		got := nums[p.Args[0]]
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if !reflect.DeepEqual(got, []uint64{0, 1, 2}) {
			t.Errorf("parallel %d: implicit tasks %v, want [0 1 2]", p.Args[0], got)
		}
	}
	// The loop: one work region per thread in region 1, each saying the
	// loop has 100 iterations (LLVM gives the loop's count, not the chunk's).
	for _, w := range c.of(trace.OmpWorkBegin) {
		if w.Args[1] != 1 || w.Args[2] != par[0].Args[0] || w.Args[4] != 100 {
			t.Errorf("work %d: type %d in parallel %d, count %d; want a loop (1) in %d, count 100",
				w.Args[0], w.Args[1], w.Args[2], w.Args[4], par[0].Args[0])
		}
	}
	// Every implicit task ends by its region's end, though libomp reports a
	// worker's end only when it is next woken (at the next fork, or here at
	// the pause before exit): the runtime records it at the region's end.
	regionEnd := map[uint64]int64{}
	for _, e := range c.of(trace.OmpParallelEnd) {
		regionEnd[e.Args[0]] = e.Time
	}
	regionOf := map[uint64]uint64{}
	for _, e := range c.of(trace.OmpImplicitTaskBegin) {
		regionOf[e.Args[0]] = e.Args[1]
	}
	for _, e := range c.of(trace.OmpImplicitTaskEnd) {
		if end := regionEnd[regionOf[e.Args[0]]]; e.Time > end {
			t.Errorf("implicit task %d ends at %d ns, after its region's end at %d ns", e.Args[0], e.Time, end)
		}
	}
	explicit := 0
	for _, s := range c.of(trace.OmpSyncBegin) {
		switch {
		case s.Args[1] == 3:
			explicit++
			if s.Args[2] != par[1].Args[0] {
				t.Errorf("explicit barrier in parallel %d, want %d", s.Args[2], par[1].Args[0])
			}
		case !isImplicitBarrier(s.Args[1]):
			t.Errorf("sync region kind %d", s.Args[1])
		}
	}
	if explicit != 3 {
		t.Errorf("explicit barriers: %d, want 3", explicit)
	}
}

func TestNested(t *testing.T) {
	c := run(t, all, "nested", "2", "2")
	// The two inner teams need one worker each; libomp reuses a pooled
	// worker when one inner region ends before the other begins: 3 or 4
	// threads.
	threads := c.counts[trace.OmpThreadBegin]
	if threads < 3 || threads > 4 || c.counts[trace.OmpThreadEnd] != threads {
		t.Errorf("threads: %d begins, %d ends; want 3 or 4 of each", threads, c.counts[trace.OmpThreadEnd])
	}
	wantCounts(t, c, map[trace.Kind]int{
		trace.OmpThreadBegin: threads, trace.OmpThreadEnd: threads,
		trace.OmpParallelBegin: 3, trace.OmpParallelEnd: 3,
		trace.OmpImplicitTaskBegin: 6, trace.OmpImplicitTaskEnd: 6,
		trace.OmpSyncBegin: 6, trace.OmpSyncEnd: 6, trace.OmpSyncWaitBegin: 6, trace.OmpSyncWaitEnd: 6,
	})
	// The inner regions' parent tasks are the outer region's implicit tasks;
	// the outer region's parent is the initial task, which has no events.
	regionOf := map[uint64]uint64{} // implicit task -> its region
	for _, it := range c.of(trace.OmpImplicitTaskBegin) {
		regionOf[it.Args[0]] = it.Args[1]
	}
	var outer []uint64
	inner := map[uint64]int{} // outer region -> inner regions begun in it
	for _, p := range c.of(trace.OmpParallelBegin) {
		if r, ok := regionOf[p.Args[1]]; ok {
			inner[r]++
		} else {
			outer = append(outer, p.Args[0])
		}
	}
	if len(outer) != 1 || inner[outer[0]] != 2 || len(inner) != 1 {
		t.Errorf("outer regions %v, inner regions by outer region %v; want one outer region holding 2", outer, inner)
	}
}

// depends returns the depend records by task: "in@vN" or "out@vN" (out and
// inout), variables numbered in order of first appearance.
func depends(c *capture) (map[uint64][]string, []uint64) {
	vars := map[uint64]string{}
	out := map[uint64][]string{}
	var tasks []uint64
	for _, e := range c.events {
		switch e.Kind {
		case trace.OmpTaskCreate:
			tasks = append(tasks, e.Args[0])
		case trace.OmpTaskDepend:
			v, ok := vars[e.Args[1]]
			if !ok {
				v = "v" + strconv.Itoa(len(vars))
				vars[e.Args[1]] = v
			}
			// LLVM reports depend(out) as inout: both write.
			typ := map[uint64]string{1: "in", 2: "out", 3: "out"}[e.Args[2]]
			out[e.Args[0]] = append(out[e.Args[0]], typ+"@"+v)
		}
	}
	return out, tasks
}

// checkTasks checks creation (parent, has_dependences) and that each task
// ran to completion exactly once.
func checkTasks(t *testing.T, c *capture, tasks []uint64) {
	t.Helper()
	parents := map[uint64]bool{}
	for _, e := range c.of(trace.OmpTaskCreate) {
		parents[e.Args[1]] = true
		if e.Args[3] != 1 || e.Args[2]&4 == 0 {
			t.Errorf("task %d: flags %#x, has_dependences %d; want explicit (4) and 1", e.Args[0], e.Args[2], e.Args[3])
		}
	}
	if len(parents) != 1 {
		t.Errorf("tasks created by %d tasks, want 1 (the single construct's)", len(parents))
	}
	completed := map[uint64]int{}
	started := map[uint64]int{}
	for _, s := range c.of(trace.OmpTaskSchedule) {
		if s.Args[1] == 1 {
			completed[s.Args[0]]++
		}
		started[s.Args[2]]++
	}
	for _, id := range tasks {
		if completed[id] != 1 || started[id] < 1 {
			t.Errorf("task %d: scheduled %d times, completed %d times; want >= 1 and 1", id, started[id], completed[id])
		}
	}
}

func TestDiamond(t *testing.T) {
	c := run(t, all, "diamond")
	wantCounts(t, c, map[trace.Kind]int{
		trace.OmpThreadBegin: 2, trace.OmpThreadEnd: 2,
		trace.OmpParallelBegin: 1, trace.OmpParallelEnd: 1,
		trace.OmpImplicitTaskBegin: 2, trace.OmpImplicitTaskEnd: 2,
		trace.OmpWorkBegin: 2, trace.OmpWorkEnd: 2, // single: executor and the other
		trace.OmpSyncBegin: 4, trace.OmpSyncEnd: 4, trace.OmpSyncWaitBegin: 4, trace.OmpSyncWaitEnd: 4,
		trace.OmpTaskCreate: 4, trace.OmpTaskSchedule: 8, trace.OmpTaskDepend: 8,
	})
	deps, tasks := depends(c)
	want := [][]string{{"out@v0"}, {"in@v0", "out@v1"}, {"in@v0", "out@v2"}, {"in@v1", "in@v2", "out@v3"}}
	for i, id := range tasks {
		if !reflect.DeepEqual(deps[id], want[i]) {
			t.Errorf("task %d (%c): depends %v, want %v", id, 'a'+i, deps[id], want[i])
		}
	}
	checkTasks(t, c, tasks)
	// The dependence graph reconstructed from the trace is the diamond.
	if got, want := c.edges(t, tasks), []string{"0->1", "0->2", "1->3", "2->3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dependence edges %v, want %v", got, want)
	}
	// Reported pairs name created tasks, source before sink.
	order := map[uint64]int{}
	for i, id := range tasks {
		order[id] = i + 1
	}
	for _, d := range c.of(trace.OmpTaskDependence) {
		if order[d.Args[0]] == 0 || order[d.Args[0]] >= order[d.Args[1]] {
			t.Errorf("dependence pair %d -> %d does not go from an earlier task to a later one", d.Args[0], d.Args[1])
		}
	}
}

func TestChain(t *testing.T) {
	c := run(t, all, "chain", "5")
	deps, tasks := depends(c)
	if len(tasks) != 5 || c.counts[trace.OmpTaskSchedule] != 10 || c.counts[trace.OmpTaskDepend] != 5 {
		t.Errorf("%d tasks, %d schedules, %d depends; want 5, 10, 5", len(tasks), c.counts[trace.OmpTaskSchedule], c.counts[trace.OmpTaskDepend])
	}
	for _, id := range tasks {
		if !reflect.DeepEqual(deps[id], []string{"out@v0"}) {
			t.Errorf("task %d: depends %v, want [out@v0] (inout)", id, deps[id])
		}
	}
	checkTasks(t, c, tasks)
	if got, want := c.edges(t, tasks), []string{"0->1", "1->2", "2->3", "3->4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dependence edges %v, want the chain %v", got, want)
	}
}

// With the default scope only the region inside the launch is recorded, and
// its events carry the launch's correlation id; with scope "all" both are.
func TestKernelScope(t *testing.T) {
	c := run(t, "", "kernel", "2")
	launch, _ := strconv.ParseUint(strings.TrimSpace(strings.SplitAfter(c.stdout, "launch=")[1]), 10, 64)
	runs := c.of(trace.RunBegin)
	if len(runs) != 1 || runs[0].Args[0] != launch || launch == 0 {
		t.Fatalf("launches %v, program says launch=%d", runs, launch)
	}
	par := c.of(trace.OmpParallelBegin)
	if len(par) != 1 || par[0].Args[4] != launch || par[0].Time < runs[0].Time {
		t.Fatalf("scope kernels: parallel regions %v; want one, in launch %d", par, launch)
	}
	for _, it := range c.of(trace.OmpImplicitTaskBegin) {
		if it.Args[4] != launch || it.Args[1] != par[0].Args[0] {
			t.Errorf("implicit task %d: launch %d, parallel %d; want %d, %d", it.Args[0], it.Args[4], it.Args[1], launch, par[0].Args[0])
		}
	}
	if n := c.counts[trace.OmpImplicitTaskBegin]; n != 2 {
		t.Errorf("implicit tasks: %d, want 2", n)
	}

	c = run(t, all, "kernel", "2")
	par = c.of(trace.OmpParallelBegin)
	if len(par) != 2 || par[0].Args[4] != 0 || par[1].Args[4] == 0 {
		t.Errorf("scope all: parallel regions %v; want the first outside any launch, the second inside", par)
	}
}

// Disabled kinds are not recorded; the rest is.
func TestDisable(t *testing.T) {
	c := run(t, all+"\n[events]\ndisable = [\"omp_task_depend\", \"omp_sync_wait_begin\", \"omp_sync_wait_end\"]", "diamond")
	if c.counts[trace.OmpTaskDepend] != 0 || c.counts[trace.OmpSyncWaitBegin] != 0 || c.counts[trace.OmpTaskCreate] != 4 {
		t.Errorf("counts %v", c.counts)
	}
}

// A program that does not link libocca_tools gets the tool through
// OMP_TOOL_LIBRARIES, which libomp loads itself.
func TestToolLibraries(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(cfg, []byte(all+"\n[output]\ndirectory = \""+dir+"/out\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(filepath.Dir(programs), "..", "lib", "libocca_tools.so.1")
	cmd := testproc.Command(t, programs+"-plain", "chain", "3")
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfg, "OMP_TOOL_LIBRARIES="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ok x=7\n" {
		t.Fatalf("omp-programs-plain: %v, %q", err, out)
	}
	if creates := taskCreates(t, filepath.Join(dir, "out")); creates != 3 {
		t.Errorf("task creates: %d, want 3", creates)
	}
}

// taskCreates reads the one trace in dir and counts its task creates.
func taskCreates(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.occatrace"))
	if len(files) != 1 {
		t.Fatalf("want 1 trace, got %v", files)
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ev.Events {
		if e.Kind == trace.OmpTaskCreate {
			n++
		}
	}
	return n
}

// Without a config no OpenMP tool is started and no trace is written.
func TestUntraced(t *testing.T) {
	dir := t.TempDir()
	cmd := testproc.Command(t, programs, "diamond")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG=", "OMP_DISPLAY_ENV=false")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ok d=5\n" {
		t.Fatalf("untraced: %v, %q", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "*.occatrace")); len(m) != 0 {
		t.Errorf("traces written without a config: %v", m)
	}
}

// A program linked with libocca_tools and with another OpenMP tool after
// it: the OpenMP runtime asks the first ompt_start_tool in the process,
// ours, which used to answer no tool without asking the next one, so the
// other tool never started, even untraced. Now it starts whenever this
// trace does not record OpenMP; when it does, the process has one tool,
// ours, and one warning names the other.
func TestAnotherTool(t *testing.T) {
	prog := programs + "-othertool"
	for _, c := range []struct {
		name, config string
		started      bool // the other tool
		warning      string
		ompEvents    bool
	}{
		{"untraced", "", true, "", false},
		{"traced without openmp", "[events]\ndisable = [\"openmp\"]", true, "", false},
		{"traced with openmp", all, false, "is not started, since an OpenMP runtime has one tool and this trace records OpenMP", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			env := append(os.Environ(), "OCCA_TOOLS_CONFIG=")
			if c.config != "" {
				cfg := filepath.Join(dir, "trace.toml")
				if err := os.WriteFile(cfg, []byte(c.config+"\n[output]\ndirectory = \""+dir+"/out\"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				env = append(env, "OCCA_TOOLS_CONFIG="+cfg)
			}
			cmd := testproc.Command(t, prog, "diamond")
			cmd.Env = env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || string(out) != "ok d=5\n" {
				t.Fatalf("%v, %q\n%s", err, out, stderr.String())
			}
			if started := strings.Contains(stderr.String(), "othertool: started\n"); started != c.started {
				t.Errorf("other tool started %v, want %v; stderr:\n%s", started, c.started, stderr.String())
			}
			if c.warning != "" && strings.Count(stderr.String(), c.warning) != 1 {
				t.Errorf("stderr has not one warning %q:\n%s", c.warning, stderr.String())
			}
			if c.warning == "" && strings.Contains(stderr.String(), "WRN") {
				t.Errorf("a warning:\n%s", stderr.String())
			}
			if c.config == "" {
				return
			}
			n := taskCreates(t, filepath.Join(dir, "out"))
			if (n == 4) != c.ompEvents || (n != 0 && n != 4) {
				t.Errorf("%d task creates in the trace, want %d", n, map[bool]int{true: 4, false: 0}[c.ompEvents])
			}
		})
	}
}
