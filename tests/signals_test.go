package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/testproc"
)

// sigRun is one run of a test program traced one of three ways.
type sigRun struct {
	dir            string // where it ran
	stdout, stderr string
	exit           string // "exit 0" or "signal hangup"
	traces         []string
}

// How a test program (sigprog, closeall) is run.
const (
	untraced = iota // NAME-plain: no runtime in the process
	linked          // NAME, linked against the runtime
	shim            // NAME-plain under the preload shim, which dlopens the runtime
)

var modeNames = []string{"untraced", "linked", "shim"}

// runSigprog runs sigprog (args: see tests/signals/sigprog.c).
func runSigprog(t *testing.T, mode int, args ...string) *sigRun {
	t.Helper()
	return runTraced(t, "sigprog", "[output]\nflush_interval = \"60s\"\n", mode, args...)
}

// runTraced runs build/tests/NAME (linked) or NAME-plain in a fresh
// directory, traced by mode with configText.
func runTraced(t *testing.T, name, configText string, mode int, args ...string) *sigRun {
	t.Helper()
	return runTracedEnv(t, name, configText, mode, nil, args...)
}

// runTracedEnv is runTraced with more environment variables for the
// traced runs.
func runTracedEnv(t *testing.T, name, configText string, mode int, more []string, args ...string) *sigRun {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(cfg, []byte(configText), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(buildDir, "tests", name+"-plain")
	env := append(os.Environ(), "OCCA_TOOLS_CONFIG=", "LD_PRELOAD=")
	switch mode {
	case linked:
		prog = filepath.Join(buildDir, "tests", name)
		env = append(env, "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
	case shim:
		env = append(env, "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"),
			"LD_PRELOAD="+filepath.Join(buildDir, "lib", "libocca_tools_preload.so"),
			"OCCA_TOOLS_TARGET_LIB=libc.so")
	}
	if mode != untraced {
		env = append(env, more...)
	}
	cmd := testproc.Command(t, prog, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if testproc.Hung(t) {
		t.Fatalf("%s %v (%s) did not end within the test's deadline; stdout:\n%s", name, args, modeNames[mode], stdout.String())
	}
	r := &sigRun{dir: dir, stdout: stdout.String(), stderr: stderr.String(), exit: "exit 0"}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			r.exit = "signal " + ws.Signal().String()
		} else {
			r.exit = fmt.Sprintf("exit %d", ws.ExitStatus())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	r.traces, _ = filepath.Glob(filepath.Join(dir, "out", "*.occatrace"))
	return r
}

// Every exit signal, every kind of disposition (default, ignored, handler
// set before the tool started or after, with every combination of flags and
// a mask, signal(), ssignal(), sysv_signal(), signal() with siginterrupt(),
// before and after, and sigignore()): what the program observes is the same
// traced and untraced: the read-back of its disposition, read() interrupted
// (EINTR) or restarted, how often and how nested its handler ran, its
// siginfo and mask, the second delivery after SA_RESETHAND, and how the
// process ends. Traced, the trace is complete in every case: the final
// flush of a dying signal, or exit().
func TestSignalSemanticsTracedAsUntraced(t *testing.T) {
	// Every combination of the four flags and the mask.
	var flagSets []string
	names := []string{"restart", "resethand", "nodefer", "siginfo", "mask"}
	for bits := 0; bits < 1<<len(names); bits++ {
		var f []string
		for i, n := range names {
			if bits&(1<<i) != 0 {
				f = append(f, n)
			}
		}
		if len(f) == 0 {
			f = []string{"none"}
		}
		flagSets = append(flagSets, strings.Join(f, ","))
	}
	type disp struct{ before, after, flags string }
	disps := []disp{{"dfl", "none", "none"}, {"ign", "none", "none"},
		{"dfl", "signal", "none"}, {"dfl", "sysv", "none"},
		{"dfl", "interrupt", "none"}, {"dfl", "signal-interrupt", "none"},
		{"handler", "dfl", "restart"}, {"ign", "handler", "restart"}, {"handler", "ign", "none"},
		{"handler", "sigignore", "none"}, {"dfl", "ssignal", "none"}}
	plain := len(disps)
	for _, f := range flagSets {
		disps = append(disps, disp{"handler", "none", f}, disp{"dfl", "handler", f})
	}
	// The signals managed since SIGINT's time: the plain dispositions and
	// two flag sets, which cover their code paths (the flags are handled
	// the same for every signal), to bound the time.
	later := map[string]bool{"PIPE": true, "ALRM": true, "XCPU": true, "XFSZ": true, "USR1": true, "USR2": true}
	for _, sig := range []string{"INT", "TERM", "HUP", "QUIT", "ABRT", "PIPE", "ALRM", "XCPU", "XFSZ", "USR1", "USR2"} {
		for i, d := range disps {
			if later[sig] && i >= plain+4 {
				continue
			}
			args := []string{sig, d.before, d.after, d.flags}
			t.Run(strings.Join(args, "/"), func(t *testing.T) {
				t.Parallel()
				want := runSigprog(t, untraced, args...)
				if want.stderr != "" || !strings.HasPrefix(want.stdout, "first: ") {
					t.Fatalf("untraced run: %s\nstdout:\n%sstderr:\n%s", want.exit, want.stdout, want.stderr)
				}
				modes := []int{linked}
				if sig == "HUP" || sig == "TERM" {
					modes = append(modes, shim)
				}
				for _, mode := range modes {
					got := runSigprog(t, mode, args...)
					if got.stdout != want.stdout || got.exit != want.exit || got.stderr != "" {
						t.Errorf("%s: traced run differs:\n%s\n%s%s\nuntraced:\n%s\n%s", modeNames[mode],
							got.exit, got.stdout, got.stderr, want.exit, want.stdout)
						continue
					}
					if len(got.traces) != 1 {
						t.Errorf("%s: traces %v", modeNames[mode], got.traces)
						continue
					}
					g := readTrace(t, got.traces[0])
					if g.err != nil || g.stats == nil || !g.stats.Final {
						t.Errorf("%s (%s): trace not complete: %v", modeNames[mode], got.exit, g.err)
					}
					if n := g.markers("before-read"); n != 1 {
						t.Errorf("%s: %d before-read markers in the trace, want 1", modeNames[mode], n)
					}
				}
			})
		}
	}
}

// chunks counts the chunks of a trace: a flush writes what was recorded
// since the last one as a chunk of its own.
func chunks(t *testing.T, path string) int {
	t.Helper()
	r, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for {
		if _, err := r.ReadEvent(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return r.Chunks()
		}
	}
}

// A handled signal does not flush: 200 SIGHUPs, each after a marker, leave
// the markers in as many chunks as a run without them (the periodic flush
// is 60 s away), not in a chunk or two each; with the handler installed
// before the tool started and after.
func TestHandledSignalsDoNotFlush(t *testing.T) {
	for _, d := range [][2]string{{"handler", "none"}, {"dfl", "handler"}} {
		base := runSigprog(t, linked, "HUP", d[0], d[1], "restart", "0")
		r := runSigprog(t, linked, "HUP", d[0], d[1], "restart", "200")
		if r.exit != "exit 0" || len(r.traces) != 1 || len(base.traces) != 1 {
			t.Fatalf("%v: %s, traces %v; stderr:\n%s", d, r.exit, r.traces, r.stderr)
		}
		if !strings.Contains(r.stdout, "end: count=204 ") {
			t.Errorf("%v: stdout:\n%s", d, r.stdout)
		}
		g := readTrace(t, r.traces[0])
		if g.err != nil || !g.stats.Final || g.markers("handled") != 200 {
			t.Fatalf("%v: trace: err %v, %d handled markers", d, g.err, g.markers("handled"))
		}
		if n, n0 := chunks(t, r.traces[0]), chunks(t, base.traces[0]); n != n0 {
			t.Errorf("%v: %d chunks after 200 handled signals, %d without them: handled signals flushed", d, n, n0)
		}
	}
}

// dlclose of the runtime (the header allows loading it with dlopen): the
// threads that recorded exit afterwards (their TSD destructors run), a
// signal whose default action ends the process still reaches the tool's
// handler; the trace is complete either way. "adopt": a disposition set
// around the runtime's sigaction() (a dlopen'ed runtime interposes
// nothing) is adopted by the writer's periodic check: set back to the
// default, SIGTERM flushes again.
func TestDlcloseIsSafe(t *testing.T) {
	for _, end := range []string{"exit", "signal", "adopt"} {
		t.Run(end, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "trace.toml")
			os.WriteFile(cfg, []byte("[output]\nflush_interval = \"20ms\"\n"), 0o644)
			cmd := testproc.Command(t, filepath.Join(buildDir, "tests", "unload"),
				filepath.Join(buildDir, "lib", "libocca_tools.so.1"), end)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if testproc.Hung(t) {
				t.Fatal("unload did not end within the test's deadline")
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if end == "exit" && err != nil || end != "exit" && (!ws.Signaled() || ws.Signal() != syscall.SIGTERM) {
				t.Fatalf("exit = %v, want %s; stdout:\n%sstderr:\n%s", err, end, stdout.String(), stderr.String())
			}
			if stdout.String() != "unload: threads done\n" {
				t.Errorf("stdout = %q", stdout.String())
			}
			g := readTrace(t, onlyTrace(t, filepath.Join(dir, "out")))
			if g.err != nil || !g.stats.Final {
				t.Fatalf("trace not complete: %v", g.err)
			}
			if n := g.markers("from-thread"); n != 400 {
				t.Errorf("%d markers from the threads, want 400", n)
			}
		})
	}
}

// A program profiling itself with SIGPROF (setitimer(ITIMER_PROF)): the Go
// runtime unblocks SIGPROF on its threads, so the program's handler ran on
// one of them, on a goroutine's stack, and the process died ("fatal error:
// fault") within a second. Handlers now get SA_ONSTACK (the signal stack
// Go gives its threads); the program reads back its own flags, and its
// output and trace are as expected, linked and through the preload shim,
// with sigaction(), signal() and sigset() (whose glibc version calls its
// own sigaction, which no interposition saw: it is exported too).
func TestProfilingSignalOnToolThreads(t *testing.T) {
	for _, c := range []struct{ how, restart string }{{"sigaction", "set"}, {"signal", "set"}, {"sigset", "clear"}} {
		how := c.how
		t.Run(how, func(t *testing.T) {
			want := runTraced(t, "itimer", "[output]\n", untraced, how)
			if want.exit != "exit 0" || want.stdout != "itimer: handler ours, SA_ONSTACK clear, SA_RESTART "+c.restart+", ticks some\n" {
				t.Fatalf("untraced: %s, stdout %q\n%s", want.exit, want.stdout, want.stderr)
			}
			for _, mode := range []int{linked, shim} {
				got := runTraced(t, "itimer", "[output]\n", mode, how)
				name := modeNames[mode]
				if !endedClean(t, name, got, want.exit, want.stdout) {
					continue
				}
				if len(got.traces) != 1 {
					t.Fatalf("%s: traces %v", name, got.traces)
				}
				g := countTrace(t, got.traces[0])
				if g.err != nil || g.stats == nil || !g.stats.Final || g.stats.TotalDropped() != 0 ||
					g.counts[trace.RegionPush] == 0 || g.counts[trace.RegionPush] != g.counts[trace.RegionPop] {
					t.Errorf("%s: trace: %v, stats %+v, %d pushes, %d pops", name, g.err, g.stats, g.counts[trace.RegionPush], g.counts[trace.RegionPop])
				}
			}
		})
	}
}

// A program's SIGURG handler (out-of-band socket data) received the Go
// runtime's preemption signals too, sent to its own threads: 3 extra calls
// in each run. Behind the trampoline it gets exactly the 5 the program
// sent itself (by kill, which may land on any thread), reads back its own
// action, and the trace is complete, linked and through the preload shim.
func TestURGHandlerGetsOnlyItsOwnSignals(t *testing.T) {
	tracedAsUntraced(t, "itimer", "[output]\n", "exit 0", "itimer: urg before default; handler ours, SA_ONSTACK clear, calls 5\n", "urg")
}

// A SIGURG handler installed with SA_NODEFER goes in behind the trampoline
// without it (on a core thread's small signal stack, nested signals
// overflowed it: TestSignalStormWithChangingHandlers); on the program's
// threads the trampoline unblocks SIGURG before it calls the handler, so
// the handler runs with SIGURG unblocked there, as untraced.
func TestNoDeferHoldsOnProgramThreads(t *testing.T) {
	tracedAsUntraced(t, "itimer", "[output]\n", "exit 0", "itimer: urg nodefer, blocked in the handler no, calls 1\n", "urg", "nodefer")
}

// A handler with SA_NODEFER already in place as the tool starts (set from
// .preinit_array), for a signal the Go runtime leaves unblocked on its
// threads (SIGCHLD, SIGPROF, SIGSTKFLT) or sends them (SIGURG). The
// program's only thread blocks the signal and sends it to the process 20
// times: traced, the core's threads take each, and the handler must run
// there with the signal blocked (else a storm nests on Go's small signal
// stacks), its own 20 calls and no other, and read back as the program set
// it. Untraced nothing takes them until main unblocks the signal. Before:
// the three read back SA_ONSTACK (the Go runtime, starting, adds it
// through the tool's sigaction()); SIGURG's read back as the Go runtime's
// handler, which took the program's signals, the program's handler taking
// Go's preemptions of main, in the start, instead (1 or 2 calls of 20).
func TestEarlyNoDeferHandler(t *testing.T) {
	for _, sig := range []string{"chld", "prof", "stkflt", "urg"} {
		for _, mode := range []int{untraced, linked, shim} {
			calls := map[bool]string{true: "0", false: "20"}[mode == untraced]
			want := "early: " + sig + " handler ours, SA_NODEFER set, SA_ONSTACK clear; other threads " + calls +
				" calls, 0 unblocked; main 1 call, unblocked yes\n"
			r := runTraced(t, "early", "[output]\n", mode, sig)
			endedClean(t, sig+" ("+modeNames[mode]+")", r, "exit 0", want)
		}
	}
}

// The signal functions the tool interposes give what the C library gives,
// result and errno, for every kind of signal number: out of range, SIGKILL
// and SIGSTOP (no handler), the C library's own 32 and 33, managed exit
// signals, the Go runtime's (SIGCHLD, SIGPROF, SIGSTKFLT, SIGURG) and
// real-time ones: sigaction() set, read and reset, signal(), siginterrupt(),
// sigset() and sigignore(), linked and through the preload shim.
func TestSignalArgumentsTracedAsUntraced(t *testing.T) {
	want := "" +
		"sigargs: -1: -1/22 -1/22 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 0: -1/22 -1/22 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 1: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 2: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 9: -1/22 0/0 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 16: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 17: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 19: -1/22 0/0 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 23: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 27: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 32: -1/22 -1/22 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 33: -1/22 -1/22 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 34: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 64: 0/0 0/0 0/0 0/0 0/0 0/0 0/0\n" +
		"sigargs: 65: -1/22 -1/22 -1/22 -1/22 -1/22 -1/22 -1/22\n" +
		"sigargs: 1000: -1/22 -1/22 -1/22 -1/22 -1/22 -1/22 -1/22\n"
	tracedAsUntraced(t, "sigargs", "[output]\n", "exit 0", want)
}

// A child that reads back and resets its signals before it ends, as
// spawners and Python's subprocess (which uses vfork) do before exec. A
// vfork child shares the parent's memory, and the runtime's sigaction()
// wrote the child's changes into the parent's records: the parent read
// back SIG_DFL for SIGPIPE, SIGURG and SIGINT, and its SIGURG handler was
// never called again (urg calls 0). The same for a one-shot handler run in
// the child: its reset was the parent's too, and the parent's own SIGUSR1
// then ended it. A child's actions and resets now go to its kernel alone,
// the records only read: vfork and fork children read back 9 of 9 as they
// set them, and the parent keeps its own (a vfork child's handler call
// counts in the parent's memory, as untraced), linked and through the
// preload shim.
func TestChildSignalsLeaveParent(t *testing.T) {
	for _, c := range []struct{ how, usr1 string }{{"vfork", "2"}, {"fork", "1"}} {
		want := "vfork: " + c.how + " child read back 9 of 9 as set; parent: PIPE ign, URG on_urg, INT on_int, TERM dfl, " +
			"USR1 on_usr1 then dfl; calls urg 1, int 1, usr1 " + c.usr1 + "\n"
		tracedAsUntraced(t, "vfork", "[output]\n", "exit 0", want, c.how)
	}
}

// A vfork child that records (here 50,000 regions, past its thread's
// buffer): the runtime's buffer slow path took it for a child of the raw
// fork system call and set the state, shared with the parent, to forked,
// and the parent's trace was lost (0 events, no final stats). The child
// knows now that it shares the parent's memory (a MADV_WIPEONFORK page
// that a forked child finds zeroed) and leaves the state alone: the
// parent's markers before and after are in its complete trace, linked and
// through the preload shim. (The child ran on the parent's thread, in its
// memory: its regions that fitted that thread's buffer show there as the
// parent's, and the rest are counted dropped, which the runtime's warning
// at exit would report; the config keeps it to errors.)
func TestVforkChildRecordingLeavesParentTracing(t *testing.T) {
	runs := tracedAsUntraced(t, "vfork", "[output]\n[log]\nlevel = \"error\"\n", "exit 0",
		"vfork: record, child exited 0\n", "record")
	for mode, r := range runs {
		g := readTrace(t, r.traces[0])
		if before, after := g.markers("before"), g.markers("after"); before != 1 || after != 1 {
			t.Errorf("%s: markers before %d, after %d; want 1 and 1", mode, before, after)
		}
	}
	if len(runs) != 2 {
		t.Errorf("traced runs %d, want 2 (linked, shim)", len(runs))
	}
}

// A SIGURG handler installed with SA_RESETHAND went in behind the
// trampoline with that flag, and the kernel spent the reset on the first
// SIGURG: a preemption signal of the Go runtime's, after which the
// program's own signal found SIG_DFL (0 calls; latecore sends one to its
// thread as Go does, every run). The trampoline resets on the program's
// own signal now: one call, linked and through the preload shim, and the
// action then reads back as SIG_DFL with the program's flags, as untraced.
//
// The Go runtime's preemptions must reach its own handler, set as it
// loads. They reached the program's, or SIG_DFL, which dropped them:
// latecore's handler got 1 of its 3 (one sent in the start to the
// program's thread in the call, one to its thread once the program has a
// handler, one at the shutdown, after the reset). The action the Go
// runtime sets is the tool's side of the trampoline now, which stays in
// whatever the program's action: 3 of 3, and SIGURG reads back as
// SIG_DFL until the program sets a handler.
func TestPreemptionSparesOneShotURGHandler(t *testing.T) {
	want := "itimer: urg before default; handler default, SA_ONSTACK clear, calls 1\n"
	tracedAsUntraced(t, "itimer", "[output]\n", "exit 0", want, "urg", "oneshot")
	for _, mode := range []int{linked, shim} {
		report := filepath.Join(t.TempDir(), "preempts")
		env := []string{lateCore(), "LATECORE_PREEMPTS=" + report}
		r := runTracedEnv(t, "itimer", "[output]\n", mode, env, "urg", "oneshot")
		endedClean(t, "latecore ("+modeNames[mode]+")", r, "exit 0", want)
		if got, err := os.ReadFile(report); err != nil || string(got) != "preempts 3\n" {
			t.Errorf("latecore (%s): its SIGURG handler reports %q (%v), want the 3 preemptions", modeNames[mode], got, err)
		}
	}
}

// A storm of SIGURGs sent to the process, which blocks them in its own
// threads, while two threads change its handler between a plain one, a
// one-shot one and a System V signal() one (SA_RESETHAND | SA_NODEFER,
// installed again by itself): traced, the signals landed on the core's
// threads and nested on Go's 32 KiB signal stacks, SA_NODEFER passed on
// to the trampoline, until one overflowed (a crash in 3 of 20 runs
// through the shim). The trampoline defers the signal on the core's
// threads now: the program ends normally, untraced, linked and through
// the shim, twice each. The same storm of SIGCHLDs ends normally too: its
// handlers with SA_NODEFER go behind a trampoline as well (installed as
// given, they nested the same way once the runtime's sigaction() took a
// little longer).
func TestSignalStormWithChangingHandlers(t *testing.T) {
	line := regexp.MustCompile(`^storm: [1-9][0-9]* changes, [0-9]+ calls\n$`)
	for _, sig := range []string{"urg", "chld"} {
		for _, mode := range []int{untraced, linked, shim, linked, shim} {
			r := runTracedEnv(t, "storm", "[output]\n", mode, nil, sig, "0.5")
			if r.exit != "exit 0" || !line.MatchString(r.stdout) || r.stderr != "" {
				t.Errorf("%s (%s): %s, stdout %q, stderr:\n%s\nwant exit 0, %s, nothing",
					sig, modeNames[mode], r.exit, r.stdout, firstLines(r.stderr, 5), line)
			}
		}
	}
}

// endedClean reports whether r ended with exit, printed stdout and nothing
// on stderr, and, when not, says how it differs as an error of t, labelled.
func endedClean(t *testing.T, label string, r *sigRun, exit, stdout string) bool {
	t.Helper()
	if r.exit == exit && r.stdout == stdout && r.stderr == "" {
		return true
	}
	t.Errorf("%s: %s, stdout %q, stderr:\n%s\nwant %s, %q, nothing", label, r.exit, r.stdout, firstLines(r.stderr, 5), exit, stdout)
	return false
}

// lateCore is the environment that loads the stand-in core latecore.so.
func lateCore() string { return "OCCA_TOOLS_CORE=" + filepath.Join(buildDir, "tests", "latecore.so") }

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}

