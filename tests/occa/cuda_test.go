package occa

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
)

// kernelTime is one kernel's device interval, in ns of its source's clock.
type kernelTime struct{ start, end int64 }

func (k kernelTime) dur() int64 { return k.end - k.start }

// vendorTolerance is how far a device duration may be from CUPTI's: 5 %, or
// 2 us for short kernels.
func vendorTolerance(ns int64) int64 { return max(2000, ns/20) }

// On CUDA, occa-tools' device times against the vendor's own: CUPTI's
// kernel records (programs/cupti_kernels.c, which the CUDA driver loads
// through CUDA_INJECTION64_PATH) of the streams program, with kernels of
// about 0.5 ms and of about 5 us. In the same run (where, another CUPTI
// client being injected, occa-tools times with stream tags) launch by
// launch, see compareTags; and the run after, untouched, where occa-tools
// reads CUPTI itself: every launch within 5 % (or 2 us) of the kernel's
// time in the first run. In both, the two streams' long kernels overlap:
// the tool serialised nothing.
func TestCUDAVendorTimes(t *testing.T) {
	needOCCA2(t)
	skipMissing(t, "CUDA")
	lib := buildCUPTIKernels(t)
	cache := filepath.Join(t.TempDir(), "cache")
	for _, iters := range []int{busyIters("CUDA"), 2000} {
		t.Run(strconv.Itoa(iters), func(t *testing.T) {
			long := iters == busyIters("CUDA")
			records := filepath.Join(t.TempDir(), "cupti.txt")
			vendor := []string{"CUDA_INJECTION64_PATH=" + lib, "CUPTI_KERNELS_OUT=" + records}
			tags := profileStreams(t, cache, iters, vendor)
			theirs := readCUPTI(t, records, "busy")
			if len(theirs) != 2 || len(theirs[0]) != streamLaunches || len(theirs[1]) != streamLaunches {
				t.Fatalf("CUPTI's kernels by stream: %d; want 2 streams of %d", lens(theirs), streamLaunches)
			}
			compareTags(t, tags, theirs, long)
			ours := profileStreams(t, cache, iters, nil)
			compareOwn(t, ours, theirs, long)
		})
	}
}

// profileStreams runs programs/streams.cpp on CUDA under occa-prof with
// device times, env added, and returns its launches by stream.
func profileStreams(t *testing.T, cache string, iters int, env []string) [][]kernelTime {
	t.Helper()
	dir := t.TempDir()
	env = append([]string{"OCCA_DIR=" + occaDir, "OCCA_CACHE_DIR=" + cache}, env...)
	args := []string{filepath.Join(bin, "streams"), backends["CUDA"].props, busyOKL,
		strconv.Itoa(streamLaunches), strconv.Itoa(iters)}
	out, files, err := occatest.Profile(t, occaProf, dir, env, []string{"--quiet", "--device-time"}, args...)
	if err != nil || !strings.HasSuffix(out, "ok\n") || len(files) != 1 {
		t.Fatalf("occa-prof: %v, traces %v\n%s", err, files, out)
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	runs := deviceTimes(t, ev, true)
	checkTimeline(t, runs, true)
	g := byStream(runs)
	if len(g) != 2 || len(g[0]) != streamLaunches || len(g[1]) != streamLaunches {
		t.Fatalf("launches by stream: %d; want 2 streams of %d", lens(g), streamLaunches)
	}
	return g
}

// byStream groups launches by stream, each group in launch order, the
// groups in the order of their first device start.
func byStream(runs []launchTime) [][]kernelTime {
	at := map[uint64]int{}
	var groups [][]kernelTime
	for _, r := range runs {
		i, ok := at[r.stream]
		if !ok {
			i = len(groups)
			at[r.stream] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], kernelTime{r.start, r.end})
	}
	slices.SortFunc(groups, func(a, b []kernelTime) int { return cmp.Compare(a[0].start, b[0].start) })
	return groups
}

