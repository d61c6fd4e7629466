// Package perfetto writes the analysis's rows as a Perfetto trace (native protobuf,
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
//   - a counter track per device: bytes of device memory in use;
//   - OpenMP regions, implicit tasks and explicit task segments as slices
//     on the thread tracks, with flows for task dependences and from a
//     launch to its implicit tasks (omp.go). Traces without OpenMP rows
//     pay a nil check per row for them.
//   - device times whose launch is not in the trace (its events lost, or
//     a correlation id never launched) as slices named "kernel" on the
//     process's "device time (launch unknown)" track, at their device
//     interval (at the device_time event when it has only a duration).
//
// Slices on one track must nest; a slice that would overlap without
// nesting goes on a sibling lane track ("name #2"), so nothing is
// mis-nested. A track has at most MaxLanes lanes: a slice that fits none
// (only a damaged or hostile trace has so many overlaps) is left out and
// counted (Writer.LeftOut), which convert reports. Threads, devices and a
// device's streams past maxThreads, maxDevices and maxStreams share one
// track each, so that what a trace's ids can make is bounded. Lanes are
// assigned in start order: rows pass through a bounded reorder buffer
// (ReorderRows).
// Times are unix ns on BOOTTIME (the trace's clock): ranks on different
// nodes line up. Each is written as the distance from the packet before it
// on an incremental clock of the writer's sequence (clock.go says what
// from Perfetto's sources this relies on), so packets go out in time order:
// a slice's end waits until the rows reach it. Event names and debug
// annotation names are interned; TracePacketDefaults give the clock and the
// track used most lately (events on it name none); other track uuids are
// small (newUUID). A slice end is then about 12 bytes, a begin 14 plus
// its annotations: about 32 bytes per trace event on the bundled
// workload's mix. A reader of the raw packets (not trace_processor or the
// UI) must add the timestamps up per sequence as clock.go says;
// tests/python/test_perfetto.py does it with the perfetto package's schema.
//
// Output that would pass MaxTrace, which the UI and protobuf parsers cannot
// load, is split by time into parts that are traces of their own (split,
// PartPath).
//
// Add only copies the row into a batch (and, every ReorderRows/2 rows,
// sorts the new rows' keys); a goroutine per writer merges them into start
// order, assigns lanes and encodes the packets (hand-rolled protobuf into
// one reused buffer), so reading and writing overlap. The batches are the
// chunks of the row ring: the worker keeps one until its rows are merged
// and hands it back, so the reader can run a whole reorder flush ahead.
// Everything read from the process's Dict (thread and device names) is
// looked up in Add, on the reader's goroutine.
package perfetto

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// ReorderRows is the number of rows held to put them in start order.
const ReorderRows = 1 << 17

// PairWindow is the analysis.Pairer window to use with this writer: launches
// wait for their device time at most this long, which keeps them within
// the reorder buffer.
const PairWindow = 1 << 12

const (
	batchRows = 4096
	outFlush  = 1 << 20
	firstOut  = 64 << 10 // the first output buffer's capacity; it grows to outFlush and a packet
	outBufs   = 3        // encoding into one, one being written, one waiting
	nwBufs    = 3        // sets of new rows: filling, sorted in flight, being merged
)

// threadInfo and devInfo carry what the worker needs from the Dict.
type threadInfo struct {
	index uint32
	tid   int64
	name  string
}

type devInfo struct {
	id   uint64
	name string
}

type batch struct {
	rows []ringRow
	// busy[i]: rows[i], in the ring, is not yet released (its capacity is
	// rows').
	busy    []bool
	threads []threadInfo
	devs    []devInfo
	// sorted, when set, holds the rows that arrived since the last sorted
	// set (up to this batch's last), sorted by cmpHeld: the reader sorts
	// them, the worker merges them with the held rows.
	sorted []held
	hasNew bool
	final  bool // sorted is the last set, merged at the end
	// launches holds the OpenMP regions of launches (omp.go).
	launches []launchRegion
}

// ringRow is what the writer keeps of an analysis.Row while it reorders:
// the fields it writes, and no others. Everything from the ring on reads a
// *ringRow: a field not kept cannot be read by mistake.
//
// A row takes 128 bytes, two cache lines (a batch's rows, 512 KiB, start
// on a page), where an analysis.Row takes 168: rows are read back in start
// order, long after they were written, and each line is a cache miss. The
// first line holds what every row reads, the second what launches and
// copies add; the fields of rarer kinds come last.
type ringRow struct {
	Kind trace.Kind
	// Aux is the low byte of analysis.Row.Aux: all of it the writer reads
	// is a copy's direction, its two low bits (DirectionOf).
	Aux              uint8
	Thread           uint32
	OMP              *analysis.OMP
	Start, Dur       int64
	Corr, Status     uint64
	Device, Stream   uint64
	Name             string
	DevStart, DevDur int64
	Bytes, Memory    uint64
	Peer, Tag        int32
	Comm             uint64
}

// keep makes k the ring's copy of r, field by field, so that the row is
// written in place: a ringRow literal is built on the stack and then
// copied, 128 bytes a row.
func (k *ringRow) keep(r *analysis.Row) {
	k.Kind, k.Aux, k.Thread, k.OMP, k.Start, k.Dur = r.Kind, uint8(r.Aux), r.Thread, r.OMP, r.Start, r.Dur
	k.Corr, k.Status, k.Device, k.Stream, k.Name = r.Corr, r.Status, r.Device, r.Stream, r.Name
	k.DevStart, k.DevDur, k.Bytes, k.Memory, k.Peer, k.Tag, k.Comm = r.DevStart, r.DevDur, r.Bytes, r.Memory, r.Peer, r.Tag, r.Comm
}

// memoryChange is analysis.Row.MemoryChange.
func (r *ringRow) memoryChange() analysis.MemoryChange {
	return analysis.MemoryChange{Kind: r.Kind, Start: r.Start, Dur: r.Dur, Status: r.Status, Device: r.Device,
		Memory: r.Memory, Bytes: r.Bytes, Name: r.Name}
}

// direction is analysis.Row.Direction.
func (r *ringRow) direction() string { return analysis.DirectionOf(r.Kind, uint64(r.Aux)) }

