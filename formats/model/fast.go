package model

import "github.com/libocca/occa-tools/formats/trace"

// slot holds a thread's latest begin: most ends follow their begin on the
// same thread, so they pair without a map. A thread one of whose begins
// was looked for by an end on another thread is shared: its begins go to
// the map from then on, so that an end that misses its own thread's slot
// scans the slots at most once per thread (Pairer.inSlots) instead of at
// every such end.
type slot struct {
	e      trace.Event
	used   bool
	shared bool
}

const maxSlots = 1 << 12 // threads beyond this use the map only

// begin records begin e until its end comes.
func (pr *Pairer) begin(e *trace.Event) error {
	corr := e.Args[0]
	if old, ok := pr.open[corr]; ok { // a begin whose end was lost
		delete(pr.open, corr)
		if err := pr.half(&old); err != nil {
			return err
		}
	}
	if e.Thread >= maxSlots {
		pr.open[corr] = *e
		return pr.spill()
	}
	if int(e.Thread) >= len(pr.slots) {
		pr.slots = append(pr.slots, make([]slot, int(e.Thread)+1-len(pr.slots))...)
	}
	sl := &pr.slots[e.Thread]
	if sl.shared {
		pr.open[corr] = *e
		return pr.spill()
	}
	if sl.used {
		if sl.e.Args[0] == corr { // the same corr twice on a thread: the first lost its end
			old := sl.e
			sl.used = false
			pr.inSlots--
			if err := pr.half(&old); err != nil {
				return err
			}
		} else {
			pr.park(&sl.e)
		}
	}
	if !sl.used {
		pr.inSlots++
	}
	sl.e, sl.used = *e, true
	if err := pr.sendLost(); err != nil {
		return err
	}
	return pr.spill()
}

// park moves begin b from its slot to the map. A begin of the same corr
// there lost its end (one corr begun twice): the earlier of the two goes
// to pr.lost.
func (pr *Pairer) park(b *trace.Event) {
	if old, ok := pr.open[b.Args[0]]; ok {
		if old.Time > b.Time {
			pr.lost = append(pr.lost, *b)
			return
		}
		pr.lost = append(pr.lost, old)
	}
	pr.open[b.Args[0]] = *b
}

// sendLost sends out the begins park found without their end, as halves.
func (pr *Pairer) sendLost() error {
	if len(pr.lost) == 0 {
		return nil
	}
	err := pr.halves(pr.lost)
	pr.lost = pr.lost[:0]
	return err
}

// spill sends out the begins in pr.open as halves, in time order, when
// there are more than MaxOpen: only a trace that lost ends by the million,
// or a hostile one, has so many, and memory stays bounded. An end that
// comes later for one of them is a half too.
func (pr *Pairer) spill() error {
	if len(pr.open) <= MaxOpen {
		return nil
	}
	rest := make([]trace.Event, 0, len(pr.open))
	for _, b := range pr.open {
		rest = append(rest, b)
	}
	clear(pr.open)
	return pr.halves(rest)
}

// halves sends out evs, begins or region pushes whose other half is not
// in the trace, as halves in time order.
func (pr *Pairer) halves(evs []trace.Event) error {
	sortEvents(evs)
	for i := range evs {
		if err := pr.half(&evs[i]); err != nil {
			return err
		}
	}
	return nil
}

// MaxOpen bounds the begins a Pairer holds waiting for their end, and
// MaxDepth each thread's open user regions, OpenMP implicit tasks and
// waits (stacks searched from the top: unbounded, they would cost time
// too). Real traces stay far below.
const (
	MaxOpen  = 1 << 18
	MaxDepth = 1 << 10
)

// takeBegin finds and removes the begin of kind k with correlation id corr,
// looking first at the ending thread's slot, then the map, then every slot.
// It returns nil when there is none, else the begin where it was held,
// valid until the next begin or takeBegin. Begins it finds to have lost
// their end it leaves in pr.lost, for the caller to send out (sendLost).
func (pr *Pairer) takeBegin(corr uint64, thread uint32, k trace.Kind) *trace.Event {
	own := 0
	if int(thread) < len(pr.slots) {
		sl := &pr.slots[thread]
		if sl.used && sl.e.Args[0] == corr && sl.e.Kind == k {
			sl.used = false
			pr.inSlots--
			return &sl.e
		}
		if sl.used {
			own = 1
		}
	}
	if b, ok := pr.open[corr]; ok && b.Kind == k {
		delete(pr.open, corr)
		pr.taken = b
		return &pr.taken
	}
	if pr.inSlots == own {
		return nil
	}
	// Other threads' slots: each used one becomes shared, its begin moved
	// to the map, the one looked for taken.
	var found *trace.Event
	for i := range pr.slots {
		sl := &pr.slots[i]
		if !sl.used || i == int(thread) {
			continue
		}
		sl.used, sl.shared = false, true
		pr.inSlots--
		if found == nil && sl.e.Args[0] == corr && sl.e.Kind == k {
			found = &sl.e
		} else {
			pr.park(&sl.e)
		}
	}
	return found
}

