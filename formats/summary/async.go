package summary

import (
	"sync"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// Add hands rows to a goroutine of the Collector's own in batches, so that
// the summing runs beside the decoding and pairing that produce the rows
// (unless the Collector is inline). Finish, Merge and Report wait for it.

const (
	batchRows = 4096
	// batches in flight, at most: enough that the reading side goes on
	// while the summing side merges a busy union's late intervals (a few
	// ms), and the other way round; with 4 each side waited for the other
	// a tenth of the time.
	batches = 32
)

type batch struct {
	p    *analysis.Process
	rows []ent
	full []analysis.Row // rows of kinds other than launches and copies
	omps []analysis.OMP // the OMP of each row of full that has one, in order
}

// ent is a batch entry: of a launch or a copy, only what the summing reads
// (72 bytes, not analysis.Row's 160); of another row, its index in full.
type ent struct {
	kind  trace.Kind
	full  int32 // 1 + index in batch.full; 0 for a launch or a copy
	start int64
	dur   int64
	dev   uint64
	id    uint64 // a launch's kernel; a copy's direction argument
	bytes uint64 // a copy's bytes; a launch's device start
	ddur  int64  // a launch's device duration
	name  string // a launch's kernel name
}

// set makes e from r.
func (e *ent) set(r *analysis.Row) {
	*e = ent{kind: r.Kind, start: r.Start, dur: r.Dur, dev: r.Device}
	switch r.Kind {
	case trace.RunBegin:
		e.id, e.bytes, e.ddur, e.name = r.Kernel, uint64(r.DevStart), r.DevDur, r.Name
	case trace.CopyBegin:
		e.id, e.bytes = r.Aux, r.Bytes
	}
}

// compact reports whether ent.set keeps all that the summing reads of r.
func compact(r *analysis.Row) bool { return r.Kind == trace.RunBegin || r.Kind == trace.CopyBegin }

type pipe struct {
	cur  *batch
	made int // batches made: only as many as the reading side gets ahead
	work chan *batch
	free chan *batch
	done chan struct{}
}

// Add takes one row; it has the analysis.Sink signature. A launch is summed
// whole when it comes with its device time: summing its host side at its
// end instead would give the rank's API busy union nearly sorted input,
// but cost a second batch entry per launch, which comes to more than the
// union saves.
func (c *Collector) Add(p *analysis.Process, r *analysis.Row) error {
	if c.inline {
		c.add(p, r)
		return nil
	}
	c.push(p, r)
	c.flush()
	return nil
}

func (c *Collector) push(p *analysis.Process, r *analysis.Row) {
	q := &c.pipe
	if q.cur != nil && q.cur.p != p {
		q.send()
	}
	if q.cur == nil {
		c.take(p)
	}
	b := q.cur
	b.rows = append(b.rows, ent{})
	e := &b.rows[len(b.rows)-1]
	if compact(r) {
		e.set(r)
		return
	}
	b.full = append(b.full, *r)
	if r.OMP != nil { // the row's OMP is the Pairer's: keep a copy
		b.omps = append(b.omps, *r.OMP)
	}
	e.kind, e.full = r.Kind, int32(len(b.full))
}

func (c *Collector) flush() {
	if q := &c.pipe; len(q.cur.rows) == batchRows {
		q.send()
	}
}

// take makes an empty current batch, starting the goroutine if it is not.
func (c *Collector) take(p *analysis.Process) {
	q := &c.pipe
	if q.work == nil {
		q.work, q.free, q.done = make(chan *batch, batches), make(chan *batch, batches), make(chan struct{})
		go c.worker(q.work, q.free, q.done)
	}
	select {
	case q.cur = <-q.free:
	default:
		if q.made < batches {
			q.made++
			q.cur = spareBatches.Get().(*batch)
		} else {
			q.cur = <-q.free
		}
	}
	q.cur.p, q.cur.rows, q.cur.full, q.cur.omps = p, q.cur.rows[:0], q.cur.full[:0], q.cur.omps[:0]
}

func (q *pipe) send() {
	q.work <- q.cur
	q.cur = nil
}

func (c *Collector) worker(work <-chan *batch, free chan<- *batch, done chan<- struct{}) {
	for b := range work {
		k := 0
		for i := range b.rows {
			if e := &b.rows[i]; e.full != 0 {
				r := &b.full[e.full-1]
				if r.OMP != nil {
					r.OMP = &b.omps[k]
					k++
				}
				c.add(b.p, r)
			} else {
				c.addEnt(b.p, e)
			}
		}
		clear(b.full) // let go of the names
		b.p = nil
		free <- b
	}
	close(done)
}

// sync waits until every row given to Add is summed, and stops the
// goroutine (a later Add starts another).
func (c *Collector) sync() {
	q := &c.pipe
	if q.work == nil {
		return
	}
	if q.cur != nil && len(q.cur.rows) > 0 {
		q.send()
	}
	close(q.work)
	<-q.done
	n := q.made // each is back on free but the current one, if not sent
	if q.cur != nil {
		spareBatches.Put(q.cur)
		n--
	}
	for range n {
		spareBatches.Put(<-q.free)
	}
	*q = pipe{}
}

// spareBatches keeps batches between collectors: a run of 10,000 small
// traces would otherwise allocate (and collect) a collector's batches, 10
// MiB, per trace.
var spareBatches = sync.Pool{New: func() any { return &batch{rows: make([]ent, 0, batchRows)} }}
