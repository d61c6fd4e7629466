// Package analysis is the analysis layer: it turns a trace's event stream
// into finished rows, once, for every output. Each begin/end pair becomes
// one span with a start and a duration, each instant its own row, and a
// kernel launch carries its device-side time when the trace has one. The
// Parquet, CSV, Perfetto, Chrome and summary outputs all read these rows,
// so they agree on what a kernel call or a copy is and how long it took.
//
// Pairing is streaming: memory holds the begins still open (begins.go),
// the open user regions per thread, and a bounded window of finished
// launches that wait for their device time (launchindex.go). Each is
// bounded (MaxOpen, MaxDepth, Pairer.Window), so that a trace that lost
// ends by the million, or a hostile one, is read in bounded memory: what
// passes a bound goes out as a half. OpenMP events (trace format 1.1)
// become rows with an OMP (omp.go); for them memory also holds each
// thread's open implicit tasks and waits and the created tasks not yet
// completed. A worker's late implicit-task end is clamped to its parallel
// region here (ompclamp.go). The outputs that need the task dependence
// graph follow it through the rows they get (taskgraph.go). The output
// tables' columns are declared next to their records (record.go, info.go).
package analysis

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/libocca/occa-tools/formats/trace"
)

// Row is one span or instant. Times are CLOCK_MONOTONIC ns (FORMAT.md §2);
// Process.WallTime converts them to unix ns.
type Row struct {
	// Kind is the begin kind of a span (RunBegin for a kernel launch), the
	// kind of an instant, RegionPush for a user region, or DeviceTime for a
	// device time whose launch was not found.
	Kind   trace.Kind
	Thread uint32
	Start  int64
	// Dur is the span's length in ns; 0 for an instant; -1 when only one half
	// of a pair was found (Start is then the half's time).
	Dur    int64
	Corr   uint64 // correlation id; a trigger's window number
	Status uint64 // the end's status argument (trace.StatusOK, StatusFailed)

	Device uint64 // device object id, 0 when none
	Stream uint64 // stream object id
	Kernel uint64 // kernel object id (runs, builds; an OpenMP row's launch's, where known)
	Memory uint64 // memory object: allocated, freed, or a copy's device side
	Src    uint64 // copy source memory object, 0 = host
	Dst    uint64 // copy destination memory object, 0 = host
	Bytes  uint64 // allocation, free or copy size; drop count for Dropped
	// Aux is a kind-specific value: a copy's direction argument, a build's
	// cache argument, a drop's reason, a trigger's action<<8|cause.
	Aux uint64
	// Name is the kernel's name (runs, builds), the region or marker name,
	// the allocation tag, or the device mode of a device setup.
	Name string

	// DevStart and DevDur are a launch's device-side start and length (ns);
	// DevDur is -1 when the trace has no device time for it.
	DevStart int64
	DevDur   int64

	// MPI rows (runtime/mpi): Peer is a point-to-point call's peer, a
	// collective's root or a clock sync's reference, as a world rank or
	// trace.MpiRankAny, MpiRankNull, MpiRankUnknown; Tag the message tag;
	// Comm the communicator, by an id the same on every rank (mpi.go);
	// Request the request a non-blocking call made
	// or an mpi_request_done completed. Name is the MPI function, Bytes the
	// message size, Aux a collective's communicator size or a wait's
	// request count.
	Peer, Tag     int32
	Comm, Request uint64

	// OMP holds an OpenMP row's ids (see OMP); nil on every other row. It
	// is valid only as long as the row.
	OMP *OMP
}

// Unpaired is Row.Dur for a span with only one half in the trace.
const Unpaired = -1

// KindName returns the row's kind as outputs name it: the begin kind's name
// without "_begin" ("run", "copy", "memory_alloc"), "region" for a user
// region, or the instant kind's name ("marker", "dropped"); "omp_task" for
// an OpenMP task's execution segment (Kind OmpTaskSchedule).
func KindName(k trace.Kind) string {
	switch k {
	case trace.RegionPush:
		return "region"
	case trace.OmpTaskSchedule:
		return "omp_task"
	}
	return strings.TrimSuffix(k.String(), "_begin")
}

