package analysis

import (
	"cmp"
	"slices"

	"github.com/libocca/occa-tools/formats/trace"
)

// Late ends. LLVM's libomp reports a worker's implicit-task end, and the
// end of the implicit barrier it waits in, only when the worker is woken
// for its next region, or never for a program's last region. So that every
// output gives a worker's part of a region the same length, the Pairer
// ends a worker's implicit task and the work and sync regions and waits of
// that region no later than the end of the parallel region (the parallel
// row of the thread that began it), and ends there those never ended.
//
// A worker's row read while its region is open, that ends after the time
// the thread that began the region has reached, may end after the region:
// it waits, in a FIFO of at most MaxHeldRows rows (then the oldest go out
// as they are), until its region and those of the rows held before it
// have ended, and so comes out after its parallel row. A row read before
// its region's begin goes out as it is (see ompEmit). The regions are
// known for about the last regionSlots of them.

// MaxHeldRows bounds the OpenMP rows of workers held until their parallel
// region's end is read.
const MaxHeldRows = 1 << 16

// regionSlots is the size of the table of regions: a region is known
// until one whose id hashes to its slot replaces it (ids mostly count up,
// so the slots hold about the last regionSlots regions).
const regionSlots = 1 << 13

// region is what the Pairer knows of a parallel region: the thread that
// began it, and its end once its row went out.
type region struct {
	end    int64
	thread uint32
	state  uint8 // regionOpen, regionEnded, regionLost (its end is not in the trace)
}

const (
	regionOpen = iota + 1
	regionEnded
	regionLost
)

// clampState is the Pairer's part of ompState for late ends.
type clampState struct {
	regions []regionSlot // by hash64 of the region id; nil until the first
	// Rows held for their region's end, in the order they came (a FIFO
	// from head): they go out from the head as their regions end.
	held []heldRow
	head int
	out  heldRow // the row sendHeld sends
	// At the end of the trace, the rows never ended that a region's end
	// closes: they go out after the other halves, the innermost (latest
	// begun) first, as rows that end together do (a wait before its
	// implicit task, whose idle time the summary takes from its waits).
	flushing bool
	closing  []pendingSeg
	// reached is, per thread (the first maxThreadTimes), the latest end of
	// its OpenMP rows sent out: a region still open on the thread that
	// began it ends no earlier.
	reached []int64
}

const maxThreadTimes = 1 << 12

type heldRow struct {
	par uint64
	pendingSeg
}

type regionSlot struct {
	par uint64
	region
}

// region returns what is known of region par (state 0: nothing).
func (c *clampState) region(par uint64) region {
	if c.regions == nil {
		return region{}
	}
	if s := &c.regions[hash64(par)&(regionSlots-1)]; s.par == par {
		return s.region
	}
	return region{}
}

// set records what is now known of region par.
func (c *clampState) set(par uint64, reg region) {
	if c.regions == nil {
		c.regions = make([]regionSlot, regionSlots)
	}
	c.regions[hash64(par)&(regionSlots-1)] = regionSlot{par, reg}
}

// clamped reports whether rows of kind k are clamped to their region.
func clamped(k trace.Kind) bool {
	return k == trace.OmpImplicitTaskBegin || k == trace.OmpWorkBegin || k == trace.OmpSyncBegin || k == trace.OmpSyncWaitBegin
}

