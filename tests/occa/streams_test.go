package occa

import (
	"encoding/csv"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
)

const streamLaunches = 10 // per stream

// busyIters is the device work per launch of busy.okl: a few ms on a CPU;
// on a GPU, where a step is one dependent multiply-add (about 2 ns), about
// 0.5 ms, so that the two streams' kernels overlap for certain.
func busyIters(mode string) int {
	if mode == "CUDA" {
		return 250000
	}
	return 4000
}

// streamsFigures is what programs/streams.cpp says on stderr.
func streamsFigures(out string) (wall, launch int64, ok bool) {
	for _, l := range strings.Split(out, "\n") {
		if n, _ := fmt.Sscanf(l, "streams: wall_us %d launch_us %d", &wall, &launch); n == 2 {
			return wall, launch, true
		}
	}
	return 0, 0, false
}

// Kernels on two streams at once (programs/streams.cpp) on an asynchronous
// backend, where a launch returns before its kernel ends: every launch is
// recorded once with its stream, and with --device-time every launch gets
// exactly one device time, of its own kernel (a positive duration), placed
// on the host clock (checkTimeline), while the tool adds no
// synchronisation. The program's wall and launch times, untraced and
// traced, are logged as figures. Serial, synchronous, is the baseline.
func TestStreams(t *testing.T) {
	needOCCA2(t)
	for _, m := range modes("Serial", "OpenCL", "CUDA") {
		mode := m[0]
		t.Run(mode, func(t *testing.T) {
			skipMissing(t, mode)
			dir := t.TempDir()
			env := []string{"OCCA_DIR=" + occaDir, "OCCA_CACHE_DIR=" + filepath.Join(dir, "cache")}
			iters := busyIters(mode)
			args := []string{filepath.Join(bin, "streams"), m[1], busyOKL, strconv.Itoa(streamLaunches), strconv.Itoa(iters)}

			// Untraced, twice: the first run compiles the kernel.
			var figures []string
			for i := 0; i < 2; i++ {
				cmd := command(t, args, env)
				out, err := cmd.CombinedOutput()
				wall, launch, ok := streamsFigures(string(out))
				if err != nil || !ok || !strings.HasSuffix(string(out), "ok\n") {
					t.Fatalf("untraced: %v\n%s", err, out)
				}
				if i == 1 {
					figures = append(figures, fmt.Sprintf("untraced wall %d us, launches %d us", wall, launch))
				}
			}
			for _, flags := range [][]string{nil, {"--device-time"}} {
				out, files, err := occatest.Profile(t, occaProf, t.TempDir(), env, append([]string{"--quiet"}, flags...), args...)
				wall, launch, ok := streamsFigures(out)
				if err != nil || !ok || !strings.HasSuffix(out, "ok\n") || len(files) != 1 {
					t.Fatalf("occa-prof %v: %v, traces %v\n%s", flags, err, files, out)
				}
				cp, err := occatest.Read(files[0])
				if err != nil {
					t.Fatal(err)
				}
				checkStreams(t, cp)
				ev, err := occatest.ReadEvents(files[0])
				if err != nil {
					t.Fatal(err)
				}
				runs := deviceTimes(t, ev, flags != nil)
				fig := fmt.Sprintf("occa-prof %v: wall %d us, launches %d us", flags, wall, launch)
				if flags != nil {
					sum, busy := checkTimeline(t, runs, mode != "Serial")
					checkSummary(t, files[0], sum, busy)
					fig += fmt.Sprintf(", device time %d us summed, %d us busy (union)", sum/1000, busy/1000)
					// Kernels on two streams overlap on a GPU; were the tool
					// to wait for each kernel, they could not.
					if mode == "CUDA" && busy >= sum {
						t.Errorf("the two streams' kernels never overlap (busy %d ns, summed %d ns)", busy, sum)
					}
				}
				figures = append(figures, fig)
			}
			t.Logf("%s, %d x %d launches of busy(%d):\n  %s", mode, 2, streamLaunches, iters, strings.Join(figures, "\n  "))
		})
	}
}

