package writer

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/formats/trace"
)

// noWindow is the window argument of triggers that belong to no window
// (filters.NoWindow).
const noWindow = 0xFFFF

// TimeWindow is a trigger window driven by the clock: it opens Delay after
// the start and closes Duration later (never when Duration is 0).
type TimeWindow struct {
	Index    int
	Delay    time.Duration
	Duration time.Duration
}

// Options configure a Loop.
type Options struct {
	FlushInterval time.Duration // periodic flush of live buffers
	FlushTimeout  time.Duration // how long Shutdown waits
	TimeWindows   []TimeWindow
	MaxBytes      uint64 // byte budget on the trace file; 0 = none
	IdentityClock bool   // ticks are CLOCK_MONOTONIC ns already
	Encoders      int    // goroutines compressing batches (the trace.Writer's concurrency)
	Start         time.Time
	Log           zerolog.Logger
	// Path names the trace file in messages.
	Path string
}

// Loop is the writer goroutine's state. Run it once; Shutdown ends it.
type Loop struct {
	h     Host
	tw    *trace.Writer
	out   Output
	opt   Options
	clock *trace.TickClock
	flat  *trace.FlatClock // clock, for the spans' records

	floor     map[uint32]int64     // per thread: time of its last event written
	buffers   map[uint32]*bufState // per pool slot: where its records stand
	idleBufs  []*bufState
	free      []*trace.Batch  // batches to reuse
	jobs      chan *encodeJob // to the encoder goroutines (started at the first batch)
	inflight  []*encodeJob    // submitted, in write order
	idleJobs  []*encodeJob
	tool      *trace.Batch // the tool's own events (thread 0)
	spans     []Span
	defBuf    []byte
	defs      []trace.Def
	lastSync  time.Time
	clockNew  []trace.ClockSync
	nextFlush time.Time
	done      uint64

	twin      []timeWindow
	startMono int64  // Options.Start on CLOCK_MONOTONIC
	lastTicks uint64 // ticks of the last sync point given to clock

	toggles         uint64
	toggleRecording bool // recording after the last toggle seen
	budgetHit       bool
	writeLost       uint64 // events lost to write errors
	defsLost        uint64 // definitions given up after long write errors
	writeErrLog     bool
	decodeErrLog    bool

	shutdown atomic.Bool
	finished chan struct{}
}

// Output is where the trace bytes go: the trace file. Sync is called after
// the final chunk.
type Output interface {
	Sync() error
	Close() error
}

// New prepares a loop writing through tw, whose bytes go to out.
func New(h Host, tw *trace.Writer, out Output, opt Options) *Loop {
	l := &Loop{
		h: h, tw: tw, out: out, opt: opt,
		clock:    trace.NewTickClock(opt.IdentityClock),
		floor:    map[uint32]int64{},
		buffers:  map[uint32]*bufState{},
		tool:     tw.Batch(0),
		defBuf:   make([]byte, 1<<20),
		finished: make(chan struct{}),
	}
	l.flat = l.clock.Flat()
	// The runtime stamps time arguments with its own clock, except
	// DEVICE_TIME's, which the source gives in ns (runtime/src/ot_internal.h).
	for k := range l.flat.TickArgs {
		if s := trace.Kind(k).Spec(); s != nil && trace.Kind(k) != trace.DeviceTime {
			for j, a := range s.Args {
				if a.Type == trace.ArgTime {
					l.flat.TickArgs[k] |= 1 << j
				}
			}
		}
	}
	if l.opt.FlushInterval <= 0 {
		l.opt.FlushInterval = time.Second
	}
	if l.opt.Encoders <= 0 {
		l.opt.Encoders = 1
	}
	if l.opt.FlushTimeout <= 0 {
		l.opt.FlushTimeout = 5 * time.Second
	}
	ticks, mono := h.SyncPoint()
	l.addSync(ticks, mono)
	l.lastTicks = ticks
	l.initTimeWindows(mono)
	l.lastSync = time.Now()
	l.nextFlush = time.Now().Add(l.opt.FlushInterval)
	return l
}

