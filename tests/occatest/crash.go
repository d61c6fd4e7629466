package occatest

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

	"github.com/libocca/occa-tools/tests/testproc"
)

// Crash is one run of tests/occa/programs/crash.cpp, which dies after a
// known amount of work (see its header).
type Crash struct {
	Program  string   // the built crash.cpp
	Linked   string   // the same linked against libocca_tools, or ""
	Args     []string // MODE OKL_FILE LAUNCHES HOW [llvm]
	Mode     string   // the device's mode name
	Launches int
	How      string         // throw, abort, segv, kernel-segv or exit
	Signal   syscall.Signal // it dies of, or 0 for exit(3)
	Build    string         // the build directory: bin/occa-prof, lib/
	Config   string         // the config for the run preloaded by hand
	Env      []string       // added to every run (OCCA_CACHE_DIR is set per run)
}

// Check runs c untraced, with the runtime preloaded as occa-prof does it,
// linked (c.Linked, with the adapter preloaded alone: the runtime's own
// exports, no shim), and under occa-prof: each traced run ends as the
// untraced one, its trace
// holds every call made before the crash and ends with its final stats, and
// occa-prof says in one warning line that the program died, then prints its
// launches.
func (c *Crash) Check(t *testing.T) {
	t.Helper()
	end := "exit 3"
	if c.Signal != 0 {
		end = "signal " + c.Signal.String()
	}
	launched := fmt.Sprintf("launched %d\n", c.Launches)
	want := c.start(t, t.TempDir(), nil, c.Program, c.Args...)
	if want.end != end || want.stdout != launched {
		t.Fatalf("untraced: %s, stdout %q, want %s and %q; stderr:\n%s", want.end, want.stdout, end, launched, want.stderr)
	}
	llvm := c.How != "exit" && c.Args[len(c.Args)-1] == "llvm"
	if ran := strings.Contains(want.stderr, "crash: crash handler ran\n"); ran != llvm {
		t.Fatalf("untraced: the LLVM-like handler ran: %v, want %v; stderr:\n%s", ran, llvm, want.stderr)
	}

	dir := t.TempDir()
	lib := filepath.Join(c.Build, "lib")
	got := c.start(t, dir, []string{"OCCA_TOOLS_CONFIG=" + c.Config, "OCCA_TOOLS_OUTPUT_DIR=" + filepath.Join(dir, "traces"),
		"LD_PRELOAD=" + filepath.Join(lib, "libocca_tools_occa.so") + ":" + filepath.Join(lib, "libocca_tools_preload.so")},
		c.Program, c.Args...)
	if got.end != want.end || got.stdout != want.stdout {
		t.Errorf("preloaded: %s, stdout %q; untraced: %s", got.end, got.stdout, want.end)
	}
	c.checkTrace(t, got)

	if c.Linked != "" {
		dir = t.TempDir()
		got = c.start(t, dir, []string{"OCCA_TOOLS_CONFIG=" + c.Config, "OCCA_TOOLS_OUTPUT_DIR=" + filepath.Join(dir, "traces"),
			"LD_PRELOAD=" + filepath.Join(lib, "libocca_tools_occa.so")}, c.Linked, c.Args...)
		if got.end != want.end || got.stdout != want.stdout {
			t.Errorf("linked: %s, stdout %q; untraced: %s", got.end, got.stdout, want.end)
		}
		c.checkTrace(t, got)
	}

	dir = t.TempDir()
	got = c.start(t, dir, nil, filepath.Join(c.Build, "bin", "occa-prof"),
		append([]string{"--output", filepath.Join(dir, "traces"), "--", c.Program}, c.Args...)...)
	if got.end != want.end || !strings.HasPrefix(got.stdout, launched) {
		t.Errorf("occa-prof: %s, stdout:\n%s\nuntraced: %s", got.end, got.stdout, want.end)
	}
	if rows := TableRows(got.stdout); !reflect.DeepEqual(rows, []string{"addVectors " + strconv.Itoa(c.Launches)}) {
		t.Errorf("occa-prof's table %v, want [addVectors %d]; stdout:\n%s", rows, c.Launches, got.stdout)
	}
	running := "occa-prof: launches that had not returned when the trace ended: fault 1\n"
	if strings.Contains(got.stdout, running) != (c.How == "kernel-segv") {
		t.Errorf("occa-prof: %q expected: %v; stdout:\n%s", running, c.How == "kernel-segv", got.stdout)
	}
	died := fmt.Sprintf("occa-prof: warning: %s died of signal %d (%v); the profile below covers its run up to then\n",
		c.Program, int(c.Signal), c.Signal)
	warnings := strings.Count(got.stderr, "occa-prof: warning: ")
	if c.Signal != 0 && (warnings != 1 || !strings.Contains(got.stderr, died)) {
		t.Errorf("occa-prof: want one warning, %q; stderr:\n%s", died, got.stderr)
	} else if c.Signal == 0 && warnings != 0 {
		t.Errorf("occa-prof: warnings after a clean exit; stderr:\n%s", got.stderr)
	}
	if strings.Contains(got.stderr, "reading the traces") {
		t.Errorf("occa-prof: the trace is damaged; stderr:\n%s", got.stderr)
	}
	c.checkTrace(t, got)
}

