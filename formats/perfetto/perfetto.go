// Package perfetto writes model rows as a Perfetto trace (native protobuf,
// packet by packet), for ui.perfetto.dev and trace_processor.
//
// Layout, per trace (rank):
//   - a process track "rank R (host)", with a synthetic pid (R + 1, real
//     pids collide across nodes) and the real pid in its name;
//   - a thread track per thread with API calls, kernel builds and user
//     regions as slices, markers, triggers and drops as instants;
//   - a track per device with a child track per stream, holding kernel
//     executions (device-side time where the trace has it, else the host
//     launch span) and copies;
//   - a flow from each host launch to its device execution when the launch
//     has device time;
//   - a counter track per device: bytes of device memory in use.
//
// Slices on one track must nest; a slice that would overlap without
// nesting goes on a sibling lane track ("name #2"), so nothing is dropped
// or mis-nested. Lanes are assigned in start order: rows pass through a
// bounded reorder buffer (ReorderRows). Event names are interned. Times are
// unix ns (the trace's default clock): ranks on different nodes line up.
package perfetto

import (
	"bufio"
	"container/heap"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"

	"github.com/libocca/occa-tools/formats/model"
	"github.com/libocca/occa-tools/formats/trace"
)

// ReorderRows is the number of rows held to put them in start order.
const ReorderRows = 1 << 17

// PairWindow is the model.Pairer window to use with this writer: launches
// wait for their device time at most this long, which keeps them within
// the reorder buffer.
const PairWindow = 1 << 12

// Writer writes one process's rows to a Perfetto trace file.
type Writer struct {
	f       *os.File
	bw      *bufio.Writer
	p       *model.Process
	fl      *model.Flattener
	seq     uint32
	pid     int64
	proc    uint64
	names   map[string]uint64
	tracks  map[uint64]bool
	lanes   map[uint64]*laneSet
	mem     *model.MemoryInUse
	pending rowHeap
	store   []model.Row
	free    []int32
	order   uint64
	last    int64 // start of the last row released
	late    int64 // rows released out of start order
	pkt     enc
	te      enc
	aux     enc
	err     error
	Bytes   int64
}

type laneSet struct {
	name   string
	parent uint64
	lanes  []lane
}

type lane struct {
	uuid  uint64
	stack []int64 // end times of the open slices
}

// held is a row waiting in the reorder heap; the row itself stays in
// Writer.store, so heap moves copy 32 bytes.
type held struct {
	start, dur int64
	seq        uint64
	idx        int32
}

type rowHeap []held

func (h rowHeap) Len() int { return len(h) }
func (h rowHeap) Less(i, j int) bool {
	if h[i].start != h[j].start {
		return h[i].start < h[j].start
	}
	if h[i].dur != h[j].dur { // the enclosing slice first
		return h[i].dur > h[j].dur
	}
	return h[i].seq < h[j].seq
}
func (h rowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)   { *h = append(*h, x.(held)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func uuid(parts ...uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, p := range parts {
		for i := range b {
			b[i] = byte(p >> (8 * i))
		}
		h.Write(b[:])
	}
	return h.Sum64() | 1
}

// Create makes the file at path for process p. seq is the trusted packet
// sequence id, distinct for every writer whose output goes in one trace.
func Create(path string, p *model.Process, seq uint32) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, bw: bufio.NewWriterSize(f, 1<<20), p: p, fl: model.NewFlattener(p), seq: seq, pid: p.Rank + 1,
		names: map[string]uint64{}, tracks: map[uint64]bool{}, lanes: map[uint64]*laneSet{}, mem: model.NewMemoryInUse()}
	if w.pid <= 0 {
		w.pid = int64(seq)
	}
	w.proc = uuid(uint64(p.Rank), 1)
	// The first packet clears the incremental state (the interned names).
	w.pkt = enc(w.pkt[:0]).uint(fPktSeqID, uint64(seq)).uint(fPktSeqFlags, seqIncrementalClr).uint(fPktFirstOnSeq, 1)
	w.flushPacket()
	var pd enc
	pd = pd.int(fPDPid, w.pid).str(fPDName, fmt.Sprintf("rank %d (%s, pid %d)", p.Rank, p.Header.Host, p.Header.PID))
	td := enc(nil).uint(fTDUUID, w.proc).bytes(fTDProcess, pd)
	w.trackPacket(td)
	return w, nil
}