// Start sets the time windows' thresholds and runs the loop in a
// goroutine. The C side calls it once its gate is set up, before the
// application runs.
func (l *Loop) Start() {
	l.startTimeWindows()
	go l.Run()
}

// Run writes until shutdown or a final flush; it returns after closing the
// trace.
func (l *Loop) Run() {
	defer close(l.finished)
	for {
		wake := l.h.Wait(l.nextWake(time.Now()))
		req := l.h.FlushRequested()             // what this cycle will have flushed
		fromSignal := l.h.FinalRequested() != 0 // read after req: see Host
		if fromSignal || l.shutdown.Load() {
			// A signal handler may have interrupted a thread that holds the
			// definitions lock: never block on it then.
			l.finish(fromSignal || wake == WakeFlush)
			l.h.FlushDone(req)
			return
		}
		now := time.Now()
		// A flush requested after Wait returned for another reason is in req
		// all the same: this cycle must take the live buffers for it too.
		periodic := wake == WakeFlush || req > l.done || !now.Before(l.nextFlush)
		l.cycle(periodic, wake == WakeFlush)
		if periodic {
			l.nextFlush = now.Add(l.opt.FlushInterval)
			l.h.RearmSignals()
		}
		if req > l.done {
			l.done = req
			l.h.FlushDone(req)
		}
	}
}

// Shutdown asks Run for the final flush and waits for it (bounded by the
// flush timeout, so a stuck disk cannot hang the application's exit).
func (l *Loop) Shutdown() {
	l.shutdown.Store(true)
	l.h.RequestFlush()
	select {
	case <-l.finished:
	case <-time.After(l.opt.FlushTimeout):
		l.opt.Log.Error().Str("trace", l.opt.Path).Dur("timeout", l.opt.FlushTimeout).
			Msg("the final flush did not finish in time; the trace may miss its last events")
	}
}

func (l *Loop) nextWake(now time.Time) time.Duration {
	next := l.nextFlush
	if t := l.nextEdge(); !t.IsZero() && t.Before(next) {
		next = t
	}
	d := next.Sub(now)
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}

// cycle writes definitions, then full buffers, then (periodic) the committed
// part of every live buffer, then the tool's own events.
func (l *Loop) cycle(periodic, tryDefs bool) {
	l.collect(periodic)
	l.writeDefs(tryDefs)
	l.writeSpans()
	l.timeWindows()
	l.countSignalToggles()
	l.writeTool()
	if periodic {
		l.writeClockAndStats(false)
		l.forgetIdleFloors()
	}
	l.checkByteBudget()
}

// floorHorizon is how long after a thread's last event the loop forgets
// its floor: a thread that records again that much later starts above it
// anyway (clocks of two CPUs differ by far less). A program that makes a
// thread per task grew this map and the trace writer's for ever: 400,000
// threads held 18 MiB more than 40,000.
const floorHorizon = 10 * time.Second

// forgetIdleFloors drops the floors of the threads idle past floorHorizon,
// once there are many, and what the trace writer keeps of them.
func (l *Loop) forgetIdleFloors() {
	if len(l.floor) < 1024 {
		return
	}
	cut := l.now() - int64(floorHorizon)
	for th, t := range l.floor {
		if t < cut {
			delete(l.floor, th)
		}
	}
	l.tw.ForgetThreads(cut)
}

// collect takes the cycle's spans before the definitions, so that every
// definition an event of these spans uses is already in the queue.
func (l *Loop) collect(periodic bool) {
	l.drainFull()
	if !periodic {
		return
	}
	var cursor uint32
	for {
		s, r := l.h.TakePartial(&cursor)
		switch r {
		case PartialSpan:
			l.spans = append(l.spans, s)
		case PartialDrainFull:
			l.drainFull()
		default:
			return
		}
	}
}

func (l *Loop) drainFull() {
	for {
		s, ok := l.h.TakeFull()
		if !ok {
			return
		}
		l.spans = append(l.spans, s)
	}
}

