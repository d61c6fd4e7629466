// Package chrome writes the analysis's rows as Chrome trace-event JSON, the format
// that chrome://tracing and ui.perfetto.dev open: one JSON object
//
//	{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
//
// per trace (events-rankNNNNN.json), streamed row by row: the writer holds
// no events, only the names of the threads and devices it has seen.
//
// Mapping:
//
//   - pid is the rank; a process_name metadata event ("ph":"M") names it
//     "rank R @ host (pid P)".
//   - tid is the thread index in the trace; thread_name metadata events name
//     each thread with the trace's thread name ("thread N" when it has none).
//   - A begin/end pair is a complete event ("ph":"X") with "ts" and "dur",
//     named after the kernel for a launch, the region for a region, and the
//     kind for any other call; "cat" is the kind (analysis.KindName: "run",
//     "copy", "region", ...). "args" holds what the row has of name
//     (kernel, allocation tag, device mode), bytes, direction, device,
//     stream, correlation id and a failed status.
//   - A launch with device time gets a second "X" event, category "device",
//     on a pseudo-thread per device: tid 1000000 + the device's object id,
//     named "device N (CUDA:0)". A device time whose launch was not found
//     (kind device_time: the launch's events were lost, or its correlation
//     id was never launched) goes on tid 1000000, "device time (launch
//     unknown)", at its device interval (at its event's time when it has
//     only a duration).
//   - Instants (markers, stream events, forks, triggers, drops) are thread
//     instants ("ph":"i", "s":"t"), named by their name or kind. A drop's
//     lost interval is in its args (lost_dur_us); a pair with one half
//     missing is an instant too, with "unpaired": true in its args, so that
//     every "X" has a known, non-negative duration.
//
// Times: "ts" is unix time in microseconds, the epoch of the Parquet and
// CSV outputs (formats/parquet/SCHEMA.md) divided by 1000, written as a
// decimal with the nanoseconds kept (1700000000123456.789); "dur" likewise.
// "displayTimeUnit" is "ns". Readers that parse numbers as float64 keep
// about a quarter of a microsecond of a unix "ts" (2^53 ns is 104 days),
// while "dur" stays exact; the file's digits are exact.
//
// otherData holds the process row of the process table (analysis.ProcessInfo)
// under "process".
package chrome

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/table"
	"github.com/libocca/occa-tools/formats/trace"
)

// DeviceTID + a device's object id is the tid of the device's pseudo-thread.
const DeviceTID = 1000000

// Writer writes one process's rows to one JSON file.
type Writer struct {
	out     *table.File
	p       *analysis.Process
	pid     []byte // ,"pid":R
	n       int    // events written
	threads map[uint32]bool
	devices map[uint64]bool
	strs    map[string][]byte
	kinds   map[trace.Kind]string
}

