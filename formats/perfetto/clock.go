package perfetto

// Timestamps: each packet's timestamp is the distance from the previous
// one on its sequence, on a sequence-scoped incremental clock, so that a
// packet spends 2-4 bytes on it instead of 10. What this relies on, as read
// in Perfetto's sources (google/perfetto, Aug 2026):
//
//   - Clock ids 64 to 127 are the writer's own and mean something only on
//     the trusted_packet_sequence_id whose ClockSnapshot declared them
//     (protos/perfetto/trace/clock_snapshot.proto). A clock declared with
//     is_incremental holds a running value: a snapshot sets it to the
//     snapshot's timestamp for that clock, and every packet timestamped on
//     that clock adds its timestamp to it and is placed at the sum
//     (src/trace_processor/util/clock_synchronizer.{h,cc}: AddSnapshot,
//     ClockDomain::ToNs). Packets are read in file order for this, before
//     trace_processor sorts them by time (importers/proto/
//     proto_trace_reader.cc: ParsePacket, TimestampTokenizeAndPushToSorter).
//   - A snapshot that also holds BOOTTIME (the trace's clock when no
//     snapshot names another: ParseClockSnapshot) lets the sequence clock be
//     converted to it: we give both the value 0, so that the running value
//     is the unix ns we always wrote. A snapshot must not take a clock back
//     in time (AddSnapshot refuses it for the trace's clock and stops
//     converting from any other), and for BOOTTIME that holds across every
//     sequence of the file (traces joined by convert, each its own
//     sequence): 0 in all of them satisfies it, where "the time of the
//     first event" would not. The first timestamp after a snapshot is thus
//     a whole unix time (9 bytes).
//   - TracePacketDefaults.timestamp_clock_id (trace_packet_defaults.proto)
//     is the clock of every later packet on the sequence that names none; a
//     packet may still name another. A packet earlier than the running
//     value (a row that came late, a device interval that began before its
//     launch) is written with its unix ns and timestamp_clock_id BOOTTIME,
//     which leaves the running value alone, as Perfetto's SDK does
//     (src/tracing/internal/track_event_internal.cc: NewTracePacket, whose
//     ResetIncrementalState also puts the clear, the defaults and the
//     snapshot in one packet, as startSequence does). Defaults are dropped
//     when incremental state is cleared (trace_packet.proto,
//     packet_sequence_state_builder.h), so each clear gives them again;
//     defaults sent later replace the old ones whole and keep the interned
//     data. TrackEventDefaults.track_uuid (track_event.proto) is the track
//     of every TrackEvent that names none (track_event_tokenizer.cc,
//     track_event_event_importer.h).
//
// So that timestamps mostly grow, packets are written in time order, not
// slice by slice: a slice's begin is written when its row is released
// (rows come in start order), and what lies later (its end, a device
// interval that starts later, a counter or instant after the row's start)
// waits until the rows reach its time: in the row's own list when it comes
// before the next row (settle), else in a queue. At equal times ends come
// first, the deepest first, so that trace_processor (which sorts by time,
// ties in file order, and closes the innermost open slice of the track)
// closes each slice where it was meant to and gives it its flows.

import "math"

// Clocks.
const (
	// clockIncremental is the sequence's incremental clock, in ns.
	clockIncremental = 64
)

// pending is a packet written when the rows reach ts: most are slice ends,
// which it holds whole (32 bytes, moved about by the queue); the rest keep
// their other fields in w.dueX.
type pending struct {
	ts int64
	// ord orders packets of equal ts: ends first, the deepest first (so
	// that each closes its own slice), then in push order; kind in the low
	// bits. Bit 63: not an end; bits 54-62: for an end maxDepth - depth;
	// bits 3-53: push count; bits 0-2: kind.
	ord   uint64
	track uint64
	x     uint64 // pEnd: the terminating flow; else an index in w.dueX
}

// dueExtra is the rest of a pending packet other than an end.
type dueExtra struct {
	name  uint64 // pSlice, pInstant: the name's iid
	flow  uint64 // pSlice: its end's terminating flow
	val   int64  // pSlice: duration; pCounter: value
	depth int    // pSlice: its lane depth
	flows []uint64
}

const (
	pEnd = iota
	pEndFlows
	pSlice
	pInstant
	pCounter
)

func (a *pending) less(b *pending) bool {
	return a.ts < b.ts || a.ts == b.ts && a.ord < b.ord
}

// The packets due later are kept in order in w.due[w.dueHead:] while they
// come nearly in order (each goes in at most dueShift items from the end:
// most are ends, pushed soon after their begins), else in the heap
// w.dueHeap; the next one is the earlier of the two fronts.
const dueShift = 16

// ord returns the order key of a packet pushed now (pending.ord); depth
// is an end's depth on its lane.
func (w *Writer) ord(kind uint8, depth int) uint64 {
	w.dueN++
	ord := w.dueN<<3 | uint64(kind)
	if kind > pEndFlows {
		return ord | 1<<63
	}
	return ord | uint64(maxDepth-min(depth, maxDepth-1))<<54
}

