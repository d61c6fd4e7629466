package perfetto

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"testing"
)

// A decoded trace: enough of perfetto_trace.proto to check our output, read
// as trace_processor reads it (src/trace_processor/importers/proto/
// proto_trace_reader.cc, packet_sequence_state_builder.h,
// track_event_tokenizer.cc, util/clock_synchronizer.{h,cc}):
//
//   - per trusted_packet_sequence_id, in file order: a packet flagged
//     SEQ_INCREMENTAL_STATE_CLEARED drops the sequence's interned data and
//     defaults; then, in this order, the packet's trace_packet_defaults
//     replace the defaults, its interned_data is added, and a clock_snapshot
//     is taken (and the packet ends there: it holds no event);
//   - a packet flagged SEQ_NEEDS_INCREMENTAL_STATE on a sequence that was
//     never cleared would be skipped: that fails the decode;
//   - a timestamp is in the packet's timestamp_clock_id, else the
//     sequence defaults', else BOOTTIME (the trace's clock). Clocks 64-127
//     belong to the sequence; a snapshot gives such a clock its offset to
//     BOOTTIME and, for an incremental clock, sets its running value to the
//     snapshot's; each later timestamp on an incremental clock is added to
//     the running value (which is then the timestamp), in file order;
//   - snapshots of one clock must not go back in time (BOOTTIME across all
//     sequences, as the trace's clock; a sequence clock within its
//     sequence): trace_processor drops such a snapshot, or stops converting
//     from that clock;
//   - an event's track is its track_uuid, else the defaults' track_uuid;
//   - events are then put in timestamp order, ties in file order, and a
//     slice end closes the innermost open slice of its track.
type decoded struct {
	tracks map[uint64]string // uuid -> name (thread name for a thread track)
	parent map[uint64]uint64
	events []event
	// absolute counts the packets whose timestamp is not on the sequence's
	// default clock.
	absolute int
	// snapshots counts the clock snapshots, clears the packets that clear
	// incremental state.
	snapshots, clears int
}

type event struct {
	ts          int64
	seq         uint32
	typ, track  uint64
	name        string
	flows, term []uint64
	annots      []string
	counter     int64
}

type field struct {
	num  int
	wire int
	v    uint64
	b    []byte
}

func fields(t *testing.T, b []byte) []field {
	t.Helper()
	var out []field
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad tag")
		}
		b = b[n:]
		f := field{num: int(tag >> 3), wire: int(tag & 7)}
		switch f.wire {
		case wireVarint:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				t.Fatalf("bad varint in field %d", f.num)
			}
			b = b[n:]
		case wireI64:
			if len(b) < 8 {
				t.Fatalf("short fixed64 in field %d", f.num)
			}
			f.v = binary.LittleEndian.Uint64(b)
			b = b[8:]
		case wireLen:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				t.Fatalf("bad length in field %d", f.num)
			}
			f.b = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			t.Fatalf("wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out
}

// seqClock is a sequence-scoped clock (ids 64-127).
type seqClock struct {
	incremental bool
	unit        int64 // ns per unit
	last        int64 // ns: the running value of an incremental clock
	snap        int64 // ns: the clock's value at its latest snapshot
	offset      int64 // BOOTTIME minus this clock, from the latest snapshot
}

// seqState is what the reader keeps per packet sequence.
type seqState struct {
	cleared       bool
	names, annots map[uint64]string
	defClock      uint64
	defTrack      uint64
	hasDefTrack   bool
	clocks        map[uint64]*seqClock
}

