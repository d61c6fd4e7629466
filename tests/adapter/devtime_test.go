package adapter

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	if busy := occatest.Busy(spans); busy >= sum {
		t.Errorf("the streams' kernels never overlap: busy %d ns, summed %d ns", busy, sum)
	}
}

func abs(v int64) int64 { return max(v, -v) }

// On CUDA the adapter reads kernel times from CUPTI where it loads
// (runtime/occa/cupti.cpp). Here it loads the fake CUPTI
// (tests/occa-standin/fake_cupti.c), to which the stand-in's queued CUDA
// mode reports each kernel with its start and end: every launch's device
// time is its kernel's, to the ns, whether the records come with the flush
// at the next finish (lag 0), only with a later one (lag 2: the waiting
// launches are requeued), or only at exit (lag 100).
func TestDriverCUPTIDeviceTimes(t *testing.T) {
	const n = 6
	for _, lag := range []int{0, 2, 100} {
		t.Run("lag"+strconv.Itoa(lag), func(t *testing.T) {
			dir := t.TempDir()
			records := filepath.Join(dir, "cupti.txt")
			env := []string{"OCCA_CACHE_DIR=" + filepath.Join(dir, "cache"),
				"OCCA_TOOLS_CUPTI=" + filepath.Join(standin, "libfake_cupti.so"),
				"FAKE_CUPTI_OUT=" + records, "FAKE_CUPTI_LAG=" + strconv.Itoa(lag)}
			out, files, err := occatest.Profile(t, occaProf, dir, env, []string{"--quiet", "--device-time"},
				filepath.Join(standin, "occa-standin-driver"), "-n", strconv.Itoa(n),
				"-props", "{mode: 'CUDA', device_id: 0, queued: true, kernel_us: 20000}")
			if err != nil || out != "ok\n" || len(files) != 1 {
				t.Fatalf("driver: %v, output %q, traces %v", err, out, files)
			}
			ev, err := occatest.ReadEvents(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var launches []uint64 // in launch order: the driver has one thread
			times := map[uint64][][2]uint64{}
			for _, e := range ev.Events {
				switch e.Kind {
				case trace.RunBegin:
					launches = append(launches, e.Args[0])
				case trace.DeviceTime:
					times[e.Args[0]] = append(times[e.Args[0]], [2]uint64{e.Args[1], e.Args[2]})
				}
			}
			kernels := fakeKernels(t, records)
			if len(launches) != 2*n+2 || len(kernels) != len(launches) {
				t.Fatalf("%d launches, %d kernels reported to CUPTI; want %d of each", len(launches), len(kernels), 2*n+2)
			}
			for i, c := range launches {
				if got := times[c]; len(got) != 1 || got[0] != kernels[i] {
					t.Errorf("launch %d (%d): device times %v, want its kernel's %v", i, c, got, kernels[i])
				}
			}
		})
	}
}

// fakeKernels reads fake_cupti.c's kernels, in the order reported.
func fakeKernels(t *testing.T, path string) [][2]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]uint64
	for _, l := range strings.Split(string(b), "\n") {
		var cid, start, end uint64
		if n, _ := fmt.Sscanf(l, "kernel %d %d %d", &cid, &start, &end); n == 3 {
			out = append(out, [2]uint64{start, end})
		}
	}
	return out
}