// Direction names a copy row's direction ("H2D", ...), "" for other rows.
func (r *Row) Direction() string { return DirectionOf(r.Kind, r.Aux) }

// DirectionOf is Direction of a row of kind k and Aux aux, for a copy of
// a row's fields.
func DirectionOf(k trace.Kind, aux uint64) string {
	if k != trace.CopyBegin {
		return ""
	}
	return trace.CopyDirectionName(aux)
}

// Process describes one trace file: one process, usually one rank.
type Process struct {
	Path   string
	Header *trace.Header
	Dict   *trace.Dict
	// Rank is the header's rank, or when it has none (-1) the file's index
	// among the inputs, so that every process has a distinct rank.
	Rank int64
	// Clock holds the trace's clock measurements against rank 0's, when
	// its times are put on rank 0's timeline (clock.go).
	Clock []ClockSync
	toRef *clockMap
}

// WallTime converts a trace time to unix ns: on rank 0's clock when the
// trace has clock measurements and rank 0's epoch is known (clock.go),
// else on the trace's own.
func (p *Process) WallTime(t int64) int64 {
	if p.toRef != nil {
		return p.toRef.wallTime(t)
	}
	return p.Header.WallTime(t)
}

// Sink receives rows. The row is only valid during the call.
type Sink func(p *Process, r *Row) error

// DefaultWindow is the number of finished launches a Pairer keeps waiting
// for their device time.
const DefaultWindow = 1 << 16

// Pairer pairs one trace's events into rows.
//
// Begins wait in a map keyed by correlation id until their end comes (on
// any thread); user regions pair per thread by stack. A finished launch
// waits in a FIFO of at most Window launches for the DeviceTime event that
// carries its correlation id; when the FIFO is full its oldest launch goes
// out without device time, and a DeviceTime that finds no launch (or one
// that has its device time already) becomes a row of its own (Kind DeviceTime, Start/Dur the device interval). Rows come
// out in the order they complete, not in time order.
type Pairer struct {
	P      *Process
	Sink   Sink
	Window int

	open    map[uint64]trace.Event // begins by corr, except each thread's latest
	slots   []slot                 // each thread's latest begin, by thread index
	inSlots int                    // slots used
	lost    []trace.Event          // begins found without their end (park)
	regions map[uint32]*depthStack[trace.Event]
	runs    []corrRun // the waiting launches' ids (see index)
	hashed  bool      // runs gave up: waiting holds them
	waiting corrIndex // corr -> index in ring, when hashed
	kernels []string  // kernel names by id, a cache of Dict.Kernel
	ring    []Row
	head, n int
	row     Row
	taken   trace.Event // a begin takeBegin took from open
	omp     *ompState   // OpenMP events (omp.go); nil until the first
	comms   mpiComms    // MPI communicators (mpi.go)
}

// NewPairer returns a Pairer for p that sends rows to sink.
func NewPairer(p *Process, sink Sink) *Pairer {
	return &Pairer{P: p, Sink: sink, Window: DefaultWindow,
		open: make(map[uint64]trace.Event), regions: make(map[uint32]*depthStack[trace.Event])}
}

func (pr *Pairer) emit(r *Row) error {
	if r.OMP != nil {
		return pr.ompEmit(r)
	}
	return pr.Sink(pr.P, r)
}