// unpack returns data with every packet that holds only compressed_packets
// replaced by the packets it holds, inflated with Go's own zlib (not the
// writer's): what trace_processor reads.
func unpack(t *testing.T, data []byte) []byte {
	t.Helper()
	var out []byte
	for _, pf := range fields(t, data) {
		if pf.num != fTracePacket || pf.wire != wireLen {
			t.Fatalf("field %d in Trace", pf.num)
		}
		inner := fields(t, pf.b)
		if len(inner) == 0 || inner[0].num != fPktCompressed {
			out = enc(out).bytes(fTracePacket, pf.b)
			continue
		}
		if len(inner) != 1 || inner[0].wire != wireLen {
			t.Fatalf("a compressed packet with %d fields", len(inner))
		}
		zr, err := zlib.NewReader(bytes.NewReader(inner[0].b))
		if err != nil {
			t.Fatalf("compressed_packets: %v", err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("compressed_packets: %v", err)
		}
		out = append(out, b...)
	}
	return out
}

func decode(t *testing.T, data []byte) *decoded {
	t.Helper()
	data = unpack(t, data)
	d := &decoded{tracks: map[uint64]string{}, parent: map[uint64]uint64{}}
	seqs := map[uint32]*seqState{}
	var lastBoot int64 = -1 << 63
	for _, pf := range fields(t, data) {
		if pf.num != fTracePacket || pf.wire != wireLen {
			t.Fatalf("field %d in Trace", pf.num)
		}
		pkt := fields(t, pf.b)
		var seqID uint32
		var flags uint64
		var ts, clockID uint64
		var hasTS bool
		var te, defaults, interned, snapshot []byte
		for _, f := range pkt {
			switch f.num {
			case fPktSeqID:
				seqID = uint32(f.v)
			case fPktSeqFlags:
				flags = f.v
			case fPktTimestamp:
				ts, hasTS = f.v, true
			case fPktTimestampClock:
				clockID = f.v
			case fPktTrackEvent:
				te = f.b
			case fPktDefaults:
				defaults = f.b
			case fPktInterned:
				interned = f.b
			case fPktClockSnapshot:
				snapshot = f.b
			case fPktTrackDesc:
				d.trackDesc(t, f.b)
			}
		}
		s := seqs[seqID]
		if s == nil {
			s = &seqState{clocks: map[uint64]*seqClock{}}
			seqs[seqID] = s
		}
		if flags&seqIncrementalClr != 0 {
			if seqID == 0 {
				t.Fatalf("incremental state cleared on sequence 0")
			}
			d.clears++
			s.cleared = true
			s.names, s.annots = map[uint64]string{}, map[uint64]string{}
			s.defClock, s.defTrack, s.hasDefTrack = 0, 0, false
		}
		if defaults != nil {
			s.defClock, s.defTrack, s.hasDefTrack = 0, 0, false
			for _, f := range fields(t, defaults) {
				switch f.num {
				case fDefClock:
					s.defClock = f.v
				case fDefTrackEvent:
					for _, g := range fields(t, f.b) {
						if g.num == fTEDTrack {
							s.defTrack, s.hasDefTrack = g.v, true
						}
					}
				}
			}
		}
		if interned != nil {
			if !s.cleared {
				t.Fatalf("interned data on sequence %d before its incremental state was cleared", seqID)
			}
			for _, g := range fields(t, interned) {
				var iid uint64
				var name string
				for _, h := range fields(t, g.b) {
					if h.num == fINIID {
						iid = h.v
					} else if h.num == fINName {
						name = string(h.b)
					}
				}
				if iid == 0 {
					t.Fatalf("interned iid 0")
				}
				if g.num == fIDEventNames {
					s.names[iid] = name
				} else if g.num == fIDDebugNames {
					s.annots[iid] = name
				}
			}
		}
		if snapshot != nil {
			if te != nil {
				t.Fatalf("a clock snapshot packet with a track event (trace_processor ignores the event)")
			}
			d.snapshots++
			lastBoot = d.snapshot(t, s, seqID, snapshot, lastBoot)
			continue
		}
		if flags&seqNeedsIncrState != 0 && !s.cleared {
			t.Fatalf("a packet needing incremental state on sequence %d before any clear", seqID)
		}
		if te == nil {
			continue
		}
		if flags&seqNeedsIncrState == 0 {
			t.Fatalf("a track event without SEQ_NEEDS_INCREMENTAL_STATE")
		}
		if !hasTS {
			t.Fatalf("a track event without timestamp")
		}
		e := event{seq: seqID, ts: d.time(t, s, ts, clockID)}
		hasTrack := false
		for _, f := range fields(t, te) {
			switch f.num {
			case fTEType:
				e.typ = f.v
			case fTETrack:
				e.track, hasTrack = f.v, true
			case fTENameIID:
				name, ok := s.names[f.v]
				if !ok {
					t.Fatalf("name iid %d not interned on sequence %d", f.v, seqID)
				}
				e.name = name
			case fTEFlowIDs:
				e.flows = append(e.flows, f.v)
			case fTETermFlowIDs:
				e.term = append(e.term, f.v)
			case fTECounterValue:
				e.counter = int64(f.v)
			case fTEDebug:
				var name string
				var v uint64
				var str []byte
				for _, g := range fields(t, f.b) {
					switch g.num {
					case fDANameIID:
						n, ok := s.annots[g.v]
						if !ok {
							t.Fatalf("annotation name iid %d not interned", g.v)
						}
						name = n
					case fDAUint:
						v = g.v
					case fDAString:
						str = g.b
					}
				}
				if str != nil {
					e.annots = append(e.annots, fmt.Sprintf("%s=%s", name, str))
				} else {
					e.annots = append(e.annots, fmt.Sprintf("%s=%d", name, v))
				}
			}
		}
		if !hasTrack {
			if !s.hasDefTrack {
				t.Fatalf("an event without track_uuid and no default track")
			}
			e.track = s.defTrack
		}
		if _, ok := d.tracks[e.track]; !ok {
			t.Fatalf("event on an undescribed track %d", e.track)
		}
		d.events = append(d.events, e)
	}
	// trace_processor sorts by timestamp; equal ones stay in file order.
	slices.SortStableFunc(d.events, func(a, b event) int { return cmp.Compare(a.ts, b.ts) })
	return d
}

func (d *decoded) trackDesc(t *testing.T, b []byte) {
	var uuid, parent uint64
	var name string
	for _, g := range fields(t, b) {
		switch g.num {
		case fTDUUID:
			uuid = g.v
		case fTDName:
			name = string(g.b)
		case fTDParent:
			parent = g.v
		case fTDThread, fTDProcess:
			var tid uint64
			for _, h := range fields(t, g.b) {
				if (g.num == fTDThread && h.num == fThName) || (g.num == fTDProcess && h.num == fPDName) {
					name = string(h.b)
				}
				if g.num == fTDThread && h.num == fThTid {
					tid = h.v
				}
			}
			if g.num == fTDThread {
				name += fmt.Sprintf(" (tid %d)", tid)
			}
		}
	}
	d.tracks[uuid], d.parent[uuid] = name, parent
}

// snapshot takes a ClockSnapshot on sequence s; lastBoot is the BOOTTIME of
// the trace's last snapshot, which it returns updated.
func (d *decoded) snapshot(t *testing.T, s *seqState, seqID uint32, b []byte, lastBoot int64) int64 {
	type clk struct {
		id, ts, unit uint64
		incr         bool
	}
	var cs []clk
	boot, hasBoot := int64(0), false
	for _, f := range fields(t, b) {
		if f.num != fCSClocks {
			continue
		}
		c := clk{unit: 1}
		for _, g := range fields(t, f.b) {
			switch g.num {
			case fClkID:
				c.id = g.v
			case fClkTimestamp:
				c.ts = g.v
			case fClkIncremental:
				c.incr = g.v != 0
			case fClkUnitNs:
				if g.v != 0 {
					c.unit = g.v
				}
			}
		}
		if c.id == clockBoottime {
			boot, hasBoot = int64(c.ts), true
		}
		cs = append(cs, c)
	}
	if !hasBoot {
		t.Fatalf("a clock snapshot without BOOTTIME: its clocks cannot reach the trace's clock")
	}
	if boot < lastBoot {
		t.Fatalf("BOOTTIME goes back in a snapshot (%d after %d): trace_processor drops it", boot, lastBoot)
	}
	for _, c := range cs {
		switch {
		case c.id == clockBoottime:
		case c.id >= 64 && c.id < 128:
			if seqID == 0 {
				t.Fatalf("a sequence clock on sequence 0")
			}
			ns := int64(c.ts) * int64(c.unit)
			sc := s.clocks[c.id]
			if sc == nil {
				sc = &seqClock{incremental: c.incr, unit: int64(c.unit), snap: ns}
				s.clocks[c.id] = sc
			}
			if sc.incremental != c.incr || sc.unit != int64(c.unit) {
				t.Fatalf("clock %d changes its unit or encoding", c.id)
			}
			if ns < sc.snap {
				t.Fatalf("clock %d goes back in a snapshot", c.id)
			}
			sc.snap, sc.last, sc.offset = ns, ns, boot-ns
		default:
			t.Fatalf("clock %d in a snapshot", c.id)
		}
	}
	return boot
}

// time converts a packet's timestamp on clock id (0: the default) to trace
// time (BOOTTIME ns).
func (d *decoded) time(t *testing.T, s *seqState, ts, id uint64) int64 {
	if id == 0 {
		id = s.defClock
	} else if id != s.defClock {
		d.absolute++
	}
	if id == 0 || id == clockBoottime {
		return int64(ts)
	}
	c := s.clocks[id]
	if c == nil {
		t.Fatalf("a timestamp on clock %d, of no snapshot", id)
	}
	v := int64(ts) * c.unit
	if c.incremental {
		c.last += v
		v = c.last
	}
	return v + c.offset
}

type dslice struct {
	start, end int64
	b          event
	flows      []uint64 // leaving (on the begin or end)
	term       []uint64
	depth      int
}

// slices returns the slices of each track, in start order with their
// depth: an end closes the innermost open slice of its track, in timestamp
// order. It fails on an end with no open slice and on a slice never ended.
func (d *decoded) slices(t *testing.T) map[uint64][]dslice {
	t.Helper()
	open := map[uint64][]int{} // event indices of the open begins
	out := map[uint64][]dslice{}
	for i := range d.events {
		e := &d.events[i]
		switch e.typ {
		case typeSliceBegin:
			open[e.track] = append(open[e.track], i)
		case typeSliceEnd:
			st := open[e.track]
			if len(st) == 0 {
				t.Fatalf("end without its begin on %s at %d", d.tracks[e.track], e.ts)
			}
			b := &d.events[st[len(st)-1]]
			open[e.track] = st[:len(st)-1]
			out[e.track] = append(out[e.track], dslice{start: b.ts, end: e.ts, b: *b, depth: len(st) - 1,
				flows: append(slices.Clone(b.flows), e.flows...), term: append(slices.Clone(b.term), e.term...)})
		}
	}
	for u, st := range open {
		if len(st) > 0 {
			t.Fatalf("%d slices never ended on %s", len(st), d.tracks[u])
		}
	}
	for _, ss := range out {
		slices.SortStableFunc(ss, func(a, b dslice) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end), cmp.Compare(a.depth, b.depth))
		})
	}
	return out
}