// Create makes the file at path for process p and writes its start and the
// process name.
func Create(path string, p *analysis.Process) (*Writer, error) {
	out, err := table.CreateFile(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{out: out, p: p, threads: map[uint32]bool{},
		devices: map[uint64]bool{}, strs: map[string][]byte{}, kinds: map[trace.Kind]string{}}
	w.pid = strconv.AppendInt([]byte(`,"pid":`), p.Rank, 10)
	w.out.WriteString(`{"traceEvents":[`)
	name := fmt.Sprintf("rank %d @ %s (pid %d)", p.Rank, p.Header.Host, p.Header.PID)
	w.meta("process_name", 0, name)
	b := append(w.begin(), `{"ph":"M","name":"process_sort_index"`...)
	b = append(b, w.pid...)
	b = append(b, `,"tid":0,"args":{"sort_index":`...)
	b = strconv.AppendInt(b, p.Rank, 10)
	w.end(append(b, `}}`...))
	return w, nil
}

// begin starts the next event of the array, in the file's buffer
// (table.File.Tail): the event is appended to what it returns, and given
// to end.
func (w *Writer) begin() []byte {
	b := w.out.Tail()
	if w.n > 0 {
		b = append(b, ',')
	}
	w.n++
	return append(b, '\n')
}

// end writes the event that begin started.
func (w *Writer) end(b []byte) error { return w.out.Commit(b) }

// meta writes a metadata event naming a process or thread.
func (w *Writer) meta(what string, tid int64, name string) error {
	b := append(w.begin(), `{"ph":"M","name":"`...)
	b = append(b, what...)
	b = append(b, '"')
	b = append(b, w.pid...)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"args":{"name":`...)
	b = appendJSONString(b, name)
	return w.end(append(b, `}}`...))
}

// str appends s as a JSON string, caching the encodings of names.
func (w *Writer) str(b []byte, s string) []byte {
	if q, ok := w.strs[s]; ok {
		return append(b, q...)
	}
	q := appendJSONString(nil, s)
	if len(w.strs) < 1<<14 {
		w.strs[s] = q
	}
	return append(b, q...)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// AppendMicros appends ns as microseconds with three decimals (12345 ->
// 12.345).
func AppendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		if ns == -ns { // math.MinInt64
			return append(b, "9223372036854775.808"...)
		}
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// Add writes one row; it has the analysis.Sink signature.
func (w *Writer) Add(p *analysis.Process, r *analysis.Row) error {
	kind, ok := w.kinds[r.Kind]
	if !ok {
		kind = analysis.KindName(r.Kind)
		w.kinds[r.Kind] = kind
	}
	if r.Kind == trace.DeviceTime { // a device time without its launch
		return w.device(r, kind, kind)
	}
	w.threads[r.Thread] = true
	span := isSpan(r.Kind)
	name := kind
	if r.Name != "" && (r.Kind == trace.RunBegin || r.Kind == trace.RegionPush || !span) {
		name = r.Name
	}
	b := append(w.begin(), `{"ph":`...)
	if span && r.Dur >= 0 {
		b = append(b, `"X"`...)
	} else {
		b = append(b, `"i","s":"t"`...)
	}
	b = append(b, `,"name":`...)
	b = w.str(b, name)
	b = append(b, `,"cat":`...)
	b = w.str(b, kind)
	b = append(b, w.pid...)
	b = append(b, `,"tid":`...)
	b = strconv.AppendUint(b, uint64(r.Thread), 10)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, p.WallTime(r.Start))
	if span && r.Dur >= 0 {
		b = append(b, `,"dur":`...)
		b = AppendMicros(b, r.Dur)
	}
	b = append(b, `,"args":{`...)
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
	}
	u := func(k string, v uint64) {
		if v != 0 {
			key(k)
			b = strconv.AppendUint(b, v, 10)
		}
	}
	if r.Name != "" && name != r.Name {
		key("name")
		b = w.str(b, r.Name)
	}
	u("bytes", r.Bytes)
	if d := r.Direction(); d != "" {
		key("direction")
		b = w.str(b, d)
	}
	if r.Device != 0 {
		key("device")
		b = w.str(b, p.Dict.Device(r.Device).Name())
	}
	u("stream", r.Stream)
	u("correlation_id", r.Corr)
	if r.Status != trace.StatusOK && span {
		u("status", r.Status)
	}
	if span && r.Dur < 0 {
		key("unpaired")
		b = append(b, "true"...)
	}
	if r.Kind == trace.Dropped && r.Dur > 0 {
		key("lost_dur_us")
		b = AppendMicros(b, r.Dur)
	}
	if err := w.end(append(b, `}}`...)); err != nil {
		return err
	}
	if r.Kind == trace.RunBegin && r.DevDur >= 0 && r.DevStart != 0 {
		return w.device(r, name, "device")
	}
	return nil
}

// device writes r's device interval on its device's pseudo-thread.
func (w *Writer) device(r *analysis.Row, name, cat string) error {
	w.devices[r.Device] = true
	b := append(w.begin(), `{"ph":"X","name":`...)
	b = w.str(b, name)
	b = append(b, `,"cat":`...)
	b = w.str(b, cat)
	b = append(b, w.pid...)
	b = append(b, `,"tid":`...)
	b = strconv.AppendUint(b, DeviceTID+r.Device, 10)
	start := r.DevStart
	if r.Kind == trace.DeviceTime { // Start is its device start, or its event's time when it has only a duration
		start = r.Start
	}
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, w.p.WallTime(start))
	b = append(b, `,"dur":`...)
	b = AppendMicros(b, max(r.DevDur, 0))
	b = append(b, `,"args":{"correlation_id":`...)
	b = strconv.AppendUint(b, r.Corr, 10)
	if r.Stream != 0 {
		b = append(b, `,"stream":`...)
		b = strconv.AppendUint(b, r.Stream, 10)
	}
	return w.end(append(b, `}}`...))
}

// isSpan reports whether rows of kind k are begin/end pairs.
func isSpan(k trace.Kind) bool {
	return k == trace.RegionPush || k.String() != analysis.KindName(k)
}

// Close names the threads and devices seen, writes otherData and finishes
// the file. res may be nil (the trace could not be read to its end).
func (w *Writer) Close(res *analysis.Result) error {
	p := w.p
	threads := make([]uint32, 0, len(w.threads))
	for t := range w.threads {
		threads = append(threads, t)
	}
	for _, t := range p.Dict.Threads() {
		if !w.threads[uint32(t)] {
			threads = append(threads, uint32(t))
		}
	}
	slices.Sort(threads)
	for _, t := range threads {
		name := p.Dict.Thread(uint64(t)).Name
		if name == "" {
			name = "thread " + strconv.FormatUint(uint64(t), 10)
		}
		w.meta("thread_name", int64(t), name)
	}
	devices := make([]uint64, 0, len(w.devices))
	for d := range w.devices {
		devices = append(devices, d)
	}
	slices.Sort(devices)
	for _, d := range devices {
		name := "device time (launch unknown)" // device times whose launch is not in the trace
		if d != 0 {
			name = fmt.Sprintf("device %d (%s)", d, p.Dict.Device(d).Name())
		}
		w.meta("thread_name", int64(DeviceTID+d), name)
	}
	info, err := json.Marshal(analysis.Info(p, res))
	if err == nil {
		w.out.WriteString("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"occa-tools\",\"process\":")
		w.out.Write(info)
		w.out.WriteString("}}\n")
	} else {
		err = fmt.Errorf("%s: %w", w.out.Name(), err)
	}
	if e := w.out.Close(); err == nil { // a write error stays in the buffer until Close
		err = e
	}
	return err
}
