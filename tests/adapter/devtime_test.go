package adapter

import (
	"cmp"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/occatest"
)

// queuedKernel is how long the stand-in's "Queued" mode says a kernel runs
// (its default kernel_us).
const queuedKernel = 50_000_000 // ns

// The stand-in's "Queued" mode reads stream tags as a CUDA device would:
// each kernel runs 50 ms on its stream once the stream is free, and nothing
// waits. The driver queues N+2 launches on its first stream and N on a
// second, whose finish is read first. Every launch gets a device time on
// the host clock (timing.cpp's DeviceClock): no earlier than its launch
// began, a stream's kernels one after another, each kernel that was still
// queued when the next launch returned followed by it at once, such a
// kernel exactly 50 ms long (the others no shorter), and the two streams'
// kernels overlapping.
func TestDriverQueuedDeviceTimes(t *testing.T) {
	const n = 8
	dir := t.TempDir()
	env := []string{"OCCA_CACHE_DIR=" + filepath.Join(dir, "cache")}
	out, files, err := occatest.Profile(t, occaProf, dir, env, []string{"--quiet", "--device-time"},
		filepath.Join(standin, "occa-standin-driver"), "-n", strconv.Itoa(n), "-mode", "Queued")
	if err != nil || out != "ok\n" || len(files) != 1 {
		t.Fatalf("driver: %v, output %q, traces %v", err, out, files)
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	type launch struct {
		stream           uint64
		begin, end       int64 // host
		devStart, devEnd int64
		deviceTimes      int
	}
	launches := map[uint64]*launch{}
	for _, e := range ev.Events {
		switch e.Kind {
		case trace.RunBegin:
			launches[e.Args[0]] = &launch{stream: e.Args[3], begin: e.Time}
		case trace.RunEnd:
			if l := launches[e.Args[0]]; l != nil {
				l.end = e.Time
			}
		case trace.DeviceTime:
			if l := launches[e.Args[0]]; l != nil {
				l.devStart, l.devEnd = int64(e.Args[1]), int64(e.Args[2])
				l.deviceTimes++
			} else {
				t.Errorf("a device time for %d, which is no launch", e.Args[0])
			}
		}
	}
	if len(launches) != 2*n+2 {
		t.Fatalf("%d launches, want %d", len(launches), 2*n+2)
	}
	byStream := map[uint64][]*launch{}
	var sum int64
	var spans [][2]int64
	for c, l := range launches {
		if l.deviceTimes != 1 || l.devStart == 0 || l.devStart < l.begin || l.devEnd-l.devStart < queuedKernel {
			t.Fatalf("launch %d (host %d to %d ns): %d device times, the last [%d, %d); want one on the host clock, "+
				"from no earlier than the launch began, at least %d ns long", c, l.begin, l.end, l.deviceTimes, l.devStart, l.devEnd, queuedKernel)
		}
		byStream[l.stream] = append(byStream[l.stream], l)
		sum += l.devEnd - l.devStart
		spans = append(spans, [2]int64{l.devStart, l.devEnd})
	}
	const rounding = 1000 // ns: tags' seconds in a double, then ns
	queued := 0
	for s, ls := range byStream {
		slices.SortFunc(ls, func(a, b *launch) int { return cmp.Compare(a.begin, b.begin) })
		for i := 1; i < len(ls); i++ {
			p, l := ls[i-1], ls[i]
			if l.devStart < p.devEnd-rounding {
				t.Errorf("stream %d, launch %d: starts at %d ns, before the one before ends (%d ns)", s, i, l.devStart, p.devEnd)
			}
			if p.devEnd > l.end { // still queued when this launch returned
				queued++
				if l.devStart > p.devEnd+rounding || abs(l.devEnd-l.devStart-queuedKernel) > rounding {
					t.Errorf("stream %d, launch %d: [%d, %d), want %d ns from the end of the one before (%d ns)",
						s, i, l.devStart, l.devEnd, queuedKernel, p.devEnd)
				}
			}
		}
	}
	// Three streams as recorded: the first stream before it is set (0) and
	// after, which the adapter cannot tell apart, and the second.
	if len(byStream) != 3 || queued == 0 {
		t.Errorf("%d streams, %d launches queued behind another; want 3 and some", len(byStream), queued)
	}
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var busy, end int64
	for _, s := range spans {
		busy += max(0, s[1]-max(s[0], end))
		end = max(end, s[1])
	}
	if busy >= sum {
		t.Errorf("the streams' kernels never overlap: busy %d ns, summed %d ns", busy, sum)
	}
}

func abs(v int64) int64 { return max(v, -v) }
