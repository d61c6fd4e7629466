package adapter

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/occatest"
)

// The stand-in's "Queued" mode reads stream tags as a CUDA device would:
// each kernel runs kernel_us on its stream once the stream is free, and
// nothing waits. The driver queues N+2 launches on its first stream and N
// on a second, whose finish is read first. Every launch gets a device time
// on the host clock (timing.cpp's DeviceClock): no earlier than its launch
// began, a stream's kernels one after another, each kernel that was still
// queued when the next launch returned followed by it at once, such a
// kernel exactly kernel_us long (the others no shorter), and the two
// streams' kernels overlapping. With 0.4 s kernels the timeline runs over
// 4 s: the clock moves its reference on.
func TestDriverQueuedDeviceTimes(t *testing.T) {
	for _, us := range []int64{50_000, 400_000} {
		t.Run(strconv.FormatInt(us, 10)+"us", func(t *testing.T) { checkQueued(t, us*1000) })
	}
}

func checkQueued(t *testing.T, queuedKernel int64) {
	const n = 8
	dir := t.TempDir()
	env := []string{"OCCA_CACHE_DIR=" + filepath.Join(dir, "cache")}
	props := fmt.Sprintf("{mode: 'Queued', kernel_us: %d}", queuedKernel/1000)
	out, files, err := occatest.Profile(t, occaProf, dir, env, []string{"--quiet", "--device-time"},
		filepath.Join(standin, "occa-standin-driver"), "-n", strconv.Itoa(n), "-props", props)
	if err != nil || out != "ok\n" || len(files) != 1 {
		t.Fatalf("driver: %v, output %q, traces %v", err, out, files)
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	launches, orphans := occatest.Launches(ev)
	for _, c := range orphans {
		t.Errorf("a device time for %d, which is no launch", c)
	}
	if len(launches) != 2*n+2 {
		t.Fatalf("%d launches, want %d", len(launches), 2*n+2)
	}
	// A launch's device time: its last, the one checked.
	dev := func(l *occatest.Launch) [2]int64 {
		if len(l.DeviceTimes) == 0 {
			return [2]int64{}
		}
		return l.DeviceTimes[len(l.DeviceTimes)-1]
	}
	byStream := map[uint64][]*occatest.Launch{} // each in launch order: the driver has one thread
	var sum int64
	var spans [][2]int64
	for i := range launches {
		l := &launches[i]
		d := dev(l)
		if len(l.DeviceTimes) != 1 || d[0] == 0 || d[0] < l.Begin || d[1]-d[0] < queuedKernel {
			t.Fatalf("launch %d (host %d to %d ns): %d device times, the last [%d, %d); want one on the host clock, "+
				"from no earlier than the launch began, at least %d ns long", l.Corr, l.Begin, l.End, len(l.DeviceTimes), d[0], d[1], queuedKernel)
		}
		byStream[l.Stream] = append(byStream[l.Stream], l)
		sum += d[1] - d[0]
		spans = append(spans, d)
	}
	const rounding = 1000 // ns: tags' seconds in a double, then ns
	queued := 0
	for s, ls := range byStream {
		for i := 1; i < len(ls); i++ {
			p, l := dev(ls[i-1]), dev(ls[i])
			if l[0] < p[1]-rounding {
				t.Errorf("stream %d, launch %d: starts at %d ns, before the one before ends (%d ns)", s, i, l[0], p[1])
			}
			if p[1] > ls[i].End { // still queued when this launch returned
				queued++
				if l[0] > p[1]+rounding || abs(l[1]-l[0]-queuedKernel) > rounding {
					t.Errorf("stream %d, launch %d: [%d, %d), want %d ns from the end of the one before (%d ns)",
						s, i, l[0], l[1], queuedKernel, p[1])
				}
			}
		}
	}
	// Three streams as recorded: the first stream before it is set (0) and
	// after, which the adapter cannot tell apart, and the second.
	if len(byStream) != 3 || queued == 0 {
		t.Errorf("%d streams, %d launches queued behind another; want 3 and some", len(byStream), queued)
	}
	if busy := occatest.Busy(spans); busy >= sum {
		t.Errorf("the streams' kernels never overlap: busy %d ns, summed %d ns", busy, sum)
	}
}

func abs(v int64) int64 { return max(v, -v) }

// On CUDA the adapter reads kernel times from CUPTI where it loads
// (runtime/occa/cupti.cpp). Here it loads the fake CUPTI
// (tests/occa-standin/fake_cupti.c), to which the stand-in's queued CUDA
// mode reports each kernel with its start and end: every launch's device
// time is its kernel's, to the ns, whether the records are complete at the
// flush of the next finish (lag 0), only at a later one (lag 2: the waiting
// launches are requeued), or only at exit (lag 100). The flushes at the
// finishes are unforced: a forced one would take the records still
// incomplete, without timestamps (as on an H200, where the last kernel of a
// stream just finished came so). Records still incomplete at exit leave
// their launches untimed, and counted in a warning. A flush brings every
// stream's records: with lag 0, stream1's finish resolves the launches of
// both streams (stream0's too, which only a later blocking copy would
// resolve with stream tags).
func TestDriverCUPTIDeviceTimes(t *testing.T) {
	const n = 6
	for _, c := range []struct {
		name     string
		lag      int
		complete bool // the records are complete at exit
	}{{"lag0", 0, true}, {"lag2", 2, true}, {"lag100", 100, true}, {"incomplete-at-exit", 100, false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			records := filepath.Join(dir, "cupti.txt")
			env := []string{"OCCA_CACHE_DIR=" + filepath.Join(dir, "cache"),
				"OCCA_TOOLS_CUPTI=" + filepath.Join(standin, "libfake_cupti.so"),
				"FAKE_CUPTI_OUT=" + records, "FAKE_CUPTI_LAG=" + strconv.Itoa(c.lag)}
			wantOut := "ok\n"
			if !c.complete {
				env = append(env, "FAKE_CUPTI_EXIT=incomplete")
				wantOut = fmt.Sprintf("OCCA adapter: %d kernel launches got no device time", 2*n+2)
			}
			out, files, err := occatest.Profile(t, occaProf, dir, env, []string{"--quiet", "--device-time"},
				filepath.Join(standin, "occa-standin-driver"), "-n", strconv.Itoa(n),
				"-props", "{mode: 'CUDA', device_id: 0, queued: true, kernel_us: 20000}")
			// The program's "ok" leaves stdout's buffer after the exit handlers.
			if err != nil || len(files) != 1 || !strings.HasSuffix(out, "ok\n") ||
				(c.complete && out != wantOut) || !strings.Contains(out, wantOut) {
				t.Fatalf("driver: %v, output %q (want %q), traces %v", err, out, wantOut, files)
			}
			ev, err := occatest.ReadEvents(files[0])
			if err != nil {
				t.Fatal(err)
			}
			launches, _ := occatest.Launches(ev) // in launch order: the driver has one thread
			kernels := fakeKernels(t, records)
			if len(launches) != 2*n+2 || len(kernels) != len(launches) {
				t.Fatalf("%d launches, %d kernels reported to CUPTI; want %d of each", len(launches), len(kernels), 2*n+2)
			}
			if c.lag == 0 {
				checkResolvedBefore(t, ev, launches[2*n].Corr, 2*n)
			}
			for i, l := range launches {
				if want := [][2]int64{kernels[i]}; !c.complete && len(l.DeviceTimes) != 0 {
					t.Errorf("launch %d (%d): device times %v, want none (CUPTI's record had no timestamps)", i, l.Corr, l.DeviceTimes)
				} else if c.complete && !reflect.DeepEqual(l.DeviceTimes, want) {
					t.Errorf("launch %d (%d): device times %v, want its kernel's %v", i, l.Corr, l.DeviceTimes, want)
				}
			}
		})
	}
}

