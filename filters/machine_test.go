package filters

import (
	"strings"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
)

// brief writes a Result as "<written> <recording> <actions...>":
// "w on open(0,launch)", "- off".
func brief(r Result) string {
	var b strings.Builder
	if r.Recorded {
		b.WriteString("w")
	} else {
		b.WriteString("-")
	}
	if r.Recording {
		b.WriteString(" on")
	} else {
		b.WriteString(" off")
	}
	for _, a := range r.Actions {
		b.WriteString(" " + a.String())
	}
	return b.String()
}

type want struct {
	step Step
	res  string
}

func TestMachine(t *testing.T) {
	const k = 1 // mask of window 0
	for _, tc := range []struct {
		name, config string
		steps        []want
	}{
		{"no windows: always on", "", []want{
			{Instant(), "w on"},
			{LaunchBegin(1, 0), "w on"},
			{LaunchEnd(1), "w on"},
			{RegionPush(0, 0), "w on"},
			{RegionPop(0), "w on"},
			{Advance(time.Hour), "- on"},
		}},
		{"launch window 2..3", "[[trigger.window]]\nkernel = \"axpy\"\nfrom = 2\nto = 3", []want{
			{Instant(), "- off"},
			{LaunchBegin(1, k), "- off"},
			{LaunchEnd(1), "- off"},
			{LaunchBegin(2, k), "w on open(0,launch)"},
			{Instant(), "w on"},
			{LaunchBegin(20, 0), "w on"}, // another kernel: recorded, not counted
			{LaunchEnd(20), "w on"},
			{LaunchEnd(2), "w on"},
			{LaunchBegin(3, k), "w on"},
			{Begin(30), "w on"},
			{LaunchEnd(3), "w off close(0,launch)"},
			{End(30), "w off"}, // the end of a recorded begin
			{LaunchBegin(4, k), "- off"},
			{LaunchEnd(4), "- off"},
		}},
		{"from == to", "[[trigger.window]]\nkernel = \"axpy\"\nfrom = 2\nto = 2", []want{
			{LaunchBegin(1, k), "- off"},
			{LaunchEnd(1), "- off"},
			{LaunchBegin(2, k), "w on open(0,launch)"},
			{Instant(), "w on"},
			{LaunchEnd(2), "w off close(0,launch)"},
			{LaunchBegin(3, k), "- off"},
			{LaunchEnd(3), "- off"},
		}},
		{"to = 0: no end", "[[trigger.window]]\nkernel = \"axpy\"\nfrom = 2\nto = 0", []want{
			{LaunchBegin(1, k), "- off"},
			{LaunchEnd(1), "- off"},
			{LaunchBegin(2, k), "w on open(0,launch)"},
			{LaunchEnd(2), "w on"},
			{LaunchBegin(3, k), "w on"},
			{LaunchEnd(3), "w on"},
			{Instant(), "w on"},
		}},
		{"interleaved launches: the window closes after the end of launch `to`",
			"[[trigger.window]]\nkernel = \"axpy\"\nfrom = 1\nto = 2", []want{
				{LaunchBegin(1, k), "w on open(0,launch)"},
				{LaunchBegin(2, k), "w on"},
				{LaunchBegin(3, k), "w on"}, // launch 3 begins while the window is open: recorded
				{LaunchEnd(3), "w on"},
				{LaunchEnd(1), "w on"},
				{LaunchEnd(2), "w off close(0,launch)"},
				{LaunchEnd(99), "- off"}, // an end without a begin
			}},
		{"overlapping launch windows", "[[trigger.window]]\nkernel = \"k*\"\nfrom = 1\nto = 2\n[[trigger.window]]\nkernel = \"k*\"\nfrom = 2\nto = 3", []want{
			{LaunchBegin(1, 3), "w on open(0,launch)"},
			{LaunchEnd(1), "w on"},
			{LaunchBegin(2, 3), "w on open(1,launch)"},
			{LaunchEnd(2), "w on close(0,launch)"},
			{LaunchBegin(3, 3), "w on"},
			{LaunchEnd(3), "w off close(1,launch)"},
		}},
		{"launch and region windows overlap", "[[trigger.window]]\nkernel = \"k\"\nto = 1\n[[trigger.window]]\nregion = \"r\"", []want{
			{RegionPush(0, 2), "w on open(1,region)"},
			{LaunchBegin(1, 1), "w on open(0,launch)"},
			{RegionPop(0), "w on close(1,region)"},
			{LaunchEnd(1), "w off close(0,launch)"},
		}},
		{"region window 2..3", "[[trigger.window]]\nregion = \"step\"\nfrom = 2\nto = 3", []want{
			{RegionPush(0, k), "- off"},
			{Instant(), "- off"},
			{RegionPop(0), "- off"},
			{RegionPush(0, k), "w on open(0,region)"},
			{RegionPush(0, 0), "w on"}, // an inner region of another name
			{Instant(), "w on"},
			{RegionPop(0), "w on"},
			{RegionPop(0), "w off close(0,region)"},
			{RegionPush(0, k), "w on open(0,region)"},
			{RegionPop(0), "w off close(0,region)"},
			{RegionPush(0, k), "- off"},
			{RegionPop(0), "- off"},
		}},
		{"nested regions with the same name", "[[trigger.window]]\nregion = \"solve\"\nfrom = 2\nto = 3", []want{
			{RegionPush(0, k), "- off"},               // instance 1: outside
			{RegionPush(0, k), "w on open(0,region)"}, // instance 2, nested in 1
			{RegionPush(0, k), "w on"},                // instance 3, nested in 2
			{RegionPush(0, k), "w on"},                // instance 4: outside, but 2 and 3 are active
			{RegionPop(0), "w on"},                    // pops 4
			{RegionPop(0), "w on"},                    // pops 3; 2 still active
			{RegionPop(0), "w off close(0,region)"},   // pops 2
			{RegionPop(0), "- off"},                   // pops 1, whose push was not recorded
		}},
		{"pops without push are ignored", "[[trigger.window]]\nregion = \"r\"\nto = 1", []want{
			{RegionPop(0), "- off"},
			{RegionPush(0, k), "w on open(0,region)"},
			{RegionPop(1), "- on"}, // another thread has nothing to pop
			{RegionPop(0), "w off close(0,region)"},
			{RegionPop(0), "- off"},
		}},
		{"two threads' regions", "[[trigger.window]]\nregion = \"r\"\nfrom = 1\nto = 2", []want{
			{RegionPush(1, k), "w on open(0,region)"}, // thread 1: instance 1
			{RegionPush(2, 0), "w on"},                // thread 2: another region
			{RegionPush(2, k), "w on"},                // thread 2: instance 2
			{RegionPop(1), "w on"},                    // thread 1 pops instance 1; 2 is still active
			{RegionPop(2), "w off close(0,region)"},   // thread 2 pops its innermost: instance 2
			{RegionPop(2), "w off"},                   // thread 2 pops the other region (recorded push)
			{RegionPush(1, k), "- off"},               // instance 3
			{RegionPop(1), "- off"},
		}},
		{"region window with no end", "[[trigger.window]]\nregion = \"r\"\nfrom = 2", []want{
			{RegionPush(0, k), "- off"},
			{RegionPop(0), "- off"},
			{RegionPush(0, k), "w on open(0,region)"},
			{RegionPop(0), "w off close(0,region)"},
			{RegionPush(0, k), "w on open(0,region)"},
		}},
		{"skipped events drive counters but are not written",
			"[[trigger.window]]\nkernel = \"k\"\nto = 1\n[[trigger.window]]\nregion = \"r\"\nfrom = 2", []want{
				{LaunchBegin(1, k).Skipped(), "- on open(0,launch)"},
				{Instant().Skipped(), "- on"},
				{Instant(), "w on"},
				{LaunchEnd(1), "- off close(0,launch)"},
				{RegionPush(0, 2).Skipped(), "- off"},
				{RegionPop(0), "- off"},
				{RegionPush(0, 2).Skipped(), "- on open(1,region)"},
				{RegionPop(0), "- off close(1,region)"},
			}},
		{"budget reached inside an open window", "[trigger]\nmax_events = 3\n[[trigger.window]]\nkernel = \"k\"\nto = 2", []want{
			{LaunchBegin(1, k), "w on open(0,launch)"}, // 1
			{Instant(), "w on"},                        // 2
			{Begin(7), "w off budget(-,budget)"},       // 3: the last one
			{Instant(), "- off"},
			{End(7), "w off"},       // ends of recorded begins are always written
			{LaunchEnd(1), "w off"}, // not counted
			{LaunchBegin(2, k), "- off"},
			{LaunchEnd(2), "- off"}, // the window closes, but nothing is said after the budget
			{APIStop(), "- off"},
			{Signal(), "- off"},
			{APIStart(), "- off"},
		}},
		{"budget without windows; ends and pops do not count", "[trigger]\nmax_events = 2", []want{
			{RegionPush(0, 0), "w on"},
			{RegionPop(0), "w on"},
			{Begin(1), "w off budget(-,budget)"},
			{End(1), "w off"},
			{RegionPush(0, 0), "- off"},
			{RegionPop(0), "- off"},
		}},
		{"byte budget", "[trigger]\nmax_bytes = 100", []want{
			{BytesWritten(50), "- on"},
			{Instant(), "w on"},
			{BytesWritten(100), "- off budget(-,budget)"},
			{BytesWritten(200), "- off"},
			{Instant(), "- off"},
		}},
		{"pause inside a window", "[[trigger.window]]\nkernel = \"k\"\nto = 2", []want{
			{LaunchBegin(1, k), "w on open(0,launch)"},
			{APIStop(), "- off pause(-,api)"},
			{LaunchEnd(1), "w off"}, // begun before the pause
			{LaunchBegin(2, k), "- off"},
			{APIStop(), "- off"}, // already paused: nothing to say
			{APIStart(), "- on resume(-,api)"},
			{Instant(), "w on"},
			{APIStart(), "- on"},
			{LaunchEnd(2), "- off close(0,launch)"},
		}},
		{"signal toggles twice", "[trigger]\ntoggle_signal = \"SIGUSR2\"", []want{
			{Instant(), "w on"},
			{Signal(), "- off pause(-,signal)"},
			{Instant(), "- off"},
			{Signal(), "- on resume(-,signal)"},
			{Instant(), "w on"},
		}},
		{"signal and API", "", []want{
			{APIStop(), "- off pause(-,api)"},
			{Signal(), "- on resume(-,signal)"}, // the signal resumes what the API paused
			{Signal(), "- off pause(-,signal)"},
			{APIStart(), "- off"},               // the API does not undo the signal's pause
			{APIStop(), "- off pause(-,api)"},   // both paused now
			{APIStart(), "- off resume(-,api)"}, // the API's pause ends; the signal's stays
			{Signal(), "- on resume(-,signal)"},
		}},
		{"start paused", "[trigger]\nstart_paused = true", []want{
			{Instant(), "- off"},
			{APIStart(), "- on resume(-,api)"},
			{Instant(), "w on"},
		}},
		{"start paused, then the signal", "[trigger]\nstart_paused = true\ntoggle_signal = \"USR1\"", []want{
			{Signal(), "- on resume(-,signal)"},
			{Signal(), "- off pause(-,signal)"},
		}},
		{"paused while a window opens", "[[trigger.window]]\nregion = \"r\"", []want{
			{APIStop(), "- off pause(-,api)"},
			{RegionPush(0, k), "- off open(0,region)"},
			{APIStart(), "- on resume(-,api)"},
			{RegionPop(0), "- off close(0,region)"}, // its push was not written
		}},
		{"time window", "[[trigger.window]]\ndelay = \"10s\"\nduration = \"5s\"", []want{
			{Instant(), "- off"},
			{Advance(9 * time.Second), "- off"},
			{Advance(10 * time.Second), "- on open(0,time)"},
			{Begin(1), "w on"},
			{Advance(14 * time.Second), "- on"},
			{Advance(5 * time.Second), "- on"}, // time never goes back
			{Advance(15 * time.Second), "- off close(0,time)"},
			{End(1), "w off"},
			{Advance(time.Hour), "- off"},
		}},
		{"time window jumped over", "[[trigger.window]]\ndelay = \"1s\"\nduration = \"1s\"", []want{
			{Advance(time.Minute), "- off open(0,time) close(0,time)"},
			{Advance(2 * time.Minute), "- off"},
		}},
		{"time window open from the start", "[[trigger.window]]\nduration = \"2s\"", []want{
			{Instant(), "w on"},
			{Advance(time.Second), "- on"},
			{Advance(2 * time.Second), "- off close(0,time)"},
		}},
		{"time window with no end", "[[trigger.window]]\ndelay = \"1s\"", []want{
			{Advance(time.Second), "- on open(0,time)"},
			{Advance(1000 * time.Hour), "- on"},
		}},
		{"mask bits of other kinds and unknown windows are ignored", "[[trigger.window]]\nregion = \"r\"\n[[trigger.window]]\nkernel = \"k\"", []want{
			{LaunchBegin(1, 0xFFFD), "- off"}, // window 0 is a region window
			{RegionPush(0, 0xFFFE), "- off"},  // window 1 is a launch window
			{LaunchEnd(1), "- off"},
			{RegionPop(0), "- off"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compile(t, tc.config)
			m := p.NewMachine()
			for i, w := range tc.steps {
				if got := brief(m.Step(w.step)); got != w.res {
					t.Errorf("step %d (%v): got %q, want %q", i, w.step, got, w.res)
				}
			}
		})
	}
}

// A kernel tagged by TagKernel after some launches starts counting for a
// kernel_tag window from its next decision.
func TestMachineTagKernelLater(t *testing.T) {
	p := compile(t, "[[trigger.window]]\nkernel_tag = \"hot\"\nfrom = 2\nto = 2")
	m := p.NewMachine()
	mask := p.Kernel("axpy", "").Windows
	for i := uint64(1); i <= 3; i++ {
		if got := brief(m.Step(LaunchBegin(i, mask))); got != "- off" {
			t.Fatalf("untagged launch %d: %s", i, got)
		}
		m.Step(LaunchEnd(i))
	}
	p.TagKernel("axpy", "hot")
	mask = p.Kernel("axpy", "").Windows // the runtime asks again after TagKernel
	for i, w := range []want{
		{LaunchBegin(4, mask), "- off"}, // the first counted launch
		{LaunchEnd(4), "- off"},
		{LaunchBegin(5, mask), "w on open(0,launch)"},
		{LaunchEnd(5), "w off close(0,launch)"},
	} {
		if got := brief(m.Step(w.step)); got != w.res {
			t.Errorf("step %d (%v): got %q, want %q", i, w.step, got, w.res)
		}
	}
}

func TestMachineRun(t *testing.T) {
	p := compile(t, "[[trigger.window]]\nkernel = \"k\"\nto = 1")
	rs := p.NewMachine().Run([]Step{Instant(), LaunchBegin(1, 1), LaunchEnd(1)})
	got := []string{brief(rs[0]), brief(rs[1]), brief(rs[2])}
	if strings.Join(got, "|") != "- off|w on open(0,launch)|w off close(0,launch)" {
		t.Errorf("Run: %q", got)
	}
	a := rs[1].Actions[0]
	if a.Window != 0 || a.Action != trace.TriggerOpen || a.Cause != trace.CauseLaunch {
		t.Errorf("action values %+v", a)
	}
}

func TestStepStrings(t *testing.T) {
	for s, want := range map[Step]string{
		LaunchBegin(3, 5):                "launch_begin call=3 mask=0x5",
		RegionPush(2, 1).Skipped():       "region_push thread=2 mask=0x1 skip",
		Advance(time.Second):             "advance t=1s",
		BytesWritten(9):                  "bytes bytes=9",
		APIStop():                        "api_stop",
		{Op: 99}:                         "op(99)",
		End(4):                           "end call=4",
		RegionPop(1):                     "region_pop thread=1",
		{Op: OpSignal}:                   "signal",
		{Op: OpInstant, Skip: true}:      "instant skip",
		{Op: OpAPIStart, Call: 3}:        "api_start",
		{Op: OpLaunchEnd, Call: 1 << 40}: "launch_end call=1099511627776",
	} {
		if s.String() != want {
			t.Errorf("%q, want %q", s.String(), want)
		}
	}
	if (Action{Window: NoWindow, Action: 9, Cause: 0}).String() != "9(-,0)" {
		t.Error(Action{Window: NoWindow, Action: 9}.String())
	}
}