// maxPendingDefs bounds the definitions kept for a retry while the file
// cannot be written.
const maxPendingDefs = 1 << 20

func (l *Loop) writeDefs(tryOnly bool) {
	// Definitions from a cycle whose defs chunk failed are still in l.defs:
	// written again first, so names are never lost to a passing disk error.
	for {
		n := l.h.TakeDefs(l.defBuf, tryOnly)
		if n == 0 {
			break
		}
		var err error
		l.defs, err = decodeDefs(l.defBuf[:n], l.defs)
		if err != nil {
			l.opt.Log.Error().Err(err).Msg("internal: bad definition entry; later names may show as ids")
			break
		}
	}
	if len(l.defs) == 0 {
		return
	}
	err := l.tw.WriteDefs(l.defs)
	l.check(err, 0)
	if err == nil {
		l.defs = l.defs[:0]
	} else if len(l.defs) > maxPendingDefs {
		l.defsLost += uint64(len(l.defs))
		l.defs = l.defs[:0]
	}
}

// writeSpans writes the cycle's spans in order. At the fastest level each
// is a raw events chunk, compressed and written at once (writeWhole,
// writeScanned). Otherwise, or where a span cannot be written raw, it is
// decoded into batches (one thread's batches carry its time floor from one
// to the next) that are streamed: each goes to the encoders as soon as it
// is full or its span ends, and is written, in span order, as soon as it
// and those before it are compressed. The file thus lags the cycle by at
// most the batches in flight, never by a whole cycle's compression.
func (l *Loop) writeSpans() {
	// Every span's records were committed before this point.
	l.syncNow()
	for _, s := range l.spans {
		if l.tw.TakesRaw() && len(s.Data) <= trace.MaxRawRecords {
			if s.Counts != nil && l.writeWhole(s) || s.Counts == nil && l.writeScanned(s) {
				continue
			}
		}
		bs := l.bufferOf(s)
		b := l.batchFor(s.Thread)
		data := s.Data
		for bs != nil && len(data) > 0 {
			n, err := b.AddRaw(data, &bs.st, l.flat)
			data = data[n:]
			bs.next += uint32(n)
			if err == trace.ErrBatchFull {
				l.submit(b)
				b = l.batchFor(s.Thread)
				continue
			}
			if err != nil {
				l.decodeError(s, "bad raw record: the rest of that buffer is skipped", err)
				l.forgetBuffer(s.Slot) // its later spans cannot be decoded
			}
			break
		}
		l.floor[s.Thread] = b.Last()
		l.h.Release(s) // the records are copied: the buffer can be reused now
		l.submit(b)
		if s.Full {
			l.forgetBuffer(s.Slot)
		}
	}
	l.spans = l.spans[:0]
	l.drain(0)
}

// writeWhole writes a whole buffer that its thread handed over as a raw
// events chunk: compressed as it is, with nothing done per event. It
// returns false, having written nothing, when the thread's counts cannot
// be its records' (a runtime bug): the caller copies them instead.
func (l *Loop) writeWhole(s Span) bool {
	b := l.batchFor(s.Thread)
	if err := b.SetRaw(s.Data, &l.flat.TickArgs, nil, s.Counts, l.clock.Nanos(s.LastTicks)); err != nil {
		l.decodeError(s, "a whole buffer's counts cannot be its records': its records are copied instead", err)
		l.free = append(l.free, b)
		return false
	}
	l.forgetBuffer(s.Slot)
	l.writeRaw(s, b)
	return true
}

