package adapter

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
)

// A variant of the stand-in (tests/occa-standin/standin.mk) and what the
// adapter must record of driver_versions.cpp's scenario against it.
type variant struct {
	dir string // under build/standin; "" is OCCA 2.0
	occatest.Scenario
}

var variants = []variant{
	{"", occatest.ScenarioFor(20000, false)},
	{"nekrs", occatest.ScenarioFor(20000, true)},
	{"occa-1.5", occatest.ScenarioFor(10500, false)},
	{"occa-1.3", occatest.ScenarioFor(10300, false)},
	{"occa-1.1", occatest.ScenarioFor(10100, false)},
	// An OCCA the adapter does not know, whose kernel handle it cannot hold:
	// builds are forwarded unrecorded (launches are still named), and one
	// line says so.
	{"unknown", occatest.Scenario{Pool: true, Wrap: true, Finishes: true, Warn: []string{
		"libocca 3.0.0 is not a version the adapter knows",
		"occa::kernel handles of 424 bytes (at most 256 handled)",
		"absent from the trace: kernel builds ",
	}}},
}

// profileVersion runs the variant's driver under occa-prof.
func profileVersion(t *testing.T, v variant, args ...string) (*occatest.Capture, *occatest.Events, []string) {
	t.Helper()
	return occatest.ProfileScenario(t, occaProf, filepath.Join(standin, v.dir, "occa-standin-versions"), args...)
}

// Every supported OCCA, each through its own stand-in: exact counts and
// bytes (copy counts are bytes before OCCA 2.0, elements from 2.0: the
// driver moves the same bytes in both), the pool of each version, run({...})
// counted once even where it does not call run(), and a warn line only where
// something will be missing.
func TestOCCAVersions(t *testing.T) {
	const n = 5
	for _, v := range variants {
		v := v
		name := v.dir
		if name == "" {
			name = "occa-2.0"
		}
		t.Run(name, func(t *testing.T) {
			cp, ev, warns := profileVersion(t, v, "-n", "5")
			v.Check(t, n, cp, ev, warns)
		})
	}
}

// The nekRS layout under the adapter's build hook: libocca writes a
// 128-byte kernel where the mirror's is 24 bytes, so a hook holding the
// result at the mirror's size would have the program die at its first
// build. It must run, recorded, with device times on too (the hooks that
// hold handles then: timing).
func TestNekRSLayoutDoesNotCrash(t *testing.T) {
	v := variants[1]
	for _, flags := range [][]string{nil, {"--device-time"}} {
		dir := t.TempDir()
		env := []string{"OCCA_CACHE_DIR=" + filepath.Join(dir, "cache")}
		out, files, err := occatest.Profile(t, occaProf, dir, env, append([]string{"--quiet"}, flags...),
			filepath.Join(standin, v.dir, "occa-standin-versions"), "-n", "3")
		if err != nil || out != "ok\n" || len(files) != 1 {
			t.Fatalf("nekRS layout %v: %v, printed %q, traces %v", flags, err, out, files)
		}
		cp, err := occatest.Read(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"addVectors": 4}; !reflect.DeepEqual(cp.Launches, want) {
			t.Errorf("%v: launches %v, want %v", flags, cp.Launches, want)
		}
		if len(flags) != 0 && cp.DeviceTimes != 4 {
			t.Errorf("device times: %d, want 4", cp.DeviceTimes)
		}
	}
}

// Each variant's libocca exports the names of the OCCA it stands for: the
// names the adapter hooks for that version are there, and those of other
// versions are not (so a test passing against a variant means the hooks for
// that version bound).
func TestVariantSymbols(t *testing.T) {
	const (
		setupJSON  = "_ZN4occa6device5setupERKNS_4jsonE"
		setupProps = "_ZN4occa6device5setupERKNS_10propertiesE"
		pool       = "_ZN4occa10memoryPool7reserveElRKNS_7dtype_tE"
		expPool    = "_ZN4occa12experimental10memoryPool7reserveElRKNS_7dtype_tE"
		finishAll  = "_ZN4occa6device9finishAllEv"
		runList    = "_ZNK4occa6kernel3runESt16initializer_listINS_9kernelArgEE"
	)
	want := map[string][]string{
		"":         {setupJSON, pool, finishAll, runList},
		"nekrs":    {setupJSON, pool, finishAll, runList},
		"occa-1.5": {setupJSON, expPool, finishAll, runList},
		"occa-1.3": {setupJSON, runList},
		"occa-1.1": {setupProps},
	}
	all := []string{setupJSON, setupProps, pool, expPool, finishAll, runList}
	for dir, names := range want {
		lib := filepath.Join(standin, dir, "lib", "libocca.so")
		if _, err := os.Stat(lib); err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, s := range dynamicSymbols(t, lib) {
			have[s] = true
		}
		for _, s := range all {
			expected := false
			for _, w := range names {
				expected = expected || w == s
			}
			if have[s] != expected {
				t.Errorf("%s: exports %s: %v, want %v", lib, s, have[s], expected)
			}
		}
	}
}

// A hook may be the first OCCA call of a process (here a copy into an empty
// memory, before any device): it resolves libocca's functions itself.
func TestFirstCallIsACopy(t *testing.T) {
	cp, _, warns := profileVersion(t, variants[0], "-n", "2", "-first-copy")
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	want := map[string]occatest.Traffic{"H2D": traffic(4, 16800), "D2H": traffic(2, 8400), "D2D": traffic(1, 1600)}
	if !reflect.DeepEqual(cp.Copies, want) {
		t.Errorf("copies: %v, want %v", cp.Copies, want)
	}
	if want := map[string]int{"addVectors": 3}; !reflect.DeepEqual(cp.Launches, want) {
		t.Errorf("launches: %v, want %v", cp.Launches, want)
	}
}
