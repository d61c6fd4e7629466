// Package occatest reads what an OCCA program left in its trace, for the
// tests of the OCCA adapter: against the stand-in libocca (tests/adapter)
// and against a real OCCA installation (tests/occa).
package occatest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/testproc"
)

// Traffic counts copies of one direction.
type Traffic struct {
	Count int
	Bytes uint64
}

// Build is one kernel build.
type Build struct {
	Name, Source string
	Cache        string // "hit", "miss", "unknown"
	Failed       bool
}

// Capture is what a trace says the program did.
type Capture struct {
	Header       *trace.Header
	DeviceModes  []string // modes of the devices set up, in order
	SetupsFailed int
	Allocs       int
	AllocBytes   uint64
	PoolAllocs   int // allocations tagged occa-memory-pool
	Frees        int
	FreeBytes    uint64
	Copies       map[string]Traffic // by direction: H2D, D2H, D2D, H2H
	Builds       []Build
	Launches     map[string]int // by kernel name
	// LaunchesOnStream counts launches by the stream they ran on (0 = the
	// device's first stream).
	LaunchesOnStream map[uint64]int
	LaunchesFailed   int
	DeviceTimes      int // device_time events that name a recorded launch
	StreamCreates    int
	StreamSets       int
	StreamFinishes   int
	DeviceFinishes   int
	Unended          int // begins without an end
	Dropped          uint64
}

var directions = []string{"H2D", "D2H", "D2D", "H2H"}

// Events is all a trace holds, its events in file order.
type Events struct {
	Header *trace.Header
	Events []trace.Event
	Dict   *trace.Dict
	Stats  *trace.Stats
}

// ReadEvents reads every event of the trace at path. It fails on a damaged
// trace and on one that does not end cleanly (no final stats chunk).
func ReadEvents(path string) (*Events, error) {
	r, c, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var events []trace.Event
	for {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		events = append(events, e)
	}
	st := r.Stats()
	if st == nil || !st.Final {
		return nil, fmt.Errorf("%s: no final stats chunk", path)
	}
	return &Events{Header: r.Header(), Events: events, Dict: r.Dict(), Stats: st}, nil
}

// Read reads the trace at path. It fails on a trace that does not end
// cleanly, an end before its begin, or an end without a begin.
func Read(path string) (*Capture, error) {
	ev, err := ReadEvents(path)
	if err != nil {
		return nil, err
	}
	cp := &Capture{Header: ev.Header, Copies: map[string]Traffic{}, Launches: map[string]int{},
		LaunchesOnStream: map[uint64]int{}}
	if err := cp.add(ev.Events, ev.Dict); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for _, n := range ev.Stats.Dropped {
		cp.Dropped += n
	}
	return cp, nil
}

