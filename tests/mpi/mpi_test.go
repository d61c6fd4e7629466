// Package mpi checks the MPI event source (runtime/mpi, occa-prof --mpi) end
// to end: programs/program.c runs under `mpirun -n 4` (Open MPI, or MPICH
// with `make test-mpich`: $MPIRUN names the launcher), and each
// rank's trace must hold exactly the calls it made, with their peers (world
// ranks), tags, bytes, communicators, requests and completions, and its clock
// offset to rank 0 within the bound it recorded, under an artificial shift.
//
// It needs `make test-programs` with an MPI compiler (mpicc) and its
// mpirun; without them it skips, saying why.
package mpi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/tests/occatest"
	"github.com/libocca/occa-tools/tests/testproc"
)

var occaProf, program, abiProgram string

// mpirun is the launcher (MPIRUN, else mpirun), and mpirunArgs what it
// needs besides -n.
var (
	mpirun     = "mpirun"
	mpirunArgs []string
)

// noMPI says why the MPI tests cannot run here ("" when they can).
var noMPI string

const ranks = 4

func TestMain(m *testing.M) {
	build := os.Getenv("OCCA_TOOLS_BUILD")
	if build == "" {
		build, _ = filepath.Abs("../../build")
	}
	occaProf = filepath.Join(build, "bin", "occa-prof")
	program = filepath.Join(build, "tests", "mpi-program")
	abiProgram = filepath.Join(build, "tests", "mpi-abi")
	for _, need := range []string{filepath.Join(build, "lib", "libocca_tools_mpi.so"), program} {
		if _, err := os.Stat(need); err != nil && noMPI == "" {
			noMPI = need + " is missing (needs mpicc: apt-get install libopenmpi-dev openmpi-bin, then make test-programs)"
		}
	}
	if v := os.Getenv("MPIRUN"); v != "" {
		mpirun = v
	}
	out, err := exec.Command(mpirun, "--version").CombinedOutput()
	switch {
	case noMPI != "":
	case err != nil:
		noMPI = "no " + mpirun + " in PATH (apt-get install openmpi-bin)"
	case strings.Contains(string(out), "Open MPI"):
		mpirunArgs = []string{"--oversubscribe"} // more ranks than cores
	}
	if noMPI != "" {
		if os.Getenv("CI") != "" { // .ci/run installs libopenmpi-dev
			fmt.Fprintf(os.Stderr, "tests/mpi: %s\n", noMPI)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "tests/mpi: the MPI tests skip: %s\n", noMPI)
	}
	os.Exit(m.Run())
}

func needMPI(t *testing.T) {
	if noMPI != "" {
		t.Skip(noMPI)
	}
}