// tracedAsUntraced runs test program name untraced, then linked and
// through the preload shim, with configText and args. The untraced run
// must end with exit and print stdout; a traced run must do the same and
// print nothing on stderr (else the test says how it differs). It returns
// each traced run that did, with its complete trace's counts (countTrace),
// by mode name.
func tracedAsUntraced(t *testing.T, name, configText, exit, stdout string, args ...string) map[string]tracedRun {
	t.Helper()
	if u := runTraced(t, name, configText, untraced, args...); u.exit != exit || u.stdout != stdout {
		t.Fatalf("untraced: %s, stdout %q; want %s, %q\n%s", u.exit, u.stdout, exit, stdout, u.stderr)
	}
	runs := map[string]tracedRun{}
	for _, mode := range []int{linked, shim} {
		got := runTraced(t, name, configText, mode, args...)
		m := modeNames[mode]
		if !endedClean(t, m, got, exit, stdout) {
			continue
		}
		if len(got.traces) != 1 {
			t.Fatalf("%s: traces %v", m, got.traces)
		}
		g := countTrace(t, got.traces[0])
		if g.err != nil || g.stats == nil || !g.stats.Final {
			t.Errorf("%s: trace not complete: %v, stats %+v", m, g.err, g.stats)
			continue
		}
		runs[m] = tracedRun{got, g}
	}
	return runs
}

