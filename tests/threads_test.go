package tests

import (
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// A program whose main thread leaves with pthread_exit ends, untraced, when
// its last worker returns (glibc's exit(0)). Traced, the Go runtime's
// threads never end: before lastthread.c the process hung for ever once its
// work was done. Now it ends as untraced, exit status 0 and the same
// output, linked or through the preload shim, and its trace is complete,
// with every region of main and of the workers.
func TestMainThreadExitEndsTheProcess(t *testing.T) {
	const threads, pairs = 4, 1000
	runs := tracedAsUntraced(t, "mainexit", "[output]\n", "exit 0", "mainexit: threads=4 pairs=1000\n", "4", "1000")
	for mode, r := range runs {
		if n := r.trace.counts[trace.RegionPush] + r.trace.counts[trace.RegionPop]; n != 2*(threads+1)*pairs {
			t.Errorf("%s: %d region events, want %d", mode, n, 2*(threads+1)*pairs)
		}
	}
}

// Threads cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS) while they
// record under new names: a thread cancelled while it held the runtime's
// string lock, or was inside malloc, left it held, and the next thread to
// need it hung the process (3 runs of 3; glibc acts on a cancellation
// signal in flight even with cancellation disabled, so the slow paths also
// make it deferred). Now the program ends as untraced, linked or through
// the preload shim, and its trace is complete, with main's region after
// the rounds.
func TestAsyncCancelledThreads(t *testing.T) {
	runs := tracedAsUntraced(t, "cancel", "[output]\n", "exit 0", "cancel: rounds=2000\n", "2000")
	for mode, r := range runs {
		if c := r.trace.counts; c[trace.RegionPush] == 0 || c[trace.RegionPop] == 0 {
			t.Errorf("%s: %d region pushes, %d pops; want main's at least", mode, c[trace.RegionPush], c[trace.RegionPop])
		}
	}
}
