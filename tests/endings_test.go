package tests

import (
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// Endings without exit(): exec replaces the program, _exit, _Exit and
// quick_exit end it without atexit handlers or destructors. Before
// exec.c and the Endings of lifecycle.c, the events since the last periodic
// flush were lost without a count (none of the 2000 here, the flush
// interval being 60 s). Now, linked or through the preload shim, the
// program's output and exit status are as untraced, and its trace holds
// every event: complete (final statistics) after _exit, _Exit and
// quick_exit; up to the exec without final statistics (the exec might have
// failed), the new image writing a complete trace of its own. An exec that
// fails leaves the program, and one complete trace, going on. Threads
// calling exit() at once leave a complete trace too.
func TestEndingsWithoutExitKeepEveryEvent(t *testing.T) {
	const config = "[output]\nflush_interval = \"60s\"\n"
	const pairs = 1000
	for _, c := range []struct {
		how    string
		exit   string
		stdout string
		// Each trace's final stats and region pairs, by file name: the
		// first image's has no numbered suffix.
		traces map[string][2]int
	}{
		{"exec", "exit 0", "endings: exec\nendings: second\n", map[string][2]int{".occatrace": {0, pairs}, "-1.occatrace": {1, pairs}}},
		{"execfail", "exit 0", "endings: execfail\nendings: went on\n", map[string][2]int{".occatrace": {1, 2 * pairs}}},
		{"_exit", "exit 3", "endings: _exit\n", map[string][2]int{".occatrace": {1, pairs}}},
		{"_Exit", "exit 4", "endings: _Exit\n", map[string][2]int{".occatrace": {1, pairs}}},
		{"quick_exit", "exit 5", "endings: quick_exit\n", map[string][2]int{".occatrace": {1, pairs}}},
		// Four threads in exit() at once: libc ended the process inside
		// the first one's final flush, with no event in the trace.
		{"threads", "exit 6", "endings: threads\n", map[string][2]int{".occatrace": {1, 5 * pairs}}},
	} {
		t.Run(c.how, func(t *testing.T) {
			want := runTraced(t, "endings", config, untraced, "1000", c.how)
			if want.exit != c.exit || want.stdout != c.stdout {
				t.Fatalf("untraced: %s, stdout %q; want %s, %q\n%s", want.exit, want.stdout, c.exit, c.stdout, want.stderr)
			}
			for _, mode := range []int{linked, shim} {
				got := runTraced(t, "endings", config, mode, "1000", c.how)
				name := modeNames[mode]
				if got.exit != want.exit || got.stdout != want.stdout || got.stderr != "" {
					t.Errorf("%s: %s, stdout %q, stderr %q; want %s, %q, nothing", name, got.exit, got.stdout, got.stderr, want.exit, want.stdout)
					continue
				}
				if len(got.traces) != len(c.traces) {
					t.Fatalf("%s: traces %v, want %d", name, got.traces, len(c.traces))
				}
				for _, path := range got.traces {
					suffix := ".occatrace"
					if strings.HasSuffix(path, "-1.occatrace") {
						suffix = "-1.occatrace"
					}
					w, ok := c.traces[suffix]
					if !ok {
						t.Errorf("%s: unexpected trace %s", name, path)
						continue
					}
					g := readTrace(t, path)
					final := 0
					if g.stats != nil && g.stats.Final {
						final = 1
					}
					n := g.counts[trace.RegionPush] + g.counts[trace.RegionPop]
					if final != w[0] || n != 2*w[1] {
						t.Errorf("%s: %s: final stats %d, %d region events; want %d, %d (%v)", name, path, final, n, w[0], 2*w[1], g.err)
					}
				}
			}
		})
	}
}

// A Go program (OCCA through cgo) ends with the exit_group system call,
// after os.Exit and after main returns alike: no C library function runs,
// so nothing can make the final flush, and the trace loses the events
// since the last periodic flush (all 2000 here, the interval being 60 s).
// The runtime says so in one warning as it starts, and a program that
// calls occa_tools_flush() first keeps every event. Untraced, the same
// program prints nothing on stderr; exit status and stdout are the same.
func TestGoProgramWarnedOfItsEnding(t *testing.T) {
	const config = "[output]\nflush_interval = \"60s\"\n"
	const warning = "this program is a Go program: Go ends a process with a system call that no library sees"
	for _, c := range []struct {
		how    string
		events int
	}{{"exit", 0}, {"return", 0}, {"flush-exit", 2000}} {
		t.Run(c.how, func(t *testing.T) {
			stdout := "gohost: " + c.how + "\n"
			// gohost links the runtime: an empty OCCA_TOOLS_CONFIG, set last,
			// leaves it idle.
			untracedRun := runTracedEnv(t, "gohost", config, linked, []string{"OCCA_TOOLS_CONFIG="}, c.how)
			endedClean(t, "untraced", untracedRun, "exit 0", stdout)
			r := runTraced(t, "gohost", config, linked, c.how)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if r.exit != "exit 0" || r.stdout != stdout {
				t.Fatalf("traced: %s, stdout %q; want exit 0, %q", r.exit, r.stdout, stdout)
			}
			if len(lines) != 1 || strings.Count(lines[0], warning) != 1 || !strings.Contains(lines[0], "WRN") {
				t.Errorf("stderr %q, want one warn line saying %q", r.stderr, warning)
			}
			if len(r.traces) != 1 {
				t.Fatalf("traces %v, want 1", r.traces)
			}
			g := readTrace(t, r.traces[0])
			if n := g.counts[trace.RegionPush] + g.counts[trace.RegionPop]; n != c.events || (g.stats != nil && g.stats.Final) {
				t.Errorf("%d region events, final stats %v; want %d, none", n, g.stats != nil && g.stats.Final, c.events)
			}
		})
	}
}