// record traces program with args on `ranks` ranks under config and
// returns the directory of their traces.
func record(t *testing.T, config string, env []string, args ...string) string {
	t.Helper()
	needMPI(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "traces")
	cmd := testproc.Command(t, mpirun, append(append([]string{"-n", fmt.Sprint(ranks)}, mpirunArgs...),
		append([]string{occaProf, "--mpi", "--quiet", "--config", cfg, "--output", out, program}, args...)...)...)
	cmd.Env = append(os.Environ(), append([]string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1"}, env...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	if files, _ := filepath.Glob(filepath.Join(out, "*.occatrace")); len(files) != ranks {
		t.Fatalf("%d traces in %s, want one per rank: %q", len(files), out, files)
	}
	return out
}

// run traces program with args on `ranks` ranks under config and returns
// each rank's events.
func run(t *testing.T, config string, env []string, args ...string) [ranks]*occatest.Events {
	t.Helper()
	out := record(t, config, env, args...)
	files, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
	var by [ranks]*occatest.Events
	for _, f := range files {
		ev, err := occatest.ReadEvents(f)
		if err != nil {
			t.Fatal(err)
		}
		r := ev.Header.Rank
		if r < 0 || r >= ranks || by[r] != nil {
			t.Fatalf("%s: rank %d (another trace has it, or out of range)", f, r)
		}
		if n := ev.Stats.Dropped; len(n) != 0 {
			for reason, c := range n {
				if c != 0 {
					t.Errorf("rank %d: %d dropped (reason %d)", r, c, reason)
				}
			}
		}
		by[r] = ev
	}
	return by
}

// expected is what rank r of program.c calls, in order, as render writes it.
func expected(r int) []string {
	right, left := (r+1)%ranks, (r+ranks-1)%ranks
	w := []string{"init comm=none", "end status=0",
		fmt.Sprintf("comm world parent=none size=%d rank=%d world_rank=%d leader=0", ranks, r, r), "sync phase=1"}
	if r%2 == 0 {
		w = append(w, fmt.Sprintf("send peer=%d tag=11 bytes=100 comm=world", r+1), "end request=none status=0")
	} else {
		w = append(w, fmt.Sprintf("recv peer=%d tag=11 bytes=100 comm=world", r-1), "end request=none status=0")
	}
	w = append(w,
		fmt.Sprintf("irecv peer=%d tag=22 bytes=64 comm=world", left), "end request=new status=0",
		fmt.Sprintf("isend peer=%d tag=22 bytes=64 comm=world", right), "end request=new status=0",
		"waitall count=2", "done", "done", "end completed=2 status=0",
		"irecv peer=-1 tag=33 bytes=12 comm=world", "end request=new status=0",
		fmt.Sprintf("isend peer=%d tag=33 bytes=12 comm=world", right), "end request=new status=0",
		"wait count=1", "done", "end completed=1 status=0",
		"wait count=1", "done", "end completed=1 status=0",
		"barrier root=-2 bytes=0 comm=world size=4", "end request=none status=0",
		"bcast root=2 bytes=128 comm=world size=4", "end request=none status=0")
	for range 3 {
		w = append(w, "allreduce root=-2 bytes=32 comm=world size=4", "end request=none status=0")
	}
	scatterv := 0
	if r == 0 {
		scatterv = 16
	}
	w = append(w, "reduce root=1 bytes=4 comm=world size=4", "end request=none status=0",
		fmt.Sprintf("sendrecv peer=%d tag=55 bytes=16 comm=world", right), "end request=none status=0",
		fmt.Sprintf("isend peer=%d tag=66 bytes=4 comm=world", right), "end request=new status=0",
		fmt.Sprintf("probe peer=%d tag=66 bytes=0 comm=world", left), "end request=none status=0",
		fmt.Sprintf("recv peer=%d tag=66 bytes=4 comm=world", left), "end request=none status=0",
		"wait count=1", "done", "end completed=1 status=0",
		"gatherv root=0 bytes=4 comm=world size=4", "end request=none status=0",
		fmt.Sprintf("scatterv root=0 bytes=%d comm=world size=4", scatterv), "end request=none status=0",
		"allgatherv root=-2 bytes=4 comm=world size=4", "end request=none status=0",
		"alltoallv root=-2 bytes=16 comm=world size=4", "end request=none status=0",
		"reduce_scatter root=-2 bytes=16 comm=world size=4", "end request=none status=0",
		"reduce_scatter_block root=-2 bytes=16 comm=world size=4", "end request=none status=0",
		"scan root=-2 bytes=4 comm=world size=4", "end request=none status=0",
		"exscan root=-2 bytes=4 comm=world size=4", "end request=none status=0",
		"comm_split comm=world",
		fmt.Sprintf("comm half parent=world size=2 rank=%d world_rank=%d leader=%d", r/2, r, r%2),
		"end status=0")
	if r/2 == 0 {
		w = append(w, fmt.Sprintf("send peer=%d tag=44 bytes=4 comm=half", r+2), "end request=none status=0")
	} else {
		w = append(w, fmt.Sprintf("recv peer=%d tag=44 bytes=4 comm=half", r-2), "end request=none status=0")
	}
	return append(w, "allreduce root=-2 bytes=4 comm=half size=2", "end request=none status=0",
		"comm_free comm=half", "end status=0", "sync phase=2", "finalize comm=none", "end status=0")
}

// render writes rank r's MPI events as expected spells them, checking on the
// way what a line cannot show: begins and ends pair by correlation id, each
// finished request is one a call started and is finished once, inside the
// wait that reports it, and the clock offsets are within their bounds of
// the shift the test applied.
func render(t *testing.T, r int, ev *occatest.Events, shift int64) []string {
	names := map[uint64]string{0: "none"}
	comm := func(h uint64) string {
		if n, ok := names[h]; ok {
			return n
		}
		return fmt.Sprintf("unknown(%#x)", h)
	}
	var lines []string
	var open uint64           // corr of the call in progress
	live := map[uint64]bool{} // requests started and not finished
	req := func(h uint64) string {
		if h == 0 {
			return "none"
		}
		if live[h] {
			t.Errorf("rank %d: request %#x started twice without finishing", r, h)
		}
		live[h] = true
		return "new"
	}
	for _, e := range ev.Events {
		s := e.Kind.Spec()
		if s == nil || s.Domain != trace.DomainMPI {
			continue
		}
		a := e.Args
		fn := func() string { return trace.MpiFunctionName(a[1]) }
		if s.Begin {
			if open != 0 {
				t.Errorf("rank %d: %s inside call %d", r, e.Kind, open)
			}
			open = a[0]
		} else if s.Pair != trace.KindInvalid {
			if a[0] != open {
				t.Errorf("rank %d: %s corr %d, the open call is %d", r, e.Kind, a[0], open)
			}
			open = 0
		}
		var l string
		switch e.Kind {
		case trace.MpiCallBegin:
			l = fmt.Sprintf("%s comm=%s", fn(), comm(a[2]))
		case trace.MpiCallEnd:
			l = fmt.Sprintf("end status=%d", a[1])
		case trace.MpiP2PBegin:
			l = fmt.Sprintf("%s peer=%d tag=%d bytes=%d comm=%s", fn(), int64(a[2]), int64(a[3]), a[4], comm(a[5]))
		case trace.MpiP2PEnd, trace.MpiCollectiveEnd:
			l = fmt.Sprintf("end request=%s status=%d", req(a[1]), a[2])
		case trace.MpiCollectiveBegin:
			l = fmt.Sprintf("%s root=%d bytes=%d comm=%s size=%d", fn(), int64(a[2]), a[3], comm(a[4]), a[5])
		case trace.MpiWaitBegin:
			l = fmt.Sprintf("%s count=%d", fn(), a[2])
		case trace.MpiWaitEnd:
			l = fmt.Sprintf("end completed=%d status=%d", a[1], a[2])
		case trace.MpiRequestDone:
			if !live[a[0]] {
				t.Errorf("rank %d: request %#x finished but was not started", r, a[0])
			}
			if a[1] != open || open == 0 {
				t.Errorf("rank %d: request %#x finished in call %d, the open call is %d", r, a[0], a[1], open)
			}
			delete(live, a[0])
			l = "done"
		case trace.MpiComm:
			name := "world"
			if len(names) > 1 {
				name = "half"
			}
			names[a[0]] = name
			l = fmt.Sprintf("comm %s parent=%s size=%d rank=%d world_rank=%d leader=%d", name, comm(a[1]), a[2], a[3], a[4], int64(a[5]))
		case trace.MpiClockSync:
			offset, bound := int64(a[1]), int64(a[2])
			// program.c's ranks share one clock, shifted by the test:
			// the true offset to rank 0 is -r*shift.
			if miss := offset + int64(r)*shift; miss < -bound || miss > bound || a[0] != 0 ||
				(r == 0) != (bound == 0) {
				t.Errorf("rank %d: clock offset %d ns, error bound %d ns, reference %d: the true offset is %d",
					r, offset, bound, a[0], -int64(r)*shift)
			}
			l = fmt.Sprintf("sync phase=%d", a[3])
		default:
			l = e.Kind.String()
		}
		lines = append(lines, l)
	}
	if len(live) != 0 {
		t.Errorf("rank %d: %d requests never finished", r, len(live))
	}
	return lines
}

func TestCounts(t *testing.T) {
	const shift = 3_000_000 // rank r's clock reads r*3 ms ahead
	by := run(t, "[events]\nenable = [\"mpi\"]\n", []string{fmt.Sprintf("OCCA_TOOLS_MPI_TEST_CLOCK_SHIFT_NS=%d", shift)})
	for r, ev := range by {
		got, want := render(t, r, ev, shift), expected(r)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("rank %d: MPI events:\n%s\nwant:\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// With the domain off nothing of MPI is recorded (and no rank waits for a
// clock measurement the others skip); with only the clock kind off, the
// calls are and the measurement is skipped by every rank.
func TestDomainOff(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   map[trace.Kind]int
	}{
		{"[events]\nenable = [\"user\"]\n", map[trace.Kind]int{}},
		{"[events]\nenable = [\"mpi\"]\ndisable = [\"mpi_clock_sync\", \"mpi_request_done\"]\n",
			map[trace.Kind]int{trace.MpiCallBegin: 4, trace.MpiP2PBegin: 10, trace.MpiCollectiveBegin: 15,
				trace.MpiWaitBegin: 4, trace.MpiComm: 2}},
	} {
		by := run(t, tc.config, nil)
		for r, ev := range by {
			got := map[trace.Kind]int{}
			for _, e := range ev.Events {
				if s := e.Kind.Spec(); s != nil && s.Domain == trace.DomainMPI && (s.Begin || s.Pair == trace.KindInvalid) {
					got[e.Kind]++
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%q: rank %d: MPI begins and instants %v, want %v", tc.config, r, got, tc.want)
			}
		}
	}
}

// Only processes that contain libmpi are traced (not the shell that starts
// the program, though the library is preloaded there too), and a rank whose
// runtime is not started (no config) neither records nor leaves the others
// waiting for their clock measurement, which every rank then skips.
func TestUntracedRank(t *testing.T) {
	needMPI(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	script := filepath.Join(dir, "start.sh")
	if err := os.WriteFile(cfg, []byte("[events]\nenable = [\"mpi\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\n/bin/true\n[ \"${OMPI_COMM_WORLD_RANK:-$PMI_RANK}\" = 1 ] && unset OCCA_TOOLS_CONFIG\nexec "+program+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "traces")
	cmd := testproc.Command(t, mpirun, append(append([]string{"-n", fmt.Sprint(ranks)}, mpirunArgs...),
		occaProf, "--mpi", "--quiet", "--config", cfg, "--output", out, script)...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.occatrace"))
	var ranksSeen []int64
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "mpi-program-") {
			t.Errorf("%s: a process without libmpi was traced", f)
			continue
		}
		ev, err := occatest.ReadEvents(f)
		if err != nil {
			t.Fatal(err)
		}
		ranksSeen = append(ranksSeen, ev.Header.Rank)
		calls, syncs := 0, 0
		for _, e := range ev.Events {
			switch e.Kind {
			case trace.MpiCallBegin:
				calls++
			case trace.MpiClockSync:
				syncs++
			}
		}
		if calls != 4 || syncs != 0 {
			t.Errorf("rank %d: %d calls and %d clock measurements, want 4 and 0", ev.Header.Rank, calls, syncs)
		}
	}
	slices.Sort(ranksSeen)
	if fmt.Sprint(ranksSeen) != "[0 2 3]" {
		t.Errorf("traced ranks %v, want [0 2 3]", ranksSeen)
	}
}

// The runtime's MPI entry points take what a source sends as hostile:
// programs/abi.c sends kinds and argument counts that do not fit, NULLs
// and an overwritten call between valid events, and the trace holds
// exactly the valid ones, with one warning. Needs no MPI.
func TestHostileSource(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[events]\nenable = [\"mpi\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := testproc.Command(t, abiProgram)
	cmd.Env = append(os.Environ(), "OCCA_TOOLS_CONFIG="+cfg, "OCCA_TOOLS_OUTPUT_DIR="+dir)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", abiProgram, err, b)
	}
	if n := strings.Count(string(b), "an MPI source sent kind"); n != 1 {
		t.Errorf("%d warnings about the source, want 1:\n%s", n, b)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.occatrace"))
	if len(files) != 1 {
		t.Fatalf("traces %q, want one", files)
	}
	ev, err := occatest.ReadEvents(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ev.Events {
		s := e.Kind.Spec()
		if s == nil {
			got = append(got, e.Kind.String())
		} else if s.Domain == trace.DomainMPI {
			l := e.Kind.String()
			for i, a := range s.Args {
				if a.Type != trace.ArgCorr && i < len(e.Args) {
					l += fmt.Sprintf(" %s=%d", a.Name, int64(e.Args[i]))
				}
			}
			got = append(got, l)
		}
	}
	want := []string{"mpi_call_begin function=1 comm=5", "mpi_call_end status=0",
		"mpi_p2p_begin function=8 peer=-1 tag=3 bytes=100 comm=7", "mpi_p2p_end request=9 status=0",
		"mpi_request_done request=9 wait=42", "mpi_wait_begin function=18 count=1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("MPI events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