// Add takes the next event in file order.
func (pr *Pairer) Add(e *trace.Event) error {
	s := e.Kind.Spec()
	if s == nil || e.Kind.IsDef() {
		return nil // a newer writer's kind: skip
	}
	r := &pr.row
	switch {
	case s.Pair != trace.KindInvalid && s.Begin:
		if s.Domain == trace.DomainOpenMP {
			return pr.ompBegin(e)
		}
		return pr.begin(e)
	case s.Pair != trace.KindInvalid:
		b := pr.takeBegin(e.Args[0], e.Thread, s.Pair)
		if len(pr.lost) > 0 { // mostly none (sendLost)
			if err := pr.sendLost(); err != nil {
				return err
			}
		}
		if b == nil {
			return pr.half(e)
		}
		if b.Kind == trace.RunBegin && pr.Window > 0 {
			return pr.waitIn(b, e) // until its device time comes
		}
		pr.fill(r, b, e)
		return pr.emit(r)
	}
	switch e.Kind {
	case trace.DeviceTime:
		return pr.deviceTime(e)
	case trace.RegionPush:
		st := pr.regions[e.Thread]
		if st == nil {
			st = &depthStack[trace.Event]{}
			pr.regions[e.Thread] = st
		}
		if outermost, full := st.push(*e); full { // it goes out as a half
			if err := pr.half(&outermost); err != nil {
				return err
			}
		}
		return nil
	case trace.RegionPop:
		stack := pr.regions[e.Thread]
		st := stack.items()
		// Pop the innermost region of that name; a pop without a push is a half.
		for i := len(st) - 1; i >= 0; i-- {
			if st[i].Args[0] == e.Args[0] {
				// Regions above it were never popped: emit them as halves.
				for j := len(st) - 1; j > i; j-- {
					if err := pr.half(&st[j]); err != nil {
						return err
					}
				}
				*r = Row{Kind: trace.RegionPush, Thread: e.Thread, Start: st[i].Time, Dur: e.Time - st[i].Time,
					Name: pr.P.Dict.String(e.Args[0]), DevDur: -1}
				stack.truncate(i)
				return pr.emit(r)
			}
		}
		return pr.half(e)
	case trace.OmpTaskCreate, trace.OmpTaskSchedule, trace.OmpTaskDependence, trace.OmpTaskDepend:
		return pr.ompInstant(e)
	}
	pr.fill(r, e, nil)
	return pr.emit(r)
}

// half emits a row for one half of a pair or region.
func (pr *Pairer) half(e *trace.Event) error {
	r := &pr.row
	if e.Kind.Spec().Begin || e.Kind == trace.RegionPush {
		pr.fill(r, e, nil)
	} else {
		k := e.Kind.Spec().Pair
		if e.Kind == trace.RegionPop {
			k = trace.RegionPush
		}
		b := trace.Event{Kind: k, Thread: e.Thread, Time: e.Time}
		if k != trace.RegionPush {
			b.Args[0] = e.Args[0]
		} else {
			b.Args = e.Args
		}
		pr.fill(r, &b, e)
	}
	r.Dur = Unpaired
	return pr.emit(r)
}

