package model

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/omp/omptest"
)

// A worker's implicit task, and the sync regions and waits of its region,
// end no later than the parallel region, and there when they never end
// (libomp reports the worker's end late, or never for the last region);
// a worker's rows read before their region's begin come out after its
// parallel row.
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
	par, _ := find(small, "rank=3 t0 omp_parallel start=11000 ")
	if worker, _ := find(small, `rank=3 t1 omp_work "loop" start=13000 `); worker < par {
		t.Errorf("thread 1's loop of region 101 is row %d, before the region's row %d", worker, par)
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
