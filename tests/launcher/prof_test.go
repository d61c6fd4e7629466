package launcher

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/testproc"
)

// prof runs occa-prof in a fresh directory with a clean environment (no
// launcher rank variables, no OCCA_TOOLS_*).
func prof(t *testing.T, args ...string) (dir, stdout, stderr string, err error) {
	t.Helper()
	dir = t.TempDir()
	cmd := testproc.Command(t, occaProf, args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return dir, o.String(), e.String(), err
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "OCCA_TOOLS_"), name == "LD_PRELOAD", strings.HasPrefix(name, "OMPI_"),
			strings.HasPrefix(name, "PMI"), name == "SLURM_PROCID", name == "PALS_RANKID":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func exitStatus(t *testing.T, err error) syscall.WaitStatus {
	t.Helper()
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if !errors.As(err, &ee) {
		t.Fatalf("occa-prof did not run: %v", err)
	}
	return ee.Sys().(syscall.WaitStatus)
}

// kernelRows parses the table occa-prof prints: name -> calls.
func kernelRows(stdout string) map[string]int {
	rows := map[string]int{}
	in := false
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "kernel" && f[1] == "calls":
			in = true
		case in && len(f) >= 4:
			if n, err := strconv.Atoi(f[1]); err == nil {
				rows[f[0]] = n
			}
		default:
			in = false
		}
	}
	return rows
}

func TestProfExitStatus(t *testing.T) {
	_, _, stderr, err := prof(t, "--quiet", workload, "--no-such-argument")
	if ws := exitStatus(t, err); ws.Signaled() || ws.ExitStatus() != 2 {
		t.Fatalf("want exit status 2, got %v\n%s", ws, stderr)
	}
}

func TestProfDeathBySignal(t *testing.T) {
	_, _, stderr, err := prof(t, "--quiet", workload, "-t", "1", "-s", "5", "--kill-self", "TERM")
	ws := exitStatus(t, err)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("want death by SIGTERM, got %v (exit %d)\n%s", ws, ws.ExitStatus(), stderr)
	}
	if ws.CoreDump() {
		t.Errorf("occa-prof dumped core")
	}
}

func TestProfForwardsSignal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "traces")
	cmd := testproc.Command(t, occaProf, "--quiet", "--output", out, workload, "-t", "1", "--spin-forever", "--install-handler")
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The trace appears when the runtime starts; the handler is installed by then.
	for deadline := time.Now().Add(20 * time.Second); len(traces(t, out)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the workload never started:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws := exitStatus(t, err); ws.Signaled() || ws.ExitStatus() != 3 {
		t.Fatalf("want exit status 3 (the workload's handler), got %v\n%s", ws, stderr.String())
	}
	if !strings.Contains(stderr.String(), "workload: handler ran") {
		t.Errorf("the handler did not run:\n%s", stderr.String())
	}
}

func TestProfReport(t *testing.T) {
	dir, stdout, stderr, err := prof(t, workload, "-t", "2", "-s", "10")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	got := traces(t, filepath.Join(dir, "occa-tools-traces"))
	if len(got) != 1 {
		t.Fatalf("want 1 trace in ./occa-tools-traces, got %v", got)
	}
	if !strings.Contains(stdout, filepath.Base(got[0])) {
		t.Errorf("the trace %s is not listed:\n%s", filepath.Base(got[0]), stdout)
	}
	want := map[string]int{"axpy": 60, "dot": 20, "gemm_small": 40, "init_fill": 1}
	if rows := kernelRows(stdout); !equal(rows, want) {
		t.Errorf("kernel table %v, want %v:\n%s", rows, want, stdout)
	}
}

func equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// --output is respected, and an earlier trace there is not listed again.
func TestProfOutputAndNewFilesOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(out, "old-host-rx-p1.occatrace")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	dir, stdout, stderr, err := prof(t, "--output", out, workload, "-t", "1", "-s", "3")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	if got := traces(t, filepath.Join(dir, "occa-tools-traces")); len(got) != 0 {
		t.Errorf("traces in the default directory despite --output: %v", got)
	}
	got := traces(t, out)
	if len(got) != 2 {
		t.Fatalf("want the old and one new trace in %s, got %v", out, got)
	}
	if strings.Contains(stdout, "old-host") {
		t.Errorf("the earlier trace is listed:\n%s", stdout)
	}
	if !strings.Contains(stdout, "1 trace file(s) in "+out) {
		t.Errorf("want one new trace in %s:\n%s", out, stdout)
	}
}

// The whole path of an unmodified program: occa-prof -> shim -> runtime.
func TestProfUnmodifiedProgram(t *testing.T) {
	dir, stdout, stderr, err := prof(t, app)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	got := traces(t, filepath.Join(dir, "occa-tools-traces"))
	if len(got) != 1 || !strings.Contains(stdout, filepath.Base(got[0])) {
		t.Fatalf("want one listed trace, got %v:\n%s", got, stdout)
	}
}

// --device-time runs on a temporary copy of the config, removed afterwards.
func TestProfDeviceTime(t *testing.T) {
	tmp := t.TempDir()
	dir := t.TempDir()
	cmd := testproc.Command(t, occaProf, "--quiet", "--device-time", workload, "-t", "1", "-s", "2")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(b), "occa-prof") || strings.Contains(string(b), "config") {
		t.Fatalf("%v\n%s", err, b)
	}
	if got := traces(t, filepath.Join(dir, "occa-tools-traces")); len(got) != 1 {
		t.Fatalf("want 1 trace, got %v", got)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the temporary config was left behind: %v", left)
	}
}

func TestProfErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"./no-such-program"}, 127, "no such file"},
		{[]string{"no-such-command-anywhere"}, 127, "command not found"},
		{[]string{"--config", "/no/such.toml", "/bin/true"}, 2, "config"},
		{[]string{}, 2, "no program"},
		{[]string{"--bogus-flag", "/bin/true"}, 2, "bogus-flag"},
		{[]string{"/"}, 126, "directory"},
	} {
		_, _, stderr, err := prof(t, c.args...)
		if ws := exitStatus(t, err); ws.ExitStatus() != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("occa-prof %v: exit %d, stderr %q; want %d and %q", c.args, ws.ExitStatus(), stderr, c.code, c.msg)
		}
	}
	_, stdout, _, err := prof(t, "--help")
	if err != nil || !strings.Contains(stdout, "--device-time") || !strings.Contains(stdout, "mpirun") {
		t.Errorf("--help: %v\n%s", err, stdout)
	}
}

// Under MPI every rank writes its trace with its rank in the header. Needs
// mpirun (Debian: openmpi-bin).
func TestProfMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun is not on PATH (Debian/Ubuntu: apt-get install openmpi-bin): MPI launch not tested")
	}
	dir := t.TempDir()
	cmd := testproc.Command(t, mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "4",
		occaProf, "--quiet", workload, "-t", "1", "-s", "5")
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	got := traces(t, filepath.Join(dir, "occa-tools-traces"))
	if len(got) != 4 {
		t.Fatalf("want 4 traces, got %v\n%s", got, b)
	}
	var ranks []int64
	for _, p := range got {
		r, c, err := trace.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		ranks = append(ranks, r.Header().Rank)
		c.Close()
	}
	slices.Sort(ranks)
	if !slices.Equal(ranks, []int64{0, 1, 2, 3}) {
		t.Errorf("ranks %v, want 0..3", ranks)
	}

	// Without --quiet only rank 0 prints, and it lists all four files.
	dir = t.TempDir()
	cmd = testproc.Command(t, mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "4", occaProf, workload, "-t", "1", "-s", "5")
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	b, err = cmd.Output()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	if n := strings.Count(string(b), "trace file(s) in"); n != 1 {
		t.Errorf("want one report (rank 0), got %d:\n%s", n, b)
	}
	if !strings.Contains(string(b), "4 trace file(s)") || !strings.Contains(string(b), "kernels of rank 0") {
		t.Errorf("rank 0 should list 4 files and its kernels:\n%s", b)
	}
}