// Writer writes one process's rows to a Perfetto trace file.
type Writer struct {
	f   *os.File
	p   *analysis.Process
	seq uint32
	// seqFields are every packet's sequence id and flags, encoded once.
	seqFields []byte
	pid       int64

	// reader side
	cur         *batch
	seenTh      map[uint32]bool
	seenDev     map[uint64]bool
	lastTh      uint32 // the last row's thread, when anyTh
	anyTh       bool
	lastSeenDev uint64 // the last row's device, or 0
	work        chan *batch
	free        chan *batch
	done        chan struct{}
	failed      atomic.Bool
	closeMux    sync.Once
	rOrder      uint64 // rows added
	nw          []held // unsorted rows since the last sorted set
	tmp         []held // sort scratch
	nwFree      chan []held
	ompSlab     []analysis.OMP // copies of the rows' OMP (omp.go)

	// worker side
	proc      uint64
	nextUUID  uint64
	names     map[nameKey]uint64
	nameCache [nameCacheSize]nameCacheEntry
	annots    [annotCount]bool
	threads   map[uint32]*thread // by index, from threadsLo up
	threadsLo []*thread          // by index, below threadsLoMax
	devices   map[uint64]*device
	// threadsPast and devicesPast are the tracks shared past maxThreads
	// and maxDevices, made on first use.
	threadsPast *thread
	devicesPast *device
	noLaunch    *laneSet
	lastDev     *device
	lastStrm    *laneSet
	lastSKey    uint64
	lastSDev    uint64
	mem         *analysis.MemoryInUse
	kinds       [256]string
	omp         *ompWriter // OpenMP state, nil until the first OpenMP row
	mpi         mpiFlows   // MPI messages counted for their flows (mpi.go)
	// extraFlows are flow ids the next slice begins with besides its own
	// (a launch's flows to its OpenMP implicit tasks).
	extraFlows []uint64

	ring  [chunks]*batch     // row seq: ring[i/batchRows].rows[i%batchRows], i = (seq-1) % ringRows
	freed uint64             // chunks handed back to the reader
	over  map[uint64]ringRow // rows held longer than the ring, by seq
	pend  []held             // sorted
	bufs  [2][]held          // pend lies in bufs[pb]; merges go to the other
	pb    int
	order uint64
	last0 []held // the reader's last sorted set, merged at the end
	last  int64  // start of the last row released
	late  int64  // rows released out of start order
	// leftOut counts slices that fit no lane (pickLane): written by the
	// worker, read after Close.
	leftOut int64

	// Timestamps and time order (clock.go): now is the start of the row
	// being written, lastTS the incremental clock's running value, pend the
	// packets that lie after now.
	now         int64
	lastTS      int64
	due         []pending
	horizon     int64     // the next row's start while writing a row (settle)
	rowEnds     []pending // the row's ends that may come before the horizon
	dueHead     int
	dueHeap     []pending
	dueN        uint64
	dueX        []dueExtra
	dueXFree    []int
	defTrack    uint64 // the sequence's default track, 0 for none
	newDefaults bool   // the next packet gives new defaults
	trackUse    [trackSlots]trackCount
	trackEvents int

	out       []byte
	newNames  []internedName
	newAnnots []int
	err       error
	Bytes     int64
	// descs are the track descriptor packets written so far, which each
	// part of a split trace starts with; fileStart is Bytes when the
	// current part began.
	descs     [][]byte
	fileStart int64
	parts     int // files begun after the first

	// file side: full buffers go to a goroutine of their own that writes
	// them, so the syscalls run beside encoding. A nil buffer tells it to
	// start the next part (split); paths lists the files, in order.
	wfull chan []byte
	wfree chan []byte
	wdone chan struct{}
	wfail atomic.Bool // wErr was set before
	wErr  error
	paths []string
	sizes []int64 // bytes written into each of paths, before compression
	// zip, when set, compresses each buffer into one packet (Compressed).
	zip *packetZipper
}

// Option is an option of Create.
type Option func(*Writer)

// Compressed writes the packets zlib-compressed, each buffer of them (about
// 1 MiB) as one TracePacket's compressed_packets, which trace_processor
// and ui.perfetto.dev unpack as they read: a sixth of the bytes for a
// quarter to a half more CPU (convert's help gives the figures; the
// compression runs on the goroutine that writes the file). The 2 GiB
// split counts the bytes unpacked, which is what a reader holds.
func Compressed() Option {
	return func(w *Writer) {
		if w.zip, _ = spareZips.Get().(*packetZipper); w.zip == nil {
			w.zip = &packetZipper{}
		}
	}
}

// spareZips keeps the packetZippers of closed writers, each with its
// buffer grown to the largest packet it made: a run of 10,000 small traces
// does not allocate and clear one for each.
var spareZips sync.Pool

type thread struct {
	uuid  uint64
	tid   int64
	name  string
	lanes *laneSet
}

type device struct {
	id           uint64
	uuid         uint64
	counter      uint64
	name         string
	streams      map[uint64]*laneSet
	otherStreams *laneSet // streams past maxStreams
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

// held is a row waiting in the reorder buffer; the row itself stays in
// Writer.ring, in arrival order, so that releasing rows in start order
// (nearly arrival order) reads the ring nearly sequentially. seq, its
// arrival number from 1, also says where: ring slot (seq-1) % ringRows
// while its chunk is in the ring, else Writer.over (release reads both). No
// slot index is kept beside it: 24 bytes, where the sort and the merge
// move each held row several times.
type held struct {
	start, dur int64
	seq        uint64
}

func cmpHeld(a, b held) int {
	if a.start != b.start {
		if a.start < b.start {
			return -1
		}
		return 1
	}
	if a.dur != b.dur { // the enclosing slice first
		if a.dur > b.dur {
			return -1
		}
		return 1
	}
	if a.seq < b.seq {
		return -1
	}
	if a.seq > b.seq {
		return 1
	}
	return 0
}

// hash is FNV-1a over the parts' little-endian bytes, with the low bit set
// (uuids of tracks past the small range, flow ids).
func hash(parts ...uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for i := 0; i < 8; i++ {
			h ^= (p >> (8 * i)) & 0xff
			h *= 1099511628211
		}
	}
	return h | 1
}

// Create makes the file at path for process p. seq is the trusted packet
// sequence id, distinct for every writer whose output goes in one trace.
func Create(path string, p *analysis.Process, seq uint32, opts ...Option) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, p: p, seq: seq, pid: p.Rank + 1, paths: []string{path}, sizes: []int64{0},
		seqFields: append(putVarint([]byte{fPktSeqID << 3}, uint64(seq)), fPktSeqFlags<<3, seqNeedsIncrState),
		seenTh:    map[uint32]bool{}, seenDev: map[uint64]bool{},
		work: make(chan *batch, chunks), free: make(chan *batch, chunks), done: make(chan struct{}),
		names: map[nameKey]uint64{}, threads: map[uint32]*thread{}, devices: map[uint64]*device{},
		mem:   analysis.NewMemoryInUse(),
		wfull: make(chan []byte, outBufs), wfree: make(chan []byte, outBufs), wdone: make(chan struct{}),
		nwFree: make(chan []held, nwBufs)}
	// The buffers start small and grow with the trace: a run of 10,000
	// ranks of a few thousand events each spent most of its time clearing
	// buffers sized for the longest traces. Those of writers closed before
	// are taken as they are (spareBufs).
	var sb grownBufs
	if s, ok := spareBufs.Get().(*grownBufs); ok {
		sb = *s
	}
	for _, set := range sb.sets {
		w.nwFree <- set
	}
	w.nw = <-w.nwFree
	w.bufs, w.tmp, w.out = sb.merge, sb.tmp, sb.out[0]
	if w.out == nil {
		w.out = make([]byte, 0, firstOut)
	}
	for _, o := range sb.out[1:] {
		w.wfree <- o
	}
	for _, o := range opts {
		o(w)
	}
	go w.fileWriter()
	if w.pid <= 0 {
		w.pid = int64(seq)
	}
	for i := 0; i < chunks; i++ {
		w.free <- &batch{}
	}
	w.cur = w.take()
	w.proc = w.newUUID()
	w.now, w.horizon = math.MinInt64, math.MinInt64
	// The first packet clears the incremental state (the interned names),
	// gives the defaults and declares the clock.
	w.startSequence()
	var pd enc
	pd = pd.int(fPDPid, w.pid).str(fPDName, fmt.Sprintf("rank %d (%s, pid %d)", p.Rank, p.Header.Host, p.Header.PID))
	w.trackPacket(enc(nil).uint(fTDUUID, w.proc).bytes(fTDProcess, pd))
	go w.run()
	return w, nil
}

