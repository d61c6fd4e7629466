package filters

import (
	"fmt"
	"strings"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
)

// Machine is the reference implementation of the trigger semantics (see
// README.md): it is fed abstract steps and says, after each, whether the
// step's own event was written, whether recording is on, and which Trigger
// events were emitted. The C runtime re-implements it; end-to-end tests
// replay the same steps through both and compare. A Machine is not safe for
// concurrent use: it models the runtime's global trigger state, which the
// runtime serialises.
type Machine struct {
	windows   []Window
	maxEvents uint64
	maxBytes  uint64

	count   []uint64 // launch and region windows: matching launches or pushes so far
	open    []bool
	active  []int   // region windows: inside instances pushed and not popped
	timeSt  []uint8 // time windows: 0 pending, 1 open, 2 done
	now     time.Duration
	calls   map[uint64]call
	threads map[int][]frame

	apiPaused bool
	signalOff bool
	exhausted bool
	events    uint64
}

type call struct {
	recorded bool
	closes   uint16 // launch windows whose last launch this is
}

type frame struct {
	recorded bool
	inside   uint16 // region windows for which this instance is inside
}

// Op is the kind of a Step.
type Op uint8

const (
	OpLaunchBegin Op = iota + 1 // a kernel launch begins (Call, Mask = KernelDecision.Windows)
	OpLaunchEnd                 // the launch Call ends
	OpRegionPush                // Thread enters a region (Mask = Program.Region(name))
	OpRegionPop                 // Thread leaves its innermost region
	OpAdvance                   // time is now Time after start
	OpAPIStop                   // occa_tools_stop()
	OpAPIStart                  // occa_tools_start()
	OpSignal                    // the toggle signal arrived
	OpBegin                     // any other begin event (Call)
	OpEnd                       // its end (Call)
	OpInstant                   // any other instant event
	OpBytes                     // the writer has written Bytes trace bytes in all
)

var opNames = [...]string{"", "launch_begin", "launch_end", "region_push", "region_pop", "advance",
	"api_stop", "api_start", "signal", "begin", "end", "instant", "bytes"}

func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", o)
}

// Step is one input of a Machine.
type Step struct {
	Op     Op
	Call   uint64        // pairs an end with its begin (launches and other begin/end events)
	Thread int           // region push and pop
	Mask   uint16        // launch begin: KernelDecision.Windows; region push: Program.Region
	Time   time.Duration // advance: time since start
	Bytes  uint64        // bytes: total trace bytes written so far
	// Skip marks a begin, instant or push whose own event is filtered out
	// (its kind is disabled or its object not selected): it still drives the
	// window counters, but it is never written and never counted.
	Skip bool
}

func (s Step) String() string {
	var b strings.Builder
	b.WriteString(s.Op.String())
	switch s.Op {
	case OpLaunchBegin, OpLaunchEnd, OpBegin, OpEnd:
		fmt.Fprintf(&b, " call=%d", s.Call)
	case OpRegionPush, OpRegionPop:
		fmt.Fprintf(&b, " thread=%d", s.Thread)
	case OpAdvance:
		fmt.Fprintf(&b, " t=%v", s.Time)
	case OpBytes:
		fmt.Fprintf(&b, " bytes=%d", s.Bytes)
	}
	if s.Op == OpLaunchBegin || s.Op == OpRegionPush {
		fmt.Fprintf(&b, " mask=%#x", s.Mask)
	}
	if s.Skip {
		b.WriteString(" skip")
	}
	return b.String()
}

// Step constructors.
func LaunchBegin(call uint64, mask uint16) Step {
	return Step{Op: OpLaunchBegin, Call: call, Mask: mask}
}
func LaunchEnd(call uint64) Step { return Step{Op: OpLaunchEnd, Call: call} }
func RegionPush(thread int, mask uint16) Step {
	return Step{Op: OpRegionPush, Thread: thread, Mask: mask}
}
func RegionPop(thread int) Step      { return Step{Op: OpRegionPop, Thread: thread} }
func Advance(t time.Duration) Step   { return Step{Op: OpAdvance, Time: t} }
func APIStop() Step                  { return Step{Op: OpAPIStop} }
func APIStart() Step                 { return Step{Op: OpAPIStart} }
func Signal() Step                   { return Step{Op: OpSignal} }
func Begin(call uint64) Step         { return Step{Op: OpBegin, Call: call} }
func End(call uint64) Step           { return Step{Op: OpEnd, Call: call} }
func Instant() Step                  { return Step{Op: OpInstant} }
func BytesWritten(total uint64) Step { return Step{Op: OpBytes, Bytes: total} }

