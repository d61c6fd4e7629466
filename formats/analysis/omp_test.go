package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

type ompRow struct {
	kind   trace.Kind
	thread uint32
	start  int64
	dur    int64
	omp    OMP
	status uint64
}

// pairOMP feeds evs to a Pairer and returns its OpenMP rows.
func pairOMP(t *testing.T, evs []trace.Event) ([]ompRow, *Pairer) {
	t.Helper()
	p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	var rows []ompRow
	pr := NewPairer(p, func(p *Process, r *Row) error {
		if r.OMP != nil {
			rows = append(rows, ompRow{r.Kind, r.Thread, r.Start, r.Dur, *r.OMP, r.Status})
		}
		return nil
	})
	for i := range evs {
		if err := pr.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	return rows, pr
}

func ev(k trace.Kind, thread uint32, t int64, args ...uint64) trace.Event {
	e := trace.Event{Kind: k, Thread: thread, Time: t}
	copy(e.Args[:], args)
	return e
}

// Segments of the initial task (a thread's own task, which it switches away
// from with no segment open) are no rows; a segment whose closing schedule
// is lost goes out as a half when the thread runs something else.
func TestTaskSegments(t *testing.T) {
	const initial, a, b, c = 50, 60, 61, 62
	rows, pr := pairOMP(t, []trace.Event{
		ev(trace.OmpTaskCreate, 0, 10, a, initial, 4, 0, 0),
		ev(trace.OmpTaskCreate, 0, 11, b, initial, 4, 0, 0),
		ev(trace.OmpTaskCreate, 0, 12, c, initial, 4, 0, 0),
		ev(trace.OmpTaskSchedule, 0, 20, initial, TaskSwitch, a),
		ev(trace.OmpTaskSchedule, 0, 30, a, TaskComplete, initial),
		// b starts, but the schedule that ends it is lost: the next one
		// names the initial task as prior.
		ev(trace.OmpTaskSchedule, 0, 40, initial, TaskSwitch, b),
		ev(trace.OmpTaskSchedule, 0, 50, initial, TaskSwitch, c),
		ev(trace.OmpTaskSchedule, 0, 55, c, TaskCancel, initial),
	})
	var segs []ompRow
	for _, r := range rows {
		if r.kind == trace.OmpTaskSchedule {
			segs = append(segs, r)
		}
	}
	want := []struct {
		task      uint64
		start     int64
		dur       int64
		status    uint64
		completed bool
	}{{a, 20, 10, TaskComplete, true}, {b, 40, Unpaired, 0, false}, {c, 50, 5, TaskCancel, false}}
	if len(segs) != len(want) {
		t.Fatalf("%d segments %+v, want %d", len(segs), segs, len(want))
	}
	for i, w := range want {
		s := segs[i]
		if s.omp.Task != w.task || s.start != w.start || s.dur != w.dur || s.status != w.status || s.omp.Completed != w.completed ||
			s.omp.Parent != initial || s.omp.Created == 0 {
			t.Errorf("segment %d: %+v, want %+v", i, s, w)
		}
	}
	// Completed and cancelled tasks are forgotten; b, never ended, is not.
	if _, ok := pr.omp.tasks[b]; len(pr.omp.tasks) != 1 || !ok {
		t.Errorf("tasks kept: %v, want b", pr.omp.tasks)
	}
}

// Segments wait for their task's create, at most MaxPendingSegments of
// them; past that, and at the end, they go out without it.
func TestPendingSegments(t *testing.T) {
	const implicit = 7
	n := MaxPendingSegments + 10
	var evs []trace.Event
	evs = append(evs, ev(trace.OmpImplicitTaskBegin, 1, 1, implicit, 3, 0, 1, 0))
	for i := range n {
		task := uint64(1000 + i)
		at := int64(10 + 2*i)
		evs = append(evs, ev(trace.OmpTaskSchedule, 1, at, implicit, TaskSwitch, task),
			ev(trace.OmpTaskSchedule, 1, at+1, task, TaskComplete, implicit))
	}
	// The last task's create comes after all of them (another thread's
	// batch): its segment waited for it.
	last := uint64(1000 + n - 1)
	evs = append(evs, ev(trace.OmpTaskCreate, 0, 5, last, implicit, 4, 0, 0))
	rows, pr := pairOMP(t, evs)
	segs, withParent := 0, 0
	for _, r := range rows {
		if r.kind == trace.OmpTaskSchedule {
			segs++
			if r.omp.Parent == implicit {
				withParent++
				if r.omp.Task != last {
					t.Errorf("segment of %d has a parent", r.omp.Task)
				}
			}
		}
	}
	if segs != n || withParent != 1 {
		t.Errorf("%d segments, %d with their create; want %d, 1", segs, withParent, n)
	}
	if pr.omp.npending != 0 || len(pr.omp.pending) != 0 {
		t.Errorf("%d segments still pending", pr.omp.npending)
	}
}

// Random OpenMP events, on a few threads with a few ids, in any order: the
// Pairer never fails and holds nothing back after Flush.
func TestRandomOpenMP(t *testing.T) {
	kinds := []trace.Kind{}
	for k := trace.OmpThreadBegin; k <= trace.OmpTaskDepend; k++ {
		kinds = append(kinds, k)
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var evs []trace.Event
		for i := range 5000 {
			e := ev(kinds[rng.IntN(len(kinds))], uint32(rng.IntN(3)), int64(i))
			for j := range e.Args {
				e.Args[j] = uint64(rng.IntN(8))
			}
			if e.Kind == trace.RunBegin || rng.IntN(50) == 0 {
				e = ev(trace.RunBegin, e.Thread, int64(i), uint64(rng.IntN(8)), 1, 1, 0)
			}
			evs = append(evs, e)
		}
		_, pr := pairOMP(t, evs)
		if pr.omp.npending != 0 || len(pr.omp.pending) != 0 {
			t.Errorf("seed %d: %d segments still pending", seed, pr.omp.npending)
		}
		for th, st := range pr.omp.threads {
			if st.seg.open || len(st.implicit.items()) > 0 || len(st.waits.items()) > 0 {
				t.Errorf("seed %d: thread %d still has %+v", seed, th, st)
			}
		}
	}
}
