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

// Add takes one row; it has the model.Sink signature. On the first row of
// a process it sets the process's launch hook (model.Process.OnLaunchEnd),
// so that a launch's host-side figures are summed when it ends and its
// device side when its device time comes: the host busy-time union then
// gets its intervals nearly in order.
func (c *Collector) Add(p *model.Process, r *model.Row) error {
	if p != c.addP {
		c.hook(p)
	}
	c.push(p, r)
	if r.Early && !c.addOwn {
		// Another consumer's hook took the host side: sum the whole row.
		c.pipe.last().Early = false
	}
	c.flush()
	return nil
}

// ended is the launch hook: it sums the host side of a launch.
func (c *Collector) ended(p *model.Process, r *model.Row) error {
	c.push(p, r)
	c.pipe.last().DevDur = hostOnly
	c.flush()
	return nil
}

// hostOnly is DevDur of a batch row that carries only a launch's host side.
const hostOnly = -2

func (c *Collector) hook(p *model.Process) {
	own, ok := c.hooks[p]
	if !ok {
		if c.hooks == nil {
			c.hooks = map[*model.Process]bool{}
		}
		own = p.OnLaunchEnd(c.ended)
		c.hooks[p] = own
	}
	c.addP, c.addOwn = p, own
}

func (c *Collector) push(p *model.Process, r *model.Row) {
	q := &c.pipe
	if q.cur != nil && q.cur.p != p {
		q.send()
	}
	if q.cur == nil {
		c.take(p)
	}
	q.cur.rows = append(q.cur.rows, *r)
}

func (c *Collector) flush() {
	if q := &c.pipe; len(q.cur.rows) == batchRows {
		q.send()
	}
}

func (q *pipe) last() *model.Row { return &q.cur.rows[len(q.cur.rows)-1] }

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
