// Package adapter tests the OCCA adapter (runtime/occa) in CI, where no real
// OCCA exists: programs written like OCCA applications (tests/occa-standin)
// run against a stand-in libocca that exports OCCA 2.0's symbols, under
// occa-prof, and their traces are checked exactly. `make test` builds the
// stand-in and the drivers first (make standin).
package adapter

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
	"github.com/libocca/occa-tools/tests/testproc"
)

var (
	buildDir string
	occaProf string
	standin  string // build/standin
)

func TestMain(m *testing.M) {
	buildDir = os.Getenv("OCCA_TOOLS_BUILD")
	if buildDir == "" {
		buildDir, _ = filepath.Abs("../../build")
	}
	occaProf = filepath.Join(buildDir, "bin", "occa-prof")
	standin = filepath.Join(buildDir, "standin")
	for _, need := range []string{occaProf, filepath.Join(standin, "occa-standin-driver"),
		filepath.Join(buildDir, "lib", "libocca_tools_occa.so")} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("CI") != "" {
				fmt.Fprintf(os.Stderr, "tests/adapter: %s is missing: run `make all standin` first\n", need)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "tests/adapter: skipped: %s is missing (run `make all standin`)\n", need)
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// profile runs a driver under occa-prof, in an empty kernel cache, and
// returns its single, clean trace.
func profile(t *testing.T, flags []string, args ...string) *occatest.Capture {
	t.Helper()
	env := []string{"OCCA_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache")}
	return occatest.ProfileClean(t, occaProf, env, flags, args...)
}

func traffic(n int, b uint64) occatest.Traffic { return occatest.Traffic{Count: n, Bytes: b} }

// The C++ driver's scenario (tests/occa-standin/driver.cpp) as the adapter
// reports it: the stream created and set inside device setup are nested
// calls, not reported; the pool's 3 reservations are allocations too; the
// copy inside malloc(..., src) is a host-to-device copy.
func checkDriver(t *testing.T, cp *occatest.Capture, n int) {
	t.Helper()
	if !reflect.DeepEqual(cp.DeviceModes, []string{"Serial"}) {
		t.Errorf("devices: %v, want [Serial]", cp.DeviceModes)
	}
	if cp.Allocs != 6 || cp.AllocBytes != 12000+1200 || cp.PoolAllocs != 3 {
		t.Errorf("allocations: %d (%d B, %d from the pool); want 6 (13200 B, 3)", cp.Allocs, cp.AllocBytes, cp.PoolAllocs)
	}
	if cp.Frees != 6 || cp.FreeBytes != 13200 {
		t.Errorf("frees: %d (%d B); want 6 (13200 B)", cp.Frees, cp.FreeBytes)
	}
	want := map[string]occatest.Traffic{"H2D": traffic(4, 12400), "D2H": traffic(2, 4200), "D2D": traffic(1, 4000)}
	if !reflect.DeepEqual(cp.Copies, want) {
		t.Errorf("copies: %v, want %v", cp.Copies, want)
	}
	if got := cp.BuildNames(); !reflect.DeepEqual(got, []string{"addVectors", "busyKernel"}) {
		t.Errorf("builds: %v, want [addVectors busyKernel]", got)
	}
	if want := map[string]int{"addVectors": n + 2, "busyKernel": n}; !reflect.DeepEqual(cp.Launches, want) {
		t.Errorf("launches: %v, want %v", cp.Launches, want)
	}
	// The first stream is stream 0 until the program sets it back by name
	// (then it gets an id of its own); the second has its own id.
	var counts []int
	for id, c := range cp.LaunchesOnStream {
		if id != 0 {
			counts = append(counts, c)
		}
	}
	if cp.LaunchesOnStream[0] != n || len(cp.LaunchesOnStream) != 3 || counts[0]+counts[1] != n+2 {
		t.Errorf("launches by stream: %v; want %d on stream 0, %d and 2 on two others", cp.LaunchesOnStream, n, n)
	}
	if cp.StreamCreates != 1 || cp.StreamSets != 2 || cp.StreamFinishes != 1 || cp.DeviceFinishes != 1 {
		t.Errorf("streams: %d created, %d set, %d finished, %d device finishes; want 1, 2, 1, 1",
			cp.StreamCreates, cp.StreamSets, cp.StreamFinishes, cp.DeviceFinishes)
	}
}

