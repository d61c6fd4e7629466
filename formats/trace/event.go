package trace

// Event is one timed event (kinds 1..63) as the reader returns it and
// Batch.AddEvent takes it.
//
// The reader decodes with the file's kind table (FORMAT.md §4), so it also
// returns events that a newer writer added: an event whose Kind.Spec() is nil
// is of a kind this package does not know. Its Args are as the file's table
// describes them (Header.KindDesc), and consumers should skip it. Likewise a
// newer writer may have appended arguments to a known kind: the reader keeps
// them in Args after the kinds.go ones, up to MaxArgs, and drops the rest.
type Event struct {
	Kind   Kind
	Thread uint32 // thread index (see DefThread)
	Time   int64  // CLOCK_MONOTONIC ns (FORMAT.md §2, the epoch)
	// Args holds the kind's arguments in kinds.go order, then any the file's
	// kind table appends; unused slots are 0.
	Args [MaxArgs]uint64
}

// Arg returns the argument called name, and false when e's kind has none.
func (e *Event) Arg(name string) (uint64, bool) {
	s := e.Kind.Spec()
	if s == nil {
		return 0, false
	}
	i := s.ArgIndex(name)
	if i < 0 {
		return 0, false
	}
	return e.Args[i], true
}

// Corr returns the event's correlation id, and false when its kind has none.
func (e *Event) Corr() (uint64, bool) {
	if e.Kind.Spec() != nil {
		if c := compiledTab[e.Kind].corr; c >= 0 {
			return e.Args[c], true
		}
	}
	return 0, false
}

// Def is one definition record (kinds 64 and up). As with events, a def of a
// kind this package does not know (Kind.Spec() == nil) comes from a newer
// writer: Dict ignores it, and so should other consumers.
type Def struct {
	Kind Kind
	Args [MaxArgs]uint64
	// Text is the string of a DefString; empty for other kinds.
	Text string
}

// ID returns the id a def defines (its first argument).
func (d *Def) ID() uint64 { return d.Args[0] }

// ClockSync is one TSC reading and the CLOCK_MONOTONIC time read next to it.
type ClockSync struct {
	TSC  uint64
	Mono int64
}

// Number of per-kind and per-reason counters in Stats.
const (
	NumKindCounters   = 64
	NumReasonCounters = 8
)

// Stats are the trace's counters (FORMAT.md §8), totals since the start.
type Stats struct {
	// Events counts events written, by kind.
	Events [NumKindCounters]uint64
	// Dropped counts events lost, by Drop* reason; index 0 collects reasons
	// this version does not know.
	Dropped [NumReasonCounters]uint64
	// Clamped counts event times the writer raised to keep a batch in time order.
	Clamped uint64
	// Bytes is the size of the file before the stats chunk.
	Bytes uint64
	// End is the latest event time written so far.
	End int64
	// Final is set in the stats chunk that closes a trace cleanly.
	Final bool
}

// TotalEvents returns the sum of Events.
func (s *Stats) TotalEvents() uint64 {
	var n uint64
	for _, c := range s.Events {
		n += c
	}
	return n
}

// TotalDropped returns the events missing from the trace: the sum of the
// Dropped reasons that count events (DropCountsEvents).
func (s *Stats) TotalDropped() uint64 {
	var n uint64
	for r, c := range s.Dropped {
		if DropCountsEvents(uint64(r)) {
			n += c
		}
	}
	return n
}

// NamesLost returns the names and definitions lost (the Dropped reasons
// that do not count events): their events show placeholders instead.
func (s *Stats) NamesLost() uint64 {
	var n uint64
	for r, c := range s.Dropped {
		if !DropCountsEvents(uint64(r)) {
			n += c
		}
	}
	return n
}

// RecordType says what a Record holds.
type RecordType uint8

const (
	RecordEvent RecordType = iota + 1
	RecordDef
	RecordClock
	RecordStats
)

func (t RecordType) String() string {
	switch t {
	case RecordEvent:
		return "event"
	case RecordDef:
		return "def"
	case RecordClock:
		return "clock"
	case RecordStats:
		return "stats"
	}
	return "record?"
}

// Record is one item of a trace in file order, as Reader.Next returns it.
// Only the field named by Type is set.
type Record struct {
	Type  RecordType
	Event Event
	Def   Def
	// Clock is valid until the next call to Next.
	Clock []ClockSync
	Stats *Stats
}
