package analysis

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// A worker's implicit task, and the sync regions and waits of its region,
// end no later than the parallel region, and there when they never end
// (libomp reports the worker's end late, or never for the last region).
func TestLateEndsClamped(t *testing.T) {
	rows := func(path string) []string { return strings.Split(string(dump(t, path, 0)), "\n") }
	find := func(lines []string, prefix string) (int, string) {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i, l
			}
		}
		t.Fatalf("no row %q", prefix)
		return 0, ""
	}
	small := rows(omptest.SmallFile(t))
	for _, c := range []struct{ row, dur string }{
		// Region 501 ends at 600 µs: thread 1's never end.
		{"rank=3 t1 omp_implicit_task start=501000 ", "dur=99000 "},
		{`rank=3 t1 omp_sync "barrier_implicit" start=520000 `, "dur=80000 "},
		{`rank=3 t1 omp_sync_wait "barrier_implicit" start=520000 `, "dur=80000 "},
		// Region 101 ends at 65 µs: thread 1's ended before, as they are.
		{"rank=3 t1 omp_implicit_task start=12000 ", "dur=52000 "},
	} {
		if _, l := find(small, c.row); !strings.Contains(l, c.dur) {
			t.Errorf("%s, want %s", l, c.dur)
		}
	}

	// formats/omp/testdata/t1.c under LLVM's libomp: the worker's implicit
	// task of the first region ends when it is woken for the second (59301
	// ns long); the region ended 23774 ns after the task began.
	t1 := rows(filepath.Join("..", "omp", "testdata", "t1.occatrace"))
	if _, l := find(t1, "rank=0 t2 omp_implicit_task start=2154092 "); !strings.Contains(l, " dur=23774 ") {
		t.Errorf("%s, want dur=23774", l)
	}
	if _, l := find(t1, "rank=0 t2 omp_implicit_task start=2213603 "); !strings.Contains(l, " dur=85771 ") {
		t.Errorf("%s, want dur=85771 (never ended)", l)
	}
}

// A worker's row read while its region is open, ending past what the
// thread that began the region has reached, waits for the region's end:
// it comes out after the parallel row, clamped. One that ends within what
// that thread reached goes out at once.
func TestLateEndHeld(t *testing.T) {
	p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	type out struct {
		thread uint32
		kind   trace.Kind
		start  int64
		dur    int64
	}
	var got []out
	pr := NewPairer(p, func(p *Process, r *Row) error {
		got = append(got, out{r.Thread, r.Kind, r.Start, r.Dur})
		return nil
	})
	ev := func(k trace.Kind, thread uint32, time int64, args ...uint64) {
		e := trace.Event{Kind: k, Thread: thread, Time: time}
		copy(e.Args[:], args)
		if err := pr.Add(&e); err != nil {
			t.Fatal(err)
		}
	}
	ev(trace.OmpParallelBegin, 0, 10, 1, 0, 2, 0, 0)
	ev(trace.OmpImplicitTaskBegin, 0, 11, 2, 1, 0, 2, 0)
	ev(trace.OmpImplicitTaskBegin, 1, 12, 3, 1, 1, 2, 0)
	ev(trace.OmpWorkBegin, 0, 13, 4, 1, 1, 2, 10)
	ev(trace.OmpWorkEnd, 0, 30, 4)
	ev(trace.OmpWorkBegin, 1, 14, 5, 1, 1, 3, 10)
	ev(trace.OmpWorkEnd, 1, 25, 5)          // within thread 0's 30: at once
	ev(trace.OmpImplicitTaskEnd, 1, 100, 3) // the late end: held
	ev(trace.OmpImplicitTaskEnd, 0, 45, 2)
	ev(trace.OmpParallelEnd, 0, 50, 1)
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []out{
		{0, trace.OmpWorkBegin, 13, 17},
		{1, trace.OmpWorkBegin, 14, 11},
		{0, trace.OmpImplicitTaskBegin, 11, 34},
		{0, trace.OmpParallelBegin, 10, 40},
		{1, trace.OmpImplicitTaskBegin, 12, 38}, // 100 clamped to 50
	}
	if len(got) != len(want) {
		t.Fatalf("rows %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