func (w *Writer) flushPacket() {
	if w.err != nil {
		return
	}
	var hdr [16]byte
	h := enc(hdr[:0]).tag(fTracePacket, wireLen).varint(uint64(len(w.pkt)))
	w.bw.Write(h)
	_, w.err = w.bw.Write(w.pkt)
	w.Bytes += int64(len(h) + len(w.pkt))
}

func (w *Writer) trackPacket(td enc) {
	w.pkt = enc(w.pkt[:0]).uint(fPktSeqID, uint64(w.seq)).bytes(fPktTrackDesc, td)
	w.flushPacket()
}

// thread returns the track of thread index t, describing it first.
func (w *Writer) thread(t uint32) uint64 {
	u := uuid(uint64(w.p.Rank), 2, uint64(t))
	if !w.tracks[u] {
		w.tracks[u] = true
		info := w.p.Dict.Thread(uint64(t))
		tid := int64(info.TID)
		if tid == 0 {
			tid = w.pid*1000 + int64(t)
		}
		name := info.Name
		if name == "" {
			name = "thread " + strconv.FormatUint(uint64(t), 10)
		}
		th := enc(nil).int(fThPid, w.pid).int(fThTid, tid).str(fThName, name)
		w.trackPacket(enc(nil).uint(fTDUUID, u).bytes(fTDThread, th))
	}
	return u
}

// named returns a plain named track under parent, describing it first.
func (w *Writer) named(u, parent uint64, name string, rank int) uint64 {
	if !w.tracks[u] {
		w.tracks[u] = true
		td := enc(nil).uint(fTDUUID, u).str(fTDName, name).uint(fTDParent, parent)
		if rank != 0 {
			td = td.int(fTDSiblingRank, int64(rank))
		}
		w.trackPacket(td)
	}
	return u
}

func (w *Writer) deviceName(id uint64) string {
	if id == 0 {
		return "host"
	}
	return w.p.Dict.Device(id).Name()
}

func (w *Writer) device(id uint64) uint64 {
	return w.named(uuid(uint64(w.p.Rank), 3, id), w.proc, "device "+w.deviceName(id), 0)
}

func (w *Writer) stream(dev, s uint64) uint64 {
	name := "stream " + strconv.FormatUint(s, 10)
	if s == 0 {
		name = "current stream"
	}
	return w.named(uuid(uint64(w.p.Rank), 4, dev, s), w.device(dev), name, int(s))
}

func (w *Writer) counter(dev uint64) uint64 {
	u := uuid(uint64(w.p.Rank), 5, dev)
	if !w.tracks[u] {
		w.tracks[u] = true
		cd := enc(nil).uint(fCDUnit, unitSizeBytes)
		td := enc(nil).uint(fTDUUID, u).str(fTDName, "memory in use "+w.deviceName(dev)).uint(fTDParent, w.proc).bytes(fTDCounter, cd)
		w.trackPacket(td)
	}
	return u
}

// iid interns name; it adds the name to the packet's interned data when new.
func (w *Writer) iid(name string, interned *enc) uint64 {
	if id, ok := w.names[name]; ok {
		return id
	}
	id := uint64(len(w.names) + 1)
	w.names[name] = id
	e := enc(nil).uint(fINIID, id).str(fINName, name)
	*interned = interned.bytes(fIDEventNames, e)
	return id
}

