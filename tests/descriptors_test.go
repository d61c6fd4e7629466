package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A program that closes every descriptor above 2 (a close() loop,
// close_range, closefrom) and then writes a file of its own, which takes a
// descriptor number the tool's trace file or the Go runtime's poller had:
// traced (linked, or through the preload shim) it runs as untraced, its
// file holds exactly what it wrote, and the trace is complete. Before the
// tool kept its descriptors, the Go runtime aborted the process ("netpoll
// failed") and a trace chunk landed in the program's file.
func TestClosingEveryDescriptor(t *testing.T) {
	const config = "[output]\nflush_interval = \"100ms\"\n"
	for _, how := range []string{"loop", "range", "from"} {
		t.Run(how, func(t *testing.T) {
			want := runTraced(t, "closeall", config, untraced, how, "mine.txt")
			if want.exit != "exit 0" {
				t.Fatalf("untraced: %s\n%s", want.exit, want.stderr)
			}
			for _, mode := range []int{linked, shim} {
				got := runTraced(t, "closeall", config, mode, how, "mine.txt")
				name := modeNames[mode]
				// The descriptor the file gets differs: the tool's stay open.
				if got.exit != "exit 0" || lines(got.stdout)[0][:len("closeall: closed=N")] != lines(want.stdout)[0][:len("closeall: closed=N")] {
					t.Errorf("%s: %s, stdout %q, untraced %q\n%s", name, got.exit, got.stdout, want.stdout, got.stderr)
					continue
				}
				if b, err := os.ReadFile(filepath.Join(got.dir, "mine.txt")); err != nil || string(b) != "app data\n" {
					t.Errorf("%s: the program's file holds %q (%v), want \"app data\\n\"", name, b, err)
				}
				if len(got.traces) != 1 {
					t.Fatalf("%s: traces %v\n%s", name, got.traces, got.stderr)
				}
				g := readTrace(t, got.traces[0])
				if g.err != nil || g.stats == nil || !g.stats.Final {
					t.Errorf("%s: trace not complete: %v", name, g.err)
				}
				for _, m := range []string{"before", "after", "late"} {
					if n := g.markers(m); n != 50000 {
						t.Errorf("%s: %d %q markers in the trace, want 50000", name, n, m)
					}
				}
			}
		})
	}
}

// A program that closes stderr and opens a file of its own, which becomes
// descriptor 2: the tool's messages (here the info line at exit) still go
// to the stderr the program started with, never into that file.
func TestClosingStderr(t *testing.T) {
	const config = "[log]\nlevel = \"info\"\n"
	for _, mode := range []int{linked, shim} {
		got := runTraced(t, "closeall", config, mode, "stderr", "mine.txt")
		name := modeNames[mode]
		if got.exit != "exit 0" || lines(got.stdout)[0] != "closeall: closed=0 fd=2" {
			t.Errorf("%s: %s, stdout %q\n%s", name, got.exit, got.stdout, got.stderr)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(got.dir, "mine.txt")); err != nil || string(b) != "app data\n" {
			t.Errorf("%s: the program's file holds %q (%v), want \"app data\\n\"", name, b, err)
		}
		if !strings.Contains(got.stderr, "trace written") {
			t.Errorf("%s: stderr lacks the tool's \"trace written\" line:\n%s", name, got.stderr)
		}
	}
}

// A program that dup2s /dev/null onto descriptors 3..63, as launchers set
// up fixed numbers, and then writes a file of its own. The Go runtime's
// poller was one of those numbers: the runtime aborted the process
// ("netpoll failed", exit 134) and the trace had no event. The core's
// descriptors now open above them: traced, linked or through the preload
// shim, the program runs as untraced, its file holds exactly what it wrote,
// and the trace is complete.
func TestDup2OntoLowDescriptors(t *testing.T) {
	runs := tracedAsUntraced(t, "closeall", "[output]\nflush_interval = \"100ms\"\n", "exit 0", "closeall: closed=0 fd=64\n", "dup2", "mine.txt")
	for mode, r := range runs {
		if b, err := os.ReadFile(filepath.Join(r.dir, "mine.txt")); err != nil || string(b) != "app data\n" {
			t.Errorf("%s: the program's file holds %q (%v), want \"app data\\n\"", mode, b, err)
		}
		g := readTrace(t, r.traces[0])
		for _, m := range []string{"before", "after", "late"} {
			if n := g.markers(m); n != 50000 {
				t.Errorf("%s: %d %q markers in the trace, want 50000", mode, n, m)
			}
		}
	}
}
