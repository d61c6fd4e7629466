package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
	"github.com/libocca/occa-tools/tests/occatest"
)

// smallTrace writes tracetest's small trace (pid 4242: launches axpy 2, dot
// 1, norm 1; one setup, allocation, copy and build) into dir, cut short as a
// killed process leaves it (noClose), and shortened by cut bytes.
func smallTrace(t *testing.T, dir string, noClose bool, cut int) {
	t.Helper()
	var b bytes.Buffer
	if err := tracetest.WriteSmall(&b, tracetest.SmallOptions{NoClose: noClose}); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()[:b.Len()-cut]
	if err := os.WriteFile(filepath.Join(dir, "solver-node7-r3-p4242.occatrace"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runReport(dir string, res *result) (stdout, stderr string) {
	var o, e bytes.Buffer
	report(&o, &e, dir, map[string]bool{}, time.Time{}, res, "./solver", -1, 0)
	return o.String(), e.String()
}

const (
	diedLine  = "occa-prof: warning: ./solver died of signal 11 (segmentation fault); the profile below covers its run up to then\n"
	earlyLine = "occa-prof: warning: solver-node7-r3-p4242.occatrace ends early (no final stats: the process ended before the runtime's final flush); the profile holds what reached the file\n"
)

// A program that died of a signal: one warning line, and the table of what
// the trace holds. A trace cut short (no final stats, or cut inside its
// last chunk) is read as far as it goes, with a warning naming it.
func TestReportAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noClose bool
		cut     int
		stderr  string
	}{
		{"complete", false, 0, diedLine},
		{"no final stats", true, 0, diedLine + earlyLine},
		// The last chunk (thread 2's fork) is lost; norm's launch, in the
		// chunk before, is not.
		{"cut in its last chunk", true, 7, diedLine + earlyLine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			smallTrace(t, dir, tc.noClose, tc.cut)
			stdout, stderr := runReport(dir, &result{pid: 4242, signal: syscall.SIGSEGV})
			if got, want := strings.Join(occatest.TableRows(stdout), ","), "axpy 2,dot 1,norm 1"; got != want {
				t.Errorf("table rows %q, want %q; stdout:\n%s", got, want, stdout)
			}
			if stderr != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tc.stderr)
			}
		})
	}
}

// Without a launch, what the trace holds (a kernel that failed to build is
// how most OCCA programs die); a clean exit has no warning.
func TestReportNoLaunches(t *testing.T) {
	dir := t.TempDir()
	smallTrace(t, dir, false, 0)
	p, err := readProfile([]string{filepath.Join(dir, "solver-node7-r3-p4242.occatrace")})
	if err != nil {
		t.Fatal(err)
	}
	p.kernels = nil
	if got, want := p.activity(), "; the trace holds 1 device setup, 1 allocation, 1 copy, 1 kernel build"; got != want {
		t.Errorf("activity %q, want %q", got, want)
	}
	p.buildsFailed, p.builds = 1, 2
	if got, want := p.activity(), "; the trace holds 1 device setup, 1 allocation, 1 copy, 2 kernel builds (1 failed)"; got != want {
		t.Errorf("activity %q, want %q", got, want)
	}
	stdout, stderr := runReport(dir, &result{pid: 4242})
	if stderr != "" || len(occatest.TableRows(stdout)) != 3 {
		t.Errorf("clean run: stderr %q, stdout:\n%s", stderr, stdout)
	}
}

// A launch still running when the trace ended (the kernel that crashed) is
// named after the table.
func TestReportUnendedLaunch(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	tw, err := trace.NewWriter(&b, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	err = tw.WriteDefs(tracetest.Defs())
	batch := tw.Batch(0)
	for _, e := range []struct {
		k    trace.Kind
		t    int64
		args []uint64
	}{
		{trace.RunBegin, 10, []uint64{1, 2, 1, 0}}, // dot
		{trace.RunEnd, 20, []uint64{1, trace.StatusOK}},
		{trace.RunBegin, 30, []uint64{2, 1, 1, 0}}, // axpy, no end
	} {
		if err == nil {
			err = batch.Add(e.k, tracetest.MonoStart+e.t, e.args...)
		}
	}
	if err == nil {
		err = tw.WriteBatch(batch)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "solver-node7-r3-p4242.occatrace"), b.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := runReport(dir, &result{pid: 4242, signal: syscall.SIGSEGV})
	if rows := occatest.TableRows(stdout); len(rows) != 1 || rows[0] != "dot 1" {
		t.Errorf("table rows %v, want [dot 1]", rows)
	}
	if want := "\nocca-prof: launches that had not returned when the trace ended: axpy 1\n"; !strings.HasSuffix(stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to end with %q", stdout, want)
	}
	if stderr != diedLine {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, diedLine)
	}
}