// event writes one TrackEvent packet.
func (w *Writer) event(ts int64, typ uint64, track uint64, name string, flows, term []uint64, counter int64, args func(enc) enc) {
	var interned enc
	te := enc(w.te[:0]).uint(fTEType, typ).uint(fTETrack, track)
	if name != "" {
		te = te.uint(fTENameIID, w.iid(name, &interned))
	}
	for _, f := range flows {
		te = te.fixed64(fTEFlowIDs, f)
	}
	for _, f := range term {
		te = te.fixed64(fTETermFlowIDs, f)
	}
	if typ == typeCounter {
		te = te.int(fTECounterValue, counter)
	}
	if args != nil {
		te = args(te)
	}
	w.te = te
	pkt := enc(w.pkt[:0]).uint(fPktTimestamp, uint64(ts)).uint(fPktSeqID, uint64(w.seq)).uint(fPktSeqFlags, seqNeedsIncrState)
	if len(interned) > 0 {
		pkt = pkt.bytes(fPktInterned, interned)
	}
	w.pkt = pkt.bytes(fPktTrackEvent, te)
	w.flushPacket()
}

func debugUint(te enc, name string, v uint64) enc {
	return te.bytes(fTEDebug, enc(nil).str(fDAName, name).uint(fDAUint, v))
}

func debugStr(te enc, name, v string) enc {
	return te.bytes(fTEDebug, enc(nil).str(fDAName, name).str(fDAString, v))
}

// laneSet returns the lanes of the logical track key, whose first lane is
// the track first and whose further lanes are siblings under parent.
func (w *Writer) laneSet(key, first, parent uint64, name string) *laneSet {
	ls := w.lanes[key]
	if ls == nil {
		ls = &laneSet{name: name, parent: parent, lanes: []lane{{uuid: first}}}
		w.lanes[key] = ls
	}
	return ls
}

// slice writes a slice on the first lane of ls where it nests.
func (w *Writer) slice(ls *laneSet, start, dur int64, name string, flows, term []uint64, args func(enc) enc) {
	end := start + max(dur, 0)
	i := 0
	for ; i < len(ls.lanes); i++ {
		l := &ls.lanes[i]
		for len(l.stack) > 0 && l.stack[len(l.stack)-1] <= start {
			l.stack = l.stack[:len(l.stack)-1]
		}
		if n := len(l.stack); n == 0 || l.stack[n-1] >= end {
			break
		}
	}
	if i == len(ls.lanes) {
		u := uuid(ls.lanes[0].uuid, uint64(i))
		w.named(u, ls.parent, ls.name+" #"+strconv.Itoa(i+1), 1000+i)
		ls.lanes = append(ls.lanes, lane{uuid: u})
	}
	l := &ls.lanes[i]
	l.stack = append(l.stack, end)
	w.event(start, typeSliceBegin, l.uuid, name, flows, nil, 0, args)
	w.event(end, typeSliceEnd, l.uuid, "", nil, term, 0, nil)
}

// Add takes one row; it has the model.Sink signature.
func (w *Writer) Add(p *model.Process, r *model.Row) error {
	w.order++
	var idx int32
	if n := len(w.free); n > 0 {
		idx = w.free[n-1]
		w.free = w.free[:n-1]
		w.store[idx] = *r
	} else {
		idx = int32(len(w.store))
		w.store = append(w.store, *r)
	}
	heap.Push(&w.pending, held{start: r.Start, dur: r.Dur, seq: w.order, idx: idx})
	for w.err == nil && len(w.pending) > ReorderRows {
		w.release()
	}
	return w.err
}

func (w *Writer) release() {
	h := heap.Pop(&w.pending).(held)
	r := &w.store[h.idx]
	w.free = append(w.free, h.idx)
	if r.Start < w.last {
		w.late++
	}
	w.last = max(w.last, r.Start)
	w.write(r)
}

