package perfetto

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// dump is the golden form: per track (by name), its slices with depth,
// times from the first event, annotations and flows (numbered by first
// appearance), then instants.
func (d *decoded) dump(t *testing.T) string {
	ss := d.slices(t)
	var t0 int64 = -1
	for _, e := range d.events {
		if t0 < 0 || e.ts < t0 {
			t0 = e.ts
		}
	}
	flowNo := map[uint64]int{}
	fl := func(ids []uint64) string {
		var s []string
		for _, id := range ids {
			if _, ok := flowNo[id]; !ok {
				flowNo[id] = len(flowNo) + 1
			}
			s = append(s, fmt.Sprint(flowNo[id]))
		}
		return strings.Join(s, ",")
	}
	var uuids []uint64
	for u := range d.tracks {
		uuids = append(uuids, u)
	}
	slices.SortFunc(uuids, func(a, b uint64) int {
		if c := strings.Compare(d.tracks[a], d.tracks[b]); c != 0 {
			return c
		}
		return cmpU(a, b)
	})
	var b strings.Builder
	for _, u := range uuids {
		fmt.Fprintf(&b, "track %q\n", d.tracks[u])
		for _, s := range ss[u] {
			fmt.Fprintf(&b, "  %s%s [%d, %d)", strings.Repeat("  ", s.depth), s.b.name, s.start-t0, s.end-t0)
			if len(s.b.annots) > 0 {
				fmt.Fprintf(&b, " %s", strings.Join(s.b.annots, " "))
			}
			if len(s.flows) > 0 {
				fmt.Fprintf(&b, " flows-out=%s", fl(s.flows))
			}
			if len(s.term) > 0 {
				fmt.Fprintf(&b, " flows-in=%s", fl(s.term))
			}
			b.WriteString("\n")
		}
		for _, e := range d.events {
			if e.track == u && e.typ == typeInstant {
				fmt.Fprintf(&b, "  instant %s @%d %s\n", e.name, e.ts-t0, strings.Join(e.annots, " "))
			}
		}
	}
	return b.String()
}