func TestDriver(t *testing.T) {
	const n = 10
	cp := profile(t, nil, filepath.Join(standin, "occa-standin-driver"), "-n", strconv.Itoa(n))
	checkDriver(t, cp, n)
	for _, b := range cp.Builds {
		if b.Cache != "miss" {
			t.Errorf("build %s in an empty kernel cache: %s, want miss", b.Name, b.Cache)
		}
	}
	if cp.DeviceTimes != 0 {
		t.Errorf("%d device times without --device-time", cp.DeviceTimes)
	}
}

// Device times: every launch gets one, resolved at stream1.finish() (its
// launches) and at the blocking copy to the host (the first stream's).
func TestDriverDeviceTime(t *testing.T) {
	const n = 25
	cp := profile(t, []string{"--device-time"}, filepath.Join(standin, "occa-standin-driver"), "-n", strconv.Itoa(n))
	checkDriver(t, cp, n)
	if cp.DeviceTimes != 2*n+2 {
		t.Errorf("device times: %d, want %d (one per launch)", cp.DeviceTimes, 2*n+2)
	}
}

// An exception from OCCA reaches the program unchanged; the build is
// reported as failed.
func TestDriverException(t *testing.T) {
	cp := profile(t, nil, filepath.Join(standin, "occa-standin-driver"), "-n", "3", "-exception")
	checkDriver(t, cp, 3)
	failed := 0
	for _, b := range cp.Builds {
		if b.Failed {
			failed++
			if b.Name != "missing" || !strings.HasSuffix(b.Source, "no-such-kernel.okl") {
				t.Errorf("failed build: %+v", b)
			}
		}
	}
	if failed != 1 {
		t.Errorf("failed builds: %d, want 1", failed)
	}
}

func TestDriverC(t *testing.T) {
	const n = 9
	cp := profile(t, []string{"--device-time"}, filepath.Join(standin, "occa-standin-driver-c"), "-n", strconv.Itoa(n))
	if !reflect.DeepEqual(cp.DeviceModes, []string{"Serial"}) {
		t.Errorf("devices: %v", cp.DeviceModes)
	}
	if cp.Allocs != 2 || cp.AllocBytes != 8000 || cp.Frees != 2 || cp.FreeBytes != 8000 {
		t.Errorf("memory: %d allocs (%d B), %d frees (%d B); want 2 (8000 B) each", cp.Allocs, cp.AllocBytes, cp.Frees, cp.FreeBytes)
	}
	want := map[string]occatest.Traffic{"H2D": traffic(2, 8000), "D2H": traffic(1, 4000)}
	if !reflect.DeepEqual(cp.Copies, want) {
		t.Errorf("copies: %v, want %v", cp.Copies, want)
	}
	if !reflect.DeepEqual(cp.Launches, map[string]int{"addVectors": n}) || cp.LaunchesOnStream[0] != n {
		t.Errorf("launches: %v by stream %v, want addVectors: %d on stream 0", cp.Launches, cp.LaunchesOnStream, n)
	}
	if cp.DeviceTimes != n || cp.DeviceFinishes != 1 {
		t.Errorf("device times %d, device finishes %d; want %d, 1", cp.DeviceTimes, cp.DeviceFinishes, n)
	}
}