// readCUPTI reads programs/cupti_kernels.c's file: the kernels whose name
// holds name, grouped by stream, each group by start, the groups by their
// first start.
func readCUPTI(t *testing.T, path, name string) [][]kernelTime {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("CUPTI wrote no records: %v", err)
	}
	defer f.Close()
	streams := map[uint64][]kernelTime{}
	dropped := int64(-1)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kernel string
		var stream uint64
		var k kernelTime
		if n, _ := fmt.Sscanf(sc.Text(), "kernel %s %d %d %d", &kernel, &stream, &k.start, &k.end); n == 4 {
			if strings.Contains(kernel, name) {
				streams[stream] = append(streams[stream], k)
			}
		} else if n, _ := fmt.Sscanf(sc.Text(), "dropped %d", &dropped); n != 1 {
			t.Fatalf("%s: %q is no CUPTI record", path, sc.Text())
		}
	}
	if dropped != 0 {
		t.Fatalf("%s: CUPTI dropped %d records (-1: the file is incomplete)", path, dropped)
	}
	var groups [][]kernelTime
	for _, g := range streams {
		slices.SortFunc(g, func(a, b kernelTime) int { return cmp.Compare(a.start, b.start) })
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b []kernelTime) int { return cmp.Compare(a[0].start, b[0].start) })
	return groups
}

// compareTags checks ours (stream tags) against theirs, launch by launch.
// A device time runs from the launch's start tag to its end tag, and on a stream
// with nothing queued a tag passes when the host records it: before the
// kernel is submitted, after the launch call returns. So only a launch
// queued behind another on its stream is timed as CUPTI times it: long
// says the kernels are long enough for every launch after a stream's first
// to be queued. Those are within 5 % (or 2 us) of CUPTI's, in length and in
// start (taken from the second launch of the first stream on both sides,
// since the clocks differ), and the two streams' kernels must overlap. Any
// other launch is never shorter than CUPTI's kernel (less 1 us of
// rounding); what it adds, the host's launch overhead, is logged.
func compareTags(t *testing.T, ours, theirs [][]kernelTime, long bool) {
	t.Helper()
	o0, v0 := ours[0][1].start, theirs[0][1].start
	var queued, idle []int64 // ours - CUPTI's duration
	var startDiff []int64
	var sum int64
	var spans []kernelTime
	for s := range ours {
		for i, o := range ours[s] {
			v := theirs[s][i]
			sum += v.dur()
			spans = append(spans, v)
			dd := o.dur() - v.dur()
			if !long || i == 0 {
				idle = append(idle, dd)
				if dd < -1000 {
					t.Errorf("stream %d, launch %d: ours %d ns, shorter than CUPTI's %d ns", s, i, o.dur(), v.dur())
				}
				continue
			}
			sd := (o.start - o0) - (v.start - v0)
			queued, startDiff = append(queued, dd), append(startDiff, sd)
			if tol := vendorTolerance(v.dur()); abs(dd) > tol || abs(sd) > tol {
				t.Errorf("stream %d, launch %d: ours %d ns long at %+d ns, CUPTI's %d ns at %+d ns (tolerance %d ns)",
					s, i, o.dur(), o.start-o0, v.dur(), v.start-v0, tol)
			}
		}
	}
	busy := union(spans)
	t.Logf("CUPTI: %d kernels, median %d ns, %d ns summed, %d ns busy", len(spans), median(spans), sum, busy)
	if len(queued) > 0 {
		t.Logf("ours - CUPTI's, %d queued launches: duration median %d ns (%d to %d), start median %d ns (%d to %d)",
			len(queued), medianOf(queued), slices.Min(queued), slices.Max(queued),
			medianOf(startDiff), slices.Min(startDiff), slices.Max(startDiff))
	}
	t.Logf("ours - CUPTI's, %d launches on an idle stream: duration median %d ns (%d to %d)",
		len(idle), medianOf(idle), slices.Min(idle), slices.Max(idle))
	if long && busy >= sum {
		t.Errorf("CUPTI sees no overlap of the two streams' kernels (busy %d ns, summed %d ns): was the program serialised?", busy, sum)
	}
}

