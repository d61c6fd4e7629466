// Package writer is the runtime's consumer side: one goroutine that takes the
// C runtime's filled buffers and definitions and writes them as a trace file
// (formats/trace): at the fastest level as the threads encoded them (raw
// events chunks, whose ticks readers convert), at the others converted to
// nanoseconds and re-encoded. It talks to C only through the Host interface,
// so it is tested in pure Go with a fake host.
package writer

import (
	"time"

	"github.com/libocca/occa-tools/formats/trace"
)

// Span is a run of complete raw records (trace.RawState says how they are
// encoded) from one thread's buffer: the buffer's records from Offset on.
// A buffer's spans come in order, the first at Offset 0.
type Span struct {
	Data   []byte // valid until Release
	Offset uint32
	Thread uint32
	Slot   uint32
	Full   bool // the buffer is done: Release returns it to the pool
	// Counts, when the span is all of a buffer its thread handed over
	// (Offset 0, Full), are its events by kind (valid until Release), and
	// LastTicks its latest record's ticks; nil otherwise.
	Counts    *[64]uint32
	LastTicks uint64
}

// Wake says why Host.Wait returned.
type Wake int

const (
	WakeTimeout Wake = iota
	WakeWork         // a full buffer is waiting
	WakeFlush        // a flush was requested (occa_tools_flush, a signal, shutdown)
)

// Partial is Host.TakePartial's answer.
type Partial int

const (
	PartialDone      Partial = iota // no more live buffers with unwritten records
	PartialSpan                     // a span was returned
	PartialDrainFull                // a thread's full buffer is still queued: take full buffers first
)

// Counters are the C runtime's totals.
type Counters struct {
	Dropped          [trace.NumReasonCounters]uint64
	Threads          uint64
	BuffersAllocated uint64
	SignalToggles    uint64 // deliveries of the toggle signal so far
	TicksClamped     uint64 // event times the threads raised to their previous event's
}

// Host is the C runtime as the writer sees it (ot_host_t).
type Host interface {
	Wait(timeout time.Duration) Wake
	TakeFull() (Span, bool)
	TakePartial(cursor *uint32) (Span, Partial)
	Release(s Span)
	// TakeDefs moves whole pending definition entries into dst and returns
	// the bytes moved; tryOnly must not block on the queue's lock.
	TakeDefs(dst []byte, tryOnly bool) int
	SyncPoint() (ticks uint64, mono int64)
	Counters() Counters
	// SignalToggle is the i-th toggle delivery (0-based): its ticks and
	// whether recording was on after it; ok is false when it was lost.
	SignalToggle(i uint64) (ticks uint64, recording, ok bool)
	// WindowTime sets a time window's thresholds: it is open for the events
	// whose ticks lie in [from, to). WindowSet retires it once both edges
	// have passed: open for good, or shut.
	WindowTime(window int, from, to uint64)
	WindowSet(window int, open bool)
	BudgetExhausted()
	RequestFlush() uint64
	FlushRequested() uint64
	FlushDone(seq uint64)
	// FinalRequested is nonzero once a dying signal wants the final
	// flush; it is set before the flush is requested.
	FinalRequested() uint64
	RearmSignals()
	StopForGood()
	Critical(kind trace.Kind, count uint64, message string)
}