// tracedRun is a traced run of a test program and its trace's counts.
type tracedRun struct {
	*sigRun
	trace *got
}

// A core that makes a thread as it starts running (the Go runtime may: a
// goroutine blocked in a call to C has its P handed to a new thread), with
// SIGCHLD unblocked there as Go leaves it. Through the preload shim, such a
// thread went past the runtime's pthread_create, unrecorded: the shim
// pointed its forwards at the runtime only once the runtime's constructor
// had started the core. Every use of the record of the core's threads then
// failed on it: SIGCHLD's stand-in took it for a thread of the program and
// dropped the children's SIGCHLD the kernel gave it (0 of 5 here, the
// signalfd read after poll hanging; with the real core, 2 runs in 100
// under load), and a program whose main thread left with pthread_exit
// never ended, the thread counting as one of the program's still running.
// The shim starts the runtime now, once its forwards lead there: linked
// and through the shim, all 5 signals come, and the program ends.
func TestCoreThreadMadeAtRunIsRecorded(t *testing.T) {
	core := []string{lateCore()}
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"itimer", "itimer: bad set EFAULT; sigchld 5 of 5 by signalfd, action default; then handler ours, calls 1\n",
			[]string{"sigchld", "signalfd"}},
		{"mainexit", "mainexit: threads=4 pairs=1000\n", []string{"4", "1000"}},
	} {
		for _, mode := range []int{linked, shim} {
			r := runTracedEnv(t, tc.name, "[output]\n", mode, core, tc.args...)
			if r.exit != "exit 0" || r.stdout != tc.want || r.stderr != "" || len(r.traces) != 0 {
				t.Errorf("%s (%s): %s, stdout %q, stderr:\n%s\ntraces %v; want exit 0, %q, nothing, none",
					tc.name, modeNames[mode], r.exit, r.stdout, firstLines(r.stderr, 5), r.traces, tc.want)
			}
		}
	}
}

