package analysis

import "github.com/libocca/occa-tools/formats/table"

// SchemaVersion is the version of the table layout of Record, which the
// Parquet and CSV outputs write (formats/parquet/SCHEMA.md). A minor version
// adds columns; a major version changes or removes one.
const SchemaVersion = "3.0"

// Record is one output row of the events table: a Row flattened with its
// process and names resolved. Its fields are the columns of Events, in
// order; their tags, which parquet-go reads, are Events' ParquetTags
// (TestTables checks both).
type Record struct {
	Rank      int32  `parquet:"rank,delta"`
	Host      string `parquet:"host,dict"`
	PID       int64  `parquet:"pid,delta"`
	Thread    int32  `parquet:"thread,delta"`
	TID       int64  `parquet:"tid,delta"`
	Kind      string `parquet:"kind,dict"`
	Name      string `parquet:"name,dict"`
	StartTime int64  `parquet:"start,timestamp(microsecond:utc),delta"` // unix µs
	Start     int64  `parquet:"start_ns,delta"`
	Duration  int64  `parquet:"duration_ns,delta"`
	Status    int32  `parquet:"status,delta"`
	Corr      int64  `parquet:"correlation_id,delta"`
	Device    string `parquet:"device,dict"`
	DeviceID  int64  `parquet:"device_id,delta"`
	Stream    int64  `parquet:"stream,delta"`
	Kernel    int64  `parquet:"kernel_id,delta"`
	Memory    int64  `parquet:"memory,delta"`
	Src       int64  `parquet:"src_memory,delta"`
	Dst       int64  `parquet:"dst_memory,delta"`
	Bytes     int64  `parquet:"bytes,delta"`
	Dir       string `parquet:"direction,dict"`
	Aux       int64  `parquet:"aux,delta"`
	Peer      int32  `parquet:"peer,delta"`
	Tag       int32  `parquet:"tag,delta"`
	Comm      int64  `parquet:"comm,delta"`
	Request   int64  `parquet:"request,delta"`
	// DevStart(Time) are null (0 in Go) when the launch has no device time.
	DevStartTime int64 `parquet:"device_start,optional,timestamp(microsecond:utc),delta"` // unix µs
	DevStart     int64 `parquet:"device_start_ns,optional,delta"`
	DevDur       int64 `parquet:"device_duration_ns,delta"`
}

// Events is the events table: Record's columns, in order. The CSV and
// Parquet writers and SCHEMA.md derive from it (formats/table).
var Events = table.Table[Record]{Name: "events", Append: appendEventsCSV, Columns: []table.Column{
	{Name: "rank", Field: "Rank", Type: table.Int32, Doc: "MPI rank (or input index)"},
	{Name: "host", Field: "Host", Type: table.String, Dict: true, Doc: "host name"},
	{Name: "pid", Field: "PID", Type: table.Int64, Doc: "process id"},
	{Name: "thread", Field: "Thread", Type: table.Int32, Doc: "thread index in the trace"},
	{Name: "tid", Field: "TID", Type: table.Int64, Doc: "OS thread id (0 when unknown)"},
	{Name: "kind", Field: "Kind", Type: table.String, Dict: true, Doc: "row kind (above)"},
	{Name: "name", Field: "Name", Type: table.String, Dict: true, Doc: "kernel, region, marker, tag, ..."},
	{Name: "start", Field: "StartTime", Type: table.Time, Unit: "unix µs", Doc: "start, to the µs: a timestamp every engine reads"},
	{Name: "start_ns", Field: "Start", Type: table.Int64, Unit: "unix ns", Doc: "start, exact"},
	{Name: "duration_ns", Field: "Duration", Type: table.Int64, Unit: "ns", Doc: "length; 0 instants; -1 unpaired"},
	{Name: "status", Field: "Status", Type: table.Int32, Doc: "0 ok, 1 failed"},
	{Name: "correlation_id", Field: "Corr", Type: table.Int64, Doc: "correlation id of the pair"},
	{Name: "device", Field: "Device", Type: table.String, Dict: true, Doc: "device name, `CUDA:0`, `Serial`; \"\" none"},
	{Name: "device_id", Field: "DeviceID", Type: table.Int64, Doc: "device object id in the trace"},
	{Name: "stream", Field: "Stream", Type: table.Int64, Doc: "stream object id (0 = the device's current)"},
	{Name: "kernel_id", Field: "Kernel", Type: table.Int64, Doc: "kernel object id"},
	{Name: "memory", Field: "Memory", Type: table.Int64, Doc: "memory object id"},
	{Name: "src_memory", Field: "Src", Type: table.Int64, Doc: "copy source (0 = host)"},
	{Name: "dst_memory", Field: "Dst", Type: table.Int64, Doc: "copy destination (0 = host)"},
	{Name: "bytes", Field: "Bytes", Type: table.Int64, Unit: "bytes", Doc: "bytes; events lost for `dropped`"},
	{Name: "direction", Field: "Dir", Type: table.String, Dict: true, Doc: "`H2D`, `D2H`, `D2D`, `H2H` for copies, \"\" otherwise"},
	{Name: "aux", Field: "Aux", Type: table.Int64, Doc: "kind-specific (above)"},
	{Name: "peer", Field: "Peer", Type: table.Int32, Doc: "MPI: the peer, root or reference (world rank; -1 any source, -2 none, -3 unknown); 0 on other rows"},
	{Name: "tag", Field: "Tag", Type: table.Int32, Doc: "MPI: the message tag"},
	{Name: "comm", Field: "Comm", Type: table.Int64, Doc: "MPI: the communicator, by an id the same on every rank (1 = MPI_COMM_WORLD)"},
	{Name: "request", Field: "Request", Type: table.Int64, Doc: "MPI: the request a non-blocking call made, or that completed"},
	{Name: "device_start", Field: "DevStartTime", Type: table.Time, Null: true, Unit: "unix µs", Doc: "device-side start, to the µs"},
	{Name: "device_start_ns", Field: "DevStart", Type: table.Int64, Null: true, Unit: "unix ns", Doc: "device-side start, exact"},
	{Name: "device_duration_ns", Field: "DevDur", Type: table.Int64, Unit: "ns", Doc: "device-side length; -1 when none"},
}}

