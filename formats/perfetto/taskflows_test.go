package perfetto

import (
	"os"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// A chain of tasks twice as long as the completing segments held for their
// flows: each link's source is held when its sink runs, so every link has
// its flow, while the held segments are written a half at a time. A task
// created at the end on a variable of the first task gets no flow (the
// first task's segment is long written), counted in LostFlows.
func TestHeldSegmentsBounded(t *testing.T) {
	const (
		n             = 2*MaxHeldSegments + 100
		implicit      = 1
		explicit      = 4
		in, out, rw   = 1, 2, 3
		done, switch_ = 1, 7
		a, b          = 0xa0, 0xb0
	)
	var evs []trace.Event
	us := int64(10)
	add := func(k trace.Kind, args ...uint64) {
		evs = append(evs, ev(k, us, args...))
		us++
	}
	task := func(id uint64, deps ...uint64) {
		add(trace.OmpTaskCreate, id, implicit, explicit, 1, 0)
		for i := 0; i < len(deps); i += 2 {
			add(trace.OmpTaskDepend, id, deps[i+1], deps[i])
		}
		add(trace.OmpTaskSchedule, implicit, switch_, id)
		add(trace.OmpTaskSchedule, id, done, implicit)
	}
	add(trace.OmpThreadBegin, 1000, 1)
	task(2, rw, a, out, b)
	for id := uint64(3); id < n+2; id++ {
		task(id, rw, a)
	}
	task(n+2, in, b)

	w, path := convertWith(t, writeTrace(t, evs))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, data)
	if got := d.flows(t); got != n-1 {
		t.Errorf("%d flows, want %d (the chain's links)", got, n-1)
	}
	if w.LostFlows() != 1 {
		t.Errorf("%d flows lost, want 1", w.LostFlows())
	}
	if w.omp.written != n+1-len(w.omp.deferred) || len(w.omp.deferred) != 0 {
		t.Errorf("%d segments written early, %d held at the end", w.omp.written, len(w.omp.deferred))
	}
	tasks := 0
	for _, name := range d.tracks {
		tasks += d.counts(t, name)["task"]
	}
	if tasks != n+1 {
		t.Errorf("%d task slices, want %d", tasks, n+1)
	}
	if w.TaskGraph() != (analysis.GraphStats{}) {
		t.Errorf("graph stats %+v, want none", w.TaskGraph())
	}
}
