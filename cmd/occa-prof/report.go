package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
// it, e.g. a script that ran the application).
func report(stdout, stderr io.Writer, dir string, before map[string]bool, start time.Time, pid int, rank, size int64) {
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
	mine := ofPID(files, pid)
	if len(mine) == 0 && rank < 0 {
		mine = files
	}
	if len(mine) == 0 {
		return
	}
	ks, err := kernelTable(mine)
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: reading the traces: %v\n", err)
	}
	what := "kernels"
	if rank == 0 {
		what = "kernels of rank 0"
	}
	if len(ks) == 0 {
		fmt.Fprintf(stdout, "occa-prof: no kernel launches recorded\n")
		return
	}
	fmt.Fprintf(stdout, "occa-prof: %s (host time from launch to return):\n", what)
	writeTable(stdout, ks)
}

// kernelStat is one row of the table.
type kernelStat struct {
	name  string
	calls int64
	total int64 // ns
}

// kernelTable pairs run_begin and run_end by correlation id and sums the
// time per kernel name over the files. Launches without an end are left out.
func kernelTable(paths []string) ([]kernelStat, error) {
	byName := map[string]*kernelStat{}
	var errs []error
	for _, p := range paths {
		if err := addKernels(p, byName); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(p), err))
		}
	}
	out := make([]kernelStat, 0, len(byName))
	for _, k := range byName {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b kernelStat) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return out, errors.Join(errs...)
}

func addKernels(path string, byName map[string]*kernelStat) error {
	r, closer, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer closer.Close()
	type open struct {
		kernel uint64
		t      int64
	}
	pending := map[uint64]open{}
	type done struct {
		kernel uint64
		ns     int64
	}
	var runs []done
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch e.Kind {
		case trace.RunBegin:
			c, _ := e.Corr()
			k, _ := e.Arg("kernel")
			pending[c] = open{k, e.Time}
		case trace.RunEnd:
			c, _ := e.Corr()
			if b, ok := pending[c]; ok {
				delete(pending, c)
				runs = append(runs, done{b.kernel, e.Time - b.t})
			}
		}
	}
	// Names after the whole file: every def has been read by now.
	for _, d := range runs {
		name := r.Dict().Kernel(d.kernel).Name
		if name == "" {
			name = fmt.Sprintf("kernel#%d", d.kernel)
		}
		k := byName[name]
		if k == nil {
			k = &kernelStat{name: name}
			byName[name] = k
		}
		k.calls++
		k.total += d.ns
	}
	return nil
}

func writeTable(w io.Writer, ks []kernelStat) {
	width := len("kernel")
	for _, k := range ks {
		width = max(width, len(k.name))
	}
	fmt.Fprintf(w, "  %-*s %8s %12s %12s\n", width, "kernel", "calls", "total", "avg")
	for _, k := range ks {
		fmt.Fprintf(w, "  %-*s %8d %12s %12s\n", width, k.name, k.calls, dur(k.total), dur(k.total/max(k.calls, 1)))
	}
}

// dur formats ns with three significant digits.
func dur(ns int64) string {
	d := float64(ns)
	switch {
	case d >= 1e9:
		return strconv.FormatFloat(d/1e9, 'f', 3, 64) + " s"
	case d >= 1e6:
		return strconv.FormatFloat(d/1e6, 'f', 3, 64) + " ms"
	case d >= 1e3:
		return strconv.FormatFloat(d/1e3, 'f', 3, 64) + " us"
	}
	return strconv.FormatInt(ns, 10) + " ns"
}
