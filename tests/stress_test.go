package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/testproc"
)

// The runtime's buffer and accounting limits, with tests/workload/stress.c,
// whose every mode emits a known number of events.

// tinyWait is the smallest pool the config allows (16 buffers of 64 KiB),
// with threads waiting for a buffer instead of dropping.
const tinyWait = "[output]\nmemory = \"1MiB\"\nbuffer_size = \"64KiB\"\non_full = \"wait\"\nflush_interval = \"50ms\"\n"

// runStress runs the stress program with configText and returns its one
// cleanly ended trace and its stdout. A hang fails the test at the deadline.
func runStress(t *testing.T, configText string, args ...string) (*got, string) {
	t.Helper()
	r := runProgram(t, "stress", configText, nil, args...)
	if r.err != nil {
		t.Fatalf("stress %v: %v (hung: %v)\nstderr:\n%s", args, r.err, testproc.Hung(t), r.stderr)
	}
	if len(r.traces) != 1 {
		t.Fatalf("want 1 trace, got %d; stderr:\n%s", len(r.traces), r.stderr)
	}
	g := readTrace(t, r.traces[0])
	if g.err != nil {
		t.Fatalf("reading %s: %v\nstderr:\n%s", r.traces[0], g.err, r.stderr)
	}
	if g.stats == nil || !g.stats.Final {
		t.Fatalf("%s has no final stats chunk", r.traces[0])
	}
	if strings.Contains(r.stderr, "bad raw record") {
		t.Errorf("the writer found a corrupt buffer:\n%s", r.stderr)
	}
	return g, r.stdout
}

func droppedBy(s *trace.Stats) string {
	var parts []string
	for r, n := range s.Dropped {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", trace.DropReasonName(uint64(r)), n))
		}
	}
	return strings.Join(parts, " ")
}

// Threads that record once and then idle keep no buffer the others need:
// with on_full = "wait" and 16 buffers, 256 such threads would wait for
// ever if idle threads kept theirs; every event reaches the trace.
func TestManyIdleThreadsWaitDoNotDeadlock(t *testing.T) {
	g, _ := runStress(t, tinyWait, "once", "256")
	if n := g.markers("once"); n != 256 || g.stats.TotalDropped() != 0 {
		t.Errorf("markers %d (want 256), dropped %s", n, droppedBy(g.stats))
	}
}

// With the default memory, 64 and 256 threads that record once lose
// nothing while the writer is idle (a thread's first buffer is small).
func TestManyIdleThreadsDefaultConfigLoseNothing(t *testing.T) {
	for _, n := range []string{"64", "256"} {
		g, _ := runStress(t, "[output]\nflush_interval = \"60s\"\n", "once", n, "100")
		if got := fmt.Sprint(g.markers("once")); got != n || g.stats.TotalDropped() != 0 {
			t.Errorf("%s threads: markers %s, dropped %s", n, got, droppedBy(g.stats))
		}
	}
}

// 64 and 256 threads recording steadily, at a rate the writer sustains,
// with the default config: nothing dropped.
func TestManyThreadsSteadyNoDrops(t *testing.T) {
	for _, c := range []struct{ threads, events int }{{64, 4000}, {256, 1000}} {
		g, _ := runStress(t, "[output]\n", "steady", fmt.Sprint(c.threads), fmt.Sprint(c.events))
		if n := g.markers("steady"); n != c.threads*c.events || g.stats.TotalDropped() != 0 {
			t.Errorf("%d threads: markers %d (want %d), dropped %s", c.threads, n, c.threads*c.events, droppedBy(g.stats))
		}
	}
}

// Buffers that fill are written whole (raw events chunks, whose events the
// writer counts by what the threads say), the last of each thread at the
// final flush after the writer scans it (raw events chunks too); the trace
// holds every marker, in time order per thread, and the stats count
// exactly the events read, by kind.
func TestWholeBuffersAndFlushedSpans(t *testing.T) {
	const threads, markers = 8, 100000
	g, _ := runStress(t, "[output]\nbuffer_size = \"64KiB\"\n", "steady", fmt.Sprint(threads), fmt.Sprint(markers))
	if n := g.markers("steady"); n != threads*markers || g.stats.TotalDropped() != 0 {
		t.Errorf("markers %d (want %d), dropped %s", n, threads*markers, droppedBy(g.stats))
	}
	read := 0
	for k, n := range g.counts {
		read += n
		if uint64(n) != g.stats.Events[k] {
			t.Errorf("%v: %d events read, the stats count %d", k, n, g.stats.Events[k])
		}
	}
	if total := g.stats.TotalEvents(); total != uint64(read) {
		t.Errorf("%d events read, the stats count %d", read, total)
	}
	t.Logf("%d chunks, %d of them raw", g.chunks, g.rawChunks)
	// A thread's markers take about 200 KiB: several 64 KiB buffers fill,
	// then its last one is flushed in part.
	if g.rawChunks < 2*threads {
		t.Errorf("%d chunks, %d of them raw: want at least %d (whole buffers and flushed spans)", g.chunks, g.rawChunks, 2*threads)
	}
	last := map[uint32]int64{}
	for _, e := range g.events {
		if e.Time < last[e.Thread] {
			t.Fatalf("thread %d: an event at %d ns after one at %d ns", e.Thread, e.Time, last[e.Thread])
		}
		last[e.Thread] = e.Time
	}
}

