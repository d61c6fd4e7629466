// Package occa runs small OCCA programs (programs/) against a real OCCA
// installation under occa-prof and checks their traces exactly. It runs only
// when OCCA_DIR points at an OCCA install (include/occa.hpp, lib/libocca.so):
//
//	OCCA_DIR=/opt/occa make test-occa
//
// Every OCCA the adapter supports runs TestVersionScenario (the stand-in's
// tests/occa-standin/driver_versions.cpp, built against it); the other
// programs use OCCA 2.0's API and skip, saying so, on OCCA 1.x.
//
// Modes: Serial and OpenMP; OpenCL when OCCA was built with it
// (OCCA_ENABLE_OPENCL) and an OpenCL platform answers (POCL on a CPU will
// do: Debian's pocl-opencl-icd); CUDA when OCCA was built with it and a GPU
// answers (nvcc on the PATH compiles the kernels). A backend that cannot
// run has its tests skip, saying why. OCCA_OPENCL_PLATFORM_ID,
// OCCA_OPENCL_DEVICE_ID and OCCA_CUDA_DEVICE_ID pick the devices (0 by
// default). On CUDA, TestCUDAVendorTimes checks device times against
// CUPTI's when it finds CUPTI (CUPTI_DIR, or under CUDA_HOME or
// /usr/local/cuda).
//
// CI has no OCCA (it is in no package registry); tests/adapter and
// tests/crash run the same kind of checks there against a stand-in libocca.
package occa

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/occatest"
	"github.com/libocca/occa-tools/tests/testproc"
)

var (
	occaDir  string
	occaProf string
	bin      string // the compiled programs
	okl      string // programs/addVectors.okl
	// version is OCCA_VERSION of the install's headers (major*10000 +
	// minor*100 + patch); nekRS says they are nekRS's bundled copy.
	version int
	nekRS   bool
	busyOKL string // programs/busy.okl

	// backends holds the asynchronous backends by mode name.
	backends = map[string]*backend{}
)

// backend is an asynchronous OCCA backend: the device's properties, or
// why its tests skip.
type backend struct{ props, skip string }