func (cp *Capture) add(events []trace.Event, d *trace.Dict) error {
	open := map[uint64]trace.Event{} // begins by correlation id
	launches := map[uint64]bool{}
	begin := func(e trace.Event) { open[e.Args[0]] = e }
	end := func(e trace.Event) (trace.Event, error) {
		b, ok := open[e.Args[0]]
		if !ok {
			return b, fmt.Errorf("%s at %d ns has no begin", e.Kind, e.Time)
		}
		if e.Time < b.Time {
			return b, fmt.Errorf("%s at %d ns ends before its begin (%d ns)", e.Kind, e.Time, b.Time)
		}
		delete(open, e.Args[0])
		return b, nil
	}
	for _, e := range events {
		switch e.Kind {
		case trace.DeviceSetupBegin, trace.MemoryAllocBegin, trace.MemoryFreeBegin, trace.CopyBegin,
			trace.BuildBegin, trace.RunBegin, trace.StreamFinishBegin, trace.DeviceFinishBegin:
			begin(e)
		case trace.DeviceSetupEnd:
			b, err := end(e)
			if err != nil {
				return err
			}
			if e.Args[2] != 0 {
				cp.SetupsFailed++
				continue
			}
			cp.DeviceModes = append(cp.DeviceModes, d.String(b.Args[1]))
		case trace.MemoryAllocEnd:
			b, err := end(e)
			if err != nil {
				return err
			}
			if e.Args[3] != 0 {
				continue
			}
			cp.Allocs++
			cp.AllocBytes += b.Args[2]
			if b.Args[3] != 0 && d.String(b.Args[3]) == "occa-memory-pool" {
				cp.PoolAllocs++
			}
		case trace.MemoryFreeEnd:
			b, err := end(e)
			if err != nil {
				return err
			}
			cp.Frees++
			cp.FreeBytes += b.Args[3]
		case trace.CopyEnd:
			b, err := end(e)
			if err != nil {
				return err
			}
			if b.Args[1] < uint64(len(directions)) {
				t := cp.Copies[directions[b.Args[1]]]
				t.Count++
				t.Bytes += b.Args[4]
				cp.Copies[directions[b.Args[1]]] = t
			}
		case trace.BuildEnd:
			b, err := end(e)
			if err != nil {
				return err
			}
			cache := map[uint64]string{0: "unknown", 1: "hit", 2: "miss"}[e.Args[2]]
			cp.Builds = append(cp.Builds, Build{Name: d.String(b.Args[2]), Source: d.String(b.Args[3]),
				Cache: cache, Failed: e.Args[3] != 0})
		case trace.RunEnd:
			b, err := end(e)
			if err != nil {
				return err
			}
			if e.Args[1] != 0 {
				cp.LaunchesFailed++
				continue
			}
			cp.Launches[d.Kernel(b.Args[1]).Name]++
			cp.LaunchesOnStream[b.Args[3]]++
			launches[b.Args[0]] = true
		case trace.StreamFinishEnd:
			if _, err := end(e); err != nil {
				return err
			}
			cp.StreamFinishes++
		case trace.DeviceFinishEnd:
			if _, err := end(e); err != nil {
				return err
			}
			cp.DeviceFinishes++
		case trace.DeviceTime:
			if launches[e.Args[0]] {
				cp.DeviceTimes++
			}
		case trace.StreamCreate:
			cp.StreamCreates++
		case trace.StreamSet:
			cp.StreamSets++
		}
	}
	cp.Unended = len(open)
	return nil
}

// BuildNames lists the names of the successful builds, sorted.
func (cp *Capture) BuildNames() []string {
	var out []string
	for _, b := range cp.Builds {
		if !b.Failed {
			out = append(out, b.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Profile runs args under occa-prof (extra flags before "--") in dir with
// env added, and returns its output and the trace files it wrote.
func Profile(t testing.TB, occaProf, dir string, env, flags []string, args ...string) (string, []string, error) {
	t.Helper()
	out := filepath.Join(dir, "traces")
	all := append(append([]string{"--output", out}, flags...), "--")
	cmd := testproc.Command(t, occaProf, append(all, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	text, err := cmd.CombinedOutput()
	files, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
	if err != nil {
		return string(text), files, fmt.Errorf("occa-prof %s: %v\n%s", strings.Join(args, " "), err, text)
	}
	return string(text), files, nil
}

// ProfileClean runs args under occa-prof --quiet (with flags) in a fresh
// temporary directory and env added, expects the program to print "ok" and
// leave one trace, and returns that trace after checking it is clean: every
// begin ended, nothing dropped, no failed setup or launch.
func ProfileClean(t testing.TB, occaProf string, env, flags []string, args ...string) *Capture {
	t.Helper()
	out, files, err := Profile(t, occaProf, t.TempDir(), env, append([]string{"--quiet"}, flags...), args...)
	if err != nil {
		t.Fatal(err)
	}
	if out != "ok\n" {
		t.Fatalf("%v printed %q, want \"ok\\n\"", args, out)
	}
	if len(files) != 1 {
		t.Fatalf("%v: want 1 trace, got %v", args, files)
	}
	cp, err := Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if cp.Unended != 0 || cp.Dropped != 0 || cp.SetupsFailed != 0 || cp.LaunchesFailed != 0 {
		t.Errorf("%v: %d begins without end, %d dropped, %d failed setups, %d failed launches",
			args, cp.Unended, cp.Dropped, cp.SetupsFailed, cp.LaunchesFailed)
	}
	return cp
}
