package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/summary"
)

var cmdSummary = &Command{
	UsageLine: "summary [-format table|csv|json|markdown] [-section name] [-salvage] [-j n] [-memory size] [-shard i/n -partial file] trace|rundir|partial...",
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
  mpi        (traces with MPI events, occa-prof --mpi) per MPI function:
             calls, time, bytes, and the share of the ranks' time in MPI
             and in kernel launches; each rank's time in MPI is the
             ranks table's mpi_ns, its imbalance a row of imbalance
  steps      (traces with MPI events) per user region name holding MPI
             calls (a time step, marked with occa_tools_region_*): the
             share of the regions' time spent in MPI
  drops      events lost, by rank and reason

Drops and incomplete traces are reported first, as warnings. Times in
-format csv and json are integer ns and sizes bytes; the table and
markdown formats use readable units. -section picks one table (with csv:
a plain CSV file with a header row). Medians are exact up to 4096 calls
per kernel and within 1.6 % beyond (a histogram of 64 buckets per power
of two). A busy time keeps at most its last 131,072 intervals (fewer
when more than 8 of a trace's busy times hold many: they share 1,048,576),
none that ended over 10 s of trace time before the latest: the part of an
interval that comes later but lies before them is left out. That happens
to a thread whose buffer was written long after the others' (a main
thread's last one, at exit: a few µs on the bundled workload). A trace's
devices past its first 1024 are summed in one row, and so are the kernels,
builds, steps and MPI functions past the first 1024 names in byte order
("(other kernels)", "(other regions)", "(other functions)"), and
allocations made while 262,144 are live are not followed one by one (the
never-freed figures then undercount, said in a warning): only a damaged
trace has so many. Every other figure is exact. Each trace is folded into the
totals as soon as it is read, so memory does not grow with the number of
ranks, or of devices, and the report does not depend on the order traces
finish in.

A large run can be summed in shards, on many nodes: -shard i/n sums the
traces of the ranks that are i modulo n, and -partial FILE writes that
sum, a partial summary, instead of the report; under srun or mpirun
without -shard, i and n are the launcher's rank and size. Summary given
the partial summaries of all shards (in any order) prints the report of
the whole run, the one an unsharded summary prints:

  srun -n 16 sh -c 'occa-tools summary -partial part-$SLURM_PROCID.json RUNDIR'
  occa-tools summary part-*.json

A trace in two partial summaries (a shard given twice) is an error.

Traces are read in parallel (-j, default: the number of CPUs), as many
at once as 3/8 of -memory holds. -memory is by default what -j of the
largest traces hold at once (from their sizes; at least 256MiB), but at
most a quarter of the memory the process may use (its cgroup's limit,
else the machine's); a smaller -memory reads fewer large traces at once.
A damaged trace is an error naming the file and offset; with -salvage
its damaged parts are skipped and the rest counted.
`,
}

var (
	summaryFormat  = cmdSummary.Flag.String("format", "table", "output format: table, csv, json or markdown")
	summarySection = cmdSummary.Flag.String("section", "", "print only this table (kernels, copies, builds, api, mpi, steps, devices, memory, ranks, imbalance, openmp, drops)")
	summarySalvage = cmdSummary.Flag.Bool("salvage", false, "skip damaged chunks and summarize the rest")
	summaryJobs    = cmdSummary.Flag.Int("j", 0, "traces read at once (0: number of CPUs; fewer large ones, within 3/8 of -memory)")
	summaryMemory  = memoryFlag(&cmdSummary.Flag)
	summaryShard   = cmdSummary.Flag.String("shard", "", "sum shard i/n of the run: the ranks that are i modulo n (default: from srun's or mpirun's variables, else the whole run)")
	summaryPartial = cmdSummary.Flag.String("partial", "", "write the sum to this file, a partial summary, instead of the report")
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
	var partials []string
	for _, a := range args {
		if summary.IsPartial(a) {
			partials = append(partials, a)
		}
	}
	var total *summary.Collector
	failed := false
	switch {
	case len(partials) == len(args):
		if *summaryPartial != "" || *summaryShard != "" {
			return usagef("-partial and -shard take traces, not partial summaries")
		}
		var err error
		if total, err = mergePartials(partials); err != nil {
			return err
		}
	case len(partials) > 0:
		return usagef("%s is a partial summary and %s is not: give traces, or the partial summaries of every shard", partials[0], firstOther(args, partials))
	default:
		var err error
		if total, failed, err = summarizeTraces(env, args); err != nil {
			return err
		}
		if *summaryPartial != "" {
			return errSilentIf(failed, nil)
		}
	}
	rep := total.Report()
	if err := rep.Write(env.Stdout, *summaryFormat, *summarySection); err != nil {
		return err
	}
	return errSilentIf(failed, nil)
}

// errSilentIf is err, or errSilent when failed (a failure reported already).
func errSilentIf(failed bool, err error) error {
	if failed {
		return errSilent
	}
	return err
}

func firstOther(args, partials []string) string {
	for _, a := range args {
		if !slices.Contains(partials, a) {
			return a
		}
	}
	return ""
}

// summarizeTraces sums the traces of args (this shard's: -shard, or the
// launcher's), reporting damaged ones on stderr (failed), and with
// -partial writes the sum as a partial summary.
func summarizeTraces(env *Env, args []string) (total *summary.Collector, failed bool, err error) {
	part, err := pickShard(*summaryShard, os.Environ())
	if err != nil {
		return nil, false, err
	}
	all, err := analysis.Expand(args)
	if err != nil {
		return nil, false, err
	}
	hdrs, _, err := readHeaders(all)
	if err != nil {
		return nil, false, err
	}
	var ids []summary.TraceID
	var paths []string
	var index []int
	for _, i := range part.pick(hdrs, env.Stderr, "summary") {
		paths, index = append(paths, all[i]), append(index, i)
		if h := hdrs[i]; h != nil {
			ids = append(ids, summary.TraceID{Path: all[i], Host: h.host, PID: h.pid, Rank: h.rank, WallStart: h.start})
		}
	}
	// Each trace is folded into the total as soon as it is read: memory
	// holds the -j collectors being filled and the total, whatever the
	// number of traces. The order of the folds does not change the total.
	total = summary.NewCollector()
	var mu sync.Mutex
	cost := traceCost(fileSizes(paths), summaryCost)
	mem := summaryMemory.orDefault(min(jobs(*summaryJobs), len(paths)), mostCost(len(paths), cost))
	tuneGC(mem)
	newCollector := summary.NewCollector
	if readAtOnce(len(paths), jobs(*summaryJobs), mem.tracesMemory(), cost) >= runtime.GOMAXPROCS(0) {
		newCollector = summary.NewInlineCollector // every core has a trace
	}
	errs := analysis.Parallel(len(paths), *summaryJobs, mem.tracesMemory(), cost, func(i int) error {
		c := newCollector()
		res, err := analysis.Read(paths[i], index[i], analysis.Options{Salvage: *summarySalvage}, c.Add)
		if res != nil {
			c.Finish(res)
			mu.Lock()
			reportProblems(env, paths[i], res)
			if msg := c.TaskGraph().Problem(); msg != "" {
				fmt.Fprintf(env.Stderr, "occa-tools summary: %s: %s\n", paths[i], msg)
			}
			total.Absorb(c)
			mu.Unlock()
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(env.Stderr, "occa-tools summary: %v\n", explain(err))
			failed = true
		}
	}
	if *summaryPartial != "" {
		if err := writePartial(*summaryPartial, total, part, ids); err != nil {
			return nil, failed, err
		}
	}
	return total, failed, nil
}

// writePartial writes the partial summary of shard part to path, through
// a temporary file, so that a partial summary on disk is always whole.
func writePartial(path string, c *summary.Collector, part shard, ids []summary.TraceID) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = c.WritePartial(bw, fmt.Sprintf("%d/%d", part.i, part.n), ids)
	if e := bw.Flush(); err == nil {
		err = e
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// mergePartials merges partial summaries, refusing two that hold the same
// trace (a shard given twice, or shards of overlapping runs).
func mergePartials(paths []string) (*summary.Collector, error) {
	total := summary.NewCollector()
	seen := map[traceID]string{}
	for _, p := range paths {
		c, ids, err := summary.ReadPartial(p)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			k := traceID{id.Host, id.PID, id.Rank, id.WallStart}
			if first, ok := seen[k]; ok {
				return nil, fmt.Errorf("%s and %s both hold the trace of host %s, pid %d, rank %d (%s): give each shard's partial summary once", first, p, id.Host, id.PID, id.Rank, id.Path)
			}
			seen[k] = p
		}
		total.Absorb(c)
	}
	return total, nil
}

// reportProblems tells what a salvaging read skipped, and what any read
// did not keep.
func reportProblems(env *Env, path string, res *analysis.Result) {
	reportLeftOut(env, path, res.DefsLeftOut)
	if len(res.Problems) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "%s: salvaged: skipped %d damaged bytes, %d problems:\n", path, res.Skipped, len(res.Problems))
	for _, p := range res.Problems {
		fmt.Fprintf(env.Stderr, "\t%v\n", p)
	}
}
