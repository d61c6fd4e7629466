package summary

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/libocca/occa-tools/formats/analysis"
)

// KernelTotal is one kernel's launches whose end the trace has, host-side
// (launch to return): the first three columns of the kernels table.
type KernelTotal struct {
	Name  string
	Calls int64
	Total int64 // ns
}

// kernelNames returns c's kernel names in the kernels table's order: the
// longest host-side total first, then by name.
func (c *Collector) kernelNames() []string {
	names := sortedKeys(c.kernels)
	slices.SortStableFunc(names, func(a, b string) int { return -cmp.Compare(c.kernels[a].host.Sum, c.kernels[b].host.Sum) })
	return names
}

// KernelTotals returns c's kernels in the kernels table's order. Call it
// on a Merge'd Collector.
func (c *Collector) KernelTotals() []KernelTotal {
	out := make([]KernelTotal, 0, len(c.kernels))
	for _, n := range c.kernelNames() {
		h := &c.kernels[n].host
		out = append(out, KernelTotal{Name: n, Calls: h.N, Total: h.Sum})
	}
	return out
}

// ReadKernelTotals reads the traces at paths, in turn, with o, and returns
// their kernels summed over them, as the kernels table of their summary
// gives them (occa-prof prints them when the program exits). A damaged
// trace counts up to the damage (past it with o.Salvage); the error names
// each such file (its path).
func ReadKernelTotals(paths []string, o analysis.Options) ([]KernelTotal, error) {
	total := NewCollector()
	var errs []error
	for i, p := range paths {
		c := NewCollector()
		res, err := analysis.Read(p, i, o, c.Add)
		if res != nil {
			c.Finish(res)
			total.Absorb(c)
		}
		if err != nil {
			errs = append(errs, err) // it names the file
		}
	}
	return total.KernelTotals(), errors.Join(errs...)
}

// WriteKernelTotals writes ks as a table for people, each line indented
// by two spaces: kernel, calls, total and average, durations as
// FormatDuration gives them.
func WriteKernelTotals(w io.Writer, ks []KernelTotal) error {
	width := len("kernel")
	for _, k := range ks {
		width = max(width, len(k.Name))
	}
	if _, err := fmt.Fprintf(w, "  %-*s %8s %12s %12s\n", width, "kernel", "calls", "total", "avg"); err != nil {
		return err
	}
	for _, k := range ks {
		if _, err := fmt.Fprintf(w, "  %-*s %8d %12s %12s\n", width, k.Name, k.Calls, FormatDuration(k.Total),
			FormatDuration(k.Total/max(k.Calls, 1))); err != nil {
			return err
		}
	}
	return nil
}
