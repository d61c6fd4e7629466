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
	args := []string{"4", "1000"}
	want := runTraced(t, "mainexit", "[output]\n", untraced, args...)
	if want.exit != "exit 0" || want.stdout != "mainexit: threads=4 pairs=1000\n" {
		t.Fatalf("untraced: %s, stdout %q\n%s", want.exit, want.stdout, want.stderr)
	}
	for _, mode := range []int{linked, shim} {
		got := runTraced(t, "mainexit", "[output]\n", mode, args...)
		name := modeNames[mode]
		if got.exit != want.exit || got.stdout != want.stdout || got.stderr != "" {
			t.Errorf("%s: %s, stdout %q, stderr %q; want %s, %q, nothing", name, got.exit, got.stdout, got.stderr, want.exit, want.stdout)
			continue
		}
		if len(got.traces) != 1 {
			t.Fatalf("%s: traces %v", name, got.traces)
		}
		g := readTrace(t, got.traces[0])
		if g.err != nil || g.stats == nil || !g.stats.Final {
			t.Errorf("%s: trace not complete: %v, stats %+v", name, g.err, g.stats)
		}
		if n := g.counts[trace.RegionPush] + g.counts[trace.RegionPop]; n != 2*(threads+1)*pairs {
			t.Errorf("%s: %d region events, want %d", name, n, 2*(threads+1)*pairs)
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
	args := []string{"2000"}
	want := runTraced(t, "cancel", "[output]\n", untraced, args...)
	if want.exit != "exit 0" || want.stdout != "cancel: rounds=2000\n" {
		t.Fatalf("untraced: %s, stdout %q\n%s", want.exit, want.stdout, want.stderr)
	}
	for _, mode := range []int{linked, shim} {
		got := runTraced(t, "cancel", "[output]\n", mode, args...)
		name := modeNames[mode]
		if got.exit != want.exit || got.stdout != want.stdout || got.stderr != "" {
			t.Errorf("%s: %s, stdout %q, stderr %q; want %s, %q, nothing", name, got.exit, got.stdout, got.stderr, want.exit, want.stdout)
			continue
		}
		if len(got.traces) != 1 {
			t.Fatalf("%s: traces %v", name, got.traces)
		}
		g := readTrace(t, got.traces[0])
		if g.err != nil || g.stats == nil || !g.stats.Final {
			t.Errorf("%s: trace not complete: %v, stats %+v", name, g.err, g.stats)
		}
		if g.counts[trace.RegionPush] == 0 || g.counts[trace.RegionPop] == 0 {
			t.Errorf("%s: %d region pushes, %d pops; want main's at least", name, g.counts[trace.RegionPush], g.counts[trace.RegionPop])
		}
	}
}
