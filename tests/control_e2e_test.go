package tests

import (
	"strings"
	"syscall"
	"testing"

	"github.com/libocca/occa-tools/configs"
	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/cpuload"
)

func compile(t *testing.T, name, text string) *filters.Program {
	t.Helper()
	cfg, err := config.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := filters.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// occa_tools_tag_kernel at run time: kernels already built and launched
// later are selected by the new tag.
func TestControlTagKernel(t *testing.T) {
	text := string(configs.All()["kernels-by-tag.toml"])
	want := predict(compile(t, "t", text), options{threads: 2, steps: 10, tagDot: true})
	g := oneTrace(t, text, "-t", "2", "-s", "10", "--tag-dot")
	if d := diffCounts(want.counts, g.counts); len(d) > 0 {
		t.Errorf("counts:\n  %s", strings.Join(d, "\n  "))
	}
	dots := 0
	for _, e := range g.events {
		if e.Kind == trace.RunBegin && g.dict.Kernel(e.Args[1]).Name == "dot" {
			dots++
		}
	}
	if dots != 2*10 {
		t.Errorf("dot launches recorded = %d, want 20", dots)
	}
}

// occa_tools_flush returns once everything recorded is in the file: a
// SIGKILL right after loses nothing before it.
func TestControlFlushThenKill(t *testing.T) {
	r := runWorkload(t, "", nil, "-t", "2", "-s", "50", "--flush-kill")
	ws, _ := r.errStatus()
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("exit = %v, want SIGKILL; stderr:\n%s", r.err, r.stderr)
	}
	if strings.Contains(r.stderr, "occa_tools_flush failed") {
		t.Fatal("occa_tools_flush failed")
	}
	if len(r.traces) != 1 {
		t.Fatalf("traces: %v", r.traces)
	}
	g := readTrace(t, r.traces[0])
	if g.err == nil || !strings.Contains(g.err.Error(), "trace ends without its final stats chunk") {
		t.Errorf("read error = %v, want the cut-trace error", g.err)
	}
	want := predict(compile(t, "t", ""), options{threads: 2, steps: 50, flushKill: true})
	if d := diffCounts(want.counts, g.counts); len(d) > 0 {
		t.Errorf("counts after flush + SIGKILL:\n  %s", strings.Join(d, "\n  "))
	}
}

// Launcher variables give the rank: in the file name and the header, so the
// traces of one job never collide.
func TestRankFromLauncher(t *testing.T) {
	env := []string{"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8"}
	r := runWorkload(t, "", env, "-t", "1", "-s", "1")
	if r.err != nil || len(r.traces) != 1 {
		t.Fatalf("run: %v, traces %v", r.err, r.traces)
	}
	if !strings.Contains(r.traces[0], "-r3-p") {
		t.Errorf("file name %s lacks the rank", r.traces[0])
	}
	h := readTrace(t, r.traces[0]).header
	if h.Rank != 3 || h.WorldSize != 8 || h.RankSource != "OMPI_COMM_WORLD_RANK" {
		t.Errorf("header rank = %d/%d from %q", h.Rank, h.WorldSize, h.RankSource)
	}
}

// Time windows: every begin or instant recorded lies between the window's
// Trigger events; ends of calls begun inside may follow the close.
//
// Membership is decided by each event's own timestamp against the window's
// edges, not by when the writer's timer runs, so it holds with two CPU hogs
// competing with the writer (the test starts them).
func TestTimeWindow(t *testing.T) {
	stop := cpuload.Hogs(2)
	defer stop()
	cases := []struct {
		text    string
		actions []uint64 // expected Trigger actions, in order
	}{
		{"[[trigger.window]]\ndelay = \"100ms\"\nduration = \"150ms\"\n", []uint64{trace.TriggerOpen, trace.TriggerClose}},
		{"[[trigger.window]]\nduration = \"150ms\"\n", []uint64{trace.TriggerClose}}, // open from the start: no event
	}
	for _, c := range cases {
		g := oneTrace(t, c.text, "-t", "1", "-s", "500", "-w", "1000")
		var acts []uint64
		var open, close int64 = 0, -1
		for _, e := range g.events {
			if e.Kind == trace.Trigger {
				if e.Args[2] != trace.CauseTime || e.Args[0] != 0 {
					t.Errorf("trigger %v", e.Args)
				}
				acts = append(acts, e.Args[1])
				if e.Args[1] == trace.TriggerOpen {
					open = e.Time
				} else {
					close = e.Time
				}
			}
		}
		if len(acts) != len(c.actions) || acts[len(acts)-1] != trace.TriggerClose {
			t.Fatalf("%q: trigger actions %v, want %v", c.text, acts, c.actions)
		}
		runs := 0
		for _, e := range g.events {
			spec := e.Kind.Spec()
			if e.Kind.Spec().Domain == trace.DomainTool || (spec.Pair != trace.KindInvalid && !spec.Begin) || e.Kind == trace.RegionPop || e.Kind == trace.DeviceTime {
				continue
			}
			if e.Time < open || e.Time > close {
				t.Fatalf("%s at %d ns, outside the window [%d, %d]", e.Kind, e.Time, open, close)
			}
			if e.Kind == trace.RunBegin {
				runs++
			}
		}
		if runs == 0 {
			t.Errorf("%q: no launch recorded inside the window", c.text)
		}
		checkOrder(t, g)
	}
}