type crashRun struct {
	end            string // "signal aborted", "exit 3"
	stdout, stderr string
	traces         []string
}

// start runs name with args in dir, the environment cleared of tracing
// variables, c.Env and env added.
func (c *Crash) start(t *testing.T, dir string, env []string, name string, args ...string) *crashRun {
	t.Helper()
	cmd := testproc.Command(t, name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if n, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(n, "OCCA_TOOLS_") && n != "LD_PRELOAD" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(append(cmd.Env, c.Env...), "OCCA_CACHE_DIR="+filepath.Join(dir, "cache")), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if testproc.Hung(t) {
		t.Fatalf("%s %v did not end within the test's deadline; stderr:\n%s", name, args, e.String())
	}
	r := &crashRun{end: ending(err), stdout: o.String(), stderr: e.String()}
	r.traces, _ = filepath.Glob(filepath.Join(dir, "traces", "*.occatrace"))
	return r
}

// ending says how a process ended: "signal aborted", "exit 3".
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

// checkTrace checks that the single trace of r holds crash.cpp's work and
// ends with its final stats.
func (c *Crash) checkTrace(t *testing.T, r *crashRun) {
	t.Helper()
	if len(r.traces) != 1 {
		t.Errorf("traces: %v, want 1", r.traces)
		return
	}
	cp, err := Read(r.traces[0])
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if !reflect.DeepEqual(cp.DeviceModes, []string{c.Mode}) || cp.SetupsFailed != 0 {
		t.Errorf("devices %v (%d failed), want [%s]", cp.DeviceModes, cp.SetupsFailed, c.Mode)
	}
	if cp.Allocs != 3 || cp.AllocBytes != 12000 || cp.Frees != 0 {
		t.Errorf("allocations %d (%d B), frees %d; want 3 (12000 B), 0", cp.Allocs, cp.AllocBytes, cp.Frees)
	}
	builds, failed, unended := []string{"addVectors"}, 0, 0
	switch c.How {
	case "throw":
		failed = 1 // the build that threw
	case "kernel-segv":
		builds, unended = []string{"addVectors", "fault"}, 1 // fault's launch
	}
	if got := cp.BuildNames(); !reflect.DeepEqual(got, builds) || len(cp.Builds) != len(builds)+failed {
		t.Errorf("builds %+v, want %v and %d failed", cp.Builds, builds, failed)
	}
	if !reflect.DeepEqual(cp.Launches, map[string]int{"addVectors": c.Launches}) || cp.LaunchesFailed != 0 {
		t.Errorf("launches %v (%d failed), want addVectors: %d", cp.Launches, cp.LaunchesFailed, c.Launches)
	}
	if cp.DeviceFinishes != 1 || cp.Unended != unended || cp.Dropped != 0 {
		t.Errorf("%d device finishes, %d begins without an end, %d dropped; want 1, %d, 0",
			cp.DeviceFinishes, cp.Unended, cp.Dropped, unended)
	}
}

// TableRows returns the rows of occa-prof's kernel table as "name calls".
func TableRows(stdout string) []string {
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

// CrashCases are crash.cpp's ways to end, each with the signal it dies of.
var CrashCases = []struct {
	How    string
	Signal syscall.Signal
}{{"throw", syscall.SIGABRT}, {"abort", syscall.SIGABRT}, {"segv", syscall.SIGSEGV}, {"exit", 0}}