func (pr *Pairer) kernelName(id uint64) string {
	if id >= 1<<16 {
		return pr.P.Dict.Kernel(id).Name
	}
	if int(id) < len(pr.kernels) && pr.kernels[id] != "" {
		return pr.kernels[id]
	}
	info := pr.P.Dict.Kernel(id)
	if !info.Known {
		return info.Name // its def may come later: look again next time
	}
	if int(id) >= len(pr.kernels) {
		pr.kernels = append(pr.kernels, make([]string, int(id)+1-len(pr.kernels))...)
	}
	pr.kernels[id] = info.Name
	return info.Name
}

// The waiting launches' correlation ids, in ring order, mostly come as
// long runs of ascending ids: each thread's launches in one batch of the
// trace. waitIndex finds a launch by binary search in the run whose range
// holds its id, which costs nothing per launch but a compare; only when the
// ring holds more than maxRuns runs does it fall back to corrIndex (put and
// del per launch, each a cache miss in a table larger than the cache), and
// stays there.
const maxRuns = 64

// corrRun is a run of waiting launches with strictly ascending correlation
// ids: n of them from ring index pos on, ids first..last.
type corrRun struct {
	pos, n      int
	first, last uint64
}

// index records that the launch at ring index i, the newest, has id corr.
func (pr *Pairer) index(corr uint64, i int) {
	if pr.hashed {
		pr.waiting.put(corr, int32(i)) // a reused corr: the newer launch takes the claim
		return
	}
	if n := len(pr.runs); n > 0 && pr.runs[n-1].last < corr {
		pr.runs[n-1].n++
		pr.runs[n-1].last = corr
		return
	}
	if len(pr.runs) == maxRuns {
		pr.hashed, pr.runs = true, nil
		for k := range pr.n { // oldest first, so that a reused corr maps to the newest
			j := (pr.head + k) % len(pr.ring)
			pr.waiting.put(pr.ring[j].Corr, int32(j))
		}
		return
	}
	pr.runs = append(pr.runs, corrRun{pos: i, n: 1, first: corr, last: corr})
}

// unindex forgets the oldest waiting launch, at ring index pr.head.
func (pr *Pairer) unindex() {
	if pr.hashed {
		pr.waiting.del(pr.ring[pr.head].Corr, int32(pr.head))
		return
	}
	r := &pr.runs[0]
	if r.n--; r.n == 0 {
		pr.runs = pr.runs[1:]
		return
	}
	if r.pos++; r.pos == len(pr.ring) {
		r.pos = 0
	}
	r.first = pr.ring[r.pos].Corr
}

// lookup returns the ring index of the newest waiting launch with id corr.
func (pr *Pairer) lookup(corr uint64) (int, bool) {
	if pr.hashed {
		i, ok := pr.waiting.get(corr)
		return int(i), ok
	}
	for k := len(pr.runs) - 1; k >= 0; k-- {
		r := &pr.runs[k]
		if corr < r.first || corr > r.last {
			continue
		}
		lo, hi := 0, r.n // ids of the run's launches lo.. are >= corr
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			j := r.pos + m
			if j >= len(pr.ring) {
				j -= len(pr.ring)
			}
			if pr.ring[j].Corr < corr {
				lo = m + 1
			} else {
				hi = m
			}
		}
		j := r.pos + lo
		if j >= len(pr.ring) {
			j -= len(pr.ring)
		}
		if lo < r.n && pr.ring[j].Corr == corr {
			return j, true
		}
	}
	return 0, false
}

// corrIndex maps correlation ids to ring indexes: open addressing with
// linear probing and backward-shift deletion, cheaper than a Go map here.
// A slot's key, value and use share one 16-byte entry, so that a probe
// touches one cache line.
type corrIndex struct {
	e []corrEntry
	n int
}

type corrEntry struct {
	key  uint64
	val  int32
	used bool
}

func hash64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return k
}

func (c *corrIndex) get(k uint64) (int32, bool) {
	if c.n == 0 {
		return 0, false
	}
	m := uint64(len(c.e) - 1)
	for i := hash64(k) & m; c.e[i].used; i = (i + 1) & m {
		if c.e[i].key == k {
			return c.e[i].val, true
		}
	}
	return 0, false
}

func (c *corrIndex) put(k uint64, v int32) {
	if 2*(c.n+1) > len(c.e) {
		c.grow()
	}
	m := uint64(len(c.e) - 1)
	i := hash64(k) & m
	for ; c.e[i].used; i = (i + 1) & m {
		if c.e[i].key == k {
			c.e[i].val = v
			return
		}
	}
	c.e[i] = corrEntry{k, v, true}
	c.n++
}

func (c *corrIndex) grow() {
	old := c.e
	c.e = make([]corrEntry, max(64, 2*len(old)))
	c.n = 0
	for _, e := range old {
		if e.used {
			c.put(e.key, e.val)
		}
	}
}

// del removes k when it maps to v.
func (c *corrIndex) del(k uint64, v int32) {
	if c.n == 0 {
		return
	}
	m := uint64(len(c.e) - 1)
	i := hash64(k) & m
	for ; c.e[i].used; i = (i + 1) & m {
		if c.e[i].key == k {
			break
		}
	}
	if !c.e[i].used || c.e[i].val != v {
		return
	}
	c.e[i].used = false
	c.n--
	// Shift back the entries of the probe run after i.
	for j := (i + 1) & m; c.e[j].used; j = (j + 1) & m {
		h := hash64(c.e[j].key) & m
		// Move j to i when its home h is not within (i, j] cyclically.
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			c.e[i] = c.e[j]
			c.e[j].used = false
			i = j
		}
	}
}
