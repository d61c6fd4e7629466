package tests

import (
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// exec replaces the program without exit: before exec.c, the events since
// the last periodic flush were lost without a count (the first image's
// trace held none of its 2000). Now, linked or through the preload shim,
// the first image's trace holds every event up to the exec (it has no final
// statistics: the exec might have failed), the new image writes a complete
// trace of its own, and the program's output is as untraced. An exec that
// fails leaves the program, and one complete trace, going on.
func TestExecKeepsTheEventsBeforeIt(t *testing.T) {
	const config = "[output]\nflush_interval = \"60s\"\n"
	const pairs = 1000
	for _, c := range []struct {
		stage, stdout string
		traces        []bool // Final of each trace, first image first
	}{
		{"first", "execself: second\n", []bool{false, true}},
		{"fail", "execself: exec failed\n", []bool{true}},
	} {
		t.Run(c.stage, func(t *testing.T) {
			want := runTraced(t, "execself", config, untraced, "1000", c.stage)
			if want.exit != "exit 0" || want.stdout != c.stdout {
				t.Fatalf("untraced: %s, stdout %q\n%s", want.exit, want.stdout, want.stderr)
			}
			for _, mode := range []int{linked, shim} {
				got := runTraced(t, "execself", config, mode, "1000", c.stage)
				name := modeNames[mode]
				if got.exit != want.exit || got.stdout != want.stdout || got.stderr != "" {
					t.Errorf("%s: %s, stdout %q, stderr %q; want %s, %q, nothing", name, got.exit, got.stdout, got.stderr, want.exit, want.stdout)
					continue
				}
				if len(got.traces) != len(c.traces) {
					t.Fatalf("%s: traces %v, want %d", name, got.traces, len(c.traces))
				}
				// The first image's trace is the one without a numbered suffix.
				for i, path := range got.traces {
					g := readTrace(t, path)
					final := g.stats != nil && g.stats.Final
					want := c.traces[len(c.traces)-1-i] // glob order: "-1" sorts first
					if final != want {
						t.Errorf("%s: %s: final stats %v, want %v (%v)", name, path, final, want, g.err)
					}
					perImage := 2 * pairs
					if c.stage == "fail" {
						perImage = 4 * pairs
					}
					if n := g.counts[trace.RegionPush] + g.counts[trace.RegionPop]; n != perImage {
						t.Errorf("%s: %s: %d region events, want %d", name, path, n, perImage)
					}
				}
			}
		})
	}
}
