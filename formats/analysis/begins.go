package analysis

import (
	"cmp"
	"slices"

	"github.com/libocca/occa-tools/formats/trace"
)

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
	if len(pr.open) > 0 { // mostly empty: a thread's begins wait in its slot
		if old, ok := pr.open[corr]; ok { // a begin whose end was lost
			delete(pr.open, corr)
			if err := pr.half(&old); err != nil {
				return err
			}
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
	if len(pr.lost) > 0 { // mostly none (sendLost)
		if err := pr.sendLost(); err != nil {
			return err
		}
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
// Its callers call it only when there are any: most ends and begins find
// none, and the check inline costs less than the call (sendLost does not
// inline).
func (pr *Pairer) sendLost() error {
	err := pr.halves(pr.lost)
	pr.lost = pr.lost[:0]
	return err
}

// spill sends out the begins in pr.open as halves, in time order, when
// there are more than MaxOpen: only a trace that lost ends by the million,
// or a hostile one, has so many, and memory stays bounded. An end that
// comes later for one of them is a half too.
func (pr *Pairer) spill() error {
	if len(pr.open) <= MaxOpen { // small enough to inline: mostly true
		return nil
	}
	return pr.spillNow()
}

func (pr *Pairer) spillNow() error {
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

// kernelName returns kernel id's name, from a cache of Dict.Kernel.
func (pr *Pairer) kernelName(id uint64) string {
	if id < uint64(len(pr.kernels)) && pr.kernels[id] != "" { // inlines: the launches' case
		return pr.kernels[id]
	}
	return pr.kernelNameNew(id)
}

func (pr *Pairer) kernelNameNew(id uint64) string {
	if id >= 1<<16 {
		return pr.P.Dict.Kernel(id).Name
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

// sortEvents puts the halves Flush sends out in time order, so that the
// output does not depend on map order.
func sortEvents(evs []trace.Event) {
	slices.SortStableFunc(evs, func(a, b trace.Event) int {
		if a.Time != b.Time {
			return cmp.Compare(a.Time, b.Time)
		}
		if a.Thread != b.Thread {
			return cmp.Compare(int64(a.Thread), int64(b.Thread))
		}
		return cmp.Compare(int64(a.Args[0]), int64(b.Args[0]))
	})
}