// newUUID returns the writer's next track uuid, unique across the writers
// of one trace (distinct seq) and small, so that an event's track_uuid is a
// short varint: the Cantor pairing of (seq, n) while seq < 2048 and n < 1024
// (below 2^23; one byte for the first dozen tracks of sequences 1 to 4),
// then 2^23 + seq<<10 | n while seq < 2^20, then a hash with the top bit
// set.
func (w *Writer) newUUID() uint64 {
	w.nextUUID++
	s, n := uint64(w.seq), w.nextUUID
	switch {
	case s < 1<<11 && n < 1<<10:
		return (s+n)*(s+n+1)/2 + n
	case s < 1<<20 && n < 1<<10:
		return 1<<23 + s<<10 | n
	}
	return hash(s, n) | 1<<63
}

// Add takes one row; it has the analysis.Sink signature.
func (w *Writer) Add(p *analysis.Process, r *analysis.Row) error {
	if w.failed.Load() { // w.err was set before failed
		return w.err
	}
	b := w.cur
	// Rows come in runs of one thread and device: the last seen skips the
	// maps.
	if (r.Thread != w.lastTh || !w.anyTh) && len(w.seenTh) < maxThreads && !w.seenTh[r.Thread] {
		w.seenTh[r.Thread] = true
		info := p.Dict.Thread(uint64(r.Thread))
		b.threads = append(b.threads, threadInfo{index: r.Thread, tid: int64(info.TID), name: info.Name})
	}
	w.lastTh, w.anyTh = r.Thread, true
	if r.Device != 0 && r.Device != w.lastSeenDev && len(w.seenDev) < maxDevices && !w.seenDev[r.Device] {
		w.seenDev[r.Device] = true
		b.devs = append(b.devs, devInfo{id: r.Device, name: p.Dict.Device(r.Device).Name()})
	}
	if r.Device != 0 {
		w.lastSeenDev = r.Device
	}
	b.rows = b.rows[:len(b.rows)+1] // there is room: a batch goes as soon as it is full
	b.rows[len(b.rows)-1].keep(r)
	d := r.Dur
	if r.OMP != nil {
		d = w.addOMP(b, r)
	}
	w.rOrder++
	w.nw = append(w.nw, held{start: r.Start, dur: d, seq: w.rOrder})
	if len(b.rows) == cap(b.rows) {
		if len(w.nw) >= ReorderRows/2 {
			w.sortNew(b, false)
		}
		w.work <- b
		w.cur = w.take()
	}
	return nil
}

// take returns a free batch. A batch gets its rows on first use, so that a
// small trace does not pay for the whole ring, from those of writers
// closed before when there are (Close gives them back).
func (w *Writer) take() *batch {
	b := <-w.free
	if b.rows == nil {
		if r, ok := spareRows.Get().(*rowSlab); ok {
			b.rows, b.busy = r.rows, r.busy
		} else {
			b.rows, b.busy = make([]ringRow, 0, batchRows), make([]bool, batchRows)
		}
	}
	return b
}

// rowSlab is a batch's rows and busy flags, kept between writers: a run of
// 10,000 small traces otherwise allocated and cleared 1 MiB of them for
// each (a tenth of its time). A slab given back holds no busy row.
type rowSlab struct {
	rows []ringRow
	busy []bool
}

var spareRows sync.Pool

// sortNew sorts the rows that arrived since the last sorted set, on the
// reader's goroutine, and hands them to the worker with batch b.
func (w *Writer) sortNew(b *batch, final bool) {
	w.tmp = sortHeld(w.nw, w.tmp)
	b.sorted, b.hasNew, b.final = w.nw, true, final
	w.nw = nil
	if !final {
		w.nw = <-w.nwFree
	}
}

// run is the worker: it reorders, assigns lanes and encodes.
func (w *Writer) run() {
	defer close(w.done)
	for b := range w.work {
		if w.err == nil {
			w.addBatch(b)
			if w.err != nil {
				w.failed.Store(true)
			}
		}
		if b.final {
			w.last0 = b.sorted
		} else if b.hasNew {
			w.nwFree <- b.sorted[:0]
		}
		b.threads, b.devs, b.sorted, b.hasNew, b.final, b.launches = b.threads[:0], b.devs[:0], nil, false, false, b.launches[:0]
		if w.err != nil { // not kept in the ring: the reader may need it
			b.rows = b.rows[:0]
			w.free <- b
		}
	}
	if w.err == nil {
		w.flushReorder(w.last0, true)
	}
	w.drain()
	if w.err == nil {
		w.ompFinish()
	}
	if w.err == nil {
		w.writeOut()
	}
	close(w.wfull)
	<-w.wdone
	if w.err == nil {
		w.err = w.wErr
	}
}

// fileWriter writes the buffers handed over by writeOut, in order.
func (w *Writer) fileWriter() {
	defer close(w.wdone)
	for b := range w.wfull {
		if b == nil {
			w.nextFile()
			continue
		}
		if w.wErr == nil {
			out := b
			if w.zip != nil {
				out = w.zip.pack(b)
			}
			_, err := w.f.Write(out)
			w.sizes[len(w.sizes)-1] += int64(len(b))
			if err != nil {
				w.wErr = err
				w.wfail.Store(true)
			}
		}
		w.wfree <- b[:0]
	}
	if w.zip != nil {
		spareZips.Put(w.zip)
		w.zip = nil
	}
}

// nextFile closes the current part and creates the next (file side).
func (w *Writer) nextFile() {
	if w.wErr != nil {
		return
	}
	if err := w.f.Close(); err != nil {
		w.wErr = fmt.Errorf("%s: %w", w.f.Name(), err)
		w.wfail.Store(true)
		return
	}
	path := PartPath(w.paths[0], len(w.paths)+1)
	f, err := os.Create(path)
	if err != nil {
		w.wErr = err
		w.wfail.Store(true)
		return
	}
	w.f, w.paths, w.sizes = f, append(w.paths, path), append(w.sizes, 0)
}

// maxInterned bounds the event names interned on the sequence at once
// (about 20 MB): names come from the trace (kernel names, markers, a name
// per OpenMP task), and 800,000 of them took a conversion to 155 MB. Past
// it the sequence's incremental state is cleared, and the names used from
// then on are interned anew.
const maxInterned = 1 << 18

// forgetInterned forgets the names interned on the sequence, for a
// sequence whose incremental state is cleared next (startSequence).
func (w *Writer) forgetInterned() {
	clear(w.names)
	w.nameCache = [nameCacheSize]nameCacheEntry{}
	w.annots = [annotCount]bool{}
	w.newNames, w.newAnnots = w.newNames[:0], w.newAnnots[:0]
}

// internAnew clears the sequence's incremental state, for when maxInterned
// names are interned (checked by the caller, per row, where a call costs
// more than the check). The packets waiting for their time name interned
// ids: they go out first, before their time, as at a split.
func (w *Writer) internAnew() {
	if w.err != nil {
		return
	}
	w.drain()
	w.forgetInterned()
	w.startSequence()
}

// PartPath names part n (from 2) of the trace written to path:
// events-rank00003-part0002.perfetto-trace for events-rank00003.perfetto-trace.
func PartPath(path string, n int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-part%04d%s", strings.TrimSuffix(path, ext), n, ext)
}