// Skipped returns s marked as filtered out (see Step.Skip).
func (s Step) Skipped() Step { s.Skip = true; return s }

// NoWindow is the window argument of Trigger actions that concern no window
// (pause, resume, budget).
const NoWindow = 0xFFFF

// Action is one Trigger event: the values of its window, action and cause
// arguments (trace.TriggerOpen..., trace.CauseLaunch...).
type Action struct {
	Window uint16 // index in Windows(), or NoWindow
	Action uint64
	Cause  uint64
}

var actionNames = [...]string{"", "open", "close", "pause", "resume", "budget"}
var causeNames = [...]string{"", "launch", "region", "time", "api", "signal", "budget"}

func (a Action) String() string {
	name := func(names []string, v uint64) string {
		if v < uint64(len(names)) && v != 0 {
			return names[v]
		}
		return fmt.Sprint(v)
	}
	w := "-"
	if a.Window != NoWindow {
		w = fmt.Sprint(a.Window)
	}
	return fmt.Sprintf("%s(%s,%s)", name(actionNames[:], a.Action), w, name(causeNames[:], a.Cause))
}

// Result is a Machine's answer to one step.
type Result struct {
	Recorded  bool     // the step's own event (begin, end, instant, push, pop) was written
	Recording bool     // recording is on after the step
	Actions   []Action // Trigger events emitted by the step, in order
}

// NewMachine returns a Machine in the program's initial state: paused if
// trigger.start_paused, time windows with no delay already open, time 0.
func (p *Program) NewMachine() *Machine {
	n := len(p.windows)
	m := &Machine{
		windows: p.Windows(), maxEvents: p.maxEvents, maxBytes: p.maxBytes,
		count: make([]uint64, n), open: make([]bool, n), active: make([]int, n), timeSt: make([]uint8, n),
		calls: map[uint64]call{}, threads: map[int][]frame{},
		apiPaused: p.startPaused,
	}
	m.advance(0, nil)
	return m
}

// Recording reports whether recording is on: not paused by the API, not
// toggled off by the signal, the budget not exhausted, and no windows
// configured or at least one open.
func (m *Machine) Recording() bool {
	if m.apiPaused || m.signalOff || m.exhausted {
		return false
	}
	if len(m.windows) == 0 {
		return true
	}
	for _, o := range m.open {
		if o {
			return true
		}
	}
	return false
}

// Run feeds steps in order and returns each result.
func (m *Machine) Run(steps []Step) []Result {
	out := make([]Result, len(steps))
	for i, s := range steps {
		out[i] = m.Step(s)
	}
	return out
}

