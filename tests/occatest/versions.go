package occatest

import (
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// Scenario is what the adapter must record of
// tests/occa-standin/driver_versions.cpp's scenario (run with -n N) against
// one OCCA: the stand-in's variants in tests/adapter, a real OCCA in
// tests/occa. The driver's header comment gives the scenario.
type Scenario struct {
	Pool     bool     // a memory pool (occa:: or occa::experimental::)
	Wrap     bool     // wrapMemory
	Finishes bool     // device::finishAll, stream::finish (OCCA 1.4 on)
	NekRS    bool     // nekRS's split builds: compile-only, then load-only
	Builds   []string // kernel builds by name; nil: none recorded
	Warn     []string // what the adapter's one warn line says; none when empty
}

// ScenarioFor is the scenario of a supported OCCA of version (OCCA_VERSION:
// major*10000 + minor*100 + patch), nekRS's bundled copy when nekrs.
func ScenarioFor(version int, nekrs bool) Scenario {
	s := Scenario{
		Pool:     version >= 10500,
		Wrap:     version >= 20000,
		Finishes: version >= 10400,
		NekRS:    nekrs,
		Builds:   []string{"addVectors"},
	}
	if nekrs {
		s.Builds = []string{"addVectors", "addVectors.okl"}
	}
	return s
}

// WarnLine matches the adapter's warn lines in a program's output.
var WarnLine = regexp.MustCompile(`(?m)^.*WRN occa-tools: OCCA adapter: .*$`)

// ProfileScenario runs driver (a build of driver_versions.cpp) with args
// under occa-prof and returns its trace, its raw events, and the adapter's
// warn lines; anything else printed, or other than one trace, fails t.
func ProfileScenario(t *testing.T, occaProf, driver string, args ...string) (*Capture, *Events, []string) {
	t.Helper()
	dir := t.TempDir()
	env := []string{"OCCA_CACHE_DIR=" + filepath.Join(dir, "cache")}
	out, files, err := Profile(t, occaProf, dir, env, []string{"--quiet"}, append([]string{driver}, args...)...)
	if err != nil {
		t.Fatalf("%v; printed %q", err, out)
	}
	warns := WarnLine.FindAllString(out, -1)
	if rest := WarnLine.ReplaceAllString(out, ""); strings.TrimLeft(rest, "\n") != "ok\n" || len(files) != 1 {
		t.Fatalf("%s printed %q with %d traces, want the adapter's warn lines, \"ok\" and 1 trace", driver, out, len(files))
	}
	cp, err := Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return cp, ev, warns
}

// Check compares a capture of the scenario with n launches with s.
func (s Scenario) Check(t *testing.T, n int, cp *Capture, ev *Events, warns []string) {
	t.Helper()
	if len(s.Warn) == 0 && len(warns) != 0 {
		t.Errorf("warnings with a supported OCCA: %q", warns)
	}
	if len(s.Warn) != 0 {
		if len(warns) != 1 {
			t.Fatalf("warn lines: %q, want exactly 1", warns)
		}
		for _, w := range s.Warn {
			if !strings.Contains(warns[0], w) {
				t.Errorf("warn line %q lacks %q", warns[0], w)
			}
		}
	}
	if cp.Unended != 0 || cp.Dropped != 0 || cp.SetupsFailed != 0 || cp.LaunchesFailed != 0 {
		t.Errorf("%d begins without end, %d dropped, %d failed setups, %d failed launches",
			cp.Unended, cp.Dropped, cp.SetupsFailed, cp.LaunchesFailed)
	}
	if !reflect.DeepEqual(cp.DeviceModes, []string{"Serial"}) {
		t.Errorf("devices: %v, want [Serial]", cp.DeviceModes)
	}
	allocs, bytes, pool := 3, uint64(20000), 0
	if s.Pool {
		allocs, bytes, pool = 5, 21200, 2
	}
	if cp.Allocs != allocs || cp.AllocBytes != bytes || cp.PoolAllocs != pool {
		t.Errorf("allocations: %d (%d B, %d from the pool); want %d (%d B, %d)",
			cp.Allocs, cp.AllocBytes, cp.PoolAllocs, allocs, bytes, pool)
	}
	if cp.Frees != allocs || cp.FreeBytes != bytes {
		t.Errorf("frees: %d (%d B); want %d (%d B)", cp.Frees, cp.FreeBytes, allocs, bytes)
	}
	d2h := Traffic{Count: 1, Bytes: 400}
	if s.Wrap {
		d2h = Traffic{Count: 2, Bytes: 8400}
	}
	want := map[string]Traffic{"H2D": {Count: 3, Bytes: 16800}, "D2H": d2h, "D2D": {Count: 1, Bytes: 1600}}
	if !reflect.DeepEqual(cp.Copies, want) {
		t.Errorf("copies: %v, want %v", cp.Copies, want)
	}
	if got := cp.BuildNames(); !reflect.DeepEqual(got, s.Builds) && (len(got) != 0 || len(s.Builds) != 0) {
		t.Errorf("builds: %v, want %v", got, s.Builds)
	}
	if want := map[string]int{"addVectors": n + 1}; !reflect.DeepEqual(cp.Launches, want) {
		t.Errorf("launches: %v, want %v", cp.Launches, want)
	}
	streamFinishes, deviceFinishes := 0, 1
	if s.Finishes {
		streamFinishes, deviceFinishes = 1, 2
	}
	if cp.StreamCreates != 1 || cp.StreamSets != 1 || cp.StreamFinishes != streamFinishes ||
		cp.DeviceFinishes != deviceFinishes {
		t.Errorf("streams: %d created, %d set, %d finished, %d device finishes; want 1, 1, %d, %d",
			cp.StreamCreates, cp.StreamSets, cp.StreamFinishes, cp.DeviceFinishes,
			streamFinishes, deviceFinishes)
	}
	if s.NekRS {
		checkSplitBuild(t, ev)
	}
}

// nekRS's two builds of one kernel carry the same properties hash, though
// one has build/compile_only and the other build/load_only.
func checkSplitBuild(t *testing.T, ev *Events) {
	t.Helper()
	hashes := map[string]uint64{}
	for _, e := range ev.Events {
		if e.Kind == trace.BuildBegin {
			hashes[ev.Dict.String(e.Args[2])] = e.Args[5]
		}
	}
	if len(hashes) != 2 || hashes["addVectors"] == 0 || hashes["addVectors"] != hashes["addVectors.okl"] {
		t.Errorf("build properties hashes by name: %x, want two, equal and not 0", hashes)
	}
}
