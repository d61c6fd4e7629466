// Package crash checks what a traced OCCA program leaves when it dies the
// ways OCCA programs die: an uncaught occa::exception (std::terminate,
// abort(), SIGABRT), abort(), a store through a null pointer (SIGSEGV), each
// also with LLVM-like crash handlers installed, as POCL (OCCA's OpenCL mode)
// has them. The program (tests/occa/programs/crash.cpp) runs against the
// stand-in libocca (tests/occa-standin) untraced, under occa-prof, and with
// the runtime preloaded by hand: it must end as it does untraced, its trace
// must hold every call it made before the crash and end with its final
// stats, and occa-prof must say that it died and print its launches.
// tests/occa runs the same program against a real OCCA.
package crash

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
	"github.com/libocca/occa-tools/tests/testproc"
)

var (
	buildDir string
	occaProf string
	program  string // crash.cpp built against the stand-in
	okl      string // the stand-in's addVectors.okl
	config   string // configs/default.toml
)

func TestMain(m *testing.M) {
	buildDir = os.Getenv("OCCA_TOOLS_BUILD")
	if buildDir == "" {
		buildDir, _ = filepath.Abs("../../build")
	}
	occaProf = filepath.Join(buildDir, "bin", "occa-prof")
	standin := filepath.Join(buildDir, "standin")
	okl = filepath.Join(standin, "addVectors.okl")
	config, _ = filepath.Abs("../../configs/default.toml")
	for _, need := range []string{occaProf, okl, filepath.Join(standin, "lib", "libocca.so"),
		filepath.Join(buildDir, "lib", "libocca_tools_occa.so"), filepath.Join(buildDir, "lib", "libocca_tools_preload.so")} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("CI") != "" {
				fmt.Fprintf(os.Stderr, "tests/crash: %s is missing: run `make all test-programs` first\n", need)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "tests/crash: skipped: %s is missing (run `make all test-programs`)\n", need)
			os.Exit(0)
		}
	}
	bin, err := os.MkdirTemp("", "occa-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/crash:", err)
		os.Exit(1)
	}
	program = filepath.Join(bin, "crash")
	lib := filepath.Join(standin, "lib")
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "c++"
	}
	out, err := exec.Command(cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I../occa-standin/include",
		"../occa/programs/crash.cpp", "-o", program, "-L"+lib, "-locca", "-Wl,-rpath,"+lib).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tests/crash: building crash.cpp: %v\n%s", err, out)
		os.RemoveAll(bin)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(bin)
	os.Exit(code)
}

// ending is how a process ended: "signal aborted", "exit 3".
func ending(err error) string {
	var ee *exec.ExitError
	if err == nil {
		return "exit 0"
	}
	if !errors.As(err, &ee) {
		return "did not run: " + err.Error()
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

type run struct {
	end            string
	stdout, stderr string
	traces         []string
}

// start runs name with args in dir, the environment cleared of tracing
// variables and env added.
func start(t *testing.T, dir string, env []string, name string, args ...string) *run {
	t.Helper()
	cmd := testproc.Command(t, name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if n, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(n, "OCCA_TOOLS_") && n != "LD_PRELOAD" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "OCCA_CACHE_DIR="+filepath.Join(dir, "cache")), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if testproc.Hung(t) {
		t.Fatalf("%s %v did not end within the test's deadline; stderr:\n%s", name, args, e.String())
	}
	r := &run{end: ending(err), stdout: o.String(), stderr: e.String()}
	r.traces, _ = filepath.Glob(filepath.Join(dir, "traces", "*.occatrace"))
	return r
}

// tableRows returns the rows of occa-prof's kernel table as "name calls".
func tableRows(stdout string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "kernel" && f[1] == "calls":
			in = true
		case in && strings.HasPrefix(l, "  ") && len(f) >= 2:
			rows = append(rows, f[0]+" "+f[1])
		default:
			in = false
		}
	}
	return rows
}

const launches = 6