// partSize is where a part ends: under MaxTrace by room for the row that
// crosses it and what the trace writes at its end (in a 2 GiB trace, 256
// MiB).
func partSize() int64 { return MaxTrace - MaxTrace/8 }

// split ends the current part when it has reached partSize and starts the
// next, between two rows, so that no slice is cut in two: the ends still
// due are written first. A part is a trace of its own: it starts by
// clearing the interned names, giving the defaults and declaring the clock
// again (its first timestamp is a whole unix time), and describes every
// track again. A flow whose ends fall in two parts is in neither.
func (w *Writer) split() {
	if w.Bytes-w.fileStart+int64(len(w.out)) < partSize() || w.err != nil {
		return
	}
	w.drain() // the ends of the slices begun in this part
	w.writeOut()
	if w.err != nil {
		return
	}
	w.wfull <- nil
	w.fileStart = w.Bytes
	w.parts++
	w.forgetInterned()
	w.startSequence()
	for _, d := range w.descs {
		w.out = append(w.out, d...)
	}
}

// Paths returns the files written, in order: the path given to Create, then
// the parts it was split into (PartPath). Valid after Close.
func (w *Writer) Paths() []string { return w.paths }

// Sizes returns the bytes of each file of Paths as a reader holds them:
// with Compressed, unpacked. Valid after Close.
func (w *Writer) Sizes() []int64 { return w.sizes }

func (w *Writer) addBatch(b *batch) {
	for _, t := range b.threads {
		tid := t.tid
		if tid == 0 {
			tid = w.pid*1000 + int64(t.index)
		}
		name := t.name
		if name == "" {
			name = "thread " + strconv.FormatUint(uint64(t.index), 10)
		}
		w.setThread(t.index, &thread{tid: tid, name: name})
	}
	for _, d := range b.devs {
		w.devices[d.id] = &device{id: d.id, name: d.name}
	}
	if len(b.launches) > 0 {
		w.addLaunches(b.launches)
	}
	// The batch's rows stay where the reader put them: the batch is the
	// ring's chunk for them until it is handed back.
	c := chunkOf(w.order)
	if w.ring[c] != nil {
		panic("perfetto: ring chunk in use")
	}
	w.ring[c] = b
	for i := range b.rows {
		b.busy[i] = true
	}
	w.order += uint64(len(b.rows))
	if b.hasNew && !b.final {
		w.flushReorder(b.sorted, false)
		// Every row that arrived ReorderRows before the last is merged:
		// hand its chunk back, moving any row still held aside.
		for w.err == nil && (w.freed+1)*batchRows+holdRows <= w.order {
			c := chunkOf(w.freed * batchRows)
			ch := w.ring[c]
			for i := range ch.rows {
				if ch.busy[i] {
					w.moveAside(ch, i, w.freed*batchRows+uint64(i)+1)
				}
			}
			w.ring[c] = nil
			ch.rows = ch.rows[:0]
			w.free <- ch
			w.freed++
		}
	}
}

// flushReorder merges the new rows nw (sorted) with the held ones and
// releases all but the last ReorderRows (all when final).
//
// The held rows up to the first new one are already in place, and are
// most of them: rows come late by a chunk of another thread's, not by
// the whole hold. They are released from where they are, or copied in
// one move, and only the rest is merged row by row (an unpredictable
// branch each).
func (w *Writer) flushReorder(nw []held, final bool) {
	a := w.pend
	k := len(a)
	if len(nw) > 0 {
		k = sort.Search(len(a), func(i int) bool { return cmpHeld(a[i], nw[0]) > 0 })
	}
	keep := ReorderRows
	if final {
		keep = 0
	}
	n := max(len(a)+len(nw)-keep, 0)
	direct := min(n, k) // released from a
	m := w.bufs[1-w.pb][:0]
	if need := len(a) - direct + len(nw); cap(m) < need { // at most a few times, not by append's doubling
		m = make([]held, 0, max(need, min(4*need, ReorderRows+ReorderRows/2)))
	}
	m = append(m, a[direct:k]...)
	i, j := k, 0
	for i < len(a) && j < len(nw) {
		if cmpHeld(a[i], nw[j]) <= 0 {
			m = append(m, a[i])
			i++
		} else {
			m = append(m, nw[j])
			j++
		}
	}
	m = append(m, a[i:]...)
	m = append(m, nw[j:]...)
	w.release(a[:direct], m[:n-direct], final)
	// The held rows stay where the merge put them (no copy back); the
	// other array takes the next merge.
	w.bufs[1-w.pb] = m[:0]
	w.pend = m[n-direct:]
	w.pb = 1 - w.pb
}

// release writes the rows of first and then second, in that order.
func (w *Writer) release(first, second []held, final bool) {
	for part, hs := range [2][]held{first, second} {
		for k := 0; k < len(hs) && w.err == nil; k++ {
			h := hs[k]
			var r *ringRow
			if at := h.seq - 1; at/batchRows >= w.freed { // its chunk is in the ring
				ch := w.ring[chunkOf(at)]
				r = &ch.rows[at%batchRows]
				ch.busy[at%batchRows] = false
			} else {
				row := w.over[h.seq]
				delete(w.over, h.seq)
				r = &row
			}
			if r.Start < w.last {
				w.late++
			}
			w.last = max(w.last, r.Start)
			w.split()
			if len(w.names) >= maxInterned {
				w.internAnew()
			}
			// The next row starts at the horizon, when this flush holds it.
			w.horizon = math.MinInt64
			if k+1 < len(hs) {
				w.horizon = w.p.WallTime(hs[k+1].start)
			} else if part == 0 && len(second) > 0 {
				w.horizon = w.p.WallTime(second[0].start)
			} else if final {
				w.horizon = math.MaxInt64
			}
			w.write(r)
			if len(w.rowEnds) > 0 {
				w.settle()
			}
			w.horizon = math.MinInt64
			if r.OMP != nil {
				w.ompHeldFull()
			}
		}
	}
}

// holdRows is how long the ring keeps a row: the rows held (at most
// ReorderRows + ReorderRows/2) and then some; a row held longer is moved
// aside (rare: a map insert and delete).
const holdRows = 2 * ReorderRows

// ringRows is the size of the row ring: holdRows and room for the reader
// to fill two reorder flushes' rows (ReorderRows/2 each) ahead of the
// worker.
const ringRows = holdRows + ReorderRows

// chunks is the number of batches in the ring.
const chunks = ringRows / batchRows

// chunkOf is the ring chunk of the row that arrived at (from 0), while its
// batch is in the ring: the ring takes the batches in turn.
func chunkOf(at uint64) uint64 { return at / batchRows % chunks }

// moveAside moves the row seq, still held in slot i of chunk ch, to w.over
// when the chunk is handed back (rare: a row held longer than holdRows).
func (w *Writer) moveAside(ch *batch, i int, seq uint64) {
	if w.over == nil {
		w.over = map[uint64]ringRow{}
	}
	w.over[seq] = ch.rows[i]
	ch.busy[i] = false
}

func (w *Writer) writeOut() {
	if w.err != nil || len(w.out) == 0 {
		return
	}
	if w.wfail.Load() {
		w.err = w.wErr
		return
	}
	w.Bytes += int64(len(w.out))
	w.wfull <- w.out
	w.out = <-w.wfree
}

