package chrome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

type event struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	PID  *int64         `json:"pid"`
	TID  *int64         `json:"tid"`
	TS   *float64       `json:"ts"`
	Dur  *float64       `json:"dur"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`
}

type file struct {
	TraceEvents     []event        `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
}

// convert writes the small trace (o) as Chrome JSON and returns the bytes
// and the number of rows read.
func convert(t *testing.T, o tracetest.SmallOptions) ([]byte, string, int) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := tracetest.WriteSmall(&buf, o); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "small.occatrace")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "out.json")
	var w *Writer
	rows := 0
	res, err := analysis.Read(in, 0, analysis.Options{Open: func(p *analysis.Process) error {
		var err error
		w, err = Create(out, p)
		return err
	}}, func(p *analysis.Process, r *analysis.Row) error {
		rows++
		return w.Add(p, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, dir, rows
}

// TestSmall converts the small trace: valid JSON with the documented
// envelope, the exact events per ph and name, a golden copy of the file.
func TestSmall(t *testing.T) {
	b, dir, rows := convert(t, tracetest.SmallOptions{})
	var f file
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("not valid JSON: %v\n%s", err, b)
	}
	if f.DisplayTimeUnit != "ns" || f.OtherData["process"] == nil {
		t.Errorf("displayTimeUnit %q, otherData %v", f.DisplayTimeUnit, f.OtherData)
	}
	counts := map[string]int{}
	nonMeta := 0
	for _, e := range f.TraceEvents {
		counts[e.Ph+" "+e.Name]++
		if e.PID == nil || *e.PID != 3 || e.TID == nil {
			t.Errorf("event without pid 3 and a tid: %+v", e)
		}
		switch e.Ph {
		case "X":
			nonMeta++
			if e.TS == nil || e.Dur == nil || *e.Dur < 0 || e.Cat == "" {
				t.Errorf("bad complete event %+v", e)
			}
		case "i":
			nonMeta++
			if e.TS == nil || e.S != "t" || e.Dur != nil {
				t.Errorf("bad instant %+v", e)
			}
		case "M":
			if e.Args["name"] == nil && e.Args["sort_index"] == nil {
				t.Errorf("metadata without a name: %+v", e)
			}
		default:
			t.Errorf("unexpected ph %q", e.Ph)
		}
	}
	var got []string
	for k, n := range counts {
		got = append(got, fmt.Sprintf("%d %s", n, k))
	}
	slices.Sort(got)
	// From tracetest/small.go: 13 pairs and regions, two axpy launches
	// (one with device time, so a third axpy on the device's pseudo-thread),
	// six instants, and three threads plus one device named.
	want := []string{
		"1 M process_name", "1 M process_sort_index", "1 X build", "1 X copy", "1 X device_finish",
		"1 X device_setup", "1 X dot", "1 X memory_alloc", "1 X memory_free", "1 X norm", "1 X solve",
		"1 X stream_finish", "1 X timestep", "1 i buffer_full", "1 i fork", "1 i pause", "1 i solve",
		"1 i stream_create", "1 i stream_set", "3 X axpy", "4 M thread_name",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if nonMeta != rows+1 { // every row, plus axpy's device side
		t.Errorf("%d events for %d rows", nonMeta, rows)
	}
	golden.Check(t, filepath.Join("testdata", "small.json"), bytes.ReplaceAll(b, []byte(dir), []byte("$DIR")))
}

func TestAppendMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000", 12345: "12.345", 7: "0.007", 1700000000123456789: "1700000000123456.789",
		-1500: "-1.500", -9223372036854775808: "-9223372036854775.808"} {
		if got := string(AppendMicros(nil, ns)); got != want {
			t.Errorf("AppendMicros(%d) = %s, want %s", ns, got, want)
		}
	}
}

// TestUnmatchedDeviceTime writes device times whose launch is not in the
// trace: on the "device time (launch unknown)" pseudo-thread, at their
// device interval, or at their event's time when they have only a
// duration (start 0; it was put at the epoch).
func TestUnmatchedDeviceTime(t *testing.T) {
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	out := filepath.Join(t.TempDir(), "out.json")
	w, err := Create(out, p)
	if err != nil {
		t.Fatal(err)
	}
	pr := analysis.NewPairer(p, w.Add)
	us := func(n int64) int64 { return tracetest.MonoStart + n*1000 }
	for _, e := range []trace.Event{
		{Kind: trace.DeviceTime, Time: us(21), Args: [trace.MaxArgs]uint64{99, uint64(us(14)), uint64(us(18))}},
		{Kind: trace.DeviceTime, Time: us(30), Args: [trace.MaxArgs]uint64{96, 0, 2000}},
	} {
		if err := pr.Add(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	got := string(b[:bytes.Index(b, []byte("\n]"))])
	want := `{"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"rank 0 @ node7 (pid 4242)"}},
{"ph":"M","name":"process_sort_index","pid":0,"tid":0,"args":{"sort_index":0}},
{"ph":"X","name":"device_time","cat":"device_time","pid":0,"tid":1000000,"ts":1767225600000014.000,"dur":4.000,"args":{"correlation_id":99}},
{"ph":"X","name":"device_time","cat":"device_time","pid":0,"tid":1000000,"ts":1767225600000030.000,"dur":2.000,"args":{"correlation_id":96}},
{"ph":"M","name":"thread_name","pid":0,"tid":1000000,"args":{"name":"device time (launch unknown)"}}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
