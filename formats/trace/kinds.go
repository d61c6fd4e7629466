package trace

// Kind numbers an event kind. Kinds 1..63 are timed events recorded on a
// thread; occa_tools_event_kind_t in runtime/include/occa_tools.h and the
// runtime's other C tables are generated from this file (make generate).
// Kinds 64 and up are definitions (names and object descriptions), which are
// timeless and live in definition chunks. FORMAT.md describes both.
type Kind uint8

// Timed events. Every enter/exit pair has the call's correlation id as its
// first argument.
const (
	KindInvalid Kind = iota
	DeviceSetupBegin
	DeviceSetupEnd
	MemoryAllocBegin
	MemoryAllocEnd
	MemoryFreeBegin
	MemoryFreeEnd
	CopyBegin
	CopyEnd
	BuildBegin
	BuildEnd
	RunBegin
	RunEnd
	DeviceTime
	StreamCreate
	StreamSet
	StreamFinishBegin
	StreamFinishEnd
	DeviceFinishBegin
	DeviceFinishEnd
	RegionPush
	RegionPop
	Marker
	Dropped
	Trigger
	Fork
	// OpenMP (OMPT) events, format 1.1. Every begin/end pair has the id of
	// the region or task it delimits as its first argument (unique in the
	// process, from the correlation id space), so it pairs like a call.
	OmpThreadBegin
	OmpThreadEnd
	OmpParallelBegin
	OmpParallelEnd
	OmpImplicitTaskBegin
	OmpImplicitTaskEnd
	OmpWorkBegin
	OmpWorkEnd
	OmpSyncBegin
	OmpSyncEnd
	OmpSyncWaitBegin
	OmpSyncWaitEnd
	OmpTaskCreate
	OmpTaskSchedule
	OmpTaskDependence
	OmpTaskDepend
	// MPI events, format 2.1, recorded by the PMPI library (runtime/mpi).
	// Peers and roots are world ranks; comm and request are the MPI
	// handles' values (a handle is reused only after its object is freed or
	// its request completed, so each use pairs with the latest creation).
	MpiCallBegin
	MpiCallEnd
	MpiP2PBegin
	MpiP2PEnd
	MpiCollectiveBegin
	MpiCollectiveEnd
	MpiWaitBegin
	MpiWaitEnd
	MpiRequestDone
	MpiComm
	MpiClockSync
	numEventKinds // sentinel: first unused timed kind
)

// Definitions.
const (
	DefString Kind = 64 + iota // interned string: id, text
	DefDevice
	DefKernel
	DefKernelTag
	DefStream
	DefMemory
	DefThread
	numDefKinds // sentinel
)

// MaxArgs is the largest number of arguments any kind has.
const MaxArgs = 6

// ArgType says how an argument is encoded and what it refers to.
type ArgType uint8

const (
	ArgUint   ArgType = iota + 1 // plain unsigned value
	ArgInt                       // signed value (zig-zag encoded)
	ArgCorr                      // correlation id (delta to the batch's previous correlation id)
	ArgString                    // id of an interned string (DefString), 0 = none
	ArgDevice                    // device object id (DefDevice), 0 = none
	ArgKernel                    // kernel object id (DefKernel), 0 = none
	ArgMemory                    // memory object id (alloc end or DefMemory), 0 = none/host
	ArgStream                    // stream object id (DefStream), 0 = device's current stream
	ArgTime                      // absolute time in ns (delta to the event's own time)
	ArgThread                    // thread index (DefThread)
)

var argTypeNames = [...]string{"", "uint", "int", "corr", "string", "device", "kernel", "memory", "stream", "time", "thread"}

// String returns the type's name ("uint", "corr", ...), or "type(N)" for a
// type this package does not know (a file's kind table may hold one, see
// FORMAT.md §4).
func (t ArgType) String() string {
	if t > 0 && int(t) < len(argTypeNames) {
		return argTypeNames[t]
	}
	return "type(" + itoa(uint64(t)) + ")"
}