// packet writes one TracePacket whose body is pkt (slow path).
func (w *Writer) packet(pkt enc) {
	w.out = enc(w.out).bytes(fTracePacket, pkt)
	if len(w.out) >= outFlush {
		w.writeOut()
	}
}

func (w *Writer) trackPacket(td enc) {
	pkt := enc(nil).bytes(fTracePacket, enc(nil).uint(fPktSeqID, uint64(w.seq)).bytes(fPktTrackDesc, td))
	w.descs = append(w.descs, pkt)
	w.out = append(w.out, pkt...)
	if len(w.out) >= outFlush {
		w.writeOut()
	}
}

// threadsLoMax bounds the thread indices kept in a slice, not the map.
const threadsLoMax = 1 << 16

func (w *Writer) setThread(t uint32, th *thread) {
	if t >= threadsLoMax {
		w.threads[t] = th
		return
	}
	if int(t) >= len(w.threadsLo) {
		w.threadsLo = append(w.threadsLo, make([]*thread, int(t)+1-len(w.threadsLo))...)
	}
	w.threadsLo[t] = th
}

// thread returns thread index t, describing its track first.
func (w *Writer) thread(t uint32) *thread {
	var th *thread
	if t < uint32(len(w.threadsLo)) {
		th = w.threadsLo[t]
	} else if t >= threadsLoMax {
		th = w.threads[t]
	}
	if th == nil { // past maxThreads (or, which cannot happen, not seen in Add)
		return w.otherThreads()
	}
	if th.uuid == 0 {
		th.uuid = w.newUUID()
		tdesc := enc(nil).int(fThPid, w.pid).int(fThTid, th.tid).str(fThName, th.name)
		w.trackPacket(enc(nil).uint(fTDUUID, th.uuid).bytes(fTDThread, tdesc))
		th.lanes = &laneSet{name: th.name, parent: w.proc, lanes: []lane{{uuid: th.uuid}}}
	}
	return th
}

// named describes a plain named track under parent and returns its uuid.
func (w *Writer) named(parent uint64, name string, rank int) uint64 {
	u := w.newUUID()
	td := enc(nil).uint(fTDUUID, u).str(fTDName, name).uint(fTDParent, parent)
	if rank != 0 {
		td = td.int(fTDSiblingRank, int64(rank))
	}
	w.trackPacket(td)
	return u
}

// dev returns device id, without describing its track.
func (w *Writer) dev(id uint64) *device {
	if d := w.lastDev; d != nil && d.id == id {
		return d
	}
	d := w.devices[id]
	if d == nil && id != 0 && len(w.devices) >= maxDevices {
		return w.otherDevices()
	}
	if d == nil { // not seen in Add: the host, or a device whose name was not read
		name := "host"
		if id != 0 {
			name = "device#" + strconv.FormatUint(id, 10)
		}
		d = &device{id: id, name: name}
		w.devices[id] = d
	}
	w.lastDev = d
	return d
}

// maxThreads, maxDevices and maxStreams bound the tracks of a trace (and
// what the writer keeps for each, a descriptor included, for every part of
// a split trace): thread indexes and device and stream ids are event
// arguments, and 1,000,000 device ids in a 4 MB trace took a conversion to
// 769 MB and 6.4 s. Threads, devices and a device's streams past them share
// one track each, where slices that overlap take lanes, or are left out and
// counted, as on any track. Only a damaged trace has so many.
const (
	maxThreads = 4096
	maxDevices = 1024
	maxStreams = 1024 // per device
)

// pastName names the track shared by the things past the first n.
func pastName(things string, n int) string {
	return "(" + things + " past the first " + strconv.Itoa(n) + ")"
}

func (w *Writer) otherThreads() *thread {
	if w.threadsPast == nil {
		name := pastName("threads", maxThreads)
		u := w.named(w.proc, name, 0)
		w.threadsPast = &thread{uuid: u, name: name, lanes: &laneSet{name: name, parent: w.proc, lanes: []lane{{uuid: u}}}}
	}
	return w.threadsPast
}

func (w *Writer) otherDevices() *device {
	if w.devicesPast == nil {
		w.devicesPast = &device{id: math.MaxUint64, name: pastName("devices", maxDevices)}
	}
	return w.devicesPast
}

// device returns device id, describing its track first.
func (w *Writer) device(id uint64) *device {
	d := w.dev(id)
	if d.uuid == 0 {
		d.uuid = w.named(w.proc, "device "+d.name, 0)
		d.streams = map[uint64]*laneSet{}
	}
	return d
}

func (w *Writer) stream(dev, s uint64) *laneSet {
	if w.lastStrm != nil && w.lastSDev == dev && w.lastSKey == s {
		return w.lastStrm
	}
	d := w.device(dev)
	ls := d.streams[s]
	if ls == nil && len(d.streams) >= maxStreams {
		if ls = d.otherStreams; ls == nil {
			name := pastName("streams", maxStreams)
			u := w.named(d.uuid, name, maxStreams)
			ls = &laneSet{name: name, parent: d.uuid, lanes: []lane{{uuid: u}}}
			d.otherStreams = ls
		}
	}
	if ls == nil {
		name := "stream " + strconv.FormatUint(s, 10)
		if s == 0 {
			name = "current stream"
		}
		u := w.named(d.uuid, name, int(s))
		ls = &laneSet{name: "stream " + strconv.FormatUint(s, 10), parent: d.uuid, lanes: []lane{{uuid: u}}}
		d.streams[s] = ls
	}
	w.lastStrm, w.lastSDev, w.lastSKey = ls, dev, s
	return ls
}

func (w *Writer) counter(dev uint64) uint64 {
	d := w.dev(dev)
	if d.counter == 0 {
		d.counter = w.newUUID()
		cd := enc(nil).uint(fCDUnit, unitSizeBytes)
		td := enc(nil).uint(fTDUUID, d.counter).str(fTDName, "memory in use "+d.name).uint(fTDParent, w.proc).bytes(fTDCounter, cd)
		w.trackPacket(td)
	}
	return d.counter
}

// nameKey identifies an event name by how it is made from a row.
type nameKey struct {
	form uint16 // kind<<4 | nameForm
	s    string
}

const (
	formKindName  = iota // kind + " " + s, or kind when s is ""
	formPlain            // s
	formTrigger          // "trigger " + s
	formUnpaired         // kind + " (unpaired)"
	formCopy             // "copy " + s
	formKind             // kind
	formOMP              // ompName(s), or kind when s is ""
	formOMPThread        // "OpenMP thread (" + s + ")"
	formTask             // "task " + s
	formMPI              // mpiName(s)
)

func (w *Writer) kindName(k trace.Kind) string {
	s := w.kinds[k]
	if s == "" {
		s = analysis.KindName(k)
		w.kinds[k] = s
	}
	return s
}

func (w *Writer) makeName(k trace.Kind, form uint16, s string) string {
	switch form {
	case formKindName:
		if s == "" {
			return w.kindName(k)
		}
		return w.kindName(k) + " " + s
	case formTrigger:
		return "trigger " + s
	case formUnpaired:
		return w.kindName(k) + " (unpaired)"
	case formCopy:
		return "copy " + s
	case formKind:
		return w.kindName(k)
	case formOMP:
		if s == "" {
			return w.kindName(k)
		}
		return ompName(s)
	case formOMPThread:
		return "OpenMP thread (" + s + ")"
	case formTask:
		return "task " + s
	case formMPI:
		return mpiName(s)
	}
	return s
}