// fill makes r from begin b and end e (nil for an instant or a half).
func (pr *Pairer) fill(r *Row, b, e *trace.Event) {
	d := pr.P.Dict
	*r = Row{Kind: b.Kind, Thread: b.Thread, Start: b.Time, DevDur: -1}
	if e != nil {
		r.Dur = e.Time - b.Time
	}
	a := &b.Args
	switch b.Kind {
	case trace.DeviceSetupBegin:
		r.Corr, r.Name = a[0], d.String(a[1])
		if e != nil {
			r.Device = e.Args[1]
		}
	case trace.MemoryAllocBegin:
		r.Corr, r.Device, r.Bytes, r.Name = a[0], a[1], a[2], d.String(a[3])
		if e != nil {
			r.Memory = e.Args[1]
		}
	case trace.MemoryFreeBegin:
		r.Corr, r.Memory, r.Device, r.Bytes = a[0], a[1], a[2], a[3]
		r.Name = d.Memory(a[1]).Tag
	case trace.CopyBegin:
		r.Corr, r.Aux, r.Src, r.Dst, r.Bytes, r.Stream = a[0], a[1], a[2], a[3], a[4], a[5]
		r.Memory = r.Dst
		if r.Aux&3 == trace.CopyD2H {
			r.Memory = r.Src
		}
		if r.Memory != 0 {
			r.Device = d.MemoryDevice(r.Memory)
		}
	case trace.BuildBegin:
		r.Corr, r.Device, r.Name = a[0], a[1], d.String(a[2])
		if e != nil {
			r.Kernel, r.Aux = e.Args[1], e.Args[2]
		}
	case trace.RunBegin:
		r.Corr, r.Kernel, r.Device, r.Stream = a[0], a[1], a[2], a[3]
		if a[1] != 0 {
			r.Name = pr.kernelName(a[1])
		}
	case trace.StreamFinishBegin:
		r.Corr, r.Stream = a[0], a[1]
		if r.Stream != 0 {
			r.Device = d.Stream(r.Stream).Device
		}
	case trace.DeviceFinishBegin:
		r.Corr, r.Device = a[0], a[1]
	case trace.StreamCreate, trace.StreamSet:
		r.Device, r.Stream = a[0], a[1]
	case trace.RegionPush, trace.RegionPop, trace.Marker:
		r.Name = d.String(a[0])
	case trace.Dropped:
		r.Bytes, r.Aux = a[0], a[1]
		r.Name = trace.DropReasonName(a[1])
		if a[2] != 0 && int64(a[2]) <= b.Time {
			r.Start, r.Dur = int64(a[2]), b.Time-int64(a[2])
		}
	case trace.Trigger:
		r.Corr, r.Aux = a[0], a[1]<<8|a[2]&0xff
		r.Name = trace.TriggerActionName(a[1])
	case trace.MpiCallBegin:
		r.Corr, r.Name, r.Comm = a[0], mpiName(a[1]), pr.commID(a[2])
	case trace.MpiP2PBegin:
		r.Corr, r.Name, r.Peer, r.Tag, r.Bytes, r.Comm = a[0], mpiName(a[1]), int32(a[2]), int32(a[3]), a[4], pr.commID(a[5])
		if e != nil {
			r.Request = e.Args[1]
		}
	case trace.MpiCollectiveBegin:
		r.Corr, r.Name, r.Peer, r.Bytes, r.Comm, r.Aux = a[0], mpiName(a[1]), int32(a[2]), a[3], pr.commID(a[4]), a[5]
		if e != nil {
			r.Request = e.Args[1]
		}
	case trace.MpiWaitBegin:
		r.Corr, r.Name, r.Aux = a[0], mpiName(a[1]), a[2]
	case trace.MpiRequestDone:
		r.Request, r.Corr = a[0], a[1]
	case trace.MpiComm:
		// comm, parent, size, rank, world_rank, leader: the communicator,
		// its size (aux) and this rank's world rank (peer).
		r.Comm, r.Aux, r.Peer = pr.newComm(a), a[2], int32(a[4])
	case trace.MpiClockSync:
		// Reference rank (peer), this clock minus the reference's (aux, ns),
		// the measurement's error bound (bytes, ns), phase (name).
		r.Peer, r.Aux, r.Bytes = int32(a[0]), a[1], a[2]
		switch a[3] {
		case trace.MpiSyncInit:
			r.Name = "init"
		case trace.MpiSyncFinalize:
			r.Name = "finalize"
		}
	default:
		if b.Kind.Spec().Domain == trace.DomainOpenMP {
			pr.fillOMP(r, b, e)
		}
	}
	if e != nil {
		if i := statusArg[e.Kind]; i >= 0 {
			r.Status = e.Args[i]
		}
	}
}

// statusArg is the index of each kind's "status" argument, -1 for none.
var statusArg = func() (a [256]int8) {
	for k := range a {
		a[k] = -1
		if s := trace.Kind(k).Spec(); s != nil {
			a[k] = int8(s.ArgIndex("status"))
		}
	}
	return a
}()