// Arg describes one argument of a kind.
type Arg struct {
	Name string
	Type ArgType
}

// Spec describes a kind: its name in dumps and converters, its domain, its
// arguments in order, and for begin/end kinds the other half of the pair.
type Spec struct {
	Name   string
	Domain Domain
	Args   []Arg
	// Pair is the matching end kind for a begin, the begin for an end, and
	// KindInvalid for instants and definitions.
	Pair Kind
	// Begin is true for the enter half of a pair.
	Begin bool
}

// Domain groups kinds; it matches occa_tools_domain_t.
type Domain uint8

const (
	DomainDevice Domain = iota
	DomainMemory
	DomainCopy
	DomainBuild
	DomainKernel
	DomainStream
	DomainSync
	DomainUser
	DomainTool
	DomainOpenMP
	DomainMPI
	numDomains
)

var domainNames = [numDomains]string{"device", "memory", "copy", "build", "kernel", "stream", "sync", "user", "tool", "openmp", "mpi"}

func (d Domain) String() string {
	if d < numDomains {
		return domainNames[d]
	}
	return "domain?"
}

// ParseDomain returns the domain called name, as the config spells it.
func ParseDomain(name string) (Domain, bool) {
	for i, n := range domainNames {
		if n == name {
			return Domain(i), true
		}
	}
	return 0, false
}

// Domains lists every domain in order.
func Domains() []Domain {
	d := make([]Domain, numDomains)
	for i := range d {
		d[i] = Domain(i)
	}
	return d
}

// Values of CopyBegin's "direction" argument (bits 0-1) and its async flag (bit 2).
const (
	CopyH2D   = 0
	CopyD2H   = 1
	CopyD2D   = 2
	CopyH2H   = 3
	CopyAsync = 4
)

// CopyDirectionName names the direction bits of a CopyBegin "direction" argument.
func CopyDirectionName(dir uint64) string {
	return [...]string{"H2D", "D2H", "D2D", "H2H"}[dir&3]
}

// Values of BuildEnd's "cache" argument.
const (
	CacheUnknown = 0
	CacheHit     = 1
	CacheMiss    = 2
)

// Values of every end kind's "status" argument.
const (
	StatusOK     = 0
	StatusFailed = 1
)

// Values of Dropped's "reason" argument.
const (
	DropBufferFull  = 1               // no free buffer: the writer could not keep up (config output.on_full = "drop")
	DropWriteError  = 2               // the trace file could not be written (disk full, I/O error)
	DropStringTable = 3               // the string table was full; names were replaced by id 0
	DropDefinitions = 4               // the definition queue was full
	DropShutdown    = 5               // events arrived after the final flush
	DropReentrant   = 6               // a call made inside another one on its thread (from a signal handler)
	DropTooDeep     = 7               // nesting deeper than the runtime tracks (regions, OpenMP regions)
	numDropReasons  = DropTooDeep + 1 // sentinel (a bare name here would repeat "= 7")
)

var dropReasonNames = [numDropReasons]string{"", "buffer_full", "write_error", "string_table_full", "definition_queue_full", "after_shutdown", "reentrant", "too_deep"}

// DropCountsEvents says whether reason r counts events that are missing from
// the trace (FORMAT.md §8). The others count names and definitions lost;
// the events that use them are in the trace, with placeholders for names.
func DropCountsEvents(r uint64) bool { return r != DropStringTable && r != DropDefinitions }

// DropReasonName names a Dropped reason.
func DropReasonName(r uint64) string {
	if r > 0 && r < uint64(numDropReasons) {
		return dropReasonNames[r]
	}
	return "unknown"
}

// Values of Trigger's "action" argument.
const (
	TriggerOpen   = 1 // a window opened: recording may resume
	TriggerClose  = 2 // a window closed
	TriggerPause  = 3 // recording paused (control API or signal)
	TriggerResume = 4 // recording resumed (control API or signal)
	TriggerBudget = 5 // the event or byte budget ran out: recording stopped for good
)