// Step applies one step.
func (m *Machine) Step(s Step) Result {
	var r Result
	emit := func(w uint16, action, cause uint64) {
		if !m.exhausted {
			r.Actions = append(r.Actions, Action{Window: w, Action: action, Cause: cause})
		}
	}
	switch s.Op {
	case OpLaunchBegin, OpBegin:
		var closes uint16
		if s.Op == OpLaunchBegin {
			for i := range m.windows {
				if s.Mask&(1<<i) == 0 || m.windows[i].Kind != WindowLaunch {
					continue
				}
				m.count[i]++
				n, w := m.count[i], &m.windows[i]
				if n == w.From {
					m.open[i] = true
					emit(uint16(i), trace.TriggerOpen, trace.CauseLaunch)
				}
				if n == w.To {
					closes |= 1 << i
				}
			}
		}
		r.Recorded = m.record(s.Skip, emit)
		m.calls[s.Call] = call{recorded: r.Recorded, closes: closes}
	case OpLaunchEnd, OpEnd:
		c, ok := m.calls[s.Call]
		if !ok {
			break
		}
		delete(m.calls, s.Call)
		r.Recorded = c.recorded
		for i := range m.windows {
			if c.closes&(1<<i) != 0 && m.open[i] {
				m.open[i] = false
				emit(uint16(i), trace.TriggerClose, trace.CauseLaunch)
			}
		}
	case OpRegionPush:
		var inside uint16
		for i := range m.windows {
			if s.Mask&(1<<i) == 0 || m.windows[i].Kind != WindowRegion {
				continue
			}
			m.count[i]++
			n, w := m.count[i], &m.windows[i]
			if n >= w.From && (w.To == 0 || n <= w.To) {
				inside |= 1 << i
				m.active[i]++
				if m.active[i] == 1 {
					m.open[i] = true
					emit(uint16(i), trace.TriggerOpen, trace.CauseRegion)
				}
			}
		}
		r.Recorded = m.record(s.Skip, emit)
		m.threads[s.Thread] = append(m.threads[s.Thread], frame{recorded: r.Recorded, inside: inside})
	case OpRegionPop:
		stack := m.threads[s.Thread]
		if len(stack) == 0 {
			break // a pop without a push is ignored
		}
		f := stack[len(stack)-1]
		if len(stack) == 1 {
			delete(m.threads, s.Thread)
		} else {
			m.threads[s.Thread] = stack[:len(stack)-1]
		}
		r.Recorded = f.recorded
		for i := range m.windows {
			if f.inside&(1<<i) == 0 {
				continue
			}
			m.active[i]--
			if m.active[i] == 0 {
				m.open[i] = false
				emit(uint16(i), trace.TriggerClose, trace.CauseRegion)
			}
		}
	case OpAdvance:
		m.advance(s.Time, emit)
	case OpAPIStop:
		if !m.apiPaused {
			m.apiPaused = true
			emit(NoWindow, trace.TriggerPause, trace.CauseAPI)
		}
	case OpAPIStart:
		if m.apiPaused {
			m.apiPaused = false
			emit(NoWindow, trace.TriggerResume, trace.CauseAPI)
		}
	case OpSignal:
		// The signal toggles what the user sees: when recording is paused
		// by the API or the signal, it clears both; else it pauses.
		if m.apiPaused || m.signalOff {
			m.apiPaused, m.signalOff = false, false
			emit(NoWindow, trace.TriggerResume, trace.CauseSignal)
		} else {
			m.signalOff = true
			emit(NoWindow, trace.TriggerPause, trace.CauseSignal)
		}
	case OpInstant:
		r.Recorded = m.record(s.Skip, emit)
	case OpBytes:
		if m.maxBytes > 0 && s.Bytes >= m.maxBytes && !m.exhausted {
			emit(NoWindow, trace.TriggerBudget, trace.CauseBudget)
			m.exhausted = true
		}
	}
	r.Recording = m.Recording()
	return r
}

// record decides whether a begin, instant or push event is written, and
// counts it against the event budget.
func (m *Machine) record(skip bool, emit func(uint16, uint64, uint64)) bool {
	if skip || !m.Recording() {
		return false
	}
	m.events++
	if m.maxEvents > 0 && m.events >= m.maxEvents {
		emit(NoWindow, trace.TriggerBudget, trace.CauseBudget)
		m.exhausted = true
	}
	return true
}

// advance moves time forward (never back) and opens and closes time
// windows; a window whose whole span is jumped over opens and closes in the
// same step.
func (m *Machine) advance(t time.Duration, emit func(uint16, uint64, uint64)) {
	if t > m.now {
		m.now = t
	}
	for i := range m.windows {
		w := &m.windows[i]
		if w.Kind != WindowTime {
			continue
		}
		if m.timeSt[i] == 0 && m.now >= w.Delay {
			m.timeSt[i], m.open[i] = 1, true
			if emit != nil {
				emit(uint16(i), trace.TriggerOpen, trace.CauseTime)
			}
		}
		if m.timeSt[i] == 1 && w.Duration > 0 && m.now-w.Delay >= w.Duration {
			m.timeSt[i], m.open[i] = 2, false
			if emit != nil {
				emit(uint16(i), trace.TriggerClose, trace.CauseTime)
			}
		}
	}
}
