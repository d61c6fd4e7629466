package model

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
// A worker's row may be read before its region's end, even before its
// begin (the worker's batch comes first in the file): it waits until the
// parallel row goes out, at most MaxHeldRows of them (then the oldest go
// out as they are), and so comes out after it. The
// regions' ends and the implicit tasks' regions are kept for the last
// keepRegions to 2*keepRegions of each.

// MaxHeldRows bounds the OpenMP rows of workers held until their parallel
// region's end is read.
const MaxHeldRows = 1 << 16

const keepRegions = 1 << 16

type parEnd struct {
	end    int64
	thread uint32
}

// recent is a map that keeps between keepRegions and 2*keepRegions of the
// most recent entries.
type recent[V any] struct {
	cur, old map[uint64]V
}

func (g *recent[V]) put(k uint64, v V) {
	if g.cur == nil {
		g.cur = map[uint64]V{}
	}
	if len(g.cur) >= keepRegions {
		g.old, g.cur = g.cur, make(map[uint64]V, keepRegions)
	}
	g.cur[k] = v
}

func (g *recent[V]) get(k uint64) (V, bool) {
	if v, ok := g.cur[k]; ok {
		return v, true
	}
	v, ok := g.old[k]
	return v, ok
}

func (g *recent[V]) del(k uint64) {
	delete(g.cur, k)
	delete(g.old, k)
}

// clampState is the Pairer's part of ompState for late ends.
type clampState struct {
	ended   recent[parEnd] // parallel region -> its end and the thread that began it
	began   recent[uint32] // parallel regions open -> the thread that began it
	regions recent[uint64] // implicit task -> its parallel region
	held    map[uint64][]pendingSeg
	order   []uint64 // regions in the order their first row was held
	nheld   int
	// At the end of the trace, the rows never ended that a region's end
	// closes: they go out after the other halves, the innermost (latest
	// begun) first, as rows that end together do (a wait before its
	// implicit task, whose idle time the summary takes from its waits).
	flushing bool
	closing  []pendingSeg
}

// clamped reports whether rows of kind k are clamped to their region.
func clamped(k trace.Kind) bool {
	return k == trace.OmpImplicitTaskBegin || k == trace.OmpWorkBegin || k == trace.OmpSyncBegin || k == trace.OmpSyncWaitBegin
}

// ompEmit sends out an OpenMP row: a parallel region's row, then the rows
// of its workers held for its end; a worker's row clamped to its region's
// end, or held until that is read.
func (pr *Pairer) ompEmit(r *Row) error {
	o := pr.ompState()
	c := &o.clamp
	m := r.OMP
	if o.graph == nil {
		o.graph = NewGraph()
	}
	o.graph.Add(r)
	switch {
	case r.Kind == trace.OmpParallelBegin:
		c.began.del(m.ID)
		if r.Dur != Unpaired {
			c.ended.put(m.ID, parEnd{end: r.Start + r.Dur, thread: r.Thread})
		}
		if err := pr.Sink(pr.P, r); err != nil {
			return err
		}
		return pr.releaseHeld(m.ID)
	case !clamped(r.Kind):
		return pr.Sink(pr.P, r)
	}
	par := m.Parallel
	if r.Kind == trace.OmpImplicitTaskBegin && par != 0 {
		c.regions.put(m.Task, par)
	} else if par == 0 {
		par, _ = c.regions.get(m.Task)
	}
	if pe, ok := c.ended.get(par); ok {
		if c.flushing && r.Dur == Unpaired && pe.thread != r.Thread && r.Start <= pe.end {
			c.closing = append(c.closing, pendingSeg{*r, *r.OMP})
			return nil
		}
		clampTo(r, pe)
	} else if t, open := c.began.get(par); par != 0 && (!open || t != r.Thread) {
		// A worker's row, or one whose region's begin is not read yet.
		return pr.hold(par, r)
	}
	return pr.Sink(pr.P, r)
}

// clampTo ends r, a row of a thread of the region that ended as pe says,
// no later than the region, and there when r never ended.
func clampTo(r *Row, pe parEnd) {
	if pe.thread == r.Thread || r.Start > pe.end {
		return
	}
	if r.Dur == Unpaired || r.Start+r.Dur > pe.end {
		r.Dur = pe.end - r.Start
	}
}

// hold keeps r until its region par ends.
func (pr *Pairer) hold(par uint64, r *Row) error {
	c := &pr.omp.clamp
	if c.held == nil {
		c.held = map[uint64][]pendingSeg{}
	}
	if _, ok := c.held[par]; !ok {
		c.order = append(c.order, par)
	}
	c.held[par] = append(c.held[par], pendingSeg{*r, *r.OMP})
	if c.nheld++; c.nheld > MaxHeldRows {
		return pr.releaseOldest()
	}
	return nil
}

// releaseHeld sends out the rows held for region par, clamped to its end
// when it has one.
func (pr *Pairer) releaseHeld(par uint64) error {
	c := &pr.omp.clamp
	rows, ok := c.held[par]
	if !ok {
		return nil
	}
	delete(c.held, par)
	c.nheld -= len(rows)
	pe, ended := c.ended.get(par)
	for i := range rows {
		r := &rows[i].row
		r.OMP = &rows[i].omp
		if ended {
			clampTo(r, pe)
		}
		if err := pr.Sink(pr.P, r); err != nil {
			return err
		}
	}
	return nil
}

// releaseOldest sends out the rows of the regions held longest, as they
// are, until no more than half of MaxHeldRows are held.
func (pr *Pairer) releaseOldest() error {
	c := &pr.omp.clamp
	for len(c.order) > 0 && c.nheld > MaxHeldRows/2 {
		par := c.order[0]
		c.order = c.order[1:]
		if err := pr.releaseHeld(par); err != nil {
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
		par := r.OMP.Parallel
		if par == 0 {
			par, _ = c.regions.get(r.OMP.Task)
		}
		pe, _ := c.ended.get(par)
		clampTo(r, pe)
		if err := pr.Sink(pr.P, r); err != nil {
			return err
		}
	}
	c.closing = c.closing[:0]
	for _, par := range c.order {
		if err := pr.releaseHeld(par); err != nil {
			return err
		}
	}
	c.order = c.order[:0]
	return nil
}