// iid interns a name; it writes its interned data at the packet's start
// when new (interned data may precede the track event).
func (w *Writer) iid(k trace.Kind, form uint16, s string) uint64 {
	f := uint16(k)<<4 | form
	ptr := unsafe.StringData(s)
	// Names may lie a few bytes apart (substrings of one buffer, string
	// literals): the slot hashes every bit of the address, the length and
	// the form.
	h := (uint64(uintptr(unsafe.Pointer(ptr))) ^ uint64(len(s))<<40 ^ uint64(f)<<52) * 0x9e3779b97f4a7c15
	c := &w.nameCache[h>>(64-nameCacheBits)]
	if c.ptr == ptr && c.n == len(s) && c.form == f && c.id != 0 {
		return c.id
	}
	key := nameKey{form: f, s: s}
	id, ok := w.names[key]
	if !ok {
		id = uint64(len(w.names) + 1)
		w.names[key] = id
		w.newNames = append(w.newNames, internedName{id, w.makeName(k, form, s)})
	}
	*c = nameCacheEntry{ptr: ptr, n: len(s), form: f, id: id}
	return id
}

// nameCache maps a name string by its bytes' address (the rows of one
// kernel share their name's bytes) to its iid, before the map.
const (
	nameCacheBits = 10
	nameCacheSize = 1 << nameCacheBits
)

type nameCacheEntry struct {
	ptr  *byte // keeps the bytes alive: the address is not reused
	n    int
	form uint16
	id   uint64
}

// Debug annotation names, interned with fixed iids.
const (
	annotCorr = iota + 1
	annotBytes
	annotDirection
	annotStatus
	annotParallel
	annotTask
	annotParent
	annotLaunch
	annotTeam
	annotIters
	annotTaskTime
	annotCount
)

var annotNames = [annotCount]string{"", "corr", "bytes", "direction", "status",
	"parallel", "task", "parent", "launch", "team", "count", "task_time"}

func (w *Writer) annot(a int) uint64 {
	if !w.annots[a] {
		w.annots[a] = true
		w.newAnnots = append(w.newAnnots, a)
	}
	return uint64(a)
}

type internedName struct {
	iid  uint64
	name string
}

// Fast-path encoding straight into w.out.

func putVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// putTime appends a timestamp's varint: unix ns take 9 bytes, written in
// one append.
func putTime(b []byte, ts int64) []byte {
	v := uint64(ts)
	if v>>56 == 0 || v>>63 != 0 {
		return putVarint(b, v)
	}
	return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21)|0x80,
		byte(v>>28)|0x80, byte(v>>35)|0x80, byte(v>>42)|0x80, byte(v>>49)|0x80, byte(v>>56))
}

// fixLen writes the length of what follows the one-byte placeholder at
// pos, moving it when the length needs more than one byte.
func fixLen(b []byte, pos int) []byte {
	n := len(b) - pos - 1
	if n < 0x80 {
		b[pos] = byte(n)
		return b
	}
	var tmp [10]byte
	v := putVarint(tmp[:0], uint64(n))
	extra := len(v) - 1
	b = append(b, tmp[:extra]...)
	copy(b[pos+len(v):], b[pos+1:pos+1+n])
	copy(b[pos:], v)
	return b
}

// begin starts a TracePacket with a timestamp (on the incremental clock, or
// the unix ns on BOOTTIME when it lies before the clock's running value),
// the sequence id and SEQ_NEEDS_INCREMENTAL_STATE, and any new defaults and
// interned data; it returns the packet's length position.
func (w *Writer) begin(ts int64) int {
	pos := len(w.out) + 1
	b := append(w.out, fTracePacket<<3|wireLen, 0, fPktTimestamp<<3)
	if ts >= w.lastTS {
		b = putVarint(b, uint64(ts-w.lastTS))
		w.lastTS = ts
	} else {
		b = putTime(b, ts)
		b = append(b, fPktTimestampClock<<3&0x7f|0x80, fPktTimestampClock<<3>>7, clockBoottime)
	}
	b = append(b, w.seqFields...)
	if w.newDefaults {
		b = enc(b).bytes(fPktDefaults, w.defaults())
		w.newDefaults = false
	}
	if len(w.newNames) > 0 || len(w.newAnnots) > 0 {
		b = w.appendInterned(b)
	}
	w.out = b
	return pos
}

// appendInterned appends the names interned since the last packet.
func (w *Writer) appendInterned(b []byte) []byte {
	var id enc
	for _, n := range w.newNames {
		id = id.bytes(fIDEventNames, enc(nil).uint(fINIID, n.iid).str(fINName, n.name))
	}
	for _, a := range w.newAnnots {
		id = id.bytes(fIDDebugNames, enc(nil).uint(fINIID, uint64(a)).str(fINName, annotNames[a]))
	}
	w.newNames, w.newAnnots = w.newNames[:0], w.newAnnots[:0]
	return enc(b).bytes(fPktInterned, id)
}

func (w *Writer) end(pos int) {
	w.out = fixLen(w.out, pos)
	if len(w.out) >= outFlush {
		w.writeOut()
	}
}

// teStart opens the track event with its type and track (left out when it
// is the default track).
func (w *Writer) teStart(typ, track uint64) int {
	b := append(w.out, fPktTrackEvent<<3|wireLen, 0)
	pos := len(b) - 1
	b = append(b, fTEType<<3, byte(typ))
	if track != w.defTrack {
		b = putVarint(append(b, fTETrack<<3), track)
	}
	w.out = b
	w.countTrack(track)
	return pos
}

func (w *Writer) teEnd(pos int) { w.out = fixLen(w.out, pos) }

func (w *Writer) fixed64(field int, v uint64) {
	w.out = binary.LittleEndian.AppendUint64(enc(w.out).tag(field, wireI64), v)
}

func (w *Writer) debugUint(a int, v uint64) {
	b := append(w.out, fTEDebug<<3|wireLen, 0)
	pos := len(b) - 1
	b = append(b, fDANameIID<<3, byte(a), fDAUint<<3)
	b = putVarint(b, v)
	w.out = fixLen(b, pos)
}

func (w *Writer) debugStr(a int, s string) {
	b := append(w.out, fTEDebug<<3|wireLen, 0)
	pos := len(b) - 1
	b = append(b, fDANameIID<<3, byte(a), fDAString<<3|wireLen)
	b = putVarint(b, uint64(len(s)))
	b = append(b, s...)
	w.out = fixLen(b, pos)
}

// later reports whether a packet at ts waits in the heap: it lies after
// now, or after something due.
func (w *Writer) later(ts int64) bool {
	if ts > w.now {
		return true
	}
	n := w.next()
	return n != nil && n.ts <= ts
}

// instant writes an instant (or counter when typ is typeCounter), now or
// when the rows reach ts.
func (w *Writer) instant(ts int64, typ, track, name uint64, counter int64) {
	if w.later(ts) {
		if typ == typeCounter {
			w.push(pCounter, 0, ts, track, dueExtra{val: counter})
		} else {
			w.push(pInstant, 0, ts, track, dueExtra{name: name})
		}
		return
	}
	w.instantNow(ts, typ, track, name, counter)
}