// Values of Trigger's "cause" argument.
const (
	CauseLaunch = 1 // a kernel launch count
	CauseRegion = 2 // a user region instance
	CauseTime   = 3 // a delay or duration
	CauseAPI    = 4 // occa_tools_start/stop
	CauseSignal = 5 // the toggle signal
	CauseBudget = 6 // the budget
)

// Values of the MPI kinds' "function" argument: the MPI function called
// (MpiFunctionName gives its name without the MPI_ prefix).
var mpiFunctionNames = [...]string{"", "init", "init_thread", "finalize", "comm_dup", "comm_split", "comm_create", "comm_free",
	"send", "ssend", "bsend", "rsend", "recv", "isend", "issend", "ibsend", "irsend", "irecv",
	"wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome",
	"barrier", "bcast", "reduce", "allreduce", "gather", "allgather", "scatter", "alltoall",
	"ibarrier", "ibcast", "ireduce", "iallreduce",
	"sendrecv", "probe", "iprobe", "gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan"}

// MpiFunctionName names an MPI kind's "function" value ("send", "allreduce",
// ...), or returns "" for a value this package does not know.
func MpiFunctionName(f uint64) string {
	if f < uint64(len(mpiFunctionNames)) {
		return mpiFunctionNames[f]
	}
	return ""
}

// Values of MpiP2PBegin's "peer" and MpiCollectiveBegin's "root" that are
// not ranks.
const (
	MpiRankAny     = -1 // MPI_ANY_SOURCE
	MpiRankNull    = -2 // MPI_PROC_NULL, or no root (an all-to-all collective)
	MpiRankUnknown = -3 // a rank of a communicator the library could not translate (an intercommunicator)
)

// Values of MpiClockSync's "phase" argument.
const (
	MpiSyncInit     = 1 // measured at the end of MPI_Init
	MpiSyncFinalize = 2 // measured at the start of MPI_Finalize
)

var (
	triggerActionNames = [...]string{TriggerOpen: "open", TriggerClose: "close", TriggerPause: "pause", TriggerResume: "resume", TriggerBudget: "budget"}
	triggerCauseNames  = [...]string{CauseLaunch: "launch", CauseRegion: "region", CauseTime: "time", CauseAPI: "api", CauseSignal: "signal", CauseBudget: "budget"}
)

// TriggerActionName names a Trigger "action" value ("open", "close", ...),
// or returns "" for a value this package does not know.
func TriggerActionName(a uint64) string {
	if a < uint64(len(triggerActionNames)) {
		return triggerActionNames[a]
	}
	return ""
}

// TriggerCauseName names a Trigger "cause" value ("launch", "region", ...),
// or returns "" for a value this package does not know.
func TriggerCauseName(c uint64) string {
	if c < uint64(len(triggerCauseNames)) {
		return triggerCauseNames[c]
	}
	return ""
}

