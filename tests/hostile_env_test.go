package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/libocca/occa-tools/configs"
	"github.com/libocca/occa-tools/tests/testproc"
)

// The environment and the config file come from outside: whatever they
// hold, the program runs to its normal end within a deadline (or, when
// on_error says abort, stops with status 2), and each problem is one line
// on stderr that names it.

// hostileEnv is the test's environment without the variables the runtime
// reads, so that only those a case sets count.
func hostileEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		skip := false
		for _, p := range []string{"OCCA_TOOLS_", "OMPI_", "PMI_", "PMIX_", "MV2_", "PALS_", "SLURM_", "FLUX_"} {
			skip = skip || strings.HasPrefix(kv, p)
		}
		if !skip {
			env = append(env, kv)
		}
	}
	return env
}

// runWithin runs the workload (-t 1 -s 2 unless args say otherwise) in dir,
// traces going to dir/out unless env says otherwise, and fails the test if
// it has not ended within the test's deadline (testproc).
func runWithin(t *testing.T, dir string, env []string, args ...string) *run {
	t.Helper()
	if len(args) == 0 {
		args = []string{"-t", "1", "-s", "2"}
	}
	cmd := testproc.Command(t, filepath.Join(buildDir, "tests", "workload"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(hostileEnv(), "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out")), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if testproc.Hung(t) {
		t.Fatalf("the program did not end within the test's deadline (env %q); stderr:\n%s", env, stderr.String())
	}
	r := &run{dir: dir, stdout: stdout.String(), stderr: stderr.String(), err: err}
	r.traces, _ = filepath.Glob(filepath.Join(dir, "out", "*.occatrace"))
	return r
}

const (
	untracedLine = "ERR occa-tools: config errors above: the program runs untraced (set on_error = \"abort\" to stop it instead)"
	abortLine    = "occa-tools: stopping the program: the config says on_error = \"abort\""
	notRegular   = ", not a regular file; give the path of a TOML file"
)

// checkRun checks a run's exit (status 0, or 2 when abort), its stderr lines
// (with dir/ written as DIR/) and how many traces it left; a program that
// runs to its end prints its normal last line.
func checkRun(t *testing.T, r *run, abort bool, traces int, want ...string) {
	t.Helper()
	if abort {
		var ee *exec.ExitError
		if !errors.As(r.err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("exit = %v, want status 2", r.err)
		}
	} else {
		if r.err != nil {
			t.Errorf("exit = %v, want status 0", r.err)
		}
		if r.stdout != "workload: threads=1 steps=2\n" {
			t.Errorf("stdout = %q, want the program's normal output", r.stdout)
		}
	}
	got := stderrLines(strings.ReplaceAll(r.stderr, r.dir+"/", "DIR/"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(r.traces) != traces {
		t.Errorf("traces = %v, want %d", r.traces, traces)
	}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A config that is not a regular file, or that would exhaust the reader:
// the program runs untraced, with one line naming the problem (and the
// line saying it runs untraced).
func TestHostileConfigRunsUntraced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config func(t *testing.T, dir string) string // the value of OCCA_TOOLS_CONFIG
		want   string                                // the one error, DIR/ for the run's directory
	}{
		{"named pipe", func(t *testing.T, dir string) string { return mkfifo(t, filepath.Join(dir, "fifo.toml")) },
			"DIR/fifo.toml: cannot read config: a named pipe" + notRegular},
		{"symlink to a named pipe", func(t *testing.T, dir string) string {
			link := filepath.Join(dir, "link.toml")
			if err := os.Symlink(mkfifo(t, filepath.Join(dir, "fifo")), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "DIR/link.toml: cannot read config: a named pipe" + notRegular},
		{"/dev/zero", func(t *testing.T, _ string) string { return "/dev/zero" },
			"/dev/zero: cannot read config: a character device" + notRegular},
		{"directory", func(t *testing.T, dir string) string {
			sub := filepath.Join(dir, "sub.toml")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			return sub
		}, "DIR/sub.toml: cannot read config: a directory" + notRegular},
		{"unreadable", func(t *testing.T, _ string) string { return "/proc/self/mem" },
			"/proc/self/mem: cannot read config: input/output error"},
		{"2 MB of [", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "big.toml"), "a = "+strings.Repeat("[", 2<<20))
		}, "DIR/big.toml: larger than 64KiB; a config is a few KiB of TOML: check that this is the file you meant"},
		{"60,000 nested [", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "deep.toml"), "[output]\na = "+strings.Repeat("[", 60000))
		}, "DIR/deep.toml:2: output.a" + strings.Repeat("[0]", 14) +
			": nested more than 16 levels deep (each table or key name and each array element is a level); remove the extra nesting"},
		{"key of 30,000 parts", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "dotted.toml"), "a"+strings.Repeat(".b", 30000)+" = 1\n")
		}, "DIR/dotted.toml:1: a" + strings.Repeat(".b", 15) +
			": nested more than 16 levels deep (each table or key name and each array element is a level); remove the extra nesting"},
		{"huge value", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "value.toml"), "[output]\ndirectory = \""+strings.Repeat("d", 60000)+"\"\n")
		}, "DIR/value.toml:2: output.directory: a string of 60000 bytes; at most 4096 are allowed"},
		{"NUL byte", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "nul.toml"), "a = 1\x00\n")
		},
			"DIR/nul.toml:1: TOML syntax: files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8"},
		{"not UTF-8", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "latin1.toml"), "# caf\xe9\n")
		},
			"DIR/latin1.toml:1: TOML syntax: invalid UTF-8 byte: 0xe9"},
		{"name with a newline and an escape", func(t *testing.T, dir string) string { return filepath.Join(dir, "a\nb\x1b[2J.toml") },
			`DIR/a\nb\x1b[2J.toml: cannot read config: no such file or directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runWithin(t, dir, []string{"OCCA_TOOLS_CONFIG=" + tc.config(t, dir)})
			checkRun(t, r, false, 0, "ERR occa-tools: "+tc.want, untracedLine)
		})
	}
}

// Thousands of mistakes print 20 of them and a count.
func TestManyConfigErrorsAreCounted(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	var want []string
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&text, "k%d = 1\n", i)
		if i <= 20 {
			want = append(want, fmt.Sprintf("ERR occa-tools: DIR/many.toml:%d: unknown key k%d", i, i))
		}
	}
	cfg := writeFile(t, filepath.Join(dir, "many.toml"), text.String())
	r := runWithin(t, dir, []string{"OCCA_TOOLS_CONFIG=" + cfg})
	want = append(want, "ERR occa-tools: and 4980 more errors in DIR/many.toml", untracedLine)
	checkRun(t, r, false, 0, want...)
}

// on_error = "abort", in the file or OCCA_TOOLS_ON_ERROR, is the one way a
// config ends the program: status 2. The variable overrides the file, both
// ways.
func TestHostileConfigAbort(t *testing.T) {
	for _, tc := range []struct {
		name   string
		text   string // "" for a named pipe
		env    string // OCCA_TOOLS_ON_ERROR
		abort  bool
		stderr string // the error line, DIR/ for the run's directory
	}{
		{"named pipe, variable", "", "abort", true, "DIR/trace.toml: cannot read config: a named pipe" + notRegular},
		{"too large, file", "on_error = \"abort\"\n" + strings.Repeat("#", 70000), "", true,
			"DIR/trace.toml: larger than 64KiB; a config is a few KiB of TOML: check that this is the file you meant"},
		{"too deep, file", "on_error = 'abort'\na = " + strings.Repeat("{b = ", 10000), "", true,
			"DIR/trace.toml:2: a" + strings.Repeat(".b", 15) + ": nested more than 16 levels deep (each table or key name and each array element is a level); remove the extra nesting"},
		{"file says abort, variable continue", "on_error = \"abort\"\n[output]\ncompresion = 1\n", "continue", false,
			"DIR/trace.toml:3: unknown key output.compresion (did you mean compression?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "trace.toml")
			if tc.text == "" {
				mkfifo(t, cfg)
			} else {
				writeFile(t, cfg, tc.text)
			}
			r := runWithin(t, dir, []string{"OCCA_TOOLS_CONFIG=" + cfg, "OCCA_TOOLS_ON_ERROR=" + tc.env})
			last := untracedLine
			if tc.abort {
				last = abortLine
			}
			checkRun(t, r, tc.abort, 0, "ERR occa-tools: "+tc.stderr, last)
		})
	}
}

// Variables the runtime cannot use are reported, one warning each, and
// ignored: the program is traced as without them.
func TestHostileVariablesAreIgnored(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want []string
		file string // the trace's name, with p<pid> for the pid
	}{
		{"log level", []string{"OCCA_TOOLS_LOG_LEVEL=loud\n\x1b[2J"}, []string{
			`WRN occa-tools: OCCA_TOOLS_LOG_LEVEL="loud\n\x1b[2J" is not a log level (trace, debug, info, warn, error, disabled); ignored`,
		}, "workload-HOST-rx-pPID.occatrace"},
		{"on_error", []string{"OCCA_TOOLS_ON_ERROR=" + strings.Repeat("stop", 100)}, []string{
			`WRN occa-tools: OCCA_TOOLS_ON_ERROR="` + strings.Repeat("stop", 8) + `"... is not continue or abort; ignored`,
		}, "workload-HOST-rx-pPID.occatrace"},
		{"ranks", []string{"OMPI_COMM_WORLD_RANK=99999999999999999999", "PMI_RANK=-1", "SLURM_PROCID=3", "SLURM_NTASKS=2"}, []string{
			`WRN occa-tools: OMPI_COMM_WORLD_RANK="99999999999999999999" is not a rank (a whole number 0..2147483647); ignored`,
			`WRN occa-tools: PMI_RANK="-1" is not a rank (a whole number 0..2147483647); ignored`,
			`WRN occa-tools: SLURM_NTASKS=2 is not above SLURM_PROCID=3; the world size is ignored`,
		}, "workload-HOST-r3-pPID.occatrace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, filepath.Join(dir, "trace.toml"), "")
			r := runWithin(t, dir, append([]string{"OCCA_TOOLS_CONFIG=" + cfg}, tc.env...))
			checkRun(t, r, false, 1, tc.want...)
			if len(r.traces) != 1 {
				return
			}
			g := readTrace(t, r.traces[0])
			if g.err != nil || g.stats == nil || !g.stats.Final {
				t.Fatalf("trace not complete: %v", g.err)
			}
			host, _ := os.Hostname()
			want := strings.NewReplacer("HOST", host, "PID", strconv.FormatInt(g.header.PID, 10)).Replace(tc.file)
			if filepath.Base(r.traces[0]) != want {
				t.Errorf("trace %s, want %s", filepath.Base(r.traces[0]), want)
			}
		})
	}
}

// An output directory that is a named pipe or a file: the program runs
// untraced, with one error line, and nothing is opened that could block.
func TestHostileOutputDirectory(t *testing.T) {
	for _, kind := range []string{"named pipe", "file"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if kind == "file" {
				writeFile(t, out, "")
			} else {
				mkfifo(t, out)
			}
			cfg := writeFile(t, filepath.Join(dir, "trace.toml"), "")
			r := runWithin(t, dir, []string{"OCCA_TOOLS_CONFIG=" + cfg})
			checkRun(t, r, false, 0, "ERR occa-tools: creating the trace directory DIR/out: mkdir DIR/out: not a directory "+
				"(set output.directory in the config to a writable place); running untraced")
		})
	}
}

// OCCA_TOOLS_CORE naming something that is not the core: dlopen of a named
// pipe would block for ever, other files fail to load; either way the
// program runs untraced with one error line.
func TestHostileCore(t *testing.T) {
	const untraced = "; running untraced (OCCA_TOOLS_CORE must name libocca_tools_core.so, or be unset)"
	for _, tc := range []struct {
		name string
		core func(t *testing.T, dir string) string
		want string // DIR/ for the run's directory; a trailing * matches any rest
	}{
		{"named pipe", func(t *testing.T, dir string) string { return mkfifo(t, filepath.Join(dir, "core.so")) },
			"occa-tools: error: cannot load the tracing core DIR/core.so: not a regular file" + untraced},
		{"directory", func(t *testing.T, dir string) string { return dir + "/" },
			"occa-tools: error: cannot load the tracing core DIR/: not a regular file" + untraced},
		{"/dev/zero", func(t *testing.T, _ string) string { return "/dev/zero" },
			"occa-tools: error: cannot load the tracing core /dev/zero: not a regular file" + untraced},
		{"missing, bare name", func(t *testing.T, _ string) string { return "libocca_tools_core.so" },
			"occa-tools: error: cannot load the tracing core ./libocca_tools_core.so: No such file or directory" + untraced},
		{"odd name", func(t *testing.T, dir string) string { return filepath.Join(dir, "a\nb\x1b[2J") },
			"occa-tools: error: cannot load the tracing core DIR/a?b?[2J: No such file or directory" + untraced},
		{"too long", func(t *testing.T, _ string) string { return "/" + strings.Repeat("x/", 3000) },
			"occa-tools: error: the tracing core's path is longer than 4095 bytes; running untraced"},
		{"not a library", func(t *testing.T, dir string) string { return writeFile(t, filepath.Join(dir, "core.so"), "not ELF\n") },
			"occa-tools: error: cannot load the tracing core DIR/core.so: DIR/core.so: *"},
		{"another library", func(t *testing.T, _ string) string { return filepath.Join(buildDir, "lib", "libocca_tools.so.1") },
			"occa-tools: error: " + filepath.Join(buildDir, "lib", "libocca_tools.so.1") +
				" is not a matching occa-tools core (missing exports); running untraced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, filepath.Join(dir, "trace.toml"), "")
			r := runWithin(t, dir, []string{"OCCA_TOOLS_CONFIG=" + cfg, "OCCA_TOOLS_CORE=" + tc.core(t, dir)})
			got := strings.ReplaceAll(r.stderr, r.dir+"/", "DIR/")
			want := tc.want
			if strings.HasSuffix(want, "*") {
				want = strings.TrimSuffix(want, "*")
				got = got[:min(len(got), len(want))] + "\n"
			}
			if got != want+"\n" {
				t.Errorf("stderr = %q\nwant     %q", got, want+"\n")
			}
			if r.err != nil || r.stdout != "workload: threads=1 steps=2\n" || len(r.traces) != 0 {
				t.Errorf("exit %v, stdout %q, traces %v: want an untraced normal run", r.err, r.stdout, r.traces)
			}
		})
	}
}

// With a config that cannot be read, SIGINT and SIGTERM act as without
// tracing: the default action ends the program, an application's handler
// runs. (When the config was a named pipe, both were blocked while the
// runtime waited on it for ever.)
func TestSignalsWithHostileConfig(t *testing.T) {
	for _, tc := range []struct {
		sig     syscall.Signal
		handler bool // the workload's own SIGTERM handler, which exits with status 3
	}{{syscall.SIGINT, false}, {syscall.SIGTERM, false}, {syscall.SIGTERM, true}} {
		t.Run(fmt.Sprintf("%v handler=%v", tc.sig, tc.handler), func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"-t", "1", "--spin-forever"}
			if tc.handler {
				args = append(args, "--install-handler")
			}
			cmd := testproc.Command(t, filepath.Join(buildDir, "tests", "workload"), args...)
			cmd.Dir = dir
			cmd.Env = append(hostileEnv(), "OCCA_TOOLS_CONFIG="+mkfifo(t, filepath.Join(dir, "fifo.toml")),
				"OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
			stderrPath := filepath.Join(dir, "stderr")
			f, err := os.Create(stderrPath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stderr = f // a file: read while the program runs, without a copying goroutine
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stderr := func() string { b, _ := os.ReadFile(stderrPath); return string(b) }
			// Past the runtime's start, and (with the handler) into main.
			waitFor(t, "the program to run", func() bool {
				caught, ok := sigMask(cmd.Process.Pid, cmd.Process.Pid, "SigCgt")
				return ok && (!tc.handler || caught&(1<<(syscall.SIGTERM-1)) != 0) && strings.Contains(stderr(), "runs untraced")
			})
			cmd.Process.Signal(tc.sig)
			err = cmd.Wait()
			if testproc.Hung(t) {
				t.Fatalf("the program did not end; stderr:\n%s", stderr())
			}
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tc.handler {
				if ws.ExitStatus() != 3 || !strings.Contains(stderr(), "workload: handler ran") {
					t.Errorf("exit = %v, want status 3 from the application's handler; stderr:\n%s", err, stderr())
				}
			} else if !ws.Signaled() || ws.Signal() != tc.sig {
				t.Errorf("exit = %v, want death by %v", err, tc.sig)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(files) != 0 {
				t.Errorf("an untraced run left %v", files)
			}
		})
	}
}

// sigMask reads one signal mask (SigBlk, SigCgt, ...) of a thread.
func sigMask(pid, tid int, field string) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return m, err == nil
		}
	}
	return 0, false
}

// The runtime blocks signals only around loading the core, yet every thread
// of the Go runtime (the writer among them) has the exit signals blocked,
// so they always land on an application thread, which never has them
// blocked: the Go runtime gives later threads the mask of the thread its
// initializer made during dlopen, not that of the thread that calls it.
func TestOnlyApplicationThreadsTakeExitSignals(t *testing.T) {
	cmd, out, _ := startWorkload(t, "[output]\nflush_interval = \"50ms\"\n", "-t", "2", "--spin-forever", "-w", "100")
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	waitFor(t, "the first flush", func() bool {
		f, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
		st, err := os.Stat(append(f, "")[0])
		return err == nil && st.Size() > 4096
	})
	var exits uint64
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT} {
		exits |= 1 << (s - 1)
	}
	pid := cmd.Process.Pid
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var app, runtime int
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		blocked, ok := sigMask(pid, tid, "SigBlk")
		switch {
		case !ok:
			t.Fatalf("no SigBlk for thread %d", tid)
		case blocked&exits == 0:
			app++
		case blocked&exits == exits && tid != pid:
			runtime++
		default:
			t.Errorf("thread %d (main %v) blocks %#x of the exit signals %#x", tid, tid == pid, blocked&exits, exits)
		}
	}
	// main and two workers; the Go runtime has the writer and more.
	if app != 3 || runtime < 2 {
		t.Errorf("%d threads take exit signals, %d block them; want 3 and at least 2", app, runtime)
	}
}

// A start-up the Go runtime of the core cannot survive, or that would make
// it change the program, runs the program untraced with one warning; with
// room to spare it is traced, silently. Each case runs the workload
// (-t 2 -s 5) and checks its output, its traces and its stderr.
type startCase struct {
	name    string
	limit   string              // run under bash's `ulimit <limit>` ("" none)
	env     []string            // added to the environment
	refused string              // the warning's start; "" when traced
	cred    *syscall.Credential // run as this user (nil: as the test)
}

// runStartCases runs each case with the workload at workload, writing into
// dir (which the case's user can write).
func runStartCases(t *testing.T, dir, workload string, cases []startCase) {
	t.Helper()
	bash, err := exec.LookPath("bash") // dash's ulimit has no -u
	if err != nil {
		t.Skip("needs bash for ulimit")
	}
	cfg := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(cfg, []byte("[output]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprint("out-", i))
			cmd := testproc.Command(t, workload, "-t", "2", "-s", "5")
			if c.limit != "" {
				cmd = testproc.Command(t, bash, "-c", "ulimit "+c.limit+" && exec \"$0\" \"$@\"", workload, "-t", "2", "-s", "5")
			}
			cmd.Dir = dir
			cmd.SysProcAttr.Credential = c.cred
			cmd.Env = append(append(hostileEnv(), c.env...), "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+out)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stdout.String() != "workload: threads=2 steps=5\n" {
				t.Fatalf("%v, stdout %q, stderr:\n%s", err, stdout.String(), stderr.String())
			}
			traces, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
			got := lines(stderr.String())
			switch {
			case c.refused == "" && (len(traces) != 1 || len(got) != 0):
				t.Errorf("traces %v, stderr %q; want one trace and no message", traces, got)
			case c.refused != "" && (len(traces) != 0 || len(got) != 1 || !strings.HasPrefix(got[0], c.refused)):
				t.Errorf("traces %v, stderr %q; want none and one line starting %q", traces, got, c.refused)
			}
		})
	}
}

// Under an address-space or data limit too small for the Go runtime
// (`ulimit -v`, `ulimit -d`, usual on login nodes), the program runs
// untraced with one warning, instead of dying as the Go runtime aborts
// ("failed to reserve page summary memory", "pthread_create failed").
func TestSmallMemoryLimitsRunUntraced(t *testing.T) {
	runStartCases(t, t.TempDir(), filepath.Join(buildDir, "tests", "workload"), []startCase{
		{name: "v", limit: "-v 600000", refused: "occa-tools: warning: the address space limit (ulimit -v) is "},
		{name: "d", limit: "-d 100000", refused: "occa-tools: warning: the data limit (ulimit -d) is "},
	})
}

// Under a `ulimit -u` (RLIMIT_NPROC, usual on login nodes) that leaves too
// few threads for the Go runtime, which aborts the process when it cannot
// make one ("pthread_create failed", exit 134 at -u 4 before the probe),
// the program runs untraced with one warning. The limit counts the threads
// of a user and does not bind root, so the program runs as nobody, from a
// copy of the build that user can read.
func TestSmallProcessLimitRunsUntraced(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run the program as nobody under a ulimit -u of its own (RLIMIT_NPROC does not bind root)")
	}
	// Not t.TempDir: its parent is private to root.
	dir, err := os.MkdirTemp("", "occa-tools-nproc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{dir, filepath.Join(dir, "tests"), filepath.Join(dir, "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil { // the output goes here too
			t.Fatal(err)
		}
	}
	copyFile(t, filepath.Join(buildDir, "tests", "workload"), filepath.Join(dir, "tests", "workload"), 0o755)
	for _, lib := range []string{"libocca_tools.so.1", "libocca_tools_core.so"} {
		copyFile(t, filepath.Join(buildDir, "lib", lib), filepath.Join(dir, "lib", lib), 0o755)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	var cases []startCase
	for _, c := range []struct {
		limit  int
		traced bool
	}{{4, false}, {6, false}, {64, true}} {
		sc := startCase{name: fmt.Sprint(c.limit), limit: fmt.Sprint("-u ", c.limit), cred: nobody}
		if !c.traced {
			sc.refused = fmt.Sprintf("occa-tools: warning: the process limit (ulimit -u) is %d, and only ", c.limit)
		}
		cases = append(cases, sc)
	}
	runStartCases(t, dir, filepath.Join(dir, "tests", "workload"), cases)
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// Under a `ulimit -n` too small for the Go runtime's poller, which aborts
// the process when it cannot open its descriptors ("netpollinit failed" at
// -n 4, "eventfd failed" at -n 5, before the probe), the program runs
// untraced with one warning.
func TestSmallOpenFilesLimitRunsUntraced(t *testing.T) {
	refused := func(n int) string {
		return fmt.Sprintf("occa-tools: warning: the open files limit (ulimit -n) is %d, and only ", n)
	}
	runStartCases(t, t.TempDir(), filepath.Join(buildDir, "tests", "workload"), []startCase{
		{name: "4", limit: "-n 4", refused: refused(4)},
		{name: "5", limit: "-n 5", refused: refused(5)},
		{name: "64", limit: "-n 64"},
	})
}

// GODEBUG, set for Go programs, would reach the tracing core's Go runtime:
// inittrace printed 56 lines on the program's stderr, schedtrace one every
// period, sbrk turned the collector off. With such a setting on, the program
// runs untraced with one warning; harmless settings, or one turned off again
// later in the list, leave it traced and silent.
func TestGODEBUGSettingsRunUntraced(t *testing.T) {
	var cases []startCase
	for _, c := range []struct{ godebug, refused string }{
		{"inittrace=1", "inittrace=1"},
		{"madvdontneed=1,schedtrace=20", "schedtrace=20"},
		{",,gctrace=2,", "gctrace=2"},
		{"sbrk=1", "sbrk=1"},
		{"schedtrace=20,schedtrace=0", ""},
		{"madvdontneed=1", ""},
	} {
		sc := startCase{name: c.godebug, env: []string{"GODEBUG=" + c.godebug}}
		if c.refused != "" {
			sc.refused = "occa-tools: warning: GODEBUG sets " + c.refused + ", which the tracing core's Go runtime would obey"
		}
		cases = append(cases, sc)
	}
	runStartCases(t, t.TempDir(), filepath.Join(buildDir, "tests", "workload"), cases)
}

// A program built with AddressSanitizer: its LeakSanitizer reported the
// core's tag lists (C memory held only from Go's heap, which it does not
// scan) as leaks, and the process exited 1 where untraced it exited 0. Now
// it is traced, silent, exit 0, with every example config.
func TestAddressSanitizedProgram(t *testing.T) {
	workload := filepath.Join(buildDir, "tests", "workload-asan")
	if _, err := os.Stat(workload); err != nil {
		t.Skip("no workload-asan: the compiler has no -fsanitize=address (make test-programs says so)")
	}
	for name, text := range configs.All() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, name)
			if err := os.WriteFile(cfg, text, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := testproc.Command(t, workload, "-t", "2", "-s", "5")
			cmd.Dir = dir
			cmd.Env = append(hostileEnv(), "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stdout.String() != "workload: threads=2 steps=5\n" || stderr.Len() != 0 {
				t.Fatalf("%v, stdout %q, stderr:\n%s", err, stdout.String(), firstLines(stderr.String(), 8))
			}
		})
	}
}