func (w *Writer) instantNow(ts int64, typ, track, name uint64, counter int64) {
	p := w.begin(ts)
	t := w.teStart(typ, track)
	if name != 0 {
		w.out = putVarint(append(w.out, fTENameIID<<3), name)
	}
	if typ == typeCounter {
		w.out = putVarint(putVarint(w.out, fTECounterValue<<3), uint64(counter))
	}
	w.teEnd(t)
	w.end(p)
}

// slice writes a slice on the first lane of ls where it nests; r, when
// set, gives its debug annotations.
func (w *Writer) slice(ls *laneSet, start, dur int64, name uint64, flow, term uint64, r *ringRow) {
	end := start + max(dur, 0)
	l := w.pickLane(ls, start, end)
	if l == nil {
		return
	}
	if r == nil && flow == 0 && len(w.extraFlows) == 0 && w.later(start) {
		// A device interval that starts after its launch.
		w.push(pSlice, len(l.stack)-1, start, l.uuid, dueExtra{name: name, flow: term, val: end - start})
		return
	}
	var dir string
	if r != nil { // intern the annotation names before the packet
		if r.Corr != 0 {
			w.annot(annotCorr)
		}
		if r.Bytes != 0 {
			w.annot(annotBytes)
		}
		if dir = r.direction(); dir != "" {
			w.annot(annotDirection)
		}
		if r.Status != 0 {
			w.annot(annotStatus)
		}
	}
	w.sliceBegin(start, l.uuid, name, flow, r, dir)
	w.sliceEnd(end, len(l.stack)-1, l.uuid, term)
}

// sliceBegin writes a slice begin packet. Lengths are one-byte
// placeholders fixed up at the end (fixLen moves the bytes only for the rare
// packet of 128 bytes or more).
func (w *Writer) sliceBegin(start int64, track, name, flow uint64, r *ringRow, dir string) {
	if start >= w.lastTS && !w.newDefaults && len(w.newNames)+len(w.newAnnots)+len(w.extraFlows) == 0 &&
		len(w.seqFields) <= 10 && len(dir) <= 16 {
		w.sliceBeginFast(start, track, name, flow, r, dir)
		return
	}
	p := w.begin(start)
	t := w.teStart(typeSliceBegin, track)
	w.out = putVarint(append(w.out, fTENameIID<<3), name)
	if flow != 0 {
		w.fixed64(fTEFlowIDs, flow)
	}
	for _, f := range w.extraFlows {
		w.fixed64(fTEFlowIDs, f)
	}
	if r != nil {
		if r.Corr != 0 {
			w.debugUint(annotCorr, r.Corr)
		}
		if r.Bytes != 0 {
			w.debugUint(annotBytes, r.Bytes)
		}
		if dir != "" {
			w.debugStr(annotDirection, dir)
		}
		if r.Status != 0 {
			w.debugUint(annotStatus, r.Status)
		}
	}
	w.teEnd(t)
	w.end(p)
}

// appendSeq appends the sequence id and flags (4 bytes for the first 127
// sequences: four stores, not a copy).
func (w *Writer) appendSeq(b []byte) []byte {
	if f := w.seqFields; len(f) == 4 {
		return append(b, f[0], f[1], f[2], f[3])
	}
	return append(b, w.seqFields...)
}

// fastHead appends to w.out the start of a packet whose lengths each fit
// one byte: the packet, its time on the sequence clock, the sequence
// fields, and the track event's type and track; the packet's and the track
// event's lengths go at pkt+1 and te once they are known.
func (w *Writer) fastHead(ts int64, typ byte, track uint64) (b []byte, pkt, te int) {
	b = w.out
	pkt = len(b)
	b = append(b, fTracePacket<<3|wireLen, 0, fPktTimestamp<<3)
	b = putVarint(b, uint64(ts-w.lastTS))
	w.lastTS = ts
	b = w.appendSeq(b)
	te = len(b) + 1
	b = append(b, fPktTrackEvent<<3|wireLen, 0, fTEType<<3, typ)
	if track != w.defTrack {
		b = putVarint(append(b, fTETrack<<3), track)
	}
	return b, pkt, te
}

// sliceBeginFast is sliceBegin's common case, put together in one go:
// every length is one byte (at most 3+10+10+4+11+11+10 bytes, and 4
// annotations of at most 15+15+22+15).
func (w *Writer) sliceBeginFast(start int64, track, name, flow uint64, r *ringRow, dir string) {
	b, pkt, te := w.fastHead(start, typeSliceBegin, track)
	w.countTrack(track)
	b = putVarint(append(b, fTENameIID<<3), name)
	if flow != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, fTEFlowIDs<<3&0x7f|0x80|wireI64, fTEFlowIDs<<3>>7), flow)
	}
	if r != nil {
		annot := func(b []byte, a int, v uint64) []byte {
			p := len(b) + 1
			b = putVarint(append(b, fTEDebug<<3|wireLen, 0, fDANameIID<<3, byte(a), fDAUint<<3), v)
			b[p] = byte(len(b) - p - 1)
			return b
		}
		if r.Corr != 0 {
			b = annot(b, annotCorr, r.Corr)
		}
		if r.Bytes != 0 {
			b = annot(b, annotBytes, r.Bytes)
		}
		if dir != "" {
			b = append(b, fTEDebug<<3|wireLen, byte(4+len(dir)), fDANameIID<<3, annotDirection, fDAString<<3|wireLen, byte(len(dir)))
			b = append(b, dir...)
		}
		if r.Status != 0 {
			b = annot(b, annotStatus, r.Status)
		}
	}
	b[te] = byte(len(b) - te - 1)
	b[pkt+1] = byte(len(b) - pkt - 2)
	w.out = b
	if len(w.out) >= outFlush {
		w.writeOut()
	}
}

// sliceEnd ends the slice at depth on track at ts, now or when the rows
// reach ts.
func (w *Writer) sliceEnd(ts int64, depth int, track, term uint64) {
	switch {
	case !w.later(ts):
		w.endPacket(ts, track, term)
	case ts <= w.horizon:
		w.rowEnds = append(w.rowEnds, pending{ts: ts, ord: w.ord(pEnd, depth), track: track, x: term})
	default:
		w.pushEnd(depth, ts, track, term)
	}
}

// endPacket writes a slice end packet.
func (w *Writer) endPacket(ts int64, track, term uint64) {
	if term == 0 && ts >= w.lastTS && !w.newDefaults && len(w.newNames)+len(w.newAnnots) == 0 && len(w.seqFields) <= 10 {
		// The common end, put together in one go: every length is one
		// byte (at most 3+10+10+4+11 bytes).
		b, pkt, te := w.fastHead(ts, typeSliceEnd, track)
		b[te] = byte(len(b) - te - 1)
		b[pkt+1] = byte(len(b) - pkt - 2)
		w.out = b
		w.countTrack(track)
		if len(w.out) >= outFlush {
			w.writeOut()
		}
		return
	}
	p := w.begin(ts)
	t := w.teStart(typeSliceEnd, track)
	if term != 0 {
		w.fixed64(fTETermFlowIDs, term)
	}
	w.teEnd(t)
	w.end(p)
}