// The decoder itself, on packets built by hand: deltas on the incremental
// clock, a packet on BOOTTIME that leaves the running value alone, a new
// snapshot that moves it, a clear that drops the defaults, and a second
// sequence with a clock of its own.
func TestDecodeClocks(t *testing.T) {
	snap := func(boot, incr uint64) enc {
		return enc(nil).bytes(fCSClocks, enc(nil).uint(fClkID, clockBoottime).uint(fClkTimestamp, boot)).
			bytes(fCSClocks, enc(nil).uint(fClkID, clockIncremental).uint(fClkTimestamp, incr).uint(fClkIncremental, 1))
	}
	defaults := func(track uint64) enc {
		d := enc(nil).uint(fDefClock, clockIncremental)
		if track != 0 {
			d = d.bytes(fDefTrackEvent, enc(nil).uint(fTEDTrack, track))
		}
		return d
	}
	var b enc
	pkt := func(p enc) { b = b.bytes(fTracePacket, p) }
	seq := func(s uint64) enc { return enc(nil).uint(fPktSeqID, s) }
	instant := func(s uint64, ts uint64, track uint64) enc {
		te := enc(nil).uint(fTEType, typeInstant)
		if track != 0 {
			te = te.uint(fTETrack, track)
		}
		return seq(s).uint(fPktSeqFlags, seqNeedsIncrState).uint(fPktTimestamp, ts).bytes(fPktTrackEvent, te)
	}
	pkt(seq(1).uint(fPktSeqFlags, seqIncrementalClr).bytes(fPktDefaults, defaults(7)).bytes(fPktClockSnapshot, snap(1000, 0)))
	pkt(seq(1).bytes(fPktTrackDesc, enc(nil).uint(fTDUUID, 7).str(fTDName, "a")))
	pkt(seq(1).bytes(fPktTrackDesc, enc(nil).uint(fTDUUID, 8).str(fTDName, "b")))
	pkt(instant(1, 5, 0))                                           // 1005
	pkt(instant(1, 7, 0))                                           // 1012
	pkt(instant(1, 500, 0).uint(fPktTimestampClock, clockBoottime)) // 500, on BOOTTIME
	pkt(instant(1, 3, 0))                                           // 1015
	pkt(seq(2).uint(fPktSeqFlags, seqIncrementalClr).bytes(fPktDefaults, defaults(8)).bytes(fPktClockSnapshot, snap(1000, 50)))
	pkt(instant(2, 10, 0))                                // 50+10-50+1000 = 1010, sequence 2's clock
	pkt(instant(1, 1, 0))                                 // 1016: sequence 1's clock goes on
	pkt(seq(1).bytes(fPktClockSnapshot, snap(2000, 100))) // running value 100, BOOTTIME 2000
	pkt(instant(1, 1, 8))                                 // 2001, on track 8
	pkt(seq(1).uint(fPktSeqFlags, seqIncrementalClr))     // no defaults: BOOTTIME, no default track
	pkt(instant(1, 3000, 7))
	d := decode(t, b)
	var got []string
	for _, e := range d.events {
		got = append(got, fmt.Sprintf("%d:%s", e.ts, d.tracks[e.track]))
	}
	want := []string{"500:a", "1005:a", "1010:b", "1012:a", "1015:a", "1016:a", "2001:b", "3000:a"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if d.absolute != 1 {
		t.Errorf("%d packets off the default clock, want 1", d.absolute)
	}
}