// checkResolvedBefore checks that the first n launches of ev's (one)
// thread have their device times in the trace before launch corr begins.
func checkResolvedBefore(t *testing.T, ev *occatest.Events, corr uint64, n int) {
	t.Helper()
	var launched []uint64
	timed := map[uint64]bool{}
	for _, e := range ev.Events {
		switch {
		case e.Kind == trace.RunBegin && e.Args[0] == corr:
			for i, c := range launched[:min(n, len(launched))] {
				if !timed[c] {
					t.Errorf("launch %d (%d): no device time yet when launch %d begins", i, c, corr)
				}
			}
			return
		case e.Kind == trace.RunBegin:
			launched = append(launched, e.Args[0])
		case e.Kind == trace.DeviceTime:
			timed[e.Args[0]] = true
		}
	}
	t.Errorf("launch %d never begins", corr)
}

// fakeKernels reads fake_cupti.c's kernels, in the order reported.
func fakeKernels(t *testing.T, path string) [][2]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]int64
	for _, l := range strings.Split(string(b), "\n") {
		var cid uint64
		var start, end int64
		if n, _ := fmt.Sscanf(l, "kernel %d %d %d", &cid, &start, &end); n == 3 {
			out = append(out, [2]int64{start, end})
		}
	}
	return out
}
