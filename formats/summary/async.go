package summary

import "github.com/libocca/occa-tools/formats/model"

// Add hands rows to a goroutine of the Collector's own in batches, so that
// the summing runs beside the decoding and pairing that produce the rows.
// Finish, Merge and Report wait for it.

const (
	batchRows = 4096
	batches   = 4 // in flight, at most
)

type batch struct {
	p    *model.Process
	rows []model.Row
}

type pipe struct {
	cur  *batch
	work chan *batch
	free chan *batch
	done chan struct{}
}

// Add takes one row; it has the model.Sink signature.
func (c *Collector) Add(p *model.Process, r *model.Row) error {
	q := &c.pipe
	if q.cur != nil && q.cur.p != p {
		q.send()
	}
	if q.cur == nil {
		c.take(p)
	}
	q.cur.rows = append(q.cur.rows, *r)
	if len(q.cur.rows) == batchRows {
		q.send()
	}
	return nil
}

// take makes an empty current batch, starting the goroutine if it is not.
func (c *Collector) take(p *model.Process) {
	q := &c.pipe
	if q.work == nil {
		q.work, q.free, q.done = make(chan *batch, batches), make(chan *batch, batches), make(chan struct{})
		for range batches {
			q.free <- &batch{rows: make([]model.Row, 0, batchRows)}
		}
		go c.worker(q.work, q.free, q.done)
	}
	q.cur = <-q.free
	q.cur.p, q.cur.rows = p, q.cur.rows[:0]
}

func (q *pipe) send() {
	q.work <- q.cur
	q.cur = nil
}

func (c *Collector) worker(work <-chan *batch, free chan<- *batch, done chan<- struct{}) {
	for b := range work {
		for i := range b.rows {
			c.add(b.p, &b.rows[i])
		}
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
	*q = pipe{}
}