func (w *Writer) write(r *ringRow) {
	p := w.p
	ts := p.WallTime(r.Start)
	w.advance(ts)
	switch r.Kind {
	case trace.Marker, trace.Trigger, trace.Dropped, trace.StreamCreate, trace.StreamSet, trace.Fork,
		trace.MpiComm, trace.MpiRequestDone, trace.MpiClockSync:
		var name uint64
		switch r.Kind {
		case trace.Marker:
			name = w.iid(r.Kind, formPlain, r.Name)
		case trace.Trigger:
			name = w.iid(r.Kind, formTrigger, r.Name)
		case trace.Dropped:
			name = w.iid(r.Kind, formPlain, fmt.Sprintf("DROPPED %d events (%s)", r.Bytes, r.Name))
			ts = p.WallTime(r.Start + max(r.Dur, 0))
		default:
			name = w.iid(r.Kind, formKind, "")
		}
		w.instant(ts, typeInstant, w.thread(r.Thread).uuid, name, 0)
		return
	case trace.DeviceTime: // device time without its launch
		if r.Start != 0 {
			if w.noLaunch == nil {
				u := w.named(w.proc, "device time (launch unknown)", 0)
				w.noLaunch = &laneSet{name: "device time (launch unknown)", parent: w.proc, lanes: []lane{{uuid: u}}}
			}
			w.slice(w.noLaunch, ts, r.Dur, w.iid(r.Kind, formPlain, "kernel"), 0, 0, nil)
		}
		return
	}
	if r.OMP != nil {
		w.writeOMP(r)
		return
	}
	th := w.thread(r.Thread)
	if r.Dur == analysis.Unpaired {
		w.instant(ts, typeInstant, th.uuid, w.iid(r.Kind, formUnpaired, ""), 0)
		return
	}
	var name, flow, term uint64
	switch r.Kind {
	case trace.RegionPush:
		name = w.iid(r.Kind, formPlain, r.Name)
	case trace.MpiCallBegin, trace.MpiP2PBegin, trace.MpiCollectiveBegin, trace.MpiWaitBegin:
		name = w.iid(r.Kind, formMPI, r.Name)
		flow, term = w.mpi.mpiFlow(r, p.Rank)
	default:
		name = w.iid(r.Kind, formKindName, r.Name)
	}
	if r.Kind == trace.RunBegin {
		if r.DevDur >= 0 {
			flow = hash(uint64(p.Rank), 7, r.Corr)
		}
		if w.omp != nil {
			w.extraFlows = w.launchFlows(r.Corr)
		}
	}
	w.slice(th.lanes, ts, r.Dur, name, flow, term, r)
	w.extraFlows = nil
	switch r.Kind {
	case trace.RunBegin, trace.CopyBegin:
		if r.Device == 0 {
			return
		}
		s, d := ts, r.Dur
		var term uint64
		if r.DevDur >= 0 {
			d = r.DevDur
			if r.DevStart != 0 {
				s = p.WallTime(r.DevStart)
			}
			term = flow
		}
		st := w.stream(r.Device, r.Stream)
		var nm uint64
		if r.Kind == trace.CopyBegin {
			nm = w.iid(trace.CopyBegin, formCopy, r.direction())
		} else {
			nm = w.iid(0, formPlain, r.Name)
		}
		w.slice(st, s, d, nm, 0, term, nil)
	case trace.MemoryAllocBegin, trace.MemoryFreeBegin:
		ch := r.memoryChange()
		if dev, v, ok := w.mem.Add(&ch); ok {
			t := ts
			if r.Kind == trace.MemoryAllocBegin {
				t = p.WallTime(r.Start + r.Dur)
			}
			w.instant(t, typeCounter, w.counter(dev), 0, v)
		}
	}
}

// Late returns the rows that came out of start order (more than
// ReorderRows late); their lanes may be chosen badly. Valid after Close.
func (w *Writer) Late() int64 { return w.late }

// LeftOut returns the slices left out of the trace because they overlapped,
// without nesting, the slices of MaxLanes lanes of their track, or lay
// maxDepth deep (see pickLane). Valid after Close.
func (w *Writer) LeftOut() int64 { return w.leftOut }

// LostFlows returns the dependence flows not drawn: the source's
// completing segment was written before the sink's first segment came
// (MaxHeldSegments being held), or left out (LeftOut). Valid after Close.
func (w *Writer) LostFlows() int64 {
	if w.omp == nil {
		return 0
	}
	return w.omp.lost
}

// TaskGraph says what the task graph's bounds cost the dependence flows.
// Valid after Close.
func (w *Writer) TaskGraph() analysis.GraphStats {
	if w.omp == nil {
		return analysis.GraphStats{}
	}
	return w.omp.tasks.Stats
}

// Close writes what is held and finishes the file.
func (w *Writer) Close(res *analysis.Result) error {
	w.closeMux.Do(func() {
		if len(w.nw) > 0 {
			w.sortNew(w.cur, true)
		}
		if len(w.cur.rows) > 0 || len(w.cur.threads) > 0 || len(w.cur.devs) > 0 || w.cur.hasNew {
			w.work <- w.cur
		}
		close(w.work)
	})
	<-w.done
	w.giveBackRows()
	w.giveBackBufs()
	err := w.err
	if e := w.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	return nil
}

// grownBufs are a writer's buffers that grow with its trace, given to the
// next writer by spareBufs: the sets of new rows' keys, the merge buffers,
// the sort scratch and the output buffers. Each writer of a 1 M-event
// trace allocated about 55 MB of them, which with -j 16 the heap grew into
// (page faults: 3.4 s of system time for 32 such traces).
type grownBufs struct {
	sets  [nwBufs][]held
	merge [2][]held
	tmp   []held
	out   [outBufs][]byte
}

var spareBufs sync.Pool

// giveBackBufs puts the writer's growing buffers back in spareBufs, once
// the worker and the file writer are done.
func (w *Writer) giveBackBufs() {
	if w.out == nil { // given back by an earlier Close
		return
	}
	var sb grownBufs
	n := 0
	for _, set := range [][]held{w.nw, w.last0} {
		if set != nil {
			sb.sets[n], n = set[:0], n+1
		}
	}
	for n < nwBufs && len(w.nwFree) > 0 {
		sb.sets[n], n = (<-w.nwFree)[:0], n+1
	}
	sb.merge = [2][]held{w.bufs[0][:0], w.bufs[1][:0]}
	sb.tmp = w.tmp[:0]
	sb.out[0], n = w.out[:0], 1
	for n < outBufs && len(w.wfree) > 0 {
		sb.out[n], n = (<-w.wfree)[:0], n+1
	}
	w.nw, w.last0, w.pend, w.bufs, w.tmp, w.out = nil, nil, nil, [2][]held{}, nil, nil
	spareBufs.Put(&sb)
}

// giveBackRows puts the rows of the batches back in spareRows, once the
// worker is done with them.
func (w *Writer) giveBackRows() {
	give := func(b *batch) {
		if b != nil && b.rows != nil {
			clear(b.busy)
			spareRows.Put(&rowSlab{rows: b.rows[:0], busy: b.busy})
			b.rows, b.busy = nil, nil
		}
	}
	for _, b := range w.ring {
		give(b)
	}
	for {
		select {
		case b := <-w.free:
			give(b)
		default:
			give(w.cur)
			return
		}
	}
}

// MaxTrace is the size from which a trace is kept split: protobuf parsers
// stop at 2 GiB and the UI is bounded by browser memory. A variable so that
// tests can reach it with small traces.
var MaxTrace int64 = 2 << 30
