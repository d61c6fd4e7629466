// Package omptest writes a small synthetic trace of OpenMP events (trace
// format 1.1, kinds 26..41) whose rows, dependence edges and summary
// figures the tests of formats/analysis, formats/omp, formats/parquet,
// formats/csv and formats/summary check exactly.
package omptest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// WriteSmall writes the trace, with tracetest's header and defs (kernel 1
// is axpy, kernel 2 dot). Times below are µs after tracetest.MonoStart.
//
// Thread 0 is the initial thread, thread 1 a worker; the worker's batch
// comes first in the file, so its rows are read before the launches and
// task creates of thread 0 that they belong to.
//
//   - Launch 100 (axpy), 10..66: parallel region 101, team of 2, a loop.
//     Implicit tasks 12..64 on both threads; thread 0 waits 20 in the
//     implicit barrier, thread 1 waits 1. Busy 32 and 51: imbalance
//     51/41.5 = 1.2289, wait share 21/104 = 20.19 %.
//   - Launch 300 (dot), 200..400: parallel region 301, team of 2; thread 0
//     runs a single that creates tasks 310..314:
//     310 inout(a); 311 in(a) inout(b); 312 in(a) inout(c);
//     313 in(b,c) inout(d); 314 with no depend records.
//     The runtime reports 310→311, 310→312, 312→313 and 313→314. Edges:
//     310→311 both, 310→312 both, 311→313 depend, 312→313 both,
//     313→314 runtime. Execution: 310 10 (t0), 311 10+5 in two segments
//     (t0, suspended once), 312 20 (t1), 313 30 (t0), 314 5 (t0): task time
//     80, critical path 310→312→313→314 = 65. The implicit tasks last 197;
//     thread 0 waits 180 in the barrier of which it runs tasks 60 (idle
//     120, busy 77), thread 1 waits 188 of which it runs 20 (idle 168,
//     busy 29): imbalance 77/53 = 1.4528, wait share 288/394 = 73.10 %.
//   - Outside launches, 500..600: parallel region 501, team of 2. Thread 0
//     creates tasks 510, 511, 512 each inout(e) and runs them, 10 each, in
//     an explicit barrier's wait (505..595): edges 510→511 both, 511→512
//     depend, critical path 30; its implicit task lasts 98, busy
//     98-(90-30) = 38. Thread 1's implicit task (from 501) and the wait of
//     its implicit barrier (from 520) never end, as a worker's in LLVM's
//     last region: the Pairer ends them with the region, at 600: implicit
//     task 99, wait 80, busy 19. Imbalance 38/28.5 = 1.3333, wait share
//     (60+80)/(98+99) = 71.07 %. Then task 520, created by the
//     initial task 50 at 650, starts at 651 and is still running when the
//     trace ends: a half segment, not completed. Thread 1 never ends.
func WriteSmall(w io.Writer) error {
	tw, err := trace.NewWriter(w, tracetest.Header())
	if err != nil {
		return err
	}
	if err := tw.WriteDefs(tracetest.Defs()); err != nil {
		return err
	}
	us := func(n int64) int64 { return tracetest.MonoStart + n*1000 }
	t0, t1 := tw.Batch(0), tw.Batch(1)
	add := func(b *trace.Batch, k trace.Kind, t int64, args ...uint64) {
		if err == nil {
			err = b.Add(k, us(t), args...)
		}
	}
	const (
		par   = 0x80000002 // OMPT parallel flags: team, ...
		expl  = 4          // ompt_task_explicit
		loop  = 1
		singE = 3
		singO = 4
		impl  = 2 // sync kind: implicit barrier
		explB = 3 // sync kind: explicit barrier
		in    = 1
		inout = 3
		done  = 1
		swtch = 7
		a, b  = 0xa0, 0xb0
		c, d  = 0xc0, 0xd0
		e     = 0xe0
	)

	// Thread 1, the worker.
	add(t1, trace.OmpThreadBegin, 2, 2000, 2)
	add(t1, trace.OmpImplicitTaskBegin, 12, 202, 101, 1, 2, 100)
	add(t1, trace.OmpWorkBegin, 13, 203, loop, 101, 202, 100)
	add(t1, trace.OmpWorkEnd, 63, 203)
	add(t1, trace.OmpSyncBegin, 63, 204, impl, 101, 202)
	add(t1, trace.OmpSyncWaitBegin, 63, 205, impl, 101, 202)
	add(t1, trace.OmpSyncWaitEnd, 64, 205)
	add(t1, trace.OmpSyncEnd, 64, 204)
	add(t1, trace.OmpImplicitTaskEnd, 64, 202)
	add(t1, trace.OmpImplicitTaskBegin, 201, 402, 301, 1, 2, 300)
	add(t1, trace.OmpWorkBegin, 202, 403, singO, 301, 402, 1)
	add(t1, trace.OmpWorkEnd, 202, 403)
	add(t1, trace.OmpSyncBegin, 202, 404, impl, 301, 402)
	add(t1, trace.OmpSyncWaitBegin, 202, 405, impl, 301, 402)
	add(t1, trace.OmpTaskSchedule, 222, 402, swtch, 312)
	add(t1, trace.OmpTaskSchedule, 242, 312, done, 402)
	add(t1, trace.OmpSyncWaitEnd, 390, 405)
	add(t1, trace.OmpSyncEnd, 390, 404)
	add(t1, trace.OmpImplicitTaskEnd, 398, 402)
	add(t1, trace.OmpImplicitTaskBegin, 501, 602, 501, 1, 2, 0)
	add(t1, trace.OmpSyncBegin, 520, 603, impl, 501, 602)
	add(t1, trace.OmpSyncWaitBegin, 520, 604, impl, 501, 602)

	// Thread 0, the initial thread.
	add(t0, trace.OmpThreadBegin, 1, 1000, 1)
	// Launch 100: axpy.
	add(t0, trace.RunBegin, 10, 100, 1, 1, 0)
	add(t0, trace.OmpParallelBegin, 11, 101, 50, 2, par, 100)
	add(t0, trace.OmpImplicitTaskBegin, 12, 102, 101, 0, 2, 100)
	add(t0, trace.OmpWorkBegin, 13, 103, loop, 101, 102, 100)
	add(t0, trace.OmpWorkEnd, 43, 103)
	add(t0, trace.OmpSyncBegin, 43, 104, impl, 101, 102)
	add(t0, trace.OmpSyncWaitBegin, 43, 105, impl, 101, 102)
	add(t0, trace.OmpSyncWaitEnd, 63, 105)
	add(t0, trace.OmpSyncEnd, 63, 104)
	add(t0, trace.OmpImplicitTaskEnd, 64, 102)
	add(t0, trace.OmpParallelEnd, 65, 101)
	add(t0, trace.RunEnd, 66, 100, trace.StatusOK)
	// Launch 300: dot, a task graph.
	add(t0, trace.RunBegin, 200, 300, 2, 1, 0)
	add(t0, trace.OmpParallelBegin, 201, 301, 50, 2, par, 300)
	add(t0, trace.OmpImplicitTaskBegin, 201, 302, 301, 0, 2, 300)
	add(t0, trace.OmpWorkBegin, 202, 303, singE, 301, 302, 1)
	add(t0, trace.OmpTaskCreate, 203, 310, 302, expl, 1, 300)
	add(t0, trace.OmpTaskDepend, 203, 310, a, inout)
	add(t0, trace.OmpTaskCreate, 204, 311, 302, expl, 1, 300)
	add(t0, trace.OmpTaskDepend, 204, 311, a, in)
	add(t0, trace.OmpTaskDepend, 204, 311, b, inout)
	add(t0, trace.OmpTaskDependence, 204, 310, 311)
	add(t0, trace.OmpTaskCreate, 205, 312, 302, expl, 1, 300)
	add(t0, trace.OmpTaskDepend, 205, 312, a, in)
	add(t0, trace.OmpTaskDepend, 205, 312, c, inout)
	add(t0, trace.OmpTaskDependence, 205, 310, 312)
	add(t0, trace.OmpTaskCreate, 206, 313, 302, expl, 1, 300)
	add(t0, trace.OmpTaskDepend, 206, 313, b, in)
	add(t0, trace.OmpTaskDepend, 206, 313, c, in)
	add(t0, trace.OmpTaskDepend, 206, 313, d, inout)
	add(t0, trace.OmpTaskDependence, 206, 312, 313)
	add(t0, trace.OmpTaskCreate, 207, 314, 302, expl, 1, 300)
	add(t0, trace.OmpTaskDependence, 207, 313, 314)
	add(t0, trace.OmpWorkEnd, 210, 303)
	add(t0, trace.OmpSyncBegin, 210, 304, impl, 301, 302)
	add(t0, trace.OmpSyncWaitBegin, 210, 305, impl, 301, 302)
	add(t0, trace.OmpTaskSchedule, 211, 302, swtch, 310)
	add(t0, trace.OmpTaskSchedule, 221, 310, done, 302)
	add(t0, trace.OmpTaskSchedule, 222, 302, swtch, 311)
	add(t0, trace.OmpTaskSchedule, 232, 311, swtch, 302)
	add(t0, trace.OmpTaskSchedule, 250, 302, swtch, 311)
	add(t0, trace.OmpTaskSchedule, 255, 311, done, 302)
	add(t0, trace.OmpTaskSchedule, 260, 302, swtch, 313)
	add(t0, trace.OmpTaskSchedule, 290, 313, done, 302)
	add(t0, trace.OmpTaskSchedule, 300, 302, swtch, 314)
	add(t0, trace.OmpTaskSchedule, 305, 314, done, 302)
	add(t0, trace.OmpSyncWaitEnd, 390, 305)
	add(t0, trace.OmpSyncEnd, 390, 304)
	add(t0, trace.OmpImplicitTaskEnd, 398, 302)
	add(t0, trace.OmpParallelEnd, 399, 301)
	add(t0, trace.RunEnd, 400, 300, trace.StatusOK)
	// Outside launches: a chain of three tasks.
	add(t0, trace.OmpParallelBegin, 500, 501, 50, 2, par, 0)
	add(t0, trace.OmpImplicitTaskBegin, 501, 502, 501, 0, 2, 0)
	add(t0, trace.OmpTaskCreate, 502, 510, 502, expl, 1, 0)
	add(t0, trace.OmpTaskDepend, 502, 510, e, inout)
	add(t0, trace.OmpTaskCreate, 503, 511, 502, expl, 1, 0)
	add(t0, trace.OmpTaskDepend, 503, 511, e, inout)
	add(t0, trace.OmpTaskDependence, 503, 510, 511)
	add(t0, trace.OmpTaskCreate, 504, 512, 502, expl, 1, 0)
	add(t0, trace.OmpTaskDepend, 504, 512, e, inout)
	add(t0, trace.OmpSyncBegin, 505, 503, explB, 501, 502)
	add(t0, trace.OmpSyncWaitBegin, 505, 504, explB, 501, 502)
	add(t0, trace.OmpTaskSchedule, 510, 502, swtch, 510)
	add(t0, trace.OmpTaskSchedule, 520, 510, done, 502)
	add(t0, trace.OmpTaskSchedule, 530, 502, swtch, 511)
	add(t0, trace.OmpTaskSchedule, 540, 511, done, 502)
	add(t0, trace.OmpTaskSchedule, 550, 502, swtch, 512)
	add(t0, trace.OmpTaskSchedule, 560, 512, done, 502)
	add(t0, trace.OmpSyncWaitEnd, 595, 504)
	add(t0, trace.OmpSyncEnd, 595, 503)
	add(t0, trace.OmpImplicitTaskEnd, 599, 502)
	add(t0, trace.OmpParallelEnd, 600, 501)
	// A task of the initial task, still running at the end.
	add(t0, trace.OmpTaskCreate, 650, 520, 50, expl, 0, 0)
	add(t0, trace.OmpTaskSchedule, 651, 50, swtch, 520)
	if err != nil {
		return err
	}
	for _, b := range []*trace.Batch{t1, t0} {
		if err := tw.WriteBatch(b); err != nil {
			return err
		}
	}
	return tw.Close()
}

// SmallFile writes the trace of WriteSmall into a temporary directory of t
// and returns its path.
func SmallFile(t testing.TB) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSmall(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "omp.occatrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