// waitIn puts the launch of begin b and end e in the ring until its
// device time comes, filled in its ring slot.
func (pr *Pairer) waitIn(b, e *trace.Event) error {
	if pr.n == len(pr.ring) {
		if err := pr.makeRoom(); err != nil {
			return err
		}
	}
	i := pr.head + pr.n
	if i >= len(pr.ring) {
		i -= len(pr.ring)
	}
	r := &pr.ring[i]
	pr.fill(r, b, e)
	pr.n++
	pr.index(r.Corr, i)
	return nil
}

// makeRoom makes room in the full ring for one more launch: it grows the
// ring while it is smaller than Window, else sends out the oldest launch.
// The ring starts at smallRing rows, so that a small trace does not pay
// for a whole window, and then takes the whole window at once, so that a
// large one does not hold two large rings while it copies.
func (pr *Pairer) makeRoom() error {
	if len(pr.ring) == pr.Window {
		return pr.pop() // frees the slot the next launch goes to
	}
	size := pr.Window
	if len(pr.ring) == 0 {
		size = min(smallRing, pr.Window)
	}
	ring := make([]Row, size)
	old := len(pr.ring)
	for k := range pr.n { // in order from index 0
		ring[k] = pr.ring[(pr.head+k)%old]
	}
	for i := range pr.runs {
		pr.runs[i].pos = (pr.runs[i].pos - pr.head + old) % old
	}
	pr.ring, pr.head = ring, 0
	if pr.hashed {
		pr.waiting = corrIndex{}
		for k := range pr.n { // oldest first, so that a reused corr maps to the newest
			pr.waiting.put(ring[k].Corr, int32(k))
		}
	}
	return nil
}

const smallRing = 1 << 10

// pop sends out the oldest waiting launch.
func (pr *Pairer) pop() error {
	r := &pr.ring[pr.head]
	pr.unindex()
	if pr.head++; pr.head == len(pr.ring) {
		pr.head = 0
	}
	pr.n--
	return pr.emit(r) // from its slot: no copy
}

func (pr *Pairer) deviceTime(e *trace.Event) error {
	start, end := int64(e.Args[1]), int64(e.Args[2])
	dur := end - start
	if start == 0 {
		dur = end
	}
	// An end before the start (clocks out of step) is an instant: a
	// negative length would read as "no device time" (DevDur -1).
	dur = max(dur, 0)
	if i, ok := pr.lookup(e.Args[0]); ok && pr.ring[i].DevDur < 0 { // a second one is a row of its own
		r := &pr.ring[i]
		r.DevStart, r.DevDur = start, dur
		return nil
	}
	pr.row = Row{Kind: trace.DeviceTime, Thread: e.Thread, Start: start, Dur: dur, Corr: e.Args[0], DevStart: start, DevDur: dur}
	if start == 0 {
		pr.row.Start = e.Time
	}
	return pr.emit(&pr.row)
}

// Flush sends out everything still held: waiting launches, then begins and
// regions that never ended (as halves, Dur = Unpaired). Call it at the end of
// the trace.
func (pr *Pairer) Flush() error {
	for pr.n > 0 {
		if err := pr.pop(); err != nil {
			return err
		}
	}
	if err := pr.ompFlush(); err != nil {
		return err
	}
	// Halves in time order, so the output does not depend on map order.
	var rest []trace.Event
	for _, b := range pr.open {
		rest = append(rest, b)
	}
	for i := range pr.slots {
		if pr.slots[i].used {
			rest = append(rest, pr.slots[i].e)
			pr.slots[i].used = false
		}
	}
	pr.inSlots = 0
	for _, st := range pr.regions {
		rest = append(rest, st.items()...)
	}
	clear(pr.open)
	clear(pr.regions)
	if pr.omp != nil {
		pr.omp.clamp.flushing = true
	}
	if err := pr.halves(rest); err != nil {
		return err
	}
	if err := pr.ompFlushHeld(); err != nil {
		return err
	}
	pr.ompReset()
	return nil
}