func (w *Writer) write(r *model.Row) {
	p := w.p
	ts := p.WallTime(r.Start)
	kind := model.KindName(r.Kind)
	thread := func() uint64 { return w.thread(r.Thread) }
	switch r.Kind {
	case trace.Marker, trace.Trigger, trace.Dropped, trace.StreamCreate, trace.StreamSet, trace.Fork:
		name := kind
		switch r.Kind {
		case trace.Marker:
			name = r.Name
		case trace.Trigger:
			name = "trigger " + r.Name
		case trace.Dropped:
			name = fmt.Sprintf("DROPPED %d events (%s)", r.Bytes, r.Name)
			ts = p.WallTime(r.Start + max(r.Dur, 0))
		}
		w.event(ts, typeInstant, thread(), name, nil, nil, 0, nil)
		return
	case trace.DeviceTime: // device time without its launch
		if r.Start != 0 {
			u := w.named(uuid(uint64(p.Rank), 6), w.proc, "device time (launch unknown)", 0)
			w.slice(w.laneSet(u, u, w.proc, "device time (launch unknown)"), ts, r.Dur, "kernel", nil, nil, nil)
		}
		return
	}
	if r.Dur == model.Unpaired {
		w.event(ts, typeInstant, thread(), kind+" (unpaired)", nil, nil, 0, nil)
		return
	}
	name := kind
	if r.Name != "" {
		name = kind + " " + r.Name
	}
	if r.Kind == trace.RegionPush {
		name = r.Name
	}
	var flows []uint64
	if r.Kind == trace.RunBegin && r.DevDur >= 0 {
		flows = []uint64{uuid(uint64(p.Rank), 7, r.Corr)}
	}
	args := func(te enc) enc {
		if r.Corr != 0 {
			te = debugUint(te, "corr", r.Corr)
		}
		if r.Bytes != 0 {
			te = debugUint(te, "bytes", r.Bytes)
		}
		if d := r.Direction(); d != "" {
			te = debugStr(te, "direction", d)
		}
		if r.Status != 0 {
			te = debugUint(te, "status", r.Status)
		}
		return te
	}
	th := thread()
	tname := p.Dict.Thread(uint64(r.Thread)).Name
	if tname == "" {
		tname = "thread " + strconv.FormatUint(uint64(r.Thread), 10)
	}
	w.slice(w.laneSet(th, th, w.proc, tname), ts, r.Dur, name, flows, nil, args)
	switch r.Kind {
	case trace.RunBegin, trace.CopyBegin:
		if r.Device == 0 {
			return
		}
		s, d := ts, r.Dur
		var term []uint64
		if r.DevDur >= 0 {
			d = r.DevDur
			if r.DevStart != 0 {
				s = p.WallTime(r.DevStart)
			}
			term = flows
		}
		st := w.stream(r.Device, r.Stream)
		nm := r.Name
		if r.Kind == trace.CopyBegin {
			nm = "copy " + r.Direction()
		}
		w.slice(w.laneSet(st, st, w.device(r.Device), "stream "+strconv.FormatUint(r.Stream, 10)), s, d, nm, nil, term, nil)
	case trace.MemoryAllocBegin, trace.MemoryFreeBegin:
		if dev, v, ok := w.mem.Add(r); ok {
			t := ts
			if r.Kind == trace.MemoryAllocBegin {
				t = p.WallTime(r.Start + r.Dur)
			}
			w.event(t, typeCounter, w.counter(dev), "", nil, nil, v, nil)
		}
	}
}

// Late returns the rows that came out of start order (more than
// ReorderRows late); their lanes may be chosen badly.
func (w *Writer) Late() int64 { return w.late }

// Close writes what is held and finishes the file.
func (w *Writer) Close(*model.Result) error {
	for w.err == nil && len(w.pending) > 0 {
		w.release()
	}
	err := w.err
	if e := w.bw.Flush(); err == nil {
		err = e
	}
	if e := w.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	return nil
}

// MaxTrace is the size from which a trace is kept split: protobuf parsers
// stop at 2 GiB and the UI is bounded by browser memory.
const MaxTrace = 2 << 30
