package occa

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/occatest"
)

const (
	streamLaunches = 10   // per stream
	busyIters      = 4000 // a few ms of device work per launch on a CPU
)

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
// exactly one device time, of its own kernel (a positive duration), while
// the tool adds no synchronisation: the program's wall and launch times,
// untraced and traced, are logged as figures (not asserted: a test may not
// depend on the machine being quiet). Serial, synchronous, is the baseline.
func TestStreams(t *testing.T) {
	needOCCA2(t)
	for _, m := range modes("Serial", "OpenCL") {
		mode := m[0]
		t.Run(mode, func(t *testing.T) {
			skipOpenCL(t, mode)
			dir := t.TempDir()
			env := []string{"OCCA_DIR=" + occaDir, "OCCA_CACHE_DIR=" + filepath.Join(dir, "cache")}
			args := []string{filepath.Join(bin, "streams"), m[1], busyOKL, strconv.Itoa(streamLaunches), strconv.Itoa(busyIters)}

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
				perStream := deviceTimes(t, ev, flags != nil)
				figures = append(figures, fmt.Sprintf("occa-prof %v: wall %d us, launches %d us, device time by stream (us) %v",
					flags, wall, launch, perStream))
			}
			t.Logf("%s, %d x %d launches of busy(%d):\n  %s", mode, 2, streamLaunches, busyIters, strings.Join(figures, "\n  "))
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

// deviceTimes checks that each launch has exactly one device time with a
// positive duration when want, none otherwise, and returns the device time
// per stream in us.
func deviceTimes(t *testing.T, ev *occatest.Events, want bool) map[uint64]int64 {
	t.Helper()
	stream := map[uint64]uint64{} // launch -> stream
	times := map[uint64][]int64{} // launch -> durations
	for _, e := range ev.Events {
		switch e.Kind {
		case trace.RunBegin:
			stream[e.Args[0]] = e.Args[3]
		case trace.DeviceTime:
			times[e.Args[0]] = append(times[e.Args[0]], int64(e.Args[2])-int64(e.Args[1]))
		}
	}
	per := map[uint64]int64{}
	for c, s := range stream {
		d := times[c]
		switch {
		case !want && len(d) != 0:
			t.Errorf("launch %d: device times %v without --device-time", c, d)
		case want && (len(d) != 1 || d[0] <= 0):
			t.Errorf("launch %d: device times %v, want one positive duration", c, d)
		case want:
			per[s] += d[0] / 1000
		}
	}
	for c := range times {
		if _, ok := stream[c]; !ok {
			t.Errorf("a device time for %d, which is no launch", c)
		}
	}
	return per
}
