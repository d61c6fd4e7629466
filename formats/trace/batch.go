package trace

import (
	"errors"
	"fmt"
	"math"
)

// ErrBatchFull is returned by Batch.Add when the batch holds as much as one
// chunk may: write it and add the event again.
var ErrBatchFull = errors.New("trace: batch full: write it and start another")

// prefixRoom is the space kept in front of a batch's events for the chunk
// body prefix (three uvarints, FORMAT.md §5), so compression reads one slice.
const prefixRoom = 30

// Batch collects the events of one thread for one events chunk
// (FORMAT.md §5). It encodes as events are added, without allocating once its
// buffer has grown. A Batch is reused: writing it resets it, and it keeps the
// time of its last event so that the thread's next batch stays in order.
// A Batch must not be used by two goroutines at once.
type Batch struct {
	tab     *kindTab // the writer's kind table
	thread  uint32
	raw     []byte // prefixRoom bytes, then the encoded events
	n       int    // events in the batch
	base    int64  // time of the first event
	last    int64  // time of the last event added (or the floor for the next)
	corr    uint64 // previous correlation id in the batch
	clamped uint64
	prev    [maxEventKind + 1][MaxArgs]uint64 // previous arguments per kind (S flag)
	synced  uint64                            // AddRaw: bit k set when prev[k] is its RawState's too
	counts  [maxEventKind + 1]uint32
	chunk   []byte // the encoded chunk, valid when encoded
	encoded bool
	max     int // len(raw) at which the batch is full (SetMax)
	// rawRecords: a raw batch's records (SetRaw), compressed after the
	// chunk prefix in raw; nil for a batch of encoded events.
	rawRecords []byte
}

// NewBatch returns an empty batch for thread whose events may not be earlier
// than floor. Writer.Batch is the usual way to get one.
func NewBatch(thread uint32, floor int64) *Batch {
	b := &Batch{tab: compiledTab, thread: thread, raw: make([]byte, prefixRoom, 64<<10), max: maxBatchRaw}
	b.last = max(floor, 0)
	return b
}

// SetMax makes the batch full at n bytes of encoded events, between
// 4 KiB and the 8 MiB a chunk takes: a writer that keeps several batches
// in memory bounds them with it. It applies to what is added next.
func (b *Batch) SetMax(n int) {
	b.max = prefixRoom + min(max(n, 4<<10), maxBatchRaw-prefixRoom)
}

// Thread returns the batch's thread index.
func (b *Batch) Thread() uint32 { return b.thread }

// Len returns the number of events in the batch.
func (b *Batch) Len() int { return b.n }

// Size returns the encoded size of the batch's events before compression.
func (b *Batch) Size() int { return len(b.raw) - prefixRoom }

// Rebind empties the batch and gives it to thread, whose events may not be
// earlier than floor: a writer keeps a pool of batches instead of one per
// thread.
func (b *Batch) Rebind(thread uint32, floor int64) {
	b.Reset()
	b.thread = thread
	b.last = max(floor, 0)
}

// Last returns the time of the last event added (the floor when empty).
func (b *Batch) Last() int64 { return b.last }

// Reset empties the batch; the next event may not be earlier than the last
// one added.
func (b *Batch) Reset() {
	b.raw = b.raw[:prefixRoom]
	b.n = 0
	b.corr = 0
	b.clamped = 0
	b.prev = [maxEventKind + 1][MaxArgs]uint64{}
	b.synced = 0
	b.counts = [maxEventKind + 1]uint32{}
	b.encoded = false
	b.rawRecords = nil
}

// Add appends an event of kind k at time t (CLOCK_MONOTONIC ns) with the
// kind's arguments in kinds.go order. A time earlier than the previous
// event's is raised to it and counted in Stats.Clamped.
func (b *Batch) Add(k Kind, t int64, args ...uint64) error {
	if k > maxEventKind || !b.tab[k].valid {
		return fmt.Errorf("trace: Batch.Add: %v is not a timed event kind", k)
	}
	if len(args) != int(b.tab[k].n) {
		return fmt.Errorf("trace: Batch.Add: %v takes %d arguments, got %d", k, b.tab[k].n, len(args))
	}
	return b.add(k, t, args)
}

// AddEvent appends e; e.Thread is ignored (the batch has its thread), and so
// are the Args past the kind's.
func (b *Batch) AddEvent(e *Event) error {
	if e.Kind > maxEventKind || !b.tab[e.Kind].valid {
		return fmt.Errorf("trace: Batch.AddEvent: %v is not a timed event kind", e.Kind)
	}
	return b.add(e.Kind, e.Time, e.Args[:b.tab[e.Kind].n])
}

// add encodes one event (FORMAT.md §5); k is valid and args has its
// length: as a flat record, in ns already.
func (b *Batch) add(k Kind, t int64, args []uint64) error {
	var rec [flatHeader + 8*MaxArgs]byte
	_, err := b.AddFlat(appendFlatRecord(rec[:0], k, uint64(t), args), &nanosClock)
	return err
}

// nanosClock is the FlatClock of records stamped in ns.
var nanosClock = FlatClock{
	Fast: &Linear{Span: math.MaxUint64, Q: 1},
	Slow: func(ticks uint64) int64 { return int64(ticks) },
}

// Event head flags (FORMAT.md §5), in a batch and in a raw record (the
// runtime's OT_RAW_S and OT_RAW_C are generated from them).
const (
	kindMask = 0x3f
	HeadS    = 0x40 // other arguments same as the kind's previous event
	HeadC    = 0x80 // correlation id is the expected one
)

// body returns the chunk body: the prefix written just in front of the events.
func (b *Batch) body() []byte {
	var tmp [prefixRoom]byte
	p := putUvarint(tmp[:], 0, uint64(b.thread))
	p = putUvarint(tmp[:], p, uint64(b.base))
	p = putUvarint(tmp[:], p, uint64(b.n))
	start := prefixRoom - p
	copy(b.raw[start:], tmp[:p])
	return b.raw[start:]
}