// A core thread that still keeps SIGCHLD blocked when the program installs
// a SIGCHLD handler of its own, as one starved past the stand-in's 200 ms
// wait does (latecore's second thread keeps it blocked until then), holds
// the mark the stand-in sent it, and the program's handler got that
// SIGCHLD no child sent: 2 calls for one child (once in about 3,900 runs
// of the tests under load; here every time). The handler goes in behind a
// trampoline that takes the marks: one call, linked and through the shim,
// and the handler reads back as installed. With SA_RESETHAND the kernel
// would spend the reset on the mark and discard the child's signal (0
// calls, after the program's 3 s wait): the trampoline resets on the
// child's signal, and SIGCHLD's action then reads back as SIG_DFL.
func TestPendingMarkMissesProgramHandler(t *testing.T) {
	core := []string{lateCore()}
	for _, tc := range []struct {
		args    []string
		handler string
	}{
		{[]string{"sigchld", "signalfd"}, "ours"},
		{[]string{"sigchld", "sigtimedwait"}, "ours"},
		{[]string{"sigchld", "signalfd", "oneshot"}, "default"},
	} {
		want := "itimer: bad set EFAULT; sigchld 5 of 5 by " + tc.args[1] + ", action default; then handler " + tc.handler + ", calls 1\n"
		for _, mode := range []int{linked, shim} {
			r := runTracedEnv(t, "itimer", "[output]\n", mode, core, tc.args...)
			endedClean(t, fmt.Sprintf("%v (%s)", tc.args, modeNames[mode]), r, "exit 0", want)
		}
	}
}

