package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/summary"
	"github.com/libocca/occa-tools/formats/trace"
)

// listTraces returns the names of the trace files in dir.
func listTraces(dir string) map[string]bool {
	names := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".occatrace") && e.Type().IsRegular() {
			names[e.Name()] = true
		}
	}
	return names
}

// newTraces returns the trace files of dir created by this run: names not
// there before, or files written since start (another rank's trace created
// before occa-prof listed the directory). Sorted by name.
func newTraces(dir string, before map[string]bool, start time.Time) []string {
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".occatrace") || !e.Type().IsRegular() {
			continue
		}
		if before[e.Name()] {
			if info, err := e.Info(); err != nil || info.ModTime().Before(start) {
				continue
			}
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	slices.Sort(out)
	return out
}

// ofPID keeps the traces whose name carries -p<pid> (the default name
// pattern), the program's own when it was traced directly.
func ofPID(paths []string, pid int) []string {
	tag := "-p" + strconv.Itoa(pid)
	var out []string
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".occatrace")
		if strings.HasSuffix(base, tag) || strings.Contains(base, tag+"-") {
			out = append(out, p)
		}
	}
	return out
}

// report prints the traces this run created and the per-kernel table of
// the program's traces (its own pid's files; all new files when none carry
// it, e.g. a script that ran the application). res is how the program
// ended, prog its name as given.
func report(stdout, stderr io.Writer, dir string, before map[string]bool, start time.Time, res *result, prog string, rank, size int64) {
	if res.signal != 0 {
		fmt.Fprintf(stderr, "occa-prof: warning: %s died of signal %d (%v); the profile below covers its run up to then\n",
			prog, int(res.signal), res.signal)
	}
	files := newTraces(dir, before, start)
	if rank == 0 && size > 0 {
		// Other ranks may finish a moment later: wait a little for one file each.
		for deadline := time.Now().Add(2 * time.Second); int64(len(files)) < size && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			files = newTraces(dir, before, start)
		}
	}
	if len(files) == 0 {
		fmt.Fprintf(stdout, "occa-prof: no trace written in %s (the program did not load libocca, or the runtime was off)\n", dir)
		return
	}
	fmt.Fprintf(stdout, "occa-prof: %d trace file(s) in %s:\n", len(files), dir)
	for _, f := range files {
		fmt.Fprintf(stdout, "  %s\n", filepath.Base(f))
	}
	mine := ofPID(files, res.pid)
	if len(mine) == 0 && rank < 0 {
		mine = files
	}
	if len(mine) == 0 {
		return
	}
	p, err := readProfile(mine)
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: reading the traces: %v\n", err)
	}
	for _, f := range p.early {
		fmt.Fprintf(stderr, "occa-prof: warning: %s ends early (no final stats: the process ended before the runtime's final flush); the profile holds what reached the file\n",
			filepath.Base(f))
	}
	what := "kernels"
	if rank == 0 {
		what = "kernels of rank 0"
	}
	if len(p.kernels) == 0 {
		fmt.Fprintf(stdout, "occa-prof: no kernel launches recorded%s\n", p.activity())
	} else {
		fmt.Fprintf(stdout, "occa-prof: %s (host time from launch to return):\n", what)
		summary.WriteKernelTotals(stdout, p.kernels)
	}
	if len(p.unended) > 0 {
		fmt.Fprintf(stdout, "occa-prof: launches that had not returned when the trace ended: %s\n", counted(p.unended))
	}
}

// profile is what occa-prof says about the program's traces.
type profile struct {
	kernels []summary.KernelTotal // the summary's kernels table: launches that ended
	unended map[string]int64      // launches without an end, by kernel name
	// The other calls that succeeded, and the builds that failed, for a run
	// without launches (a kernel that does not build is the commonest way
	// an OCCA program dies).
	setups, allocs, copies, builds, buildsFailed int64
	early                                        []string // files without their final stats
}

// activity says what the traces hold besides launches, or "" when nothing.
func (p *profile) activity() string {
	var parts []string
	add := func(n int64, one, many string) {
		if n == 1 {
			parts = append(parts, "1 "+one)
		} else if n > 1 {
			parts = append(parts, strconv.FormatInt(n, 10)+" "+many)
		}
	}
	add(p.setups, "device setup", "device setups")
	add(p.allocs, "allocation", "allocations")
	add(p.copies, "copy", "copies")
	add(p.builds, "kernel build", "kernel builds")
	if len(parts) == 0 {
		return ""
	}
	s := "; the trace holds " + strings.Join(parts, ", ")
	if p.buildsFailed > 0 {
		s += fmt.Sprintf(" (%d failed)", p.buildsFailed)
	}
	return s
}

// ok is 1 for a successful call's status.
func ok(status uint64) int64 {
	if status == 0 {
		return 1
	}
	return 0
}

// counted lists "name N" pairs by name.
func counted(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		names[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(names, ", ")
}

// readProfile reads the program's traces: the kernels table as the
// summary computes it, and, for what occa-prof says besides, the calls
// other than launches and the launches that never ended. A file cut short
// is read as far as it goes (salvaging past damaged chunks).
func readProfile(paths []string) (*profile, error) {
	p := &profile{unended: map[string]int64{}}
	var errs []error
	for _, path := range paths {
		if err := p.add(path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(path), err))
		}
	}
	var err error
	if p.kernels, err = summary.ReadKernelTotals(paths, analysis.Options{Salvage: true}); err != nil && len(errs) == 0 {
		errs = append(errs, err)
	}
	return p, errors.Join(errs...)
}

// add counts path's calls other than launches, and its launches without
// an end.
func (p *profile) add(path string) error {
	r, closer, err := trace.Open(path, trace.WithSalvage(true))
	if err != nil {
		return err
	}
	defer closer.Close()
	pending := map[uint64]uint64{} // begun launches: kernel by correlation id
	var readErr error
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		status, _ := e.Arg("status")
		switch e.Kind {
		case trace.RunBegin:
			c, _ := e.Corr()
			k, _ := e.Arg("kernel")
			pending[c] = k
		case trace.RunEnd:
			c, _ := e.Corr()
			delete(pending, c)
		case trace.DeviceSetupEnd:
			p.setups += ok(status)
		case trace.MemoryAllocEnd:
			p.allocs += ok(status)
		case trace.CopyEnd:
			p.copies += ok(status)
		case trace.BuildEnd:
			p.builds++
			if status != 0 {
				p.buildsFailed++
			}
		}
	}
	if readErr == nil && !r.Complete() {
		p.early = append(p.early, path)
	}
	// Names after the whole file: every def has been read by now.
	for _, k := range pending {
		n := r.Dict().Kernel(k).Name
		if n == "" {
			n = fmt.Sprintf("kernel#%d", k)
		}
		p.unended[n]++
	}
	return readErr
}
