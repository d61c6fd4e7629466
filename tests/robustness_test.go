package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/cpuload"
	"github.com/libocca/occa-tools/tests/testproc"
)

// stderrLines strips what varies (time, pid) from the runtime's log lines.
func stderrLines(s string) []string {
	re := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} (\w{3}) (.*?)( config=\S+)? pid=\d+$`)
	var out []string
	for _, l := range lines(s) {
		if m := re.FindStringSubmatch(l); m != nil {
			out = append(out, m[1]+" "+m[2])
		} else {
			out = append(out, l)
		}
	}
	return out
}

func TestNoConfigLoadsNothing(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(buildDir, "tests", "workload"), "-t", "2", "-s", "5", "--report-maps")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatal(err, string(out))
	}
	want := "workload: core_loaded=0 threads=1\nworkload: threads=2 steps=5\n"
	if string(out) != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an untraced run left files: %v", entries)
	}
}

func TestBadConfigRunsUntraced(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"[output]\ncompresion = \"fast\"\n", []string{
			"ERR occa-tools: trace.toml:2: unknown key output.compresion (did you mean compression?)",
		}},
		{"[filter.kernel]\nregex = [\"((\"]\n[trigger]\nmax_events = -3\n", []string{
			"ERR occa-tools: trace.toml:2: filter.kernel.regex[0]: \"((\" is not a valid regular expression: missing closing ) in `((`",
			"ERR occa-tools: trace.toml:4: trigger.max_events: -3 is out of range (must be >= 0)",
		}},
		{"this is = = not toml\n", nil}, // message text from the TOML parser: only its shape is checked
	}
	for _, c := range cases {
		r := runWorkload(t, c.text, nil, "-t", "1", "-s", "2", "--report-maps")
		if r.err != nil {
			t.Fatalf("workload failed: %v", r.err)
		}
		got := stderrLines(strings.ReplaceAll(r.stderr, r.dir+"/", ""))
		last := "ERR occa-tools: config errors above: the program runs untraced (set on_error = \"abort\" to stop it instead)"
		if len(got) == 0 || got[len(got)-1] != last {
			t.Errorf("last stderr line = %q, want %q", got, last)
			continue
		}
		if c.want != nil && strings.Join(got[:len(got)-1], "\n") != strings.Join(c.want, "\n") {
			t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(got[:len(got)-1], "\n"), strings.Join(c.want, "\n"))
		}
		if c.want == nil && (len(got) != 2 || !strings.HasPrefix(got[0], "ERR occa-tools: trace.toml:1: ")) {
			t.Errorf("syntax error report = %q", got)
		}
		if len(r.traces) != 0 {
			t.Errorf("a bad config left a trace: %v", r.traces)
		}
		if !strings.Contains(r.stdout, "workload: threads=1 steps=2") {
			t.Errorf("the application did not run to its end: %q", r.stdout)
		}
	}
}

func TestBadConfigAbortWhenAsked(t *testing.T) {
	r := runWorkload(t, "on_error = \"abort\"\n[output]\nbuffer_size = \"1KiB\"\n", nil, "-t", "1", "-s", "1")
	var ee *exec.ExitError
	if !errors.As(r.err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want status 2; stderr:\n%s", r.err, r.stderr)
	}
	got := stderrLines(strings.ReplaceAll(r.stderr, r.dir+"/", ""))
	want := []string{
		"ERR occa-tools: trace.toml:3: output.buffer_size: 1KiB is out of range 64KiB..64MiB",
		"occa-tools: stopping the program: the config says on_error = \"abort\"",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnwritableDirectoryRunsUntraced(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	r := runWorkload(t, "", []string{"OCCA_TOOLS_OUTPUT_DIR=" + filepath.Join(blocker, "traces")}, "-t", "1", "-s", "2")
	if r.err != nil {
		t.Fatalf("workload failed: %v", r.err)
	}
	got := stderrLines(r.stderr)
	want := "ERR occa-tools: creating the trace directory " + filepath.Join(blocker, "traces") + ": mkdir " + blocker +
		": not a directory (set output.directory in the config to a writable place); running untraced"
	if len(got) != 1 || got[0] != want {
		t.Errorf("stderr = %q\nwant %q", got, want)
	}
}

// startWorkload runs the workload in the background (for signals). It is
// killed at the test's deadline (testproc), so a signal that does not end
// it fails the test instead of hanging it.
func startWorkload(t *testing.T, configText string, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trace.toml")
	os.WriteFile(cfg, []byte(configText), 0o644)
	cmd := testproc.Command(t, filepath.Join(buildDir, "tests", "workload"), args...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second // a hung child holding the pipes must not hang Wait
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, filepath.Join(dir, "out"), &stderr
}

func onlyTrace(t *testing.T, out string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
	if len(files) != 1 {
		t.Fatalf("want one trace in %s, got %v", out, files)
	}
	return files[0]
}

// A signal whose default action ends the process: the trace is complete
// (final stats) and the process still dies of that signal. The workload sets
// the default action itself: the test may run under nohup, which leaves
// SIGHUP ignored.
func TestExitSignalsLeaveCompleteTrace(t *testing.T) {
	names := map[syscall.Signal]string{syscall.SIGTERM: "TERM", syscall.SIGINT: "INT", syscall.SIGHUP: "HUP"}
	for sig, name := range names {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, out, stderr := startWorkload(t, "[output]\nflush_interval = \"50ms\"\n", "-t", "2", "--spin-forever", "-w", "100",
				"--default-signal", name)
			waitFor(t, "the first flush", func() bool {
				f, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
				st, err := os.Stat(append(f, "")[0])
				return err == nil && st.Size() > 4096
			})
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if err == nil || !ws.Signaled() || ws.Signal() != sig {
				t.Fatalf("exit = %v, want death by %v; stderr:\n%s", err, sig, stderr)
			}
			g := readTrace(t, onlyTrace(t, out))
			if g.err != nil || g.stats == nil || !g.stats.Final {
				t.Fatalf("trace not complete: err=%v stats=%+v", g.err, g.stats)
			}
			if g.counts[trace.RunBegin] < 100 {
				t.Errorf("only %d launches recorded", g.counts[trace.RunBegin])
			}
			checkOrderTolerantEnds(t, g)
		})
	}
}

// abort() (SIGABRT) also leaves a complete trace.
func TestAbortLeavesCompleteTrace(t *testing.T) {
	r := runWorkload(t, "", nil, "-t", "2", "-s", "1000", "--sleep-ms", "50", "--kill-self", "ABRT")
	ws, _ := r.errStatus()
	if !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		t.Fatalf("exit = %v, want SIGABRT", r.err)
	}
	if len(r.traces) != 1 {
		t.Fatalf("traces: %v", r.traces)
	}
	g := readTrace(t, r.traces[0])
	if g.err != nil || !g.stats.Final {
		t.Fatalf("trace not complete: %v", g.err)
	}
}

func (r *run) errStatus() (syscall.WaitStatus, bool) {
	var ee *exec.ExitError
	if errors.As(r.err, &ee) {
		ws, ok := ee.Sys().(syscall.WaitStatus)
		return ws, ok
	}
	return 0, false
}

// The application's own handler, installed after the tool's, still runs;
// it exits, so the trace ends cleanly through the exit path.
func TestApplicationHandlerStillRuns(t *testing.T) {
	cmd, out, stderr := startWorkload(t, "[output]\nflush_interval = \"50ms\"\n", "-t", "1", "--spin-forever", "-w", "100", "--install-handler")
	waitFor(t, "the first flush", func() bool {
		f, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
		st, err := os.Stat(append(f, "")[0])
		return err == nil && st.Size() > 4096
	})
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit = %v, want status 3 from the application's handler", err)
	}
	if !strings.Contains(stderr.String(), "workload: handler ran") {
		t.Errorf("the application's handler did not run; stderr:\n%s", stderr)
	}
	g := readTrace(t, onlyTrace(t, out))
	if g.err != nil || !g.stats.Final {
		t.Fatalf("trace not complete: %v", g.err)
	}
}

// SIGKILL loses what was recorded after the last flush that reached the
// file: at most the flush interval plus one writer cycle, measured by the
// events' own timestamps against the kill time, with the application at full
// speed and two CPU hogs competing with it and with the writer. The writer
// streams a cycle (each batch is written as soon as it is compressed), so
// the file does not wait for a whole backlog to be compressed first.
func TestSIGKILLLosesAtMostOneFlushInterval(t *testing.T) {
	const interval = 100 * time.Millisecond
	// One cycle's work and the scheduler's delays under the hogs: the old
	// writer, which compressed a whole cycle before writing any of it, lost
	// 0.3 to 1.1 s here.
	const slack = 200 * time.Millisecond
	stop := cpuload.Hogs(2)
	defer stop()
	cmd, out, _ := startWorkload(t, "[output]\nflush_interval = \"100ms\"\n", "-t", "2", "--spin-forever", "-w", "20")
	defer cmd.Process.Kill()
	var size int64
	waitFor(t, "two flushes", func() bool {
		f, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
		st, err := os.Stat(append(f, "")[0])
		if err == nil && size > 0 && st.Size() > size {
			return true
		}
		if err == nil && st.Size() > 4096 {
			size = st.Size()
		}
		return false
	})
	time.Sleep(500 * time.Millisecond) // into the steady state
	cmd.Process.Kill()
	killed := time.Now()
	cmd.Wait()
	g := readTrace(t, onlyTrace(t, out))
	var te *trace.Error
	if !errors.As(g.err, &te) || !te.Truncated() {
		t.Fatalf("read error = %v, want a truncation error", g.err)
	}
	// Killed between two chunks, or in the middle of writing one (the writer
	// writes each chunk as soon as it is compressed).
	if msg := g.err.Error(); !strings.Contains(msg, "trace ends without its final stats chunk") &&
		!strings.Contains(msg, "the file ends inside a chunk") {
		t.Errorf("error = %q", g.err)
	}
	if g.counts[trace.RunBegin] == 0 {
		t.Fatalf("nothing readable before the kill")
	}
	checkOrderTolerantEnds(t, g)
	// The kill on the trace's clock (CLOCK_MONOTONIC), through the header's
	// wall/monotonic pair; each worker's last launch (the main thread
	// launches once, at the start).
	killMono := g.header.MonoStart + (killed.UnixNano() - g.header.WallStart)
	last, runs := map[uint32]int64{}, map[uint32]int{}
	for _, e := range g.events {
		if e.Kind == trace.RunBegin {
			last[e.Thread] = e.Time
			runs[e.Thread]++
		}
	}
	for th, n := range runs {
		if n == 1 {
			delete(last, th)
		}
	}
	if len(last) != 2 {
		t.Fatalf("launches from %d worker threads, want 2", len(last))
	}
	var dropped int
	for _, e := range g.events {
		if e.Kind == trace.Dropped {
			dropped += int(e.Args[0])
		}
	}
	t.Logf("%d events in the trace, %d dropped (DROPPED records)", len(g.events), dropped)
	for th, at := range last {
		lost := time.Duration(killMono - at)
		t.Logf("thread %d: last launch %v before the kill", th, lost)
		if lost > interval+slack {
			t.Errorf("thread %d: the trace ends %v before the kill, over flush_interval %v + %v", th, lost, interval, slack)
		}
	}
}

// checkOrderTolerantEnds is checkOrder for a trace cut at an arbitrary
// point: calls may still be open at its end.
func checkOrderTolerantEnds(t *testing.T, g *got) {
	t.Helper()
	last := map[uint32]int64{}
	for _, e := range g.events {
		if e.Time < last[e.Thread] {
			t.Fatalf("thread %d: time goes back at %s", e.Thread, e.Kind)
		}
		last[e.Thread] = e.Time
	}
}

// A child that forks without exec is not traced and leaves the parent's
// trace alone; the parent's trace marks the fork.
func TestForkWithoutExec(t *testing.T) {
	r := runWorkload(t, "", nil, "-t", "1", "-s", "3", "--fork")
	if r.err != nil {
		t.Fatalf("workload failed: %v\n%s", r.err, r.stderr)
	}
	if len(r.traces) != 1 {
		t.Fatalf("want the parent's trace only, got %v", r.traces)
	}
	g := readTrace(t, r.traces[0])
	if g.err != nil || !g.stats.Final {
		t.Fatalf("parent trace: %v", g.err)
	}
	if g.counts[trace.Fork] != 1 {
		t.Errorf("fork events = %d, want 1", g.counts[trace.Fork])
	}
	for _, e := range g.events {
		if e.Kind == trace.Marker && g.dict.String(e.Args[0]) == "in-child" {
			t.Fatalf("the child's marker reached the parent's trace")
		}
	}
	// Everything else is exactly the default run.
	cfg, _ := config.Parse("default", nil)
	prog, _ := filters.Compile(cfg)
	want := predict(prog, options{threads: 1, steps: 3})
	want.counts[trace.Fork] = 1
	if d := diffCounts(want.counts, g.counts); len(d) > 0 {
		t.Errorf("counts:\n  %s", strings.Join(d, "\n  "))
	}
}

// A child made with the raw fork system call runs no atfork handler: the
// runtime knows it by its pid. It records past every buffer of the pool and
// ends with exit(), or of SIGTERM: it neither hangs (waiting for a writer
// it does not have, in the buffer slow path with on_full = "wait", in the
// final flush or in the dying signal's) nor outlives the signal, nor
// touches the parent's trace, which is complete and exactly the default
// run's. The workload checks how its child ended; a child still running
// after 10 s dies of SIGALRM, which fails the test instead of hanging it.
func TestRawForkChild(t *testing.T) {
	wait := "[output]\nmemory = \"1MiB\"\nbuffer_size = \"64KiB\"\non_full = \"wait\"\n"
	for _, c := range []struct{ text, end string }{{"", "exit"}, {wait, "exit"}, {"", "TERM"}, {wait, "TERM"}} {
		args := []string{"-t", "1", "-s", "3", "--raw-fork", "50000"}
		if c.end != "exit" {
			args = append(args, "--child-signal", c.end)
		}
		text := c.text
		r := runWorkload(t, text, nil, args...)
		if r.err != nil || len(r.traces) != 1 {
			t.Fatalf("config %q, child %s: %v, traces %v\n%s", text, c.end, r.err, r.traces, r.stderr)
		}
		g := readTrace(t, r.traces[0])
		if g.err != nil || !g.stats.Final {
			t.Fatalf("config %q: parent trace: %v", text, g.err)
		}
		if n := g.markers("in-child"); n != 0 {
			t.Errorf("config %q: %d of the child's markers reached the parent's trace", text, n)
		}
		cfg, _ := config.Parse("t", []byte(text))
		prog, _ := filters.Compile(cfg)
		want := predict(prog, options{threads: 1, steps: 3})
		if d := diffCounts(want.counts, g.counts); len(d) > 0 {
			t.Errorf("config %q: counts:\n  %s", text, strings.Join(d, "\n  "))
		}
	}
}

// With on_full = "wait", a buffer pool far too small for the burst loses
// nothing: every event the model predicts is in the trace.
func TestOnFullWaitLosesNothing(t *testing.T) {
	text := "[output]\nmemory = \"1MiB\"\nbuffer_size = \"64KiB\"\non_full = \"wait\"\n"
	g := oneTrace(t, text, "-t", "2", "-s", "3000")
	cfg, _ := config.Parse("t", []byte(text))
	prog, _ := filters.Compile(cfg)
	want := predict(prog, options{threads: 2, steps: 3000})
	if d := diffCounts(want.counts, g.counts); len(d) > 0 {
		t.Errorf("counts:\n  %s", strings.Join(d, "\n  "))
	}
	if g.stats.TotalDropped() != 0 {
		t.Errorf("dropped %d", g.stats.TotalDropped())
	}
}

// With on_full = "drop", losses are counted: the trace's Dropped events and
// its stats agree, and recorded + dropped accounts for every begin and
// instant the model predicts.
func TestOnFullDropCountsLosses(t *testing.T) {
	text := "[output]\nmemory = \"1MiB\"\nbuffer_size = \"64KiB\"\nflush_interval = \"1s\"\n"
	r := runWorkload(t, text, nil, "-t", "4", "-s", "20000", "--critical")
	if r.err != nil || len(r.traces) != 1 {
		t.Fatalf("run: %v, traces %v\n%s", r.err, r.traces, r.stderr)
	}
	g := readTrace(t, r.traces[0])
	if g.err != nil {
		t.Fatal(g.err)
	}
	// Every event the workload made is in the trace or counted, exactly: the
	// end of a call whose begin was dropped is counted with it.
	cfg, _ := config.Parse("t", []byte(text))
	prog, _ := filters.Compile(cfg)
	want := predict(prog, options{threads: 4, steps: 20000})
	total, recorded := 0, 0
	for k, n := range want.counts {
		total += n
		recorded += g.counts[k]
	}
	dropped := g.stats.TotalDropped()
	if uint64(recorded)+dropped != uint64(total) {
		t.Errorf("recorded %d + dropped %d (%s) = %d, the workload made %d",
			recorded, dropped, droppedBy(g.stats), uint64(recorded)+dropped, total)
	}
	t.Logf("recorded %d, dropped %d of %d", recorded, dropped, total)
	if dropped == 0 {
		return // the writer kept up with a 1 MiB pool: nothing was lost to report
	}
	var inEvents uint64
	for _, e := range g.events {
		if e.Kind == trace.Dropped {
			if e.Args[1] != trace.DropBufferFull {
				t.Errorf("dropped reason %d", e.Args[1])
			}
			inEvents += e.Args[0]
		}
	}
	if inEvents == 0 || inEvents > dropped {
		t.Errorf("Dropped records account for %d of %d dropped", inEvents, dropped)
	}
	// The application's critical-event callback heard of the loss.
	heard := "workload: critical kind=23 count=" + strconv.FormatUint(dropped, 10) + ": " +
		strconv.FormatUint(dropped, 10) + " events were lost; see the trace's stats"
	if !strings.Contains(r.stderr, heard) {
		t.Errorf("stderr lacks %q:\n%s", heard, r.stderr)
	}
}

// A full disk (here: a file size limit, with SIGXFSZ ignored as a shell
// would) costs events, never the application: it runs to its end, the loss
// is reported on stderr, and the file stays readable up to its last chunk.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trace.toml")
	os.WriteFile(cfg, []byte("[output]\nflush_interval = \"20ms\"\n"), 0o644)
	script := "trap '' XFSZ; ulimit -f 24; exec " + filepath.Join(buildDir, "tests", "workload") + " -t 2 -s 20000 -w 5"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the application failed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "workload: threads=2 steps=20000") {
		t.Errorf("the application did not run to its end: %q", stdout.String())
	}
	got := lines(stderr.String())
	if len(got) == 0 || !strings.Contains(got[0], "ERR occa-tools: cannot write the trace; events are counted as lost (reason write_error) until writing works again") {
		t.Errorf("first stderr line = %q", got)
	}
	if last := got[len(got)-1]; !strings.Contains(last, "WRN occa-tools: trace written") || !strings.Contains(last, "dropped_write_error=") {
		t.Errorf("last stderr line = %q, want the loss reported", last)
	}
	g := readTrace(t, onlyTrace(t, filepath.Join(dir, "out")))
	var te *trace.Error
	if !errors.As(g.err, &te) || !te.Truncated() {
		t.Fatalf("read error = %v, want the trace cut at a chunk boundary", g.err)
	}
	if g.counts[trace.RunBegin] == 0 {
		t.Errorf("nothing readable before the disk filled")
	}
	st, _ := os.Stat(onlyTrace(t, filepath.Join(dir, "out")))
	if st.Size() > 24*1024 {
		t.Errorf("file size %d over the limit", st.Size())
	}
}

// The byte budget stops recording once the trace holds max_bytes, with a
// Budget trigger; the application runs on.
func TestByteBudget(t *testing.T) {
	text := "[output]\nflush_interval = \"10ms\"\n[trigger]\nmax_bytes = \"16KiB\"\n"
	g := oneTrace(t, text, "-t", "1", "-s", "20000", "-w", "20")
	var budget []trace.Event
	for _, e := range g.events {
		if e.Kind == trace.Trigger && e.Args[1] == trace.TriggerBudget {
			budget = append(budget, e)
		}
	}
	if len(budget) != 1 || budget[0].Args[2] != trace.CauseBudget || budget[0].Args[0] != 0xFFFF {
		t.Fatalf("budget triggers = %v", budget)
	}
	for _, e := range g.events {
		spec := e.Kind.Spec()
		if spec.Domain != trace.DomainTool && spec.Begin && e.Time > budget[0].Time {
			t.Fatalf("%s at %d ns after the budget stopped recording at %d ns", e.Kind, e.Time, budget[0].Time)
		}
	}
	if g.counts[trace.RunBegin] >= 20000*6 {
		t.Errorf("the budget did not stop anything: %d launches", g.counts[trace.RunBegin])
	}
}