// compareOwn checks ours (occa-tools reading CUPTI) against theirs, from
// another run of the same program: each launch's device time within 5 % (or
// 2 us) of the same kernel's there, and, long, the streams overlapping.
func compareOwn(t *testing.T, ours, theirs [][]kernelTime, long bool) {
	t.Helper()
	var diff []int64
	var sum int64
	var spans []kernelTime
	for s := range ours {
		for i, o := range ours[s] {
			v := theirs[s][i]
			dd := o.dur() - v.dur()
			diff = append(diff, dd)
			sum += o.dur()
			spans = append(spans, o)
			if tol := vendorTolerance(v.dur()); abs(dd) > tol {
				t.Errorf("stream %d, launch %d: ours (CUPTI read by occa-tools) %d ns, CUPTI's in the run before %d ns (tolerance %d ns)",
					s, i, o.dur(), v.dur(), tol)
			}
		}
	}
	busy := union(spans)
	t.Logf("occa-tools reading CUPTI - CUPTI's in the run before: duration median %d ns (%d to %d); %d ns summed, %d ns busy",
		medianOf(diff), slices.Min(diff), slices.Max(diff), sum, busy)
	if long && busy >= sum {
		t.Errorf("no overlap of the two streams' kernels (busy %d ns, summed %d ns)", busy, sum)
	}
}

func lens(g [][]kernelTime) []int {
	var n []int
	for _, s := range g {
		n = append(n, len(s))
	}
	return n
}

func abs(v int64) int64 { return max(v, -v) }

func medianOf(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func median(k []kernelTime) int64 {
	var d []int64
	for _, x := range k {
		d = append(d, x.dur())
	}
	return medianOf(d)
}

func union(spans []kernelTime) int64 {
	var s [][2]int64
	for _, k := range spans {
		s = append(s, [2]int64{k.start, k.end})
	}
	return occatest.Busy(s)
}

// buildCUPTIKernels compiles programs/cupti_kernels.c against CUPTI
// (CUPTI_DIR, or under CUDA_HOME or /usr/local/cuda: include/cupti.h and
// lib64/libcupti.so*), or skips saying where it looked.
func buildCUPTIKernels(t *testing.T) string {
	t.Helper()
	cuda := env("CUDA_HOME", "/usr/local/cuda")
	if nvcc, err := exec.LookPath("nvcc"); err == nil {
		cuda = filepath.Dir(filepath.Dir(nvcc))
	}
	var roots []string
	if d := os.Getenv("CUPTI_DIR"); d != "" {
		roots = append(roots, d)
	}
	roots = append(roots, filepath.Join(cuda, "extras", "CUPTI"), cuda, filepath.Join(cuda, "targets", "x86_64-linux"))
	for _, root := range roots {
		if _, err := os.Stat(filepath.Join(root, "include", "cupti.h")); err != nil {
			continue
		}
		for _, libDir := range []string{"lib64", "lib"} {
			libs, _ := filepath.Glob(filepath.Join(root, libDir, "libcupti.so*"))
			if len(libs) == 0 {
				continue
			}
			slices.Sort(libs) // libcupti.so before its versioned names
			out := filepath.Join(bin, "libcupti_kernels.so")
			args := []string{"-std=c11", "-O2", "-shared", "-fPIC", "-I" + filepath.Join(cuda, "include"),
				"-I" + filepath.Join(root, "include"), "-I../../runtime/occa", "programs/cupti_kernels.c", "-o", out,
				"-L" + filepath.Dir(libs[0]), "-l:" + filepath.Base(libs[0]), "-Wl,-rpath," + filepath.Dir(libs[0])}
			if b, err := exec.Command(env("CC", "cc"), args...).CombinedOutput(); err != nil {
				t.Fatalf("cc %v: %v\n%s", args, err, b)
			}
			return out
		}
	}
	t.Skipf("no CUPTI (include/cupti.h and lib64/libcupti.so*) in %v: set CUPTI_DIR", roots)
	return ""
}