// convertFile converts the trace at path and returns the Perfetto bytes.
func convertFile(t testing.TB, path string) []byte {
	t.Helper()
	w, out := convertWith(t, path)
	if w.Late() != 0 {
		t.Errorf("%d late rows", w.Late())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// convertWith converts the trace at path into a file of its own and returns
// the closed writer (for its counts) and that file's path.
func convertWith(t testing.TB, path string, opts ...Option) (*Writer, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "t.perfetto-trace")
	var w *Writer
	res, err := analysis.Read(path, 0, analysis.Options{Window: PairWindow, Open: func(p *analysis.Process) error {
		var err error
		w, err = Create(out, p, 1, opts...)
		return err
	}}, func(p *analysis.Process, r *analysis.Row) error { return w.Add(p, r) })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(res); err != nil {
		t.Fatal(err)
	}
	return w, out
}

// counts returns the slices per name on the track named track.
func (d *decoded) counts(t *testing.T, track string) map[string]int {
	out := map[string]int{}
	for u, ss := range d.slices(t) {
		if d.tracks[u] != track {
			continue
		}
		for _, s := range ss {
			name := s.b.name
			if strings.HasPrefix(name, "task ") && name != "task create" {
				name = "task"
			}
			out[name]++
		}
	}
	return out
}

// flows checks that every flow leaves one slice and ends in another, and
// returns their number.
func (d *decoded) flows(t *testing.T) int {
	out, in := map[uint64]int{}, map[uint64]int{}
	for _, ss := range d.slices(t) {
		for _, s := range ss {
			for _, f := range s.flows {
				out[f]++
			}
			for _, f := range s.term {
				in[f]++
			}
		}
	}
	for f, n := range out {
		if n != 1 || in[f] != 1 {
			t.Errorf("flow %x leaves %d slices, ends in %d", f, n, in[f])
		}
	}
	for f := range in {
		if out[f] == 0 {
			t.Errorf("flow %x ends without leaving a slice", f)
		}
	}
	return len(out)
}

// The real trace of formats/omp: a parallel for on 2 threads, then a
// single creating a diamond of 4 tasks. The worker's implicit tasks and
// barriers end at their region's end (libomp reports them late, or never
// for the last region).
func TestOpenMPRealTrace(t *testing.T) {
	data := convertFile(t, filepath.Join("..", "omp", "testdata", "t1.occatrace"))
	d := decode(t, data)
	golden.Check(t, filepath.Join("testdata", "omp-t1.dump"), []byte(d.dump(t)))
	want := map[string]map[string]int{
		"t1 (tid 21436)": {"parallel": 2, "implicit task 0/2": 2, "loop": 1, "single (executor)": 1,
			"barrier (implicit)": 3, "wait": 3, "task": 3},
		"t1 (tid 21442)": {"implicit task 1/2": 2, "loop": 1, "single (other)": 1, "barrier (implicit)": 3, "wait": 3, "task": 1},
	}
	for tr, w := range want {
		if got := d.counts(t, tr); !mapsEqual(got, w) {
			t.Errorf("%s: slices %v, want %v", tr, got, w)
		}
	}
	if n := d.flows(t); n != 4 {
		t.Errorf("%d flows, want 4 (the diamond's edges)", n)
	}
	// Every slice of the worker lies within a parallel region of t1.
	ss := d.slices(t)
	var pars [][2]int64
	var worker uint64
	for u, name := range d.tracks {
		for _, s := range ss[u] {
			if s.b.name == "parallel" {
				pars = append(pars, [2]int64{s.start, s.end})
			}
		}
		if name == "t1 (tid 21442)" {
			worker = u
		}
	}
	for _, s := range ss[worker] {
		in := false
		for _, p := range pars {
			in = in || (s.start >= p[0] && s.end <= p[1])
		}
		if !in {
			t.Errorf("worker: %s [%d, %d) outside the parallel regions %v", s.b.name, s.start, s.end, pars)
		}
	}
	for _, e := range d.events {
		if e.typ == typeInstant && strings.Contains(e.name, "unpaired") && !strings.HasPrefix(e.name, "omp_thread") {
			t.Errorf("unpaired %s left", e.name)
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// omptest's synthetic trace: launches with parallel regions (a flow from
// each launch to each of its 2 implicit tasks), explicit tasks with 7
// dependence edges, the worker's implicit task and barrier of the last
// region never ended (closed at the region's end), a task still running at
// the end (an unpaired instant).
func TestOpenMPSynthetic(t *testing.T) {
	path := omptest.SmallFile(t)
	d := decode(t, convertFile(t, path))
	golden.Check(t, filepath.Join("testdata", "omp-small.dump"), []byte(d.dump(t)))
	var names []string
	for _, n := range d.tracks {
		names = append(names, n)
	}
	slices.Sort(names)
	var got []string
	for _, n := range names {
		c := d.counts(t, n)
		if len(c) == 0 {
			continue
		}
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			got = append(got, fmt.Sprintf("%s/%s=%d", n, k, c[k]))
		}
	}
	want := []string{"current stream/axpy=1", "current stream/dot=1",
		"main (tid 4242)/barrier (explicit)=1", "main (tid 4242)/barrier (implicit)=2",
		"main (tid 4242)/implicit task 0/2=3", "main (tid 4242)/loop=1", "main (tid 4242)/parallel=3",
		"main (tid 4242)/run axpy=1", "main (tid 4242)/run dot=1", "main (tid 4242)/single (executor)=1",
		"main (tid 4242)/task=8", "main (tid 4242)/wait=3",
		"worker (tid 4243)/barrier (implicit)=3", "worker (tid 4243)/implicit task 1/2=3", "worker (tid 4243)/loop=1",
		"worker (tid 4243)/single (other)=1", "worker (tid 4243)/task=1", "worker (tid 4243)/wait=3"}
	if !slices.Equal(got, want) {
		t.Errorf("slices per track:\n%v\nwant\n%v", got, want)
	}
	// Task 520 is still running when the trace ends.
	unpaired := 0
	for _, e := range d.events {
		if e.typ == typeInstant && e.name == "omp_task (unpaired)" {
			unpaired++
		}
	}
	if unpaired != 1 {
		t.Errorf("%d unpaired task segments, want 1", unpaired)
	}
	// 4 launch -> implicit task flows, 7 dependence edges.
	if n := d.flows(t); n != 11 {
		t.Errorf("%d flows, want 11", n)
	}
	// The task segments with depend items are written at the end, before
	// the clock's running value: a second snapshot starts it again.
	if d.snapshots != 2 || d.absolute != 0 {
		t.Errorf("%d clock snapshots, %d packets on BOOTTIME; want 2 and 0", d.snapshots, d.absolute)
	}
}

// A trace without OpenMP: its bytes' hash and its dump (times to the ns
// from the first event). The dump was taken before the OpenMP slices
// existed; the hash changes with the encoding (incremental timestamps,
// default track).
func TestNoOpenMPUnchanged(t *testing.T) {
	var buf bytes.Buffer
	if err := tracetest.WriteSmall(&buf, tracetest.SmallOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "small.occatrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := convertFile(t, path)
	golden.Check(t, filepath.Join("testdata", "small.sha256"), []byte(fmt.Sprintf("%x\n", sha256.Sum256(data))))
	golden.Check(t, filepath.Join("testdata", "small.dump"), []byte(decode(t, data).dump(t)))
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// A parallel region with more rows inside than the reorder buffer holds:
// its implicit tasks and the region itself come after their contents (the
// Pairer sends a row at its end) and are written late; they go on lanes of
// their own, so that nothing overlaps without nesting. The launch around it
// comes last and still links to both implicit tasks.
func TestOpenMPLateContainers(t *testing.T) {
	w, p, path := testWriter(t)
	add := func(r analysis.Row, m analysis.OMP) {
		r.DevDur = -1
		r.OMP = &m
		if err := w.Add(p, &r); err != nil {
			t.Fatal(err)
		}
	}
	n := ReorderRows + ReorderRows/2
	if n >= maxInterned { // a name per task: a clear would restart the clock, and nothing would be late
		t.Fatalf("%d tasks, at least maxInterned (%d)", n, maxInterned)
	}
	end := int64(100 + 10*n)
	// Tasks on both threads, inside the barrier waits.
	for i := 0; i < n; i++ {
		th := uint32(i % 2)
		add(analysis.Row{Kind: trace.OmpTaskSchedule, Thread: th, Start: int64(100 + 10*i), Dur: 5, Status: analysis.TaskComplete},
			analysis.OMP{ID: uint64(1000 + i), Task: uint64(1000 + i), Parent: 11, Completed: true})
	}
	for th := uint32(0); th < 2; th++ {
		add(analysis.Row{Kind: trace.OmpSyncWaitBegin, Thread: th, Start: 90, Dur: end - 90, Name: "barrier_implicit"},
			analysis.OMP{ID: 20 + uint64(th), Parallel: 1, Task: 11 + uint64(th), Type: 2, ThreadNum: th, TeamSize: 2, Launch: 77})
		add(analysis.Row{Kind: trace.OmpSyncBegin, Thread: th, Start: 80, Dur: end - 80, Name: "barrier_implicit"},
			analysis.OMP{ID: 30 + uint64(th), Parallel: 1, Task: 11 + uint64(th), Type: 2, ThreadNum: th, TeamSize: 2, Launch: 77})
	}
	add(analysis.Row{Kind: trace.OmpImplicitTaskBegin, Thread: 0, Start: 20, Dur: end - 10},
		analysis.OMP{ID: 11, Task: 11, Parallel: 1, ThreadNum: 0, TeamSize: 2, Launch: 77})
	add(analysis.Row{Kind: trace.OmpParallelBegin, Thread: 0, Start: 10, Dur: end},
		analysis.OMP{ID: 1, Parallel: 1, Parent: 5, TeamSize: 2, Launch: 77})
	launch := analysis.Row{Kind: trace.RunBegin, Thread: 0, Start: 5, Dur: end + 10, Corr: 77, Name: "k", DevDur: -1}
	if err := w.Add(p, &launch); err != nil {
		t.Fatal(err)
	}
	// The worker's implicit task never ends: the Pairer closes it at the
	// region's end (analysis's TestLateEndsClamped), and it comes last.
	add(analysis.Row{Kind: trace.OmpImplicitTaskBegin, Thread: 1, Start: 30, Dur: 10 + end - 30},
		analysis.OMP{ID: 12, Task: 12, Parallel: 1, ThreadNum: 1, TeamSize: 2, Launch: 77})
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if w.Late() == 0 {
		t.Fatalf("no late rows: the test does not test")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, data) // slices fails on overlaps
	total := 0
	for _, ss := range d.slices(t) {
		total += len(ss)
	}
	if want := n + 4 + 2 + 1 + 1; total != want {
		t.Errorf("%d slices, want %d", total, want)
	}
	if f := d.flows(t); f != 2 {
		t.Errorf("%d flows, want 2 (launch -> implicit tasks)", f)
	}
	// The rows written late lie before the clock's running value: their
	// packets keep their unix time on BOOTTIME (checked to the ns below).
	if d.absolute == 0 {
		t.Errorf("no packet on BOOTTIME: the late rows were not written late")
	}
	var closed bool
	for u, ss := range d.slices(t) {
		for _, s := range ss {
			if s.b.name == "implicit task 1/2" {
				closed = s.end-s.start == p.WallTime(10+end)-p.WallTime(30)
				t.Logf("worker implicit task on %s", d.tracks[u])
			}
		}
	}
	if !closed {
		t.Errorf("the worker's implicit task is not closed at the region's end")
	}
}