// A signal handler that calls the runtime while the thread it interrupted
// is inside a call (occa_tools.h forbids it) costs that one event, counted
// as reentrant: no corrupt buffer, no hang, and the trace plus the count
// account for every marker the program made.
func TestSignalHandlerReentryCounted(t *testing.T) {
	g, out := runStress(t, tinyWait, "reentry", "1000")
	var calls, work, refused int
	if _, err := fmt.Sscanf(out, "stress: reentry handler_calls=%d worker_markers=%d refused=%d", &calls, &work, &refused); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	reentrant := g.stats.Dropped[trace.DropReentrant]
	// main's allocation of the memory the handler tags: 2 events.
	inTrace := g.markers("handler") + g.markers("work") + g.counts[trace.MemoryAllocBegin] + g.counts[trace.MemoryAllocEnd] - 2
	if uint64(inTrace)+g.stats.TotalDropped() != uint64(3*calls+work) || g.stats.TotalDropped() != reentrant {
		t.Errorf("in trace %d + dropped (%s) != 3 x %d handler calls + %d worker markers",
			inTrace, droppedBy(g.stats), calls, work)
	}
	// A handler that interrupted a call lost its 3 events and was refused
	// its control call; every other handler call tagged the memory.
	if uint64(3*refused) != reentrant {
		t.Errorf("%d control calls refused, want a third of the %d re-entrant drops", refused, reentrant)
	}
	t.Logf("%d events of %d handler calls (3 each) interrupted a call and were counted", reentrant, calls)
}

// Regions nested deeper than the thread's inline frames are all recorded;
// beyond the runtime's limit (65536) each push and its pop are counted.
func TestDeepRegionsRecordedOrCounted(t *testing.T) {
	g, _ := runStress(t, "[output]\n", "deep", "1000")
	if g.counts[trace.RegionPush] != 1000 || g.counts[trace.RegionPop] != 1000 || g.stats.TotalDropped() != 0 {
		t.Errorf("1000 deep: push %d pop %d dropped %s", g.counts[trace.RegionPush], g.counts[trace.RegionPop], droppedBy(g.stats))
	}
	g, _ = runStress(t, "[output]\n", "deep", "70000")
	const limit, extra = 65536, 70000 - 65536
	if g.counts[trace.RegionPush] != limit || g.counts[trace.RegionPop] != limit ||
		g.stats.Dropped[trace.DropTooDeep] != 2*extra || g.stats.TotalDropped() != 2*extra {
		t.Errorf("70000 deep: push %d pop %d dropped %s, want %d each and too_deep=%d",
			g.counts[trace.RegionPush], g.counts[trace.RegionPop], droppedBy(g.stats), limit, 2*extra)
	}
}

// A device time is recorded only for a launch the runtime recorded: not for
// another call's id, ids no thread has reached, or a made-up one.
func TestDeviceTimeOnlyForRecordedLaunches(t *testing.T) {
	g, _ := runStress(t, "[events]\ndevice_time = true\n", "devtime")
	var launch uint64
	for _, e := range g.events {
		if e.Kind == trace.RunBegin {
			launch = e.Args[0]
		}
	}
	var times []uint64
	for _, e := range g.events {
		if e.Kind == trace.DeviceTime {
			times = append(times, e.Args[0])
		}
	}
	if launch == 0 || len(times) != 1 || times[0] != launch {
		t.Errorf("device times for %x, want one for the launch %x", times, launch)
	}
}

// Allocations ended without a slot cannot be freed or named again: the
// runtime records them and keeps nothing, so a source that passes no slot
// cannot make it grow (100,000 of them kept about 10 MB before).
func TestAllocationsWithoutSlotAreNotKept(t *testing.T) {
	g, out := runStress(t, "[output]\n", "noslot", "100000")
	var n, growth int
	if _, err := fmt.Sscanf(out, "stress: noslot n=%d heap_growth=%d", &n, &growth); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if g.counts[trace.MemoryAllocBegin] != n || g.counts[trace.MemoryAllocEnd] != n {
		t.Errorf("%d begins and %d ends in the trace, want %d each", g.counts[trace.MemoryAllocBegin], g.counts[trace.MemoryAllocEnd], n)
	}
	// The buffers the events fill come from the heap too; what the objects
	// would keep is 10x more.
	if growth > 2<<20 {
		t.Errorf("the heap grew by %d bytes over %d allocations without a slot", growth, n)
	}
	t.Logf("heap growth %d bytes", growth)
}