func checkStreams(t *testing.T, cp *occatest.Capture) {
	t.Helper()
	if cp.Allocs != 2 || cp.AllocBytes != 2*16384 {
		t.Errorf("allocations: %d (%d B), want 2 (32768 B)", cp.Allocs, cp.AllocBytes)
	}
	want := map[string]occatest.Traffic{"H2D": {Count: 2, Bytes: 2 * 16384}, "D2H": {Count: 2, Bytes: 2 * 16384}}
	if !reflect.DeepEqual(cp.Copies, want) {
		t.Errorf("copies: %v, want %v", cp.Copies, want)
	}
	if got := cp.BuildNames(); !reflect.DeepEqual(got, []string{"busy"}) {
		t.Errorf("builds: %v, want [busy]", got)
	}
	if !reflect.DeepEqual(cp.Launches, map[string]int{"busy": 2 * streamLaunches}) {
		t.Errorf("launches: %v, want busy: %d", cp.Launches, 2*streamLaunches)
	}
	if len(cp.LaunchesOnStream) != 2 || cp.LaunchesOnStream[0] != 0 {
		t.Errorf("launches by stream: %v, want %d on each of two created streams", cp.LaunchesOnStream, streamLaunches)
	}
	for id, n := range cp.LaunchesOnStream {
		if n != streamLaunches {
			t.Errorf("stream %d: %d launches, want %d", id, n, streamLaunches)
		}
	}
	if cp.StreamCreates != 2 || cp.StreamSets != 2*streamLaunches || cp.StreamFinishes != 2 {
		t.Errorf("streams: %d created, %d set, %d finished; want 2, %d, 2", cp.StreamCreates, cp.StreamSets, cp.StreamFinishes, 2*streamLaunches)
	}
}

// launchTime is a launch and its device time.
type launchTime struct {
	corr, stream uint64
	host         int64 // the launch's begin, host clock
	start, end   int64 // its device time: start 0 when only a duration
}

// deviceTimes checks that each launch has exactly one device time with a
// positive duration when want, none otherwise, and returns the launches in
// the order they began.
func deviceTimes(t *testing.T, ev *occatest.Events, want bool) []launchTime {
	t.Helper()
	launches, orphans := occatest.Launches(ev)
	var runs []launchTime
	for _, l := range launches {
		r := launchTime{corr: l.Corr, stream: l.Stream, host: l.Begin}
		d := l.DeviceTimes
		switch {
		case !want && len(d) != 0:
			t.Errorf("launch %d: device times %v without --device-time", r.corr, d)
		case want && (len(d) != 1 || d[0][1] <= d[0][0]):
			t.Errorf("launch %d: device times %v, want one positive duration", r.corr, d)
		case want:
			r.start, r.end = d[0][0], d[0][1]
		}
		runs = append(runs, r)
	}
	for _, c := range orphans {
		t.Errorf("a device time for %d, which is no launch", c)
	}
	return runs
}

// timelineSlack is what the device times of one stream may overlap by:
// CUDA gives the time between two tags in float milliseconds, and each
// start is placed from one such difference (60 ns steps a second on).
const timelineSlack = 2000 // ns

// checkTimeline checks that every launch's device interval is on the host
// clock: it starts no sooner than its launch began, and a stream's kernels
// run one after another in launch order. It returns the device time summed
// and the union of the intervals (busy), in ns. async says the backend's
// launches return before their kernels end (else the interval is the host
// one, which the Serial tests check already).
func checkTimeline(t *testing.T, runs []launchTime, async bool) (sum, busy int64) {
	t.Helper()
	last := map[uint64]launchTime{}
	var spans [][2]int64
	for _, r := range runs {
		if r.end == 0 {
			continue // reported by deviceTimes
		}
		sum += r.end - r.start
		spans = append(spans, [2]int64{r.start, r.end})
		if r.start == 0 {
			t.Errorf("launch %d: a device duration with no start: an asynchronous launch is placed on the host clock", r.corr)
			continue
		}
		if r.start < r.host {
			t.Errorf("launch %d: device start %d ns before the launch began (%d ns)", r.corr, r.start, r.host)
		}
		if p, ok := last[r.stream]; ok && async && r.start < p.end-timelineSlack {
			t.Errorf("stream %d: launch %d starts at %d ns, before launch %d ends (%d ns)", r.stream, r.corr, r.start, p.corr, p.end)
		}
		last[r.stream] = r
	}
	return sum, occatest.Busy(spans)
}

// checkSummary checks the summary's devices table against the trace's
// device times: kernel time summed, and busy as their union.
func checkSummary(t *testing.T, file string, sum, busy int64) {
	t.Helper()
	tools := filepath.Join(filepath.Dir(occaProf), "occa-tools")
	out, err := command(t, []string{tools, "summary", "-format", "csv", "-section", "devices", file}, nil).Output()
	if err != nil {
		t.Fatalf("%s summary: %v", tools, err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("summary's devices table: %v, want one device:\n%s", err, out)
	}
	row := map[string]string{}
	for i, c := range recs[0] {
		row[c] = recs[1][i]
	}
	if want := strconv.FormatInt(sum, 10); row["kernel_sum_ns"] != want {
		t.Errorf("summary: kernel_sum_ns %s, want %s", row["kernel_sum_ns"], want)
	}
	if want := strconv.FormatInt(busy, 10); row["kernel_busy_ns"] != want {
		t.Errorf("summary: kernel_busy_ns %s, want %s (the union of the device intervals)", row["kernel_busy_ns"], want)
	}
}