// checkTrace checks that the single trace of r holds the program's work up
// to the crash (crash.cpp's header) and ends with its final stats.
func checkTrace(t *testing.T, how string, r *run) {
	t.Helper()
	if len(r.traces) != 1 {
		t.Errorf("traces: %v, want 1", r.traces)
		return
	}
	cp, err := occatest.Read(r.traces[0])
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if !reflect.DeepEqual(cp.DeviceModes, []string{"Serial"}) || cp.SetupsFailed != 0 {
		t.Errorf("devices %v (%d failed), want [Serial]", cp.DeviceModes, cp.SetupsFailed)
	}
	if cp.Allocs != 3 || cp.AllocBytes != 12000 || cp.Frees != 0 {
		t.Errorf("allocations %d (%d B), frees %d; want 3 (12000 B), 0", cp.Allocs, cp.AllocBytes, cp.Frees)
	}
	failed := 0
	if how == "throw" {
		failed = 1 // the build that threw
	}
	if got := cp.BuildNames(); !reflect.DeepEqual(got, []string{"addVectors"}) || len(cp.Builds) != 1+failed {
		t.Errorf("builds %+v, want addVectors and %d failed", cp.Builds, failed)
	}
	if !reflect.DeepEqual(cp.Launches, map[string]int{"addVectors": launches}) || cp.LaunchesFailed != 0 {
		t.Errorf("launches %v (%d failed), want addVectors: %d", cp.Launches, cp.LaunchesFailed, launches)
	}
	if cp.DeviceFinishes != 1 || cp.Unended != 0 || cp.Dropped != 0 {
		t.Errorf("%d device finishes, %d begins without an end, %d dropped; want 1, 0, 0",
			cp.DeviceFinishes, cp.Unended, cp.Dropped)
	}
}

// Each way to die, with and without LLVM-like handlers: the traced program
// ends as the untraced one, and its trace is complete up to the crash.
// Before the runtime exported abort() and chained a fault handler behind
// the Go runtime's, "segv" (both) and "throw llvm", "abort llvm" left
// traces without their final stats and without any event.
func TestCrashes(t *testing.T) {
	for _, c := range []struct {
		how, end string
		sig      syscall.Signal
	}{
		{"throw", "signal aborted", syscall.SIGABRT}, {"abort", "signal aborted", syscall.SIGABRT},
		{"segv", "signal segmentation fault", syscall.SIGSEGV}, {"exit", "exit 3", 0},
	} {
		for _, llvm := range []bool{false, true} {
			args := []string{"Serial", okl, strconv.Itoa(launches), c.how}
			name := c.how
			if llvm {
				args = append(args, "llvm")
				name += "-llvm"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				want := start(t, t.TempDir(), nil, program, args...)
				if want.end != c.end || want.stdout != "launched 6\n" {
					t.Fatalf("untraced: %s, stdout %q, want %s and \"launched 6\\n\"; stderr:\n%s", want.end, want.stdout, c.end, want.stderr)
				}
				if llvm != strings.Contains(want.stderr, "crash: crash handler ran\n") && c.how != "exit" {
					t.Fatalf("untraced: the crash handler ran: %v, want %v; stderr:\n%s", !llvm, llvm, want.stderr)
				}

				// The runtime preloaded as occa-prof does it, the program's own end.
				dir := t.TempDir()
				lib := filepath.Join(buildDir, "lib")
				got := start(t, dir, []string{"OCCA_TOOLS_CONFIG=" + config, "OCCA_TOOLS_OUTPUT_DIR=" + filepath.Join(dir, "traces"),
					"LD_PRELOAD=" + filepath.Join(lib, "libocca_tools_occa.so") + ":" + filepath.Join(lib, "libocca_tools_preload.so")},
					program, args...)
				if got.end != want.end || got.stdout != want.stdout {
					t.Errorf("preloaded: %s, stdout %q; untraced: %s", got.end, got.stdout, want.end)
				}
				checkTrace(t, c.how, got)

				// occa-prof: the same end, one line saying how the program
				// died, and the launches up to then.
				dir = t.TempDir()
				got = start(t, dir, nil, occaProf, append([]string{"--output", filepath.Join(dir, "traces"), "--", program}, args...)...)
				if got.end != want.end || !strings.HasPrefix(got.stdout, "launched 6\n") {
					t.Errorf("occa-prof: %s, stdout:\n%s\nuntraced: %s", got.end, got.stdout, want.end)
				}
				if rows := tableRows(got.stdout); !reflect.DeepEqual(rows, []string{"addVectors 6"}) {
					t.Errorf("occa-prof's table %v, want [addVectors 6]; stdout:\n%s", rows, got.stdout)
				}
				died := fmt.Sprintf("occa-prof: warning: %s died of signal %d (%v); the profile below covers its run up to then\n",
					program, int(c.sig), c.sig)
				if n, wantN := strings.Count(got.stderr, "occa-prof: warning: "), strings.Count(got.stderr, died); c.sig != 0 && (n != 1 || wantN != 1) {
					t.Errorf("occa-prof: want one warning, %q; stderr:\n%s", died, got.stderr)
				} else if c.sig == 0 && n != 0 {
					t.Errorf("occa-prof: warnings after a clean exit; stderr:\n%s", got.stderr)
				}
				if strings.Contains(got.stderr, "reading the traces") {
					t.Errorf("occa-prof: the trace is damaged; stderr:\n%s", got.stderr)
				}
				checkTrace(t, c.how, got)
			})
		}
	}
}