// Micros is unix ns ns as the µs of a table.Time column, rounded down.
func Micros(ns int64) int64 {
	us := ns / 1000
	if ns%1000 < 0 {
		us--
	}
	return us
}

// Flattener turns rows of one process into Records, caching names. Rows
// come in runs of one thread and one device, so the last of each is looked
// at before the maps (a map lookup per row was a tenth of Parquet's cost).
type Flattener struct {
	p       *Process
	devices map[uint64]devName
	tids    map[uint32]int64
	kinds   [256]string // by row kind (a trace.Kind); "" until first needed

	lastDev     uint64 // the device of lastDevName, a known one (0: none)
	lastDevName string
	lastThread  uint32 // the thread of lastTID, a known one (lastTID 0: none)
	lastTID     int64
}

// devName is a device's name as cached by a Flattener; known is false while
// the device's def has not been read.
type devName struct {
	name  string
	known bool
}

// maxCached bounds each of a Flattener's caches: a trace may reference any
// number of ids.
const maxCached = 1 << 12

// NewFlattener returns a Flattener for p.
func NewFlattener(p *Process) *Flattener {
	return &Flattener{p: p, devices: map[uint64]devName{}, tids: map[uint32]int64{}}
}

// Flatten fills rec from r. Times become unix ns (FORMAT.md §2, the epoch).
// Every field is set in place, where assigning a Record literal builds it
// on the stack and copies it (3 % of converting to CSV's instructions);
// TestFlattenEveryField checks that none is left from the row before.
func (f *Flattener) Flatten(rec *Record, r *Row) {
	p := f.p
	rec.Rank, rec.Host, rec.PID, rec.Thread = int32(p.Rank), p.Header.Host, p.Header.PID, int32(r.Thread)
	rec.TID = f.tid(r.Thread)
	k := f.kinds[r.Kind]
	if k == "" {
		k = KindName(r.Kind)
		f.kinds[r.Kind] = k
	}
	rec.Kind, rec.Name = k, r.Name
	rec.Start = p.WallTime(r.Start)
	rec.StartTime = Micros(rec.Start)
	rec.Duration, rec.Status, rec.Corr = r.Dur, int32(r.Status), int64(r.Corr)
	rec.Device, rec.DeviceID = f.device(r.Device), int64(r.Device)
	rec.Stream, rec.Kernel, rec.Memory = int64(r.Stream), int64(r.Kernel), int64(r.Memory)
	rec.Src, rec.Dst, rec.Bytes = int64(r.Src), int64(r.Dst), int64(r.Bytes)
	rec.Dir, rec.Aux = r.Direction(), int64(r.Aux)
	rec.Peer, rec.Tag, rec.Comm, rec.Request = r.Peer, r.Tag, int64(r.Comm), int64(r.Request)
	rec.DevStart, rec.DevStartTime, rec.DevDur = 0, 0, r.DevDur
	if r.DevDur >= 0 && r.DevStart != 0 {
		rec.DevStart = p.WallTime(r.DevStart)
		rec.DevStartTime = Micros(rec.DevStart)
	}
}

// device is the name of device id ("" for 0).
func (f *Flattener) device(id uint64) string {
	switch {
	case id == 0:
		return ""
	case id == f.lastDev:
		return f.lastDevName
	}
	d, ok := f.devices[id]
	if !ok || !d.known { // look again: its def may have come since
		if len(f.devices) >= maxCached {
			clear(f.devices)
		}
		info := f.p.Dict.Device(id)
		d = devName{info.Name(), info.Known}
		f.devices[id] = d
	}
	if d.known {
		f.lastDev, f.lastDevName = id, d.name
	}
	return d.name
}

// tid is the OS thread id of thread index th (0 when unknown).
func (f *Flattener) tid(th uint32) int64 {
	if th == f.lastThread && f.lastTID != 0 {
		return f.lastTID
	}
	tid, ok := f.tids[th]
	if !ok {
		tid = int64(f.p.Dict.Thread(uint64(th)).TID)
		if tid != 0 {
			if len(f.tids) >= maxCached {
				clear(f.tids)
			}
			f.tids[th] = tid
		}
	}
	if tid != 0 {
		f.lastThread, f.lastTID = th, tid
	}
	return tid
}
