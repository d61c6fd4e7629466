package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/summary"
)

var cmdSummary = &Command{
	UsageLine: "summary [-format table|csv|json|markdown] [-section name] [-salvage] [-j n] trace|rundir...",
	Short:     "profile report: kernels, copies, allocations, builds, per device and rank",
	Long: `
Summary reads traces (files, or a run directory holding every rank's
*.occatrace) and prints an nvprof-style report:

  kernels    per kernel: calls, total, percent, avg, median, min, max,
             stddev; device-side time where the trace has device times
  copies     memory traffic per direction: count, bytes, time, bandwidth
  builds     kernel builds: count, time, cache hits and misses
  api        host-side calls by kind
  devices    per device: kernel and copy time, summed and busy (the union
             of a process's intervals, which does not double-count its
             overlapping work; summed over the processes of a rank)
  memory     allocations per device: peak bytes in use, never freed
  ranks      per rank, and imbalance across ranks (max / mean - 1)
  openmp     (traces with OpenMP events) per kernel and outside kernels:
             parallel regions, implicit tasks, thread imbalance (busiest
             thread / mean busy time), barrier wait share, explicit
             tasks created and completed, their time, and the critical
             path of their dependence graph
  drops      events lost, by rank and reason

Drops and incomplete traces are reported first, as warnings. Times in
-format csv and json are integer ns and sizes bytes; the table and
markdown formats use readable units. -section picks one table (with csv:
a plain CSV file with a header row). Medians are exact up to 4096 calls
per kernel and within 1.6 % beyond (a histogram of 64 buckets per power
of two); every other figure is exact. Each trace is folded into the
totals as soon as it is read, so memory does not grow with the number of
ranks, and the report does not depend on the order traces finish in.

Traces are read in parallel (-j, default: the number of CPUs). A damaged
trace is an error naming the file and offset; with -salvage its damaged
parts are skipped and the rest counted.
`,
}

var (
	summaryFormat  = cmdSummary.Flag.String("format", "table", "output format: table, csv, json or markdown")
	summarySection = cmdSummary.Flag.String("section", "", "print only this table (kernels, copies, builds, api, devices, memory, ranks, imbalance, openmp, drops)")
	summarySalvage = cmdSummary.Flag.Bool("salvage", false, "skip damaged chunks and summarize the rest")
	summaryJobs    = cmdSummary.Flag.Int("j", 0, "traces read at once (0: number of CPUs)")
)

func init() { cmdSummary.Run = runSummary }

func runSummary(env *Env, cmd *Command, args []string) error {
	if len(args) == 0 {
		return usagef("no traces given")
	}
	ok := false
	for _, f := range summary.Formats {
		ok = ok || f == *summaryFormat
	}
	if !ok {
		return usagef("unknown -format %q (want %s)", *summaryFormat, strings.Join(summary.Formats, ", "))
	}
	paths, err := analysis.Expand(args)
	if err == nil {
		_, err = readHeaders(paths)
	}
	if err != nil {
		return err
	}
	// Each trace is folded into the total as soon as it is read: memory
	// holds the -j collectors being filled and the total, whatever the
	// number of traces. The order of the folds does not change the total.
	total := summary.NewCollector()
	var mu sync.Mutex
	errs := analysis.Parallel(len(paths), *summaryJobs, func(i int) error {
		c := summary.NewCollector()
		res, err := analysis.Read(paths[i], i, analysis.Options{Salvage: *summarySalvage}, c.Add)
		if res != nil {
			c.Finish(res)
			mu.Lock()
			reportProblems(env, paths[i], res)
			total.Absorb(c)
			mu.Unlock()
		}
		return err
	})
	failed := false
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(env.Stderr, "occa-tools summary: %v\n", explain(err))
			failed = true
		}
	}
	rep := total.Report()
	if err := rep.Write(env.Stdout, *summaryFormat, *summarySection); err != nil {
		return err
	}
	if failed {
		return errSilent
	}
	return nil
}

// reportProblems tells what a salvaging read skipped.
func reportProblems(env *Env, path string, res *analysis.Result) {
	if len(res.Problems) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "%s: salvaged: skipped %d damaged bytes, %d problems:\n", path, res.Skipped, len(res.Problems))
	for _, p := range res.Problems {
		fmt.Fprintf(env.Stderr, "\t%v\n", p)
	}
}