// startCounting starts occa-prof on the workload counting sig, with attr,
// and its terminal (stdin, stdout, stderr) out; wrap, when given, runs
// occa-prof. It returns once the workload's handler is in, as text (what
// the output holds so far) shows.
func startCounting(t *testing.T, sig string, attr *syscall.SysProcAttr, out *os.File, text func() string,
	wrap ...string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	args := append(wrap, occaProf, "--quiet", "--output", filepath.Join(dir, "traces"), workload, "-t", "1", "-s", "1",
		"--count-signal", sig)
	cmd := testproc.Command(t, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	cmd.SysProcAttr = attr
	cmd.Stdin, cmd.Stdout, cmd.Stderr = out, out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(text(), "workload: waiting for signal"); {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the workload never got to its wait:\n%s", text())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd
}

// openPty opens a pseudo-terminal: its master and its slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("no pseudo-terminal: unlockpt: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("no pseudo-terminal: ptsname: %v", e)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	return master, slave
}

// lockedBuffer is a bytes.Buffer written by one goroutine, read by another.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Ctrl-C on the terminal where occa-prof runs: the terminal sends SIGINT
// to its foreground process group, occa-prof and PROGRAM, and occa-prof
// passed its own on, so the program got two (a program that quits at a
// second Ctrl-C quit at the first). Through a real pseudo-terminal, with
// occa-prof a session leader in its foreground: one.
func TestProfCtrlCReachesProgramOnce(t *testing.T) {
	master, slave := openPty(t)
	defer master.Close()
	var out lockedBuffer
	read := make(chan struct{})
	go func() { // until the terminal's last user ends (EIO)
		_, _ = io.Copy(&out, master)
		close(read)
	}()
	cmd := startCounting(t, "INT", &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, slave, out.String)
	slave.Close()
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	err := cmd.Wait()
	<-read
	if ws := exitStatus(t, err); ws.Signaled() || ws.ExitStatus() != 0 {
		t.Fatalf("occa-prof ended with %v:\n%s", ws, out.String())
	}
	if want := "workload: signal 2 came 1 times"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q on the terminal:\n%s", want, out.String())
	}
}

// In a Slurm task (slurmstepd, occa-prof's parent, signals every process of
// the step: scancel, --signal, the time limit), PROGRAM got each signal
// twice. A stand-in slurmstepd runs occa-prof; SIGUSR1 goes to occa-prof
// and to PROGRAM, as Slurm sends it: one.
func TestProfSlurmSignalReachesProgramOnce(t *testing.T) {
	stepd := filepath.Join(t.TempDir(), "slurmstepd")
	if err := os.WriteFile(stepd, []byte("#!/bin/sh\n\"$@\"\nexit $?\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	text := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
	cmd := startCounting(t, "USR1", &syscall.SysProcAttr{Setpgid: true}, out, text, stepd)
	prof := children(t, cmd.Process.Pid)
	if len(prof) != 1 {
		t.Fatalf("the stand-in slurmstepd has children %v, want occa-prof", prof)
	}
	program := children(t, prof[0])
	if len(program) != 1 {
		t.Fatalf("occa-prof has children %v, want the workload", program)
	}
	for _, pid := range []int{prof[0], program[0]} {
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	waitErr := cmd.Wait()
	if ws := exitStatus(t, waitErr); ws.Signaled() || ws.ExitStatus() != 0 {
		t.Fatalf("ended with %v:\n%s", ws, text())
	}
	if want := "workload: signal 10 came 1 times"; !strings.Contains(text(), want) {
		t.Errorf("want %q:\n%s", want, text())
	}
}

// children lists the child processes of pid, made by any of its threads.
func children(t *testing.T, pid int) []int {
	t.Helper()
	lists, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if len(lists) == 0 {
		t.Skipf("cannot list the children of %d (/proc/PID/task/TID/children)", pid)
	}
	var pids []int
	for _, list := range lists {
		b, _ := os.ReadFile(list)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}
