package launcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/testproc"
)

// preloadEnv is the environment occa-prof gives a program: the shim
// preloaded, a config, and out as the trace directory.
func preloadEnv(out string, extra ...string) []string {
	env := []string{"LD_PRELOAD=" + shim, "OCCA_TOOLS_CONFIG=" + filepath.Join(repo, "configs", "default.toml"),
		"OCCA_TOOLS_OUTPUT_DIR=" + out}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_PRELOAD=") && !strings.HasPrefix(kv, "OCCA_TOOLS_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// The shim starts the runtime in a program that links libocca.
func TestShimTracesOCCAProgram(t *testing.T) {
	out := t.TempDir()
	cmd := testproc.Command(t, app)
	cmd.Env = preloadEnv(out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("app: %v\n%s", err, b)
	}
	got := traces(t, out)
	if len(got) != 1 {
		t.Fatalf("want 1 trace in %s, got %v", out, got)
	}
	r, c, err := trace.Open(got[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r.Header().PID != int64(cmd.Process.Pid) {
		t.Errorf("trace header pid %d, want the app's %d", r.Header().PID, cmd.Process.Pid)
	}
}

// Without a config the shim does nothing, even in an OCCA program.
func TestShimNoConfig(t *testing.T) {
	out := t.TempDir()
	cmd := testproc.Command(t, app)
	cmd.Env = append(preloadEnv(out), "OCCA_TOOLS_CONFIG=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("app: %v\n%s", err, b)
	}
	if got := traces(t, out); len(got) != 0 {
		t.Fatalf("no config: want no trace, got %v", got)
	}
}

// Children that are not OCCA programs (the JIT compiler, shells, tools)
// run untraced: no trace file, no output of the tool.
func TestShimInertElsewhere(t *testing.T) {
	out := t.TempDir()
	src := filepath.Join(t.TempDir(), "kernel.c")
	if err := os.WriteFile(src, []byte("int k(int x) { return 2 * x; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"/bin/true"},
		{"/bin/sh", "-c", "echo hello | cat | wc -c >/dev/null"},
		// What OCCA's JIT does: compile a kernel into a shared library.
		{ccName(), "-shared", "-fPIC", "-O2", "-o", filepath.Join(filepath.Dir(src), "kernel.so"), src},
	} {
		cmd := testproc.Command(t, argv[0], argv[1:]...)
		cmd.Env = preloadEnv(out)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, b)
		}
		if strings.Contains(string(b), "occa-tools") {
			t.Errorf("%v printed: %s", argv, b)
		}
	}
	if got := traces(t, out); len(got) != 0 {
		t.Fatalf("want no trace, got %v", got)
	}
}

// procState returns /proc/<pid>/maps and the thread count.
func procState(t *testing.T, pid int) (string, int) {
	t.Helper()
	maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	threads := -1
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return string(maps), threads
}

// startSleep starts `sleep 30` with env and waits until the shim is mapped
// (the loader has run the constructors by then).
func startSleep(t *testing.T, env []string) *exec.Cmd {
	t.Helper()
	cmd := testproc.Command(t, "sleep", "30")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		maps, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/maps")
		if strings.Contains(string(maps), "libocca_tools_preload.so") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shim never appeared in sleep's maps:\n%s", maps)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // past the constructors, into nanosleep
	return cmd
}

// A long-lived non-OCCA child: the runtime is not loaded, one thread.
func TestShimLeavesSleepAlone(t *testing.T) {
	out := t.TempDir()
	cmd := startSleep(t, preloadEnv(out))
	maps, threads := procState(t, cmd.Process.Pid)
	for _, lib := range []string{"libocca_tools_core", "libocca_tools.so"} {
		if strings.Contains(maps, lib) {
			t.Errorf("%s is mapped in sleep", lib)
		}
	}
	if threads != 1 {
		t.Errorf("sleep has %d threads, want 1", threads)
	}
	if got := traces(t, out); len(got) != 0 {
		t.Errorf("want no trace, got %v", got)
	}
}

// OCCA_TOOLS_TARGET_LIB names other libraries: with libc as the "target",
// the same sleep is traced (core mapped, writer threads, a trace at exit).
func TestShimTargetLibOverride(t *testing.T) {
	out := t.TempDir()
	cmd := startSleep(t, preloadEnv(out, "OCCA_TOOLS_TARGET_LIB=libnothing.so:libc.so"))
	maps, threads := procState(t, cmd.Process.Pid)
	if !strings.Contains(maps, "libocca_tools_core") {
		t.Errorf("libocca_tools_core is not mapped in the target process")
	}
	if threads < 2 {
		t.Errorf("the target process has %d threads, want the runtime's too", threads)
	}
	cmd.Process.Signal(syscall.SIGTERM) // the runtime flushes, then the default action
	cmd.Wait()
	if got := traces(t, out); len(got) != 1 {
		t.Errorf("want 1 trace, got %v", got)
	}
}

// A target that is a path to a named pipe is no library name: the shim
// neither opens it (which would block the process for ever) nor traces.
func TestShimTargetLibNamedPipe(t *testing.T) {
	out := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "libocca.so")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := testproc.Command(t, "/bin/true")
	cmd.Env = preloadEnv(out, "OCCA_TOOLS_TARGET_LIB="+fifo)
	b, err := cmd.CombinedOutput()
	if testproc.Hung(t) {
		t.Fatal("/bin/true did not end: the shim opened the named pipe")
	}
	if err != nil || len(b) != 0 {
		t.Errorf("/bin/true: %v, output %q", err, b)
	}
	if got := traces(t, out); len(got) != 0 {
		t.Errorf("want no trace, got %v", got)
	}
}
