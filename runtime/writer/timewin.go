package writer

import (
	"math"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
)

// Time windows are decided in C by each event's own ticks against the
// thresholds set here (Host.WindowTime), so an event belongs to a window by
// its timestamp whenever this goroutine runs. The writer only keeps the
// thresholds on the nominal times (start + delay, + duration) as the clock
// is learned, stamps the Trigger events at the thresholds once sync points
// lie past them (so that they convert exactly as the events around them),
// and retires a window whose edges have all passed (Host.WindowSet).
// Events outside the window are never recorded, as while paused: they are
// neither in the trace nor counted as dropped.

// refineAhead is how far ahead of the clock, read just before, an edge
// must be for its threshold to move: no event is decided near the edge
// meanwhile unless this goroutine stalls that long between the read and the
// store.
const refineAhead = 100 * time.Millisecond

// noEdge is a threshold that is never reached.
const noEdge = math.MaxUint64

type timeWindow struct {
	TimeWindow
	openAt, closeAt int64  // nominal CLOCK_MONOTONIC ns; closeAt = MaxInt64: none
	from, to        uint64 // thresholds in ticks
	opened, closed  bool   // the edge has passed (its Trigger is written)
	retired         bool
}

// initTimeWindows places the windows' edges on the monotonic clock; start
// is the config's start time, read at the same moment as mono.
func (l *Loop) initTimeWindows(mono int64) {
	l.startMono = mono - int64(time.Since(l.opt.Start))
	for _, w := range l.opt.TimeWindows {
		tw := timeWindow{TimeWindow: w, openAt: l.startMono + int64(max(w.Delay, 0)), closeAt: math.MaxInt64}
		if w.Duration > 0 {
			tw.closeAt = tw.openAt + int64(w.Duration)
		}
		l.twin = append(l.twin, tw)
	}
}

// startTimeWindows sets the first thresholds before the application runs.
// A window with no delay is open from the start, with no Trigger event (as
// in filters.Machine).
func (l *Loop) startTimeWindows() {
	if len(l.twin) == 0 {
		return
	}
	if l.clock.Points() < 2 && !l.opt.IdentityClock {
		time.Sleep(time.Millisecond) // a first rate for the thresholds
		l.syncNow()
	}
	for i := range l.twin {
		w := &l.twin[i]
		w.from, w.to = l.clock.Ticks(w.openAt), noEdge
		if w.Delay <= 0 {
			w.from, w.opened = 0, true
		}
		if w.closeAt != math.MaxInt64 {
			w.to = l.clock.Ticks(w.closeAt)
		}
		l.h.WindowTime(w.Index, w.from, w.to)
	}
	l.timeWindows()
}

// timeWindows refines the thresholds still well ahead, writes the Triggers
// of the edges passed, and retires the windows that are settled. It runs
// after a sync point (each cycle).
func (l *Loop) timeWindows() {
	if len(l.twin) == 0 {
		return
	}
	now := l.lastTicks
	_, mono := l.h.SyncPoint()
	for i := range l.twin {
		w := &l.twin[i]
		if w.retired {
			continue
		}
		from, to := w.from, w.to
		if !w.opened && w.openAt > mono+int64(refineAhead) {
			from = l.clock.Ticks(w.openAt)
		}
		if w.closeAt != math.MaxInt64 && w.closeAt > mono+int64(refineAhead) {
			to = l.clock.Ticks(w.closeAt)
		}
		if from != w.from || to != w.to {
			w.from, w.to = from, to
			l.h.WindowTime(w.Index, from, to)
		}
		if !w.opened && now > w.from {
			w.opened = true
			l.toolEvent(trace.Trigger, l.clock.Nanos(w.from), uint64(w.Index), trace.TriggerOpen, trace.CauseTime)
		}
		if w.opened && !w.closed && w.to != noEdge && now > w.to {
			w.closed = true
			l.toolEvent(trace.Trigger, l.clock.Nanos(w.to), uint64(w.Index), trace.TriggerClose, trace.CauseTime)
		}
		if w.closed || (w.opened && w.to == noEdge) {
			w.retired = true
			l.h.WindowSet(w.Index, !w.closed)
		}
	}
}

// nextEdge is the nominal time of the next edge ahead, for the writer's
// wake-up; zero when none.
func (l *Loop) nextEdge() time.Time {
	var next int64 = math.MaxInt64
	for i := range l.twin {
		w := &l.twin[i]
		switch {
		case w.retired:
		case !w.opened:
			next = min(next, w.openAt)
		case w.closeAt != math.MaxInt64:
			next = min(next, w.closeAt)
		}
	}
	if next == math.MaxInt64 {
		return time.Time{}
	}
	// Wake just after it, so that a sync point lies past the threshold.
	return l.opt.Start.Add(time.Duration(next-l.startMono) + time.Millisecond)
}