func TestMain(m *testing.M) {
	occaDir = os.Getenv("OCCA_DIR")
	if occaDir == "" {
		fmt.Fprintln(os.Stderr, "tests/occa: skipped: set OCCA_DIR to an OCCA installation to run")
		os.Exit(0)
	}
	build := os.Getenv("OCCA_TOOLS_BUILD")
	if build == "" {
		build, _ = filepath.Abs("../../build")
	}
	occaProf = filepath.Join(build, "bin", "occa-prof")
	if _, err := os.Stat(occaProf); err != nil {
		fmt.Fprintf(os.Stderr, "tests/occa: %s is missing: run `make all` first\n", occaProf)
		os.Exit(1)
	}
	okl, _ = filepath.Abs("programs/addVectors.okl")
	busyOKL, _ = filepath.Abs("programs/busy.okl")
	var err error
	if version, nekRS, err = readVersion(); err != nil {
		fmt.Fprintln(os.Stderr, "tests/occa:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "tests/occa: OCCA %d.%d.%d%s\n", version/10000, version/100%100, version%100,
		map[bool]string{true: " (nekRS's bundled copy)"}[nekRS])
	if bin, err = os.MkdirTemp("", "occa-programs-"); err == nil {
		err = compile()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/occa:", err)
		os.Exit(1)
	}
	backends["OpenCL"] = findBackend("OpenCL", "OCCA_OPENCL_ENABLED", "cmake -DOCCA_ENABLE_OPENCL=ON",
		fmt.Sprintf("{mode: 'OpenCL', platform_id: %s, device_id: %s}", env("OCCA_OPENCL_PLATFORM_ID", "0"), env("OCCA_OPENCL_DEVICE_ID", "0")))
	backends["CUDA"] = findBackend("CUDA", "OCCA_CUDA_ENABLED", "cmake -DOCCA_ENABLE_CUDA=ON where the CUDA toolkit is found",
		fmt.Sprintf("{mode: 'CUDA', device_id: %s}", env("OCCA_CUDA_DEVICE_ID", "0")))
	code := m.Run()
	os.RemoveAll(bin)
	os.Exit(code)
}

// readVersion reads OCCA_VERSION from the install's headers, and whether
// they are nekRS's copy (its occa::kernel carries a hash_t member).
func readVersion() (int, bool, error) {
	inc := filepath.Join(occaDir, "include", "occa")
	defs, err := os.ReadFile(filepath.Join(inc, "defines", "occa.hpp"))
	if err != nil {
		return 0, false, fmt.Errorf("cannot read OCCA's version: %v (is OCCA_DIR an OCCA install?)", err)
	}
	v := 0
	for _, line := range strings.Split(string(defs), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "#define" && f[1] == "OCCA_VERSION" {
			v, err = strconv.Atoi(f[2])
		}
	}
	if v == 0 || err != nil {
		return 0, false, fmt.Errorf("%s has no numeric OCCA_VERSION", filepath.Join(inc, "defines", "occa.hpp"))
	}
	kernel, _ := os.ReadFile(filepath.Join(inc, "core", "kernel.hpp"))
	return v, strings.Contains(string(kernel), "hash_t hash_"), nil
}

// needOCCA2 skips a test whose program uses OCCA 2.0's API.
func needOCCA2(t *testing.T) {
	if version < 20000 {
		t.Skipf("its program uses OCCA 2.0's API; this is OCCA %d.%d (TestVersionScenario covers it)", version/10000, version/100%100)
	}
}

func compile() error {
	inc, lib := filepath.Join(occaDir, "include"), filepath.Join(occaDir, "lib")
	cxx, cc := env("CXX", "c++"), env("CC", "cc")
	versions := []string{cxx, "-std=c++17", "-O2", "-I" + inc, "-DOCCA_STANDIN_VERSION=" + strconv.Itoa(version),
		"../occa-standin/driver_versions.cpp", "-o", filepath.Join(bin, "versions")}
	if nekRS {
		versions = append(versions, "-DOCCA_STANDIN_NEKRS")
	}
	cmds := [][]string{versions}
	if err := copyFile(okl, filepath.Join(bin, "addVectors.okl")); err != nil {
		return err
	}
	if version >= 20000 {
		for _, p := range []string{"vectors", "streams", "crash", "probe"} {
			cmds = append(cmds, []string{cxx, "-std=c++17", "-O2", "-I" + inc, "programs/" + p + ".cpp", "-o", filepath.Join(bin, p)})
		}
		cmds = append(cmds, []string{cc, "-std=c99", "-O2", "-I" + inc, "programs/capi.c", "-o", filepath.Join(bin, "capi")})
	}
	for _, c := range cmds {
		args := append(c[1:], "-L"+lib, "-locca", "-Wl,-rpath,"+lib)
		if out, err := exec.Command(c[0], args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %v: %v\n%s", c[0], args, err, out)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	return err
}

// findBackend finds the backend mode: its device props when OCCA has it
// (#define enabled 1 in its compiledDefines.hpp, which build says how to
// get) and the device answers (programs/probe.cpp); else why not.
func findBackend(mode, enabled, build, props string) *backend {
	skip := func(format string, a ...any) *backend {
		b := &backend{skip: fmt.Sprintf(format, a...)}
		fmt.Fprintf(os.Stderr, "tests/occa: the %s tests will skip: %s\n", mode, b.skip)
		return b
	}
	if version < 20000 {
		return skip("the %s tests' programs use OCCA 2.0's API", mode)
	}
	defs, err := os.ReadFile(filepath.Join(occaDir, "include", "occa", "defines", "compiledDefines.hpp"))
	if err != nil {
		return skip("cannot tell whether OCCA has %s: %v", mode, err)
	}
	if !strings.Contains(string(defs), "#define "+enabled+" 1") {
		return skip("this OCCA was built without %s (%s)", mode, build)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testproc.Deadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "probe"), props).CombinedOutput()
	if err != nil {
		return skip("no %s device %s: %v: %s", mode, props, err, firstLine(string(out)))
	}
	fmt.Fprintf(os.Stderr, "tests/occa: %s device: %s", mode, out)
	return &backend{props: props}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// modes are the modes to test: mode name and device argument.
func modes(names ...string) [][2]string {
	var out [][2]string
	for _, m := range names {
		arg := m
		if b := backends[m]; b != nil {
			arg = b.props
		}
		out = append(out, [2]string{m, arg})
	}
	return out
}

// skipMissing skips t when mode is a backend that cannot run here.
func skipMissing(t *testing.T, mode string) {
	t.Helper()
	if b := backends[mode]; b != nil && b.skip != "" {
		t.Skip(b.skip)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run profiles one program and returns its single trace. cache is the OCCA
// kernel cache directory to use.
func run(t *testing.T, cache string, flags []string, args ...string) *occatest.Capture {
	t.Helper()
	env := []string{"OCCA_DIR=" + occaDir, "OCCA_CACHE_DIR=" + cache}
	return occatest.ProfileClean(t, occaProf, env, flags, args...)
}

// command runs args[0] with args[1:] under the test's deadline, with env
// added to the environment.
func command(t *testing.T, args, env []string) *exec.Cmd {
	t.Helper()
	cmd := testproc.Command(t, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

const launches = 7

func TestVectors(t *testing.T) {
	needOCCA2(t)
	for _, m := range modes("Serial", "OpenMP", "OpenCL", "CUDA") {
		mode := m[0]
		t.Run(mode, func(t *testing.T) {
			skipMissing(t, mode)
			cache := t.TempDir()
			args := []string{filepath.Join(bin, "vectors"), m[1], okl, strconv.Itoa(launches)}
			cp := run(t, cache, nil, args...)
			checkVectors(t, cp, mode)
			for _, b := range cp.Builds {
				if b.Cache != "miss" && !noBinary(mode, b.Cache) {
					t.Errorf("cold cache: build %s: cache %s, want miss", b.Name, b.Cache)
				}
			}
			if cp.DeviceTimes != 0 {
				t.Errorf("device times without --device-time: %d", cp.DeviceTimes)
			}

			// Warm cache, device timing on.
			cp = run(t, cache, []string{"--device-time"}, args...)
			checkVectors(t, cp, mode)
			for _, b := range cp.Builds {
				if b.Cache != "hit" && !noBinary(mode, b.Cache) {
					t.Errorf("warm cache: build %s: cache %s, want hit", b.Name, b.Cache)
				}
			}
			if want := 2*launches + 1; cp.DeviceTimes != want {
				t.Errorf("device times: %d, want %d (one per launch)", cp.DeviceTimes, want)
			}
		})
	}
}

// noBinary: OCCA's OpenCL mode keeps a kernel binary in its cache only when
// the OpenCL implementation can load its own binaries back (POCL's cannot),
// and otherwise builds from the source every time; with no binary to date,
// the adapter says "unknown".
func noBinary(mode, cache string) bool { return mode == "OpenCL" && cache == "unknown" }

func checkVectors(t *testing.T, cp *occatest.Capture, mode string) {
	t.Helper()
	if !reflect.DeepEqual(cp.DeviceModes, []string{mode}) {
		t.Errorf("devices: %v, want [%s]", cp.DeviceModes, mode)
	}
	if cp.Allocs != 5 || cp.AllocBytes != 3*4000+400+800 || cp.PoolAllocs != 2 {
		t.Errorf("allocations: %d (%d B, %d from the pool), want 5 (13200 B, 2)", cp.Allocs, cp.AllocBytes, cp.PoolAllocs)
	}
	if cp.Frees != cp.Allocs || cp.FreeBytes != cp.AllocBytes {
		t.Errorf("frees: %d (%d B), want %d (%d B)", cp.Frees, cp.FreeBytes, cp.Allocs, cp.AllocBytes)
	}
	want := map[string]occatest.Traffic{"H2D": {Count: 3, Bytes: 8400}, "D2D": {Count: 1, Bytes: 4000}, "D2H": {Count: 2, Bytes: 4200}}
	if !reflect.DeepEqual(cp.Copies, want) {
		t.Errorf("copies: %v, want %v", cp.Copies, want)
	}
	if got := cp.BuildNames(); !reflect.DeepEqual(got, []string{"_occa_jit_kernel", "addVectors"}) {
		t.Errorf("builds: %v", got)
	}
	if want := map[string]int{"addVectors": 2 * launches, "_occa_jit_kernel": 1}; !reflect.DeepEqual(cp.Launches, want) {
		t.Errorf("launches: %v, want %v", cp.Launches, want)
	}
	// launches on the first stream (0: never set), the second, and the
	// first again once set back (the JIT kernel).
	if len(cp.LaunchesOnStream) != 3 || cp.LaunchesOnStream[0] != launches {
		t.Errorf("launches by stream: %v, want %d on stream 0 and two more streams", cp.LaunchesOnStream, launches)
	}
	if cp.StreamCreates != 1 || cp.StreamSets != 2 || cp.StreamFinishes != 1 || cp.DeviceFinishes != 1 {
		t.Errorf("streams: %d created, %d set, %d finished, %d device finishes; want 1, 2, 1, 1",
			cp.StreamCreates, cp.StreamSets, cp.StreamFinishes, cp.DeviceFinishes)
	}
}

func TestCAPI(t *testing.T) {
	needOCCA2(t)
	for _, m := range modes("Serial", "OpenMP", "OpenCL", "CUDA") {
		mode := m[0]
		t.Run(mode, func(t *testing.T) {
			skipMissing(t, mode)
			cp := run(t, t.TempDir(), []string{"--device-time"}, filepath.Join(bin, "capi"), m[1], okl, strconv.Itoa(launches))
			if !reflect.DeepEqual(cp.DeviceModes, []string{mode}) {
				t.Errorf("devices: %v, want [%s]", cp.DeviceModes, mode)
			}
			if cp.Allocs != 2 || cp.AllocBytes != 8000 || cp.Frees != 2 || cp.FreeBytes != 8000 {
				t.Errorf("memory: %d allocs (%d B), %d frees (%d B); want 2 (8000 B) each", cp.Allocs, cp.AllocBytes, cp.Frees, cp.FreeBytes)
			}
			want := map[string]occatest.Traffic{"H2D": {Count: 2, Bytes: 8000}, "D2H": {Count: 1, Bytes: 4000}}
			if !reflect.DeepEqual(cp.Copies, want) {
				t.Errorf("copies: %v, want %v", cp.Copies, want)
			}
			if !reflect.DeepEqual(cp.Launches, map[string]int{"addVectors": launches}) {
				t.Errorf("launches: %v, want addVectors: %d", cp.Launches, launches)
			}
			if cp.DeviceTimes != launches || cp.DeviceFinishes != 1 {
				t.Errorf("device times %d, device finishes %d; want %d, 1", cp.DeviceTimes, cp.DeviceFinishes, launches)
			}
		})
	}
}

// OCCA's OpenMP mode with clang++ as the JIT compiler links kernels against
// LLVM's libomp, whose OMPT callbacks the runtime records: every launch
// holds one parallel region whose events carry the launch's correlation id.
func TestOpenMPInsideLaunches(t *testing.T) {
	needOCCA2(t)
	if _, err := exec.LookPath("clang++"); err != nil {
		t.Skip("no clang++: OCCA's OpenMP kernels would use libgomp, which has no OMPT")
	}
	dir := t.TempDir()
	env := []string{"OCCA_DIR=" + occaDir, "OCCA_CACHE_DIR=" + filepath.Join(dir, "cache"), "OCCA_CXX=clang++",
		"OMP_NUM_THREADS=2", "OMP_DYNAMIC=false"}
	out, files, err := occatest.Profile(t, occaProf, dir, env, []string{"--quiet"},
		filepath.Join(bin, "vectors"), "OpenMP", okl, strconv.Itoa(launches))
	if err != nil || out != "ok\n" || len(files) != 1 {
		t.Fatalf("vectors OpenMP: %v, output %q, traces %v", err, out, files)
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	runs := map[uint64]bool{}
	regions := map[uint64]uint64{} // parallel id -> launch
	tasks := map[uint64]int{}      // parallel id -> implicit tasks
	for _, e := range ev.Events {
		switch e.Kind {
		case trace.RunBegin:
			runs[e.Args[0]] = true
		case trace.OmpParallelBegin:
			regions[e.Args[0]] = e.Args[4]
		case trace.OmpImplicitTaskBegin:
			tasks[e.Args[1]]++
			if e.Args[3] != 2 {
				t.Errorf("implicit task %d: team of %d, want 2", e.Args[0], e.Args[3])
			}
		}
	}
	if len(runs) != 2*launches+1 || len(regions) != len(runs) {
		t.Fatalf("%d launches, %d parallel regions; want %d of each", len(runs), len(regions), 2*launches+1)
	}
	for id, launch := range regions {
		if !runs[launch] || tasks[id] != 2 {
			t.Errorf("parallel region %d: launch %d (recorded: %v), %d implicit tasks; want a recorded launch and 2",
				id, launch, runs[launch], tasks[id])
		}
	}
}

// The scenario the adapter's tests run against each stand-in variant,
// against this OCCA: exact counts and bytes for its version (copy counts in
// bytes before 2.0), its pool, nekRS's split builds, and no warning.
func TestVersionScenario(t *testing.T) {
	const n = 5
	cp, ev, warns := occatest.ProfileScenario(t, occaProf, filepath.Join(bin, "versions"), "-n", strconv.Itoa(n))
	occatest.ScenarioFor(version, nekRS).Check(t, n, cp, ev, warns)
}