// A program with its own 16 KiB signal stack (as for a SIGSEGV handler)
// and a SIGALRM handler, installed without SA_ONSTACK, that uses 64 KiB of
// stack: SA_ONSTACK added to every handler ran it on the small stack, and
// the program died of SIGSEGV, linked and through the preload shim. Only
// the handlers of signals that may land on the Go runtime's threads get it
// now; this one runs where the program said, 5 times, and reads back as
// installed. The trace holds the 5 regions around the alarms.
func TestAlarmHandlerKeepsItsStack(t *testing.T) {
	runs := tracedAsUntraced(t, "itimer", "[output]\n", "exit 0", "itimer: alarm handler ours, SA_ONSTACK clear, calls 5\n", "altstack")
	for mode, r := range runs {
		if c := r.trace.counts; c[trace.RegionPush] != 5 || c[trace.RegionPop] != 5 {
			t.Errorf("%s: %d pushes, %d pops; want 5, 5", mode, c[trace.RegionPush], c[trace.RegionPop])
		}
	}
}

// A program that blocks SIGCHLD and waits for it (signalfd, as an event
// loop does, or sigtimedwait), its action left at SIG_DFL: the Go runtime
// leaves SIGCHLD unblocked on the core's threads, and the kernel gave the
// children's signals to them, where the default action discarded them
// (1 of 5 came by signalfd, each miss after its 3 s wait). All 5 come now,
// linked and through the preload shim, SIGCHLD's action reads back as the
// default, a handler the program installs then gets its one child's signal
// and reads back (as SIG_DFL after it, installed with SA_RESETHAND), and
// the trace holds the 5 regions around the children. A
// wait on a set the call cannot read fails with EFAULT, as untraced: the
// tool reads the set without faulting.
func TestWaitedSIGCHLDReachesProgram(t *testing.T) {
	for _, args := range [][]string{{"sigchld", "signalfd"}, {"sigchld", "sigtimedwait"}, {"sigchld", "signalfd", "oneshot"}} {
		t.Run(strings.Join(args[1:], "-"), func(t *testing.T) {
			handler := "ours"
			if len(args) == 3 {
				handler = "default" // SA_RESETHAND: reset after its one call
			}
			runs := tracedAsUntraced(t, "itimer", "[output]\n", "exit 0", "itimer: bad set EFAULT; sigchld 5 of 5 by "+args[1]+", action default; then handler "+handler+", calls 1\n", args...)
			for mode, r := range runs {
				if c := r.trace.counts; c[trace.RegionPush] != 5 || c[trace.RegionPop] != 5 {
					t.Errorf("%s: %d pushes, %d pops; want 5, 5", mode, c[trace.RegionPush], c[trace.RegionPop])
				}
			}
		})
	}
}