// Options says how Read reads a trace.
type Options struct {
	Salvage bool // skip damaged chunks (trace.WithSalvage)
	Window  int  // Pairer.Window; 0 means DefaultWindow
	// Progress, when set, is called now and then with the bytes read so far.
	Progress func(offset int64)
	// Open, when set, is called with the process once the header is read,
	// before any row.
	Open func(p *Process) error
	// Reference, when set, is rank 0's epoch: the times of a trace of an MPI
	// run with clock measurements are put on rank 0's timeline (clock.go).
	Reference *Reference
}

// Read reads the trace at path and sends its rows to sink. index is the
// file's position among the inputs, the rank for a trace without one. Read
// returns the Process (also after an error, when the header could be read)
// and an error naming the file and offset of a damaged input. With
// Options.Salvage, problems are carried past and listed in Result.Problems.
// A trace closed cleanly whose final stats count no device times is paired
// without a window: its launches go out as they end.
func Read(path string, index int, o Options, sink Sink) (*Result, error) {
	r, c, err := trace.Open(path, trace.WithSalvage(o.Salvage))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p := &Process{Path: path, Header: r.Header(), Dict: r.Dict(), Rank: r.Header().Rank}
	if p.Rank < 0 {
		p.Rank = int64(index)
	}
	final := finalStats(r, c)
	if o.Reference != nil && p.Header.WorldSize > 1 && (final == nil || final.Events[trace.MpiClockSync] > 0) {
		// A first pass finds the measurements, which come after the first
		// rows (MPI_Init's) and at the end (MPI_Finalize's). A trace
		// closed cleanly without any (a launcher's rank variables, no MPI
		// library) is not read twice for them.
		if p.Clock, _ = ClockSyncs(path, o.Salvage); len(p.Clock) > 0 {
			p.toRef = newClockMap(*o.Reference, p.Clock)
		}
	}
	res := &Result{Process: p}
	if o.Open != nil {
		if err := o.Open(p); err != nil {
			return res, err
		}
	}
	pr := NewPairer(p, sink)
	if o.Window != 0 {
		pr.Window = o.Window
	}
	if final != nil && final.Events[trace.DeviceTime] == 0 {
		// Closed cleanly without device times: a launch waits for nothing.
		// Holding a window of them would cost a large trace 11 MB and a
		// tenth of the pairing's time, and put its launch rows out of step
		// with the rest.
		pr.Window = 0
	}
	n := 0
	var e trace.Event
	for {
		if err := r.ReadEventTo(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			res.fill(r)
			// What was read before the damage is sound: send it out.
			if ferr := pr.Flush(); ferr != nil {
				return res, ferr
			}
			return res, fmt.Errorf("%s: %w", path, err)
		}
		res.Events++
		if err := pr.Add(&e); err != nil {
			return res, err
		}
		if n++; n&0xffff == 0 && o.Progress != nil {
			o.Progress(r.Offset())
		}
	}
	if err := pr.Flush(); err != nil {
		return res, err
	}
	res.fill(r)
	return res, nil
}

// finalStats returns the final stats chunk of the trace r reads from c
// when c is a file that ends with one (trace.Reader.FinalStats), else nil.
func finalStats(r *trace.Reader, c io.Closer) *trace.Stats {
	f, ok := c.(*os.File)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	return r.FinalStats(f, fi.Size())
}

// Result is what Read learned besides the rows.
type Result struct {
	Process  *Process
	Events   uint64
	Stats    *trace.Stats // last stats chunk, nil when none
	Complete bool         // closed cleanly
	Problems []*trace.Error
	Skipped  int64
	// DefsLeftOut counts definitions the reader did not keep (trace.Dict's
	// bounds): names that read as placeholders.
	DefsLeftOut int
}

func (res *Result) fill(r *trace.Reader) {
	res.Stats, res.Complete, res.Problems, res.Skipped = r.Stats(), r.Complete(), r.Problems(), r.Skipped()
	res.DefsLeftOut = r.Dict().LeftOut()
}

// Dropped returns the events the trace says were lost, by the last stats
// chunk.
func (res *Result) Dropped() uint64 {
	if res.Stats == nil {
		return 0
	}
	return res.Stats.TotalDropped()
}
