package perfetto

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// writeTrace writes one thread's events, with tracetest's defs, to a file.
func writeTrace(t testing.TB, evs []trace.Event) string {
	t.Helper()
	return writeFile(t, tracetest.Header(), evs)
}

// genTrace writes a trace of n events of tracetest's generator (seed 7)
// and returns its path.
func genTrace(t testing.TB, n int) string {
	t.Helper()
	g := tracetest.NewGen(7)
	evs := make([]trace.Event, n)
	for i := range evs {
		g.Next(&evs[i])
	}
	return writeTrace(t, evs)
}

// writeFile writes evs as a trace of header h, with tracetest's defs, to a
// file and returns its path.
func writeFile(t testing.TB, h *trace.Header, evs []trace.Event) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteEvents(&buf, h, tracetest.Defs(), evs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.occatrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ev(k trace.Kind, us int64, args ...uint64) trace.Event {
	e := trace.Event{Kind: k, Time: tracetest.MonoStart + us*1000}
	copy(e.Args[:], args)
	return e
}

func at(us int64) uint64 { return uint64(tracetest.MonoStart + us*1000) }

// TestUnmatchedDeviceTime checks what becomes of device times whose
// launch is not in the trace (its events lost, or a correlation id the
// runtime never launched): each is a slice named "kernel" on the process's
// "device time (launch unknown)" track, at its device interval, or at the
// event's time when it has only a duration (start 0); overlapping ones go
// on sibling lanes. A device time that does match a launch stays with it.
func TestUnmatchedDeviceTime(t *testing.T) {
	path := writeTrace(t, []trace.Event{
		ev(trace.RunBegin, 10, 1, 1, 1, 0),
		ev(trace.RunEnd, 12, 1, trace.StatusOK),
		ev(trace.DeviceTime, 20, 1, at(11), at(13)),  // its launch's
		ev(trace.DeviceTime, 21, 99, at(14), at(18)), // corr 99 never launched
		ev(trace.DeviceTime, 22, 98, at(16), at(19)), // overlaps 99 without nesting
		ev(trace.DeviceTime, 23, 97, at(15), at(17)), // nests in 99
		ev(trace.DeviceTime, 30, 96, 0, 2000),        // a duration only: at the event's time
	})
	d := decode(t, convertFile(t, path))
	// Times are ns from the launch's start.
	want := `track "current stream"
  axpy [1000, 3000) flows-in=1
track "device CUDA:0"
track "device time (launch unknown)"
  kernel [4000, 8000)
    kernel [5000, 7000)
  kernel [20000, 22000)
track "device time (launch unknown) #2"
  kernel [6000, 9000)
track "main (tid 4242)"
  run axpy [0, 2000) corr=1 flows-out=1
track "rank 3 (node7, pid 4242)"
`
	if got := d.dump(t); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLeftOut gives the Perfetto writer more device times that overlap
// without nesting than a track has lanes: the first MaxLanes get a lane
// each, the rest are left out and counted, and convert says so.
func TestLeftOut(t *testing.T) {
	const extra = 5
	var evs []trace.Event
	for i := range MaxLanes + extra {
		us := int64(10 + i)
		evs = append(evs, ev(trace.DeviceTime, us, uint64(100+i), at(us), at(us+1000)))
	}
	w, out := convertWith(t, writeTrace(t, evs))
	if w.LeftOut() != extra {
		t.Errorf("%d slices left out, want %d", w.LeftOut(), extra)
	}
	b, _ := os.ReadFile(out)
	d := decode(t, b)
	n := 0
	for _, ss := range d.slices(t) {
		n += len(ss)
	}
	if n != MaxLanes {
		t.Errorf("%d slices written, want %d", n, MaxLanes)
	}
	if !bytes.Contains(b, []byte(fmt.Sprintf("device time (launch unknown) #%d", MaxLanes))) ||
		bytes.Contains(b, []byte(fmt.Sprintf("device time (launch unknown) #%d", MaxLanes+1))) {
		t.Errorf("not %d lanes", MaxLanes)
	}
}

// TestCUDAStreamsFromH200 converts a trace of tests/occa/programs/streams.cpp
// taken on an NVIDIA H200 (OCCA 2.0.0, CUDA 13.0, occa-prof --device-time,
// kernel times from CUPTI; 10 launches of busy(250000), 0.56 ms each, on
// each of two streams): the kernels of each stream are one slice after another on that
// stream's track, the two stream tracks are siblings under the device's,
// and their kernels overlap in time, as they ran. Each kernel slice is the
// end of its launch's flow.
func TestCUDAStreamsFromH200(t *testing.T) {
	d := decode(t, convertFile(t, "testdata/cuda-streams-h200.occatrace"))
	var device uint64
	for u, name := range d.tracks {
		if name == "device CUDA:0" {
			device = u
		}
	}
	all := d.slices(t)
	var streams []uint64
	for u, name := range d.tracks {
		if strings.HasPrefix(name, "stream ") {
			streams = append(streams, u)
			if d.parent[u] != device || device == 0 {
				t.Errorf("track %q is not a child of \"device CUDA:0\"", name)
			}
		}
	}
	if len(streams) != 2 {
		t.Fatalf("%d stream tracks, want 2", len(streams))
	}
	launches := map[uint64]bool{} // flows leaving the run slices
	for u, ss := range all {
		for _, s := range ss {
			if s.b.name == "run busy" && len(s.flows) == 1 {
				launches[s.flows[0]] = true
			} else if strings.HasPrefix(s.b.name, "run ") {
				t.Errorf("launch %q on %s has flows %v, want one", s.b.name, d.tracks[u], s.flows)
			}
		}
	}
	for _, u := range streams {
		ss := all[u]
		if len(ss) != 10 {
			t.Errorf("%s: %d slices, want 10", d.tracks[u], len(ss))
		}
		for i, s := range ss {
			if s.b.name != "busy" || s.depth != 0 || len(s.term) != 1 || !launches[s.term[0]] {
				t.Errorf("%s, slice %d: %q at depth %d ending flows %v, want busy at depth 0 ending its launch's flow",
					d.tracks[u], i, s.b.name, s.depth, s.term)
			}
			if i > 0 && s.start < ss[i-1].end {
				t.Errorf("%s: slice %d starts at %d, before slice %d ends (%d)", d.tracks[u], i, s.start, i-1, ss[i-1].end)
			}
		}
	}
	if len(launches) != 20 {
		t.Errorf("%d launches with a flow, want 20", len(launches))
	}
	overlapping := 0
	for _, a := range all[streams[0]] {
		for _, b := range all[streams[1]] {
			if a.start < b.end && b.start < a.end {
				overlapping++
			}
		}
	}
	// Each kernel of the stream that started second overlaps one or two of
	// the other's.
	if overlapping < 10 {
		t.Errorf("%d overlapping pairs of kernels across the streams, want at least 10", overlapping)
	}
}