// writeScanned writes any other span as a raw events chunk that starts
// from the state its buffer's records before it left: the writer only
// follows that state and counts the records (trace.ScanRaw), which costs
// about half of copying them. It returns false, having written nothing,
// when the span does not continue what was read of its buffer or holds a
// malformed record: the caller's copying path then says so and skips what
// it cannot decode.
func (l *Loop) writeScanned(s Span) bool {
	bs := l.bufferOf(s)
	if bs == nil { // the copying path skips it too, logged once
		return false
	}
	start := bs.st
	var counts [64]uint32
	if n, err := trace.ScanRaw(s.Data, &bs.st, &counts); n != len(s.Data) || err != nil {
		bs.st = start
		return false
	}
	b := l.batchFor(s.Thread)
	if err := b.SetRaw(s.Data, &l.flat.TickArgs, &start, &counts, l.clock.Nanos(bs.st.Ticks())); err != nil {
		bs.st = start // unreachable: ScanRaw counted the records
		l.free = append(l.free, b)
		return false
	}
	bs.next += uint32(len(s.Data))
	if s.Full {
		l.forgetBuffer(s.Slot)
	}
	l.writeRaw(s, b)
	return true
}

// writeRaw writes the raw batch b of span s, and releases s.
func (l *Loop) writeRaw(s Span, b *trace.Batch) {
	// Readers convert a raw chunk's ticks through the sync points written
	// before it, this cycle's included: then every record lies between two,
	// and the thread's floor is what the reader finds.
	if len(l.clockNew) > 0 {
		if err := l.tw.WriteClock(l.clockNew); err == nil {
			l.clockNew = l.clockNew[:0]
		}
	}
	l.floor[s.Thread] = b.Last()
	// Written at once, after the batches in flight (file order), into the
	// trace writer's one chunk buffer: it is as fast as the encoders and
	// keeps no chunk of a buffer's size per batch.
	l.drain(0)
	n := b.Len()
	err := l.tw.WriteBatch(b)
	l.h.Release(s)
	l.check(err, uint64(n))
	l.free = append(l.free, b)
}

// bufState is where the writer stands in a buffer's records.
type bufState struct {
	st   trace.RawState
	next uint32 // offset of the next span
}

// bufferOf returns the state s's records continue, or nil when they cannot
// be decoded: the buffer's earlier records were not.
func (l *Loop) bufferOf(s Span) *bufState {
	bs := l.buffers[s.Slot]
	if s.Offset == 0 {
		if bs == nil {
			if n := len(l.idleBufs); n > 0 {
				bs, l.idleBufs = l.idleBufs[n-1], l.idleBufs[:n-1]
			} else {
				bs = new(bufState)
			}
			l.buffers[s.Slot] = bs
		}
		bs.st.Reset()
		bs.next = 0
		return bs
	}
	if bs == nil || bs.next != s.Offset {
		l.decodeError(s, "a buffer's records were not all taken in order: the rest of that buffer is skipped", nil)
		return nil
	}
	return bs
}

// forgetBuffer drops the state of slot's buffer, done or undecodable, for
// reuse.
func (l *Loop) forgetBuffer(slot uint32) {
	if bs := l.buffers[slot]; bs != nil {
		delete(l.buffers, slot)
		l.idleBufs = append(l.idleBufs, bs)
	}
}

// decodeError reports the first span the writer could not decode: an
// internal error, since the runtime wrote it.
func (l *Loop) decodeError(s Span, msg string, err error) {
	if l.decodeErrLog {
		return
	}
	l.decodeErrLog = true
	l.opt.Log.Error().Err(err).Uint32("thread", s.Thread).Uint32("slot", s.Slot).Uint32("offset", s.Offset).Msg("internal: " + msg)
}

// batchBytes bounds a batch's events (and so its chunk): a buffer's span
// of raw records, about as large as the batch it becomes, is cut into
// batches of this size, so that the few batches alive at once (one being
// filled, those the encoders hold, the pool) stay within the writer's part
// of output.memory (runtime/core/start.go: writerReserve).
const batchBytes = 128 << 10

// batchFor takes a pooled batch for thread, starting at its floor.
func (l *Loop) batchFor(thread uint32) *trace.Batch {
	var b *trace.Batch
	if n := len(l.free); n > 0 {
		b, l.free = l.free[n-1], l.free[:n-1]
		b.Rebind(thread, l.floor[thread])
	} else {
		b = trace.NewBatch(thread, l.floor[thread])
		b.SetMax(batchBytes)
	}
	l.floor[thread] = b.Last()
	return b
}