// A config that leaves busyKernel out: its launches are not recorded, the
// rest is.
func TestDriverKernelFilter(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "busy-out.toml")
	if err := os.WriteFile(cfg, []byte("[filter.kernel]\nexclude_names = [\"busy*\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cp := profile(t, []string{"--config", cfg}, filepath.Join(standin, "occa-standin-driver"), "-n", "4")
	if want := map[string]int{"addVectors": 6}; !reflect.DeepEqual(cp.Launches, want) {
		t.Errorf("launches: %v, want %v", cp.Launches, want)
	}
}

// Without a config the adapter only forwards: same output, no trace, and no
// runtime loaded.
func TestUntraced(t *testing.T) {
	dir := t.TempDir()
	cmd := testproc.Command(t, filepath.Join(standin, "occa-standin-driver"), "-n", "3")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+filepath.Join(buildDir, "lib", "libocca_tools_occa.so"),
		"OCCA_CACHE_DIR="+filepath.Join(dir, "cache"), "LD_DEBUG=files", "OCCA_TOOLS_CONFIG=")
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("driver: %v, output %q", err, out)
	}
	stderr := errb.String()
	if !strings.Contains(stderr, "libocca_tools_occa.so") {
		t.Fatalf("LD_DEBUG=files shows no adapter loaded:\n%s", stderr)
	}
	if strings.Contains(stderr, "libocca_tools.so") || strings.Contains(stderr, "libocca_tools_core.so") {
		t.Errorf("the runtime was loaded without a config:\n%s", stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "*.occatrace")); len(m) != 0 {
		t.Errorf("traces written without a config: %v", m)
	}
}

// The adapter exports its hooks and nothing else: each an OCCA 2.0 symbol
// (symbols.txt was checked against a real libocca.so) that the stand-in
// also defines, or a symbol of an older OCCA that its variant of the
// stand-in defines (1.0-1.1's occa::properties overloads, 1.5-1.6's
// experimental::memoryPool); operator() overloads beyond the stand-in's are
// checked by runtime/occa/genops.
func TestExports(t *testing.T) {
	exports := dynamicSymbols(t, filepath.Join(buildDir, "lib", "libocca_tools_occa.so"))
	standinExports := map[string]bool{}
	for _, s := range dynamicSymbols(t, filepath.Join(standin, "lib", "libocca.so")) {
		standinExports[s] = true
	}
	olderExports := map[string]bool{}
	for _, v := range []string{"occa-1.1", "occa-1.5"} {
		for _, s := range dynamicSymbols(t, filepath.Join(standin, v, "lib", "libocca.so")) {
			olderExports[s] = true
		}
	}
	known := map[string]bool{}
	f, err := os.Open("../occa-standin/symbols.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		known[strings.TrimSpace(sc.Text())] = true
	}
	op := regexp.MustCompile(`^_ZNK4occa6kernelcl(Ev|ERKNS_9kernelArgE(S3_)*)$`)
	ops, older := 0, 0
	for _, s := range exports {
		if op.MatchString(s) {
			ops++
			if !known[s] && strings.Count(s, "S3_") < 16 {
				t.Errorf("export %s: an operator() the stand-in should have", s)
			}
			continue
		}
		if known[s] && standinExports[s] {
			continue
		}
		if !known[s] && olderExports[s] {
			older++
			continue
		}
		t.Errorf("export %s: neither an OCCA 2.0 symbol the stand-in defines (in symbols.txt: %v) "+
			"nor one of an older OCCA's stand-in", s, known[s])
	}
	// 22 hooks of OCCA 2.0 names, 9 of older OCCAs' names.
	if ops != 129 || len(exports)-ops != 31 || older != 9 {
		t.Errorf("exports: %d operator(), %d other hooks (%d of older OCCAs), want 129, 31 (9)",
			ops, len(exports)-ops, older)
	}
}

func dynamicSymbols(t *testing.T, lib string) []string {
	t.Helper()
	out, err := testproc.Command(t, "nm", "-D", "--defined-only", lib).Output()
	if err != nil {
		t.Fatalf("nm -D %s: %v", lib, err)
	}
	var syms []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			syms = append(syms, f[2])
		}
	}
	return syms
}