// ompEmit sends out an OpenMP row: a parallel region's row, then the rows
// of workers held for the ends of the regions ended; a worker's row
// clamped to its region's end, or held until that is read.
func (pr *Pairer) ompEmit(r *Row) error {
	o := pr.ompState()
	c := &o.clamp
	m := r.OMP
	switch {
	case r.Kind == trace.OmpParallelBegin:
		if r.Dur != Unpaired {
			c.set(m.ID, region{end: r.Start + r.Dur, thread: r.Thread, state: regionEnded})
		} else {
			c.set(m.ID, region{thread: r.Thread, state: regionLost})
		}
		if err := pr.Sink(pr.P, r); err != nil {
			return err
		}
		return pr.releaseHeld(false)
	case !clamped(r.Kind):
		return pr.Sink(pr.P, r)
	}
	// A work or sync row has its region from its implicit task's frame
	// (ompContext); 0 when bound to an explicit task, which no region
	// ends.
	par := m.Parallel
	if par == 0 {
		return pr.Sink(pr.P, r)
	}
	reg := c.region(par)
	switch {
	case reg.state == regionEnded:
		if c.flushing && r.Dur == Unpaired && reg.thread != r.Thread && r.Start <= reg.end {
			c.closing = append(c.closing, pendingSeg{*r, *r.OMP})
			return nil
		}
		clampTo(r, &reg)
	case reg.state != regionOpen:
		// Its region's begin is not read yet (the worker's batch comes
		// first in the file): which region end might come is unknown, and
		// holding every such row until it does costs the OpenMP pairing
		// half its speed (formats/bench). It goes out as it is, in every
		// output alike; a row that never ends is still closed at the end
		// of the trace.
	case reg.thread != r.Thread:
		// A worker's row that may end after its region: it ends after
		// what the thread that began the region has reached so far.
		if r.Dur == Unpaired || int(reg.thread) >= len(c.reached) || r.Start+r.Dur > c.reached[reg.thread] {
			return pr.hold(par, r)
		}
	default:
		c.reach(r)
	}
	return pr.Sink(pr.P, r)
}

// reach notes that r's thread, which began r's region, reached r's end.
func (c *clampState) reach(r *Row) {
	t := int(r.Thread)
	if t >= maxThreadTimes || r.Dur == Unpaired {
		return
	}
	if t >= len(c.reached) {
		c.reached = append(c.reached, make([]int64, t+1-len(c.reached))...)
	}
	c.reached[t] = max(c.reached[t], r.Start+r.Dur)
}

// clampTo ends r, a row of a thread of region reg, which ended, no later
// than the region, and there when r never ended.
func clampTo(r *Row, reg *region) {
	if reg.thread == r.Thread || r.Start > reg.end {
		return
	}
	if r.Dur == Unpaired || r.Start+r.Dur > reg.end {
		r.Dur = reg.end - r.Start
	}
}

// hold keeps r until its region par ends; past MaxHeldRows the oldest row
// goes out as it is.
func (pr *Pairer) hold(par uint64, r *Row) error {
	c := &pr.omp.clamp
	c.held = append(c.held, heldRow{par, pendingSeg{*r, *r.OMP}})
	if len(c.held)-c.head > MaxHeldRows {
		return pr.sendHeld()
	}
	return nil
}

// sendHeld sends out the held row at the head, clamped when its region
// has ended.
func (pr *Pairer) sendHeld() error {
	c := &pr.omp.clamp
	c.out = c.held[c.head] // the head's slot may be reused below
	c.head++
	h := &c.out
	r := &h.row
	r.OMP = &h.omp
	if reg := c.region(h.par); reg.state == regionEnded {
		clampTo(r, &reg)
	}
	if c.head == len(c.held) {
		c.held, c.head = c.held[:0], 0
	} else if c.head >= 1024 && 2*c.head >= len(c.held) {
		n := copy(c.held, c.held[c.head:])
		c.held, c.head = c.held[:n], 0
	}
	return pr.Sink(pr.P, r)
}

// releaseHeld sends out the held rows from the head while their region
// has ended, or all of them with all set.
func (pr *Pairer) releaseHeld(all bool) error {
	c := &pr.omp.clamp
	for c.head < len(c.held) {
		if !all && c.region(c.held[c.head].par).state != regionEnded {
			return nil
		}
		if err := pr.sendHeld(); err != nil {
			return err
		}
	}
	return nil
}

// releaseAll sends out, at the end of the trace, the rows never ended
// that their region's end closes, then every row still held.
func (pr *Pairer) releaseAll() error {
	c := &pr.omp.clamp
	slices.SortStableFunc(c.closing, func(a, b pendingSeg) int { return cmp.Compare(b.row.Start, a.row.Start) })
	for i := range c.closing {
		r := &c.closing[i].row
		r.OMP = &c.closing[i].omp
		reg := c.region(r.OMP.Parallel)
		clampTo(r, &reg)
		if err := pr.Sink(pr.P, r); err != nil {
			return err
		}
	}
	c.closing = c.closing[:0]
	return pr.releaseHeld(true)
}