// encodeJob is a batch handed to the encoder goroutines; done says it is
// compressed.
type encodeJob struct {
	b    *trace.Batch
	done chan struct{}
}

// submit compresses b and writes it after the batches submitted before it:
// on this goroutine with one encoder, else on the encoder goroutines, with
// at most Encoders batches in flight so that writing follows compression
// closely.
func (l *Loop) submit(b *trace.Batch) {
	if l.opt.Encoders <= 1 {
		l.tw.EncodeBatch(b) // an error comes back again from WriteEncoded
		l.writeEncoded(b)
		return
	}
	if l.jobs == nil {
		l.jobs = make(chan *encodeJob, l.opt.Encoders)
		for w := 0; w < l.opt.Encoders; w++ {
			go func(jobs <-chan *encodeJob) {
				for j := range jobs {
					l.tw.EncodeBatch(j.b)
					j.done <- struct{}{}
				}
			}(l.jobs)
		}
	}
	var j *encodeJob
	if n := len(l.idleJobs); n > 0 {
		j, l.idleJobs = l.idleJobs[n-1], l.idleJobs[:n-1]
	} else {
		j = &encodeJob{done: make(chan struct{}, 1)}
	}
	j.b = b
	l.inflight = append(l.inflight, j)
	l.jobs <- j
	l.drain(l.opt.Encoders)
}

// drain writes the compressed batches at the head of the queue, waiting
// for them while more than keep are in flight.
func (l *Loop) drain(keep int) {
	for len(l.inflight) > 0 {
		j := l.inflight[0]
		if len(l.inflight) > keep {
			<-j.done
		} else {
			select {
			case <-j.done:
			default:
				return
			}
		}
		l.inflight = l.inflight[1:]
		l.writeEncoded(j.b)
		j.b = nil
		l.idleJobs = append(l.idleJobs, j)
	}
	l.inflight = l.inflight[:0]
}

// writeEncoded writes a compressed batch, counts what a failed write lost,
// and keeps the batch for reuse.
func (l *Loop) writeEncoded(b *trace.Batch) {
	n := b.Len()
	err := l.tw.WriteEncoded(b)
	if err != nil {
		b.Reset()
	}
	l.check(err, uint64(n))
	l.free = append(l.free, b)
}

// stopEncoders ends the encoder goroutines once nothing is in flight.
func (l *Loop) stopEncoders() {
	l.drain(0)
	if l.jobs != nil {
		close(l.jobs)
		l.jobs = nil
	}
}

func (l *Loop) writeBatch(b *trace.Batch) {
	n := b.Len()
	if n == 0 {
		return
	}
	err := l.tw.WriteBatch(b)
	if err != nil {
		b.Reset()
	}
	l.check(err, uint64(n))
}

// check counts events lost to a write error and reports the first.
func (l *Loop) check(err error, events uint64) {
	if err == nil {
		return
	}
	l.writeLost += events
	if !l.writeErrLog {
		l.writeErrLog = true
		l.opt.Log.Error().Err(err).Str("trace", l.opt.Path).
			Msg("cannot write the trace; events are counted as lost (reason write_error) until writing works again")
		l.h.Critical(trace.Dropped, events, fmt.Sprintf("cannot write %s: %v", l.opt.Path, err))
	}
}

func (l *Loop) syncNow() {
	ticks, mono := l.h.SyncPoint()
	l.addSync(ticks, mono)
	l.lastTicks = ticks
	l.lastSync = time.Now()
}

func (l *Loop) addSync(ticks uint64, mono int64) {
	before := l.clock.Points()
	l.clock.Add(ticks, mono)
	if l.clock.Points() != before || l.opt.IdentityClock {
		l.clockNew = append(l.clockNew, trace.ClockSync{TSC: ticks, Mono: mono})
	}
}