var specs = [numDefKinds]Spec{
	DeviceSetupBegin: {Name: "device_setup_begin", Domain: DomainDevice, Pair: DeviceSetupEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"mode", ArgString}, {"index", ArgInt}, {"properties", ArgString}}},
	DeviceSetupEnd: {Name: "device_setup_end", Domain: DomainDevice, Pair: DeviceSetupBegin,
		Args: []Arg{{"corr", ArgCorr}, {"device", ArgDevice}, {"status", ArgUint}}},
	MemoryAllocBegin: {Name: "memory_alloc_begin", Domain: DomainMemory, Pair: MemoryAllocEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"device", ArgDevice}, {"bytes", ArgUint}, {"tag", ArgString}}},
	MemoryAllocEnd: {Name: "memory_alloc_end", Domain: DomainMemory, Pair: MemoryAllocBegin,
		Args: []Arg{{"corr", ArgCorr}, {"memory", ArgMemory}, {"address", ArgUint}, {"status", ArgUint}}},
	MemoryFreeBegin: {Name: "memory_free_begin", Domain: DomainMemory, Pair: MemoryFreeEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"memory", ArgMemory}, {"device", ArgDevice}, {"bytes", ArgUint}}},
	MemoryFreeEnd: {Name: "memory_free_end", Domain: DomainMemory, Pair: MemoryFreeBegin,
		Args: []Arg{{"corr", ArgCorr}, {"status", ArgUint}}},
	CopyBegin: {Name: "copy_begin", Domain: DomainCopy, Pair: CopyEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"direction", ArgUint}, {"src", ArgMemory}, {"dst", ArgMemory}, {"bytes", ArgUint}, {"stream", ArgStream}}},
	CopyEnd: {Name: "copy_end", Domain: DomainCopy, Pair: CopyBegin,
		Args: []Arg{{"corr", ArgCorr}, {"status", ArgUint}}},
	BuildBegin: {Name: "build_begin", Domain: DomainBuild, Pair: BuildEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"device", ArgDevice}, {"name", ArgString}, {"source", ArgString}, {"properties", ArgString}, {"properties_hash", ArgUint}}},
	BuildEnd: {Name: "build_end", Domain: DomainBuild, Pair: BuildBegin,
		Args: []Arg{{"corr", ArgCorr}, {"kernel", ArgKernel}, {"cache", ArgUint}, {"status", ArgUint}}},
	RunBegin: {Name: "run_begin", Domain: DomainKernel, Pair: RunEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"kernel", ArgKernel}, {"device", ArgDevice}, {"stream", ArgStream}}},
	RunEnd: {Name: "run_end", Domain: DomainKernel, Pair: RunBegin,
		Args: []Arg{{"corr", ArgCorr}, {"status", ArgUint}}},
	DeviceTime: {Name: "device_time", Domain: DomainKernel,
		Args: []Arg{{"corr", ArgCorr}, {"start", ArgTime}, {"end", ArgTime}}},
	StreamCreate: {Name: "stream_create", Domain: DomainStream,
		Args: []Arg{{"device", ArgDevice}, {"stream", ArgStream}}},
	StreamSet: {Name: "stream_set", Domain: DomainStream,
		Args: []Arg{{"device", ArgDevice}, {"stream", ArgStream}}},
	StreamFinishBegin: {Name: "stream_finish_begin", Domain: DomainSync, Pair: StreamFinishEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"stream", ArgStream}}},
	StreamFinishEnd: {Name: "stream_finish_end", Domain: DomainSync, Pair: StreamFinishBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	DeviceFinishBegin: {Name: "device_finish_begin", Domain: DomainSync, Pair: DeviceFinishEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"device", ArgDevice}}},
	DeviceFinishEnd: {Name: "device_finish_end", Domain: DomainSync, Pair: DeviceFinishBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	RegionPush: {Name: "region_push", Domain: DomainUser,
		Args: []Arg{{"name", ArgString}}},
	RegionPop: {Name: "region_pop", Domain: DomainUser,
		Args: []Arg{{"name", ArgString}}},
	Marker: {Name: "marker", Domain: DomainUser,
		Args: []Arg{{"name", ArgString}}},
	Dropped: {Name: "dropped", Domain: DomainTool,
		Args: []Arg{{"count", ArgUint}, {"reason", ArgUint}, {"since", ArgTime}}},
	Trigger: {Name: "trigger", Domain: DomainTool,
		Args: []Arg{{"window", ArgUint}, {"action", ArgUint}, {"cause", ArgUint}}},
	Fork: {Name: "fork", Domain: DomainTool},

	// OpenMP. "launch" is the correlation id of the OCCA kernel launch the
	// event happened in (0 outside launches); ids of tasks and parallel
	// regions are the first arguments of their begins (and of task create).
	OmpThreadBegin: {Name: "omp_thread_begin", Domain: DomainOpenMP, Pair: OmpThreadEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"thread_type", ArgUint}}},
	OmpThreadEnd: {Name: "omp_thread_end", Domain: DomainOpenMP, Pair: OmpThreadBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	OmpParallelBegin: {Name: "omp_parallel_begin", Domain: DomainOpenMP, Pair: OmpParallelEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"parent_task", ArgUint}, {"requested_team", ArgUint}, {"flags", ArgUint}, {"launch", ArgUint}}},
	OmpParallelEnd: {Name: "omp_parallel_end", Domain: DomainOpenMP, Pair: OmpParallelBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	OmpImplicitTaskBegin: {Name: "omp_implicit_task_begin", Domain: DomainOpenMP, Pair: OmpImplicitTaskEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"parallel", ArgUint}, {"thread_num", ArgUint}, {"team_size", ArgUint}, {"launch", ArgUint}}},
	OmpImplicitTaskEnd: {Name: "omp_implicit_task_end", Domain: DomainOpenMP, Pair: OmpImplicitTaskBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	OmpWorkBegin: {Name: "omp_work_begin", Domain: DomainOpenMP, Pair: OmpWorkEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"work_type", ArgUint}, {"parallel", ArgUint}, {"task", ArgUint}, {"count", ArgUint}}},
	OmpWorkEnd: {Name: "omp_work_end", Domain: DomainOpenMP, Pair: OmpWorkBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	OmpSyncBegin: {Name: "omp_sync_begin", Domain: DomainOpenMP, Pair: OmpSyncEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"sync_kind", ArgUint}, {"parallel", ArgUint}, {"task", ArgUint}}},
	OmpSyncEnd: {Name: "omp_sync_end", Domain: DomainOpenMP, Pair: OmpSyncBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	OmpSyncWaitBegin: {Name: "omp_sync_wait_begin", Domain: DomainOpenMP, Pair: OmpSyncWaitEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"sync_kind", ArgUint}, {"parallel", ArgUint}, {"task", ArgUint}}},
	OmpSyncWaitEnd: {Name: "omp_sync_wait_end", Domain: DomainOpenMP, Pair: OmpSyncWaitBegin,
		Args: []Arg{{"corr", ArgCorr}}},
	OmpTaskCreate: {Name: "omp_task_create", Domain: DomainOpenMP,
		Args: []Arg{{"task", ArgUint}, {"parent_task", ArgUint}, {"flags", ArgUint}, {"has_dependences", ArgUint}, {"launch", ArgUint}}},
	OmpTaskSchedule: {Name: "omp_task_schedule", Domain: DomainOpenMP,
		Args: []Arg{{"prior_task", ArgUint}, {"prior_status", ArgUint}, {"next_task", ArgUint}}},
	OmpTaskDependence: {Name: "omp_task_dependence", Domain: DomainOpenMP,
		Args: []Arg{{"src_task", ArgUint}, {"sink_task", ArgUint}}},
	OmpTaskDepend: {Name: "omp_task_depend", Domain: DomainOpenMP,
		Args: []Arg{{"task", ArgUint}, {"address", ArgUint}, {"dependence_type", ArgUint}}},

	// MPI (runtime/mpi). "function" is an MpiFunctionName code; bytes are
	// count times the datatype's size (the posted size for receives).
	MpiCallBegin: {Name: "mpi_call_begin", Domain: DomainMPI, Pair: MpiCallEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"function", ArgUint}, {"comm", ArgUint}}},
	MpiCallEnd: {Name: "mpi_call_end", Domain: DomainMPI, Pair: MpiCallBegin,
		Args: []Arg{{"corr", ArgCorr}, {"status", ArgUint}}},
	MpiP2PBegin: {Name: "mpi_p2p_begin", Domain: DomainMPI, Pair: MpiP2PEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"function", ArgUint}, {"peer", ArgInt}, {"tag", ArgInt}, {"bytes", ArgUint}, {"comm", ArgUint}}},
	MpiP2PEnd: {Name: "mpi_p2p_end", Domain: DomainMPI, Pair: MpiP2PBegin,
		Args: []Arg{{"corr", ArgCorr}, {"request", ArgUint}, {"status", ArgUint}}},
	MpiCollectiveBegin: {Name: "mpi_collective_begin", Domain: DomainMPI, Pair: MpiCollectiveEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"function", ArgUint}, {"root", ArgInt}, {"bytes", ArgUint}, {"comm", ArgUint}, {"comm_size", ArgUint}}},
	MpiCollectiveEnd: {Name: "mpi_collective_end", Domain: DomainMPI, Pair: MpiCollectiveBegin,
		Args: []Arg{{"corr", ArgCorr}, {"request", ArgUint}, {"status", ArgUint}}},
	MpiWaitBegin: {Name: "mpi_wait_begin", Domain: DomainMPI, Pair: MpiWaitEnd, Begin: true,
		Args: []Arg{{"corr", ArgCorr}, {"function", ArgUint}, {"count", ArgUint}}},
	MpiWaitEnd: {Name: "mpi_wait_end", Domain: DomainMPI, Pair: MpiWaitBegin,
		Args: []Arg{{"corr", ArgCorr}, {"completed", ArgUint}, {"status", ArgUint}}},
	MpiRequestDone: {Name: "mpi_request_done", Domain: DomainMPI,
		Args: []Arg{{"request", ArgUint}, {"wait", ArgUint}}},
	MpiComm: {Name: "mpi_comm", Domain: DomainMPI,
		Args: []Arg{{"comm", ArgUint}, {"parent", ArgUint}, {"size", ArgUint}, {"rank", ArgUint}, {"world_rank", ArgUint}, {"leader", ArgUint}}},
	MpiClockSync: {Name: "mpi_clock_sync", Domain: DomainMPI,
		Args: []Arg{{"reference", ArgUint}, {"offset", ArgInt}, {"error", ArgUint}, {"phase", ArgUint}}},

	DefString: {Name: "def_string",
		Args: []Arg{{"id", ArgUint}}}, // the text follows the arguments, see FORMAT.md
	DefDevice: {Name: "def_device",
		Args: []Arg{{"device", ArgDevice}, {"mode", ArgString}, {"index", ArgInt}, {"properties", ArgString}}},
	DefKernel: {Name: "def_kernel",
		Args: []Arg{{"kernel", ArgKernel}, {"device", ArgDevice}, {"name", ArgString}, {"source", ArgString}, {"properties_hash", ArgUint}}},
	DefKernelTag: {Name: "def_kernel_tag",
		Args: []Arg{{"kernel", ArgKernel}, {"tag", ArgString}}},
	DefStream: {Name: "def_stream",
		Args: []Arg{{"stream", ArgStream}, {"device", ArgDevice}}},
	DefMemory: {Name: "def_memory",
		Args: []Arg{{"memory", ArgMemory}, {"device", ArgDevice}, {"bytes", ArgUint}, {"address", ArgUint}, {"tag", ArgString}}},
	DefThread: {Name: "def_thread",
		Args: []Arg{{"thread", ArgThread}, {"tid", ArgUint}, {"name", ArgString}}},
}

// Spec returns the description of k, or nil when k is not a known kind.
func (k Kind) Spec() *Spec {
	if int(k) < len(specs) && specs[k].Name != "" {
		return &specs[k]
	}
	return nil
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k.Spec() != nil }

// IsDef reports whether k is a definition kind.
func (k Kind) IsDef() bool { return k >= DefString && k < numDefKinds }

// String returns the kind's name, or "kind(N)" for an unknown one.
func (k Kind) String() string {
	if s := k.Spec(); s != nil {
		return s.Name
	}
	return "kind(" + itoa(uint64(k)) + ")"
}

// EventKinds lists every timed event kind in numeric order.
func EventKinds() []Kind {
	ks := make([]Kind, 0, numEventKinds-1)
	for k := Kind(1); k < numEventKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// ParseKind returns the timed or definition kind called name.
func ParseKind(name string) (Kind, bool) {
	for k := range specs {
		if specs[k].Name == name {
			return Kind(k), true
		}
	}
	return 0, false
}

// ArgIndex returns the position of the argument called name, or -1.
func (s *Spec) ArgIndex(name string) int {
	for i, a := range s.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
