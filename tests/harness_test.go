// Package tests holds the end-to-end tests: they run the C workload
// (tests/workload) under the real runtime libraries and check the traces it
// leaves against the reference model (scenario_test.go). `make test` builds
// the programs first; OCCA_TOOLS_BUILD points at another build directory.
package tests

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/testproc"
)

var buildDir string

func TestMain(m *testing.M) {
	buildDir = os.Getenv("OCCA_TOOLS_BUILD")
	if buildDir == "" {
		buildDir, _ = filepath.Abs("../build")
	}
	if _, err := os.Stat(filepath.Join(buildDir, "tests", "workload")); err != nil {
		if os.Getenv("CI") != "" {
			os.Stderr.WriteString("tests: build/tests/workload is missing: run `make test`, which builds it first\n")
			os.Exit(1)
		}
		os.Stderr.WriteString("tests: skipped: build/tests/workload is missing (run `make test`)\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// run is one workload process.
type run struct {
	dir    string // its working and output directory
	traces []string
	stderr string
	stdout string
	err    error // exit error, if any
}

// runWorkload writes configText (with output.directory pointing into a temp
// dir) to a file, runs the workload with it and collects the traces.
func runWorkload(t *testing.T, configText string, env []string, args ...string) *run {
	t.Helper()
	return runProgram(t, "workload", configText, env, args...)
}

// runProgram is runWorkload for any program of build/tests.
func runProgram(t *testing.T, name, configText string, env []string, args ...string) *run {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(cfgPath, []byte(configText), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := testproc.Command(t, filepath.Join(buildDir, "tests", name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfgPath, "OCCA_TOOLS_OUTPUT_DIR="+filepath.Join(dir, "out"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := &run{dir: dir, stdout: stdout.String(), stderr: stderr.String(), err: err}
	r.traces, _ = filepath.Glob(filepath.Join(dir, "out", "*.occatrace"))
	return r
}

// got is what a trace holds.
type got struct {
	header *trace.Header
	counts map[trace.Kind]int
	events []trace.Event
	dict   *trace.Dict
	stats  *trace.Stats
	err    error // how reading ended, nil for a clean end
	// chunks read intact, and how many were raw events chunks (whole
	// buffers written as recorded)
	chunks, rawChunks int
}

// markers counts the markers called name.
func (g *got) markers(name string) int {
	n := 0
	for _, e := range g.events {
		if e.Kind == trace.Marker && g.dict.String(e.Args[0]) == name {
			n++
		}
	}
	return n
}

func readTrace(t *testing.T, path string) *got {
	t.Helper()
	return readTraceKeeping(t, path, true)
}

// countTrace is readTrace without the events (counts only): for traces of
// millions of events.
func countTrace(t *testing.T, path string) *got {
	t.Helper()
	return readTraceKeeping(t, path, false)
}

func readTraceKeeping(t *testing.T, path string, keep bool) *got {
	t.Helper()
	r, c, err := trace.Open(path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer c.Close()
	g := &got{header: r.Header(), counts: map[trace.Kind]int{}}
	for {
		e, err := r.ReadEvent()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				g.err = err
			}
			break
		}
		if keep {
			g.events = append(g.events, e)
		}
		g.counts[e.Kind]++
	}
	g.dict = r.Dict()
	g.stats = r.Stats()
	g.chunks, g.rawChunks = r.Chunks(), r.RawChunks()
	return g
}

// oneTrace runs the workload and returns its single, cleanly ended trace.
func oneTrace(t *testing.T, configText string, args ...string) *got {
	t.Helper()
	r := runWorkload(t, configText, nil, args...)
	if r.err != nil {
		t.Fatalf("workload failed: %v\n%s", r.err, r.stderr)
	}
	if len(r.traces) != 1 {
		t.Fatalf("want 1 trace, got %d; stderr:\n%s", len(r.traces), r.stderr)
	}
	g := readTrace(t, r.traces[0])
	if g.err != nil {
		t.Fatalf("reading %s: %v", r.traces[0], g.err)
	}
	if g.stats == nil || !g.stats.Final {
		t.Fatalf("%s has no final stats chunk", r.traces[0])
	}
	return g
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