// toolEvent records one of the tool's own events on thread 0, now.
func (l *Loop) toolEvent(k trace.Kind, at int64, args ...uint64) {
	if l.tool.Add(k, at, args...) == trace.ErrBatchFull {
		l.writeBatch(l.tool)
		l.tool.Add(k, at, args...)
	}
}

func (l *Loop) now() int64 {
	ticks, _ := l.h.SyncPoint()
	return l.clock.Nanos(ticks)
}

func (l *Loop) writeTool() { l.writeBatch(l.tool) }

// countSignalToggles turns each toggle signal delivery into a Trigger: the
// handler only flips the gate and logs it, since it may not record into a
// buffer it interrupted.
func (l *Loop) countSignalToggles() {
	n := l.h.Counters().SignalToggles
	for ; l.toggles < n; l.toggles++ {
		ticks, recording, ok := l.h.SignalToggle(l.toggles)
		at := l.clock.Nanos(ticks)
		if !ok { // over 64 toggles in one cycle: its time is lost, not the toggle
			at, recording = l.now(), !l.toggleRecording
		}
		l.toggleRecording = recording
		action := uint64(trace.TriggerPause)
		if recording {
			action = trace.TriggerResume
		}
		l.toolEvent(trace.Trigger, at, noWindow, action, trace.CauseSignal)
	}
}

func (l *Loop) checkByteBudget() {
	if l.opt.MaxBytes == 0 || l.budgetHit || l.tw.BytesWritten() < l.opt.MaxBytes {
		return
	}
	l.budgetHit = true
	l.h.BudgetExhausted()
	l.toolEvent(trace.Trigger, l.now(), noWindow, trace.TriggerBudget, trace.CauseBudget)
	l.opt.Log.Info().Uint64("bytes", l.tw.BytesWritten()).Msg("byte budget reached: recording stopped")
}

func (l *Loop) stats(final bool) *trace.Stats {
	c := l.h.Counters()
	s := &trace.Stats{Dropped: c.Dropped, Final: final, Clamped: c.TicksClamped}
	s.Dropped[trace.DropWriteError] += l.writeLost
	s.Dropped[trace.DropDefinitions] += l.defsLost
	return s
}

func (l *Loop) writeClockAndStats(final bool) {
	if len(l.clockNew) > 0 {
		if err := l.tw.WriteClock(l.clockNew); err == nil {
			l.clockNew = l.clockNew[:0]
		}
	}
	l.check(l.tw.WriteStats(l.stats(final)), 0)
}

// finish is the final flush: stop recording, take everything, close.
func (l *Loop) finish(fromSignal bool) {
	l.h.StopForGood()
	// Let events that passed the state check before it commit.
	time.Sleep(200 * time.Microsecond)
	l.cycle(true, fromSignal)
	s := l.stats(true)
	if len(l.clockNew) > 0 {
		l.tw.WriteClock(l.clockNew)
	}
	err := l.tw.WriteStats(s)
	if err == nil {
		err = l.out.Sync()
	}
	if cerr := l.out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		l.opt.Log.Error().Err(err).Str("trace", l.opt.Path).Msg("closing the trace failed; it lacks its final stats")
	}
	l.stopEncoders()
	l.report(s)
}

// report says at exit what the trace holds: quietly (info) when all is well,
// as a warning when events were lost.
func (l *Loop) report(s *trace.Stats) {
	st := l.tw.Stats()
	lost := s.TotalDropped()
	ev := l.opt.Log.Info()
	if lost > 0 || s.NamesLost() > 0 {
		ev = l.opt.Log.Warn()
		for r, n := range s.Dropped {
			if n > 0 {
				ev = ev.Uint64("dropped_"+trace.DropReasonName(uint64(r)), n)
			}
		}
		if lost > 0 {
			l.h.Critical(trace.Dropped, lost, fmt.Sprintf("%d events were lost; see the trace's stats", lost))
		}
	}
	ev.Str("trace", l.opt.Path).Uint64("events", st.TotalEvents()).Uint64("dropped", lost).
		Uint64("bytes", st.Bytes).Msg("trace written")
}