// push adds a packet other than a plain end to those due later.
func (w *Writer) push(kind uint8, depth int, ts int64, track uint64, x dueExtra) {
	x.depth = depth
	var i int
	if n := len(w.dueXFree); n > 0 {
		i = w.dueXFree[n-1]
		w.dueXFree = w.dueXFree[:n-1]
		w.dueX[i] = x
	} else {
		i = len(w.dueX)
		w.dueX = append(w.dueX, x)
	}
	w.pushItem(pending{ts: ts, ord: w.ord(kind, depth), track: track, x: uint64(i)})
}

// pushEnd adds a slice end to those due later.
func (w *Writer) pushEnd(depth int, ts int64, track, term uint64) {
	w.dueN++
	it := pending{ts: ts, ord: w.dueN<<3 | pEnd | uint64(maxDepth-min(depth, maxDepth-1))<<54, track: track, x: term}
	if n := len(w.due); n == w.dueHead || w.due[n-1].less(&it) {
		w.due = append(w.due, it) // in order, nothing to move: most
		return
	}
	w.pushItem(it)
}

func (w *Writer) pushItem(it pending) {
	d := w.due
	if n := len(d); n == w.dueHead || d[n-1].less(&it) { // in order: most
		w.due = append(d, it)
		return
	}
	i := len(d)
	for i > w.dueHead && i > len(d)-dueShift && it.less(&d[i-1]) {
		i--
	}
	if i == len(d) {
		w.due = append(d, it)
		return
	}
	if i > w.dueHead && it.less(&d[i-1]) { // more than dueShift to pass
		w.heapPush(it)
		return
	}
	d = append(d, pending{})
	copy(d[i+1:], d[i:])
	d[i] = it
	w.due = d
}

// heapPush adds it to the heap (sifting a hole up).
func (w *Writer) heapPush(it pending) {
	h := append(w.dueHeap, pending{})
	i := len(h) - 1
	for i > 0 {
		j := (i - 1) / 2
		if h[j].less(&it) {
			break
		}
		h[i] = h[j]
		i = j
	}
	h[i] = it
	w.dueHeap = h
}

// next returns the packet due first, nil when none.
func (w *Writer) next() *pending {
	var a *pending
	if w.dueHead < len(w.due) {
		a = &w.due[w.dueHead]
	}
	if len(w.dueHeap) > 0 && (a == nil || w.dueHeap[0].less(a)) {
		return &w.dueHeap[0]
	}
	return a
}

// pop removes the packet due first (next's) into *top.
func (w *Writer) pop(top *pending) {
	if w.dueHead < len(w.due) && (len(w.dueHeap) == 0 || !w.dueHeap[0].less(&w.due[w.dueHead])) {
		*top = w.due[w.dueHead]
		if w.dueHead++; w.dueHead == len(w.due) {
			w.due, w.dueHead = w.due[:0], 0
		} else if w.dueHead >= 256 && w.dueHead >= len(w.due)/2 {
			// Those popped are gone: move the rest to the front (a packet
			// that waits long, the end of a region around everything,
			// keeps the queue from ever emptying).
			w.due = w.due[:copy(w.due, w.due[w.dueHead:])]
			w.dueHead = 0
		}
		return
	}
	h := w.dueHeap
	*top = h[0]
	n := len(h) - 1
	last := &h[n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && h[r].less(&h[l]) {
			l = r
		}
		if !h[l].less(last) {
			break
		}
		h[i] = h[l]
		i = l
	}
	h[i] = *last
	w.dueHeap = h[:n]
}

// settle writes the ends of the row just written that come before the
// next row (w.horizon) and before everything due: most ends, without the
// queue.
func (w *Writer) settle() {
	e := w.rowEnds
	if len(e) == 0 {
		return
	}
	w.rowEnds = e[:0]
	for i := 1; i < len(e); i++ { // a few
		for j := i; j > 0 && e[j].less(&e[j-1]); j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
	n := w.next()
	for i := range e {
		if n != nil && n.less(&e[i]) { // the queue has something earlier
			for ; i < len(e); i++ {
				w.pushItem(e[i])
			}
			return
		}
		w.endPacket(e[i].ts, e[i].track, e[i].x)
	}
}

// advance writes what is due up to t, the start of the row about to be
// written.
func (w *Writer) advance(t int64) {
	if t > w.now {
		w.now = t
	}
	if (w.dueHead == len(w.due) || w.due[w.dueHead].ts > t) && (len(w.dueHeap) == 0 || w.dueHeap[0].ts > t) {
		return
	}
	w.writeDue(t)
}

// writeDue writes what is due up to t.
func (w *Writer) writeDue(t int64) {
	n := w.next()
	// What is due now is not the row's: it goes through the queue.
	hz := w.horizon
	w.horizon = math.MinInt64
	var p pending
	for ; n != nil && n.ts <= t && w.err == nil; n = w.next() {
		w.pop(&p)
		w.writePending(&p)
	}
	w.horizon = hz
}

// drain writes everything due (at the end, before a split).
func (w *Writer) drain() {
	hz := w.horizon
	w.horizon = math.MinInt64
	defer func() { w.horizon = hz }()
	var p pending
	for w.next() != nil && w.err == nil {
		w.pop(&p)
		w.writePending(&p)
	}
}

func (w *Writer) writePending(p *pending) {
	if p.ord&7 == pEnd {
		w.endPacket(p.ts, p.track, p.x)
		return
	}
	x := w.dueX[p.x]
	w.dueX[p.x] = dueExtra{}
	w.dueXFree = append(w.dueXFree, int(p.x))
	switch p.ord & 7 {
	case pEndFlows:
		pos := w.begin(p.ts)
		t := w.teStart(typeSliceEnd, p.track)
		for _, f := range x.flows {
			w.fixed64(fTEFlowIDs, f)
		}
		w.teEnd(t)
		w.end(pos)
	case pSlice:
		w.sliceBegin(p.ts, p.track, x.name, 0, nil, "")
		w.sliceEnd(p.ts+x.val, x.depth, p.track, x.flow)
	case pInstant:
		w.instantNow(p.ts, typeInstant, p.track, x.name, 0)
	case pCounter:
		w.instantNow(p.ts, typeCounter, p.track, 0, x.val)
	}
}

// endFlows ends the slice at depth on track at ts with flows leaving it.
func (w *Writer) endFlows(ts int64, depth int, track uint64, flows []uint64) {
	if len(flows) == 0 {
		w.sliceEnd(ts, depth, track, 0)
		return
	}
	w.push(pEndFlows, depth, ts, track, dueExtra{flows: flows})
}

// startSequence writes the packet that begins the sequence (and each part
// of a split trace): it clears incremental state, gives the defaults and
// declares the incremental clock at 0 (with BOOTTIME at 0).
func (w *Writer) startSequence() {
	pkt := enc(nil).uint(fPktSeqID, uint64(w.seq)).uint(fPktSeqFlags, seqIncrementalClr).uint(fPktFirstOnSeq, 1)
	pkt = pkt.bytes(fPktDefaults, w.defaults())
	w.packet(pkt.bytes(fPktClockSnapshot, clockSnapshot()))
	w.lastTS, w.newDefaults = 0, false
}

// rewind declares the incremental clock at 0 again, so that packets may
// follow that lie before the last one.
func (w *Writer) rewind() {
	w.packet(enc(nil).uint(fPktSeqID, uint64(w.seq)).bytes(fPktClockSnapshot, clockSnapshot()))
	w.lastTS = 0
	w.now = math.MinInt64
}

func clockSnapshot() enc {
	return enc(nil).bytes(fCSClocks, enc(nil).uint(fClkID, clockBoottime).uint(fClkTimestamp, 0)).
		bytes(fCSClocks, enc(nil).uint(fClkID, clockIncremental).uint(fClkTimestamp, 0).uint(fClkIncremental, 1))
}

// defaults is the sequence's TracePacketDefaults.
func (w *Writer) defaults() enc {
	d := enc(nil).uint(fDefClock, clockIncremental)
	if w.defTrack != 0 {
		d = d.bytes(fDefTrackEvent, enc(nil).uint(fTEDTrack, w.defTrack))
	}
	return d
}

// Default track: every trackWindow track events, the track used most in
// them becomes the default when it beat the current one by trackMargin
// events (new defaults cost a few bytes; each event on the default track
// saves its track_uuid, 1-4 bytes).
const (
	trackWindow = 4096
	trackMargin = 64
	trackSlots  = 1024
)

// countTrack counts an event on track (in the slot of its uuid's low bits,
// which the writer's first tracks have distinct) and picks the default
// track at the end of a window.
func (w *Writer) countTrack(track uint64) {
	c := &w.trackUse[track&(trackSlots-1)]
	c.n++
	c.uuid = track
	if w.trackEvents++; w.trackEvents >= trackWindow {
		w.pickDefault()
	}
}

// trackCount is a slot of Writer.trackUse.
type trackCount struct {
	uuid uint64
	n    uint32
}

func (w *Writer) pickDefault() {
	best := 0
	for i := range w.trackUse {
		if w.trackUse[i].n > w.trackUse[best].n {
			best = i
		}
	}
	cur := uint32(0)
	if c := w.trackUse[w.defTrack&(trackSlots-1)]; c.uuid == w.defTrack {
		cur = c.n
	}
	if b := w.trackUse[best]; b.uuid != 0 && b.uuid != w.defTrack && b.n > cur+trackMargin {
		w.defTrack, w.newDefaults = b.uuid, true
	}
	for i := range w.trackUse {
		w.trackUse[i].n = 0
	}
	w.trackEvents = 0
}
