package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/chrome"
	"github.com/libocca/occa-tools/formats/csv"
	"github.com/libocca/occa-tools/formats/omp"
	"github.com/libocca/occa-tools/formats/parquet"
	"github.com/libocca/occa-tools/formats/perfetto"
	"github.com/libocca/occa-tools/formats/table"
)

var cmdConvert = &Command{
	UsageLine: "convert -to parquet|csv|perfetto|chrome -o dir [-compress=false] [-shard i/n] [-force] [-salvage] [-j n] [-memory size] [-progress] trace|rundir...",
	Short:     "convert traces to Parquet, CSV (pandas, DuckDB, polars, Dask, Spark), Perfetto or Chrome JSON (timelines)",
	Long: `
Convert reads traces (files, or a run directory holding every rank's
*.occatrace) and writes them into the output directory, each table in its
own subdirectory, and the process table (rank, host, pid, command line,
config used, event and drop counts) in processes/.

Begin/end pairs become one row with a start and a duration; a kernel
launch carries its device-side start and duration where the trace has
them; every other event kind has its own rows. The columns, their types
and the epoch are documented in formats/parquet/SCHEMA.md.

  -to parquet   events/part-I-of-N-K.parquet: one file per group K of
                the traces converted at once (-j), each holding a run of
                consecutive ranks in rank order, rank a column; zstd, row
                groups of at most 64 Ki rows, whose rank statistics let a
                query on some ranks skip the others' row groups. events/
                is one table for every engine with default settings:
                pandas and Dask read_parquet("DIR/events"), polars
                scan_parquet, Spark spark.read.parquet, DuckDB
                read_parquet('DIR/events/*.parquet'). Times are
                timestamps to the µs (start) with the exact unix ns beside
                them (start_ns). processes/part-I-of-N.parquet.
  -to csv       events/events-rankNNNNN.csv, RFC 4180, a header row, the
                same columns (rank included; times as ISO 8601 text to
                the µs beside the exact unix ns). processes/part-I-of-N.csv.
                Traces with OpenMP events also get, with parquet and
                csv, the tables openmp/ (the OpenMP regions, tasks and
                their ids) and dependences/ (task dependence edges), laid
                out as events/.
  -to perfetto  trace.perfetto-trace (a shard's: trace-I-of-N.perfetto-
                trace) for ui.perfetto.dev: a process per
                rank, thread tracks with API calls, builds and regions as
                slices, a track per device with a track per stream,
                overlapping work on sibling lanes, flows from launches to
                their device execution, device memory in use as a counter,
                drops and triggers as instants; OpenMP regions, implicit
                tasks, barriers, waits and task segments on the thread
                tracks, with flows for task dependences and from launches
                to their implicit tasks; MPI calls (occa-prof --mpi) as
                MPI_Send, MPI_Allreduce, ... on the thread tracks, with a
                flow from each send to its receive (matched by channel
                and order; receives from any source get none); device
                times whose launch is
                not in the trace on a "device time (launch unknown)"
                track. A track has at most 256 sibling lanes: slices
                overlapping more are left out, counted on stderr. A
                task's completing segment is held for its dependence
                flows, 8192 to 16384 of them at a time: a flow to a task
                that first runs after it was written is not drawn,
                counted on stderr. A
                trace's threads past its first 4096, devices past 1024
                and a device's streams past 1024 share one track each
                (only a damaged trace has so many).
                Over 2 GiB the trace stays split, one file per trace
                (events-rankNNNNN.perfetto-trace), and a trace that would
                pass 2 GiB by itself is split by time into parts
                (events-rankNNNNN-part0002.perfetto-trace, ...) that each
                load by themselves, said on stderr; flows between two
                parts are not shown. The packets are zlib-compressed
                (compressed_packets, which trace_processor and
                ui.perfetto.dev unpack as they read): about 6 bytes per
                event instead of 33, for a quarter to a half more CPU;
                -compress=false writes them plain, for a reader of its
                own. The 2 GiB split counts unpacked bytes.
  -to chrome    events-rankNNNNN.json, Chrome trace-event JSON for
                chrome://tracing and ui.perfetto.dev: pid = rank, tid =
                thread, calls and regions as complete events, launches'
                device time on a pseudo-thread per device, instants for
                markers, triggers and drops; ts in unix microseconds
                (formats/chrome).

Traces are converted in parallel (-j, default: the number of CPUs), each
streamed in bounded memory, as many at once as 3/8 of -memory holds.
-memory is by default what -j of the largest traces hold at once (from
their sizes and the format's needs; at least 256MiB), but at most a
quarter of the memory the process may use (its cgroup's limit, else the
machine's); a smaller -memory converts fewer large traces at once.
-shard i/n converts the traces of the ranks that are i modulo n, so that
n jobs (on n nodes) share a run; they write into one directory without
overwriting each other (processes/ gets a part per shard). Under srun or
mpirun without -shard, i and n are the launcher's rank and size (the
variables the runtime reads), said on stderr. Convert does not
overwrite: a file it would write that exists already (an earlier
conversion) is an error, unless -force. On a terminal a progress line is
shown on stderr. A damaged trace is an error naming the file and offset
(its rows before the damage are still written); with -salvage its
damaged parts are skipped and the rest converted.
`,
}

var (
	convertTo       = cmdConvert.Flag.String("to", "", "output format: parquet, csv, perfetto or chrome")
	convertOut      = cmdConvert.Flag.String("o", "", "output directory (created if missing)")
	convertSalvage  = cmdConvert.Flag.Bool("salvage", false, "skip damaged chunks and convert the rest")
	convertJobs     = cmdConvert.Flag.Int("j", 0, "traces converted at once (0: number of CPUs; fewer large ones, within 3/8 of -memory)")
	convertMemory   = memoryFlag(&cmdConvert.Flag)
	convertProgress = cmdConvert.Flag.String("progress", "auto", "progress line on stderr: auto (when a terminal), on, off")
	convertShard    = cmdConvert.Flag.String("shard", "", "convert shard i/n of the run: the ranks that are i modulo n (default: from srun's or mpirun's variables, else the whole run)")
	convertForce    = cmdConvert.Flag.Bool("force", false, "replace the files of an earlier conversion into the same directory")
	convertCompress = cmdConvert.Flag.Bool("compress", true, "perfetto: zlib-compressed packets (about 6 B/event instead of 33, for a quarter to a half more CPU); false: plain packets")
)

func init() { cmdConvert.Run = runConvert }

// rankWriter writes one trace's rows.
type rankWriter interface {
	Add(p *analysis.Process, r *analysis.Row) error
	Close(res *analysis.Result) error
}

// outputs lists the formats of convert, one row each.
var outputs = []struct {
	name string
	// path is where a trace's file goes in the output directory (the
	// events table's, for tables); dup numbers the traces of one rank.
	// Nil for an output whose files hold several traces (part).
	path   func(rank int64, dup int) string
	create func(path string, p *analysis.Process, index int) (rankWriter, error)
	// part, when set, makes the file at path that takes the traces of one
	// group (rankGroups) one after another, in rank order.
	part   func(path string) (*parquet.Part, error)
	ext    string
	window int // analysis.Options.Window
	// memory is what a trace's conversion holds (traceCost). Largest
	// live heap with -j 1 (GODEBUG=gctrace=1) on workload traces of 0.69,
	// 8.2 and 15.6 MB: Parquet 17, 17 and 16 MiB, a part's row group and
	// encoders whatever the trace (24 MiB, 4 a byte and at most 40 MiB
	// leave room for the OpenMP tables' files); CSV and Chrome JSON at
	// most 4 MiB (with GOGC=25: at the default nothing is collected),
	// streamed row by row; Perfetto 38, 53 and 78 MiB on traces of 0.36,
	// 0.69 and 1.5 MB and 79 MiB on 15.6 MB, its reorder ring of
	// 3 * ReorderRows rows (51 MiB) full from about 0.8 MB on.
	memory readCost
	// processes is the extension of the process table's parts.
	processes string
	// tables: a trace with OpenMP events also gets the OpenMP tables,
	// beside its events table (omp.TablePath).
	tables bool
	// finish, when set, runs after every trace is written, with their files.
	finish func(env *Env, dir string, part shard, files []string, unpacked map[string]int64) error
}{
	{name: "parquet", ext: ".parquet", processes: ".parquet", tables: true, memory: readCost{24 << 20, 4, 40 << 20},
		part: parquet.CreatePart},
	{name: "csv", ext: ".csv", processes: ".csv", tables: true, memory: readCost{4 << 20, 4, 12 << 20},
		path:   func(rank int64, dup int) string { return table.Path(analysis.Events.Name, rank, dup, ".csv") },
		create: func(path string, p *analysis.Process, _ int) (rankWriter, error) { return csv.Create(path, p) }},
	{name: "perfetto", processes: ".csv", window: perfetto.PairWindow, finish: joinPerfetto, memory: readCost{4 << 20, 96, 80 << 20},
		path: func(rank int64, dup int) string { return table.FileName(rank, dup, ".perfetto-trace") },
		create: func(path string, p *analysis.Process, i int) (rankWriter, error) {
			if *convertCompress {
				return perfetto.Create(path, p, uint32(i+1), perfetto.Compressed())
			}
			return perfetto.Create(path, p, uint32(i+1))
		}},
	{name: "chrome", processes: ".csv", memory: readCost{4 << 20, 4, 12 << 20},
		path:   func(rank int64, dup int) string { return table.FileName(rank, dup, ".json") },
		create: func(path string, p *analysis.Process, _ int) (rankWriter, error) { return chrome.Create(path, p) }},
}

// joinedPerfetto names the joined Perfetto trace of a shard.
func joinedPerfetto(part shard) string {
	if part.n == 1 {
		return "trace.perfetto-trace"
	}
	return fmt.Sprintf("trace-%05d-of-%05d.perfetto-trace", part.i, part.n)
}

// joinPerfetto concatenates the per-trace Perfetto files into one
// trace.perfetto-trace (a Perfetto trace is a sequence of packets, so
// concatenated traces are one trace) unless that would pass 2 GiB, which
// protobuf parsers and the UI cannot load; then the files stay split.
func joinPerfetto(env *Env, dir string, part shard, files []string, unpacked map[string]int64) error {
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		total += max(st.Size(), unpacked[f])
	}
	if total >= perfetto.MaxTrace || len(files) == 0 {
		var over []string
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && max(st.Size(), unpacked[f]) >= perfetto.MaxTrace {
				over = append(over, fmt.Sprintf("%s (%d MiB)", f, max(st.Size(), unpacked[f])>>20))
			}
		}
		if len(over) > 0 {
			// The writer ends its parts well before MaxTrace: a file over it
			// would be a bug, and is an error rather than a file the UI
			// refuses without a word.
			fmt.Fprintf(env.Stderr, "occa-tools convert: over the 2 GiB that ui.perfetto.dev loads by itself: %s. Open it with `trace_processor_shell --httpd FILE` and ui.perfetto.dev (which then has no size limit), or record less (a config's [events] or a trigger window)\n", strings.Join(over, ", "))
			return errSilent
		}
		if len(files) > 1 {
			fmt.Fprintf(env.Stderr, "occa-tools convert: the Perfetto trace would be %d MiB, over the 2 GiB that ui.perfetto.dev and protobuf parsers load: it stays in %d files that each load by themselves, in %s\n", total>>20, len(files), dir)
		}
		return nil
	}
	joined := filepath.Join(dir, joinedPerfetto(part))
	if len(files) == 1 { // one rank: nothing to join
		return os.Rename(files[0], joined)
	}
	out, err := os.Create(joined)
	if err != nil {
		return err
	}
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	for _, f := range files {
		os.Remove(f)
	}
	return nil
}

func runConvert(env *Env, cmd *Command, args []string) error {
	var names []string
	out := -1
	for i, o := range outputs {
		names = append(names, o.name)
		if o.name == *convertTo {
			out = i
		}
	}
	switch {
	case *convertTo == "":
		return usagef("no output format given (-to %s)", strings.Join(names, "|"))
	case out < 0:
		return usagef("unknown output format %q (want %s)", *convertTo, strings.Join(names, ", "))
	case *convertOut == "":
		return usagef("no output directory given (-o)")
	case len(args) == 0:
		return usagef("no traces given")
	case given(&cmd.Flag, "compress") && *convertTo != "perfetto":
		return usagef("-compress is for -to perfetto only")
	}
	o := outputs[out]
	part, err := pickShard(*convertShard, os.Environ())
	if err != nil {
		return err
	}
	all, err := analysis.Expand(args)
	if err != nil {
		return err
	}
	allHdrs, ref, err := readHeaders(all)
	if err != nil {
		return err
	}
	var paths []string
	var index []int // each picked input's position among all inputs
	var ranks []int64
	for _, i := range part.pick(allHdrs, env.Stderr, "convert") {
		paths, index, ranks = append(paths, all[i]), append(index, i), append(ranks, rankOf(allHdrs[i], i))
	}
	sizes := fileSizes(paths) // read once: the groups, the progress line and the memory budget use them
	// Each group's traces go one after another through one writer: a
	// trace's own files, or a part's (Parquet).
	var groups [][]int
	fileNames := make([]string, len(paths)) // relative to the output directory
	if o.part != nil {
		groups = rankGroups(ranks, sizes, jobs(*convertJobs))
		for k, g := range groups {
			for _, i := range g {
				fileNames[i] = table.GroupPath(analysis.Events.Name, part.i, part.n, k, o.ext)
			}
		}
	} else {
		allFiles := rankPaths(allHdrs, o.path)
		for i := range paths {
			fileNames[i] = allFiles[index[i]]
			groups = append(groups, []int{i})
		}
	}
	processes := table.PartPath(analysis.Processes.Name, part.i, part.n, o.processes)
	want := []string{processes}
	for _, g := range groups {
		f := fileNames[g[0]]
		want = append(want, f)
		if o.tables {
			want = append(want, omp.TablePath(f, omp.TableRows), omp.TablePath(f, omp.TableDependences))
		}
	}
	if o.finish != nil {
		want = append(want, joinedPerfetto(part))
	}
	var earlier []string // files of an earlier conversion of this shard, in any number of groups
	if o.part != nil {
		for _, t := range []string{analysis.Events.Name, omp.TableRows, omp.TableDependences} {
			found, _ := filepath.Glob(filepath.Join(*convertOut, t, table.GroupPrefix(part.i, part.n)+"-*"+o.ext))
			earlier = append(earlier, found...)
		}
	}
	if err := claimOutputs(*convertOut, want, earlier, part); err != nil {
		return err
	}

	var total, done atomic.Int64
	offsets := make([]atomic.Int64, len(paths))
	for _, size := range sizes {
		total.Add(size)
	}
	stop := startProgress(env, &total, &done, offsets)

	infos := make([]analysis.ProcessInfo, len(paths))
	var shared processStrings
	have := make([]bool, len(paths))
	files := make([]string, len(paths))
	parts := make([][]string, len(paths)) // a Perfetto trace split into parts: every part
	// A Perfetto file's bytes unpacked (compressed): what a reader holds,
	// which is what the 2 GiB of a joined trace count.
	unpacked := map[string]int64{}
	var unpackedMu sync.Mutex
	errs := make([]error, len(paths))
	// convertTrace converts trace i through the writer that open makes.
	convertTrace := func(i int, open func(p *analysis.Process) (rankWriter, error)) error {
		var w rankWriter
		opts := analysis.Options{Salvage: *convertSalvage, Window: o.window, Reference: ref,
			Progress: func(off int64) { offsets[i].Store(off) },
			Open: func(p *analysis.Process) error {
				files[i] = filepath.Join(*convertOut, fileNames[i])
				var err error
				w, err = open(p)
				return err
			}}
		sink := func(p *analysis.Process, r *analysis.Row) error { return w.Add(p, r) }
		res, err := analysis.Read(paths[i], index[i], opts, sink)
		offsets[i].Store(0)
		done.Add(sizes[i])
		if res != nil {
			info := analysis.Info(res.Process, res)
			shared.intern(&info)
			infos[i], have[i] = info, true
			reportProblems(env, paths[i], res)
		}
		if w != nil {
			if cerr := w.Close(res); err == nil {
				err = cerr
			}
			if pw, ok := w.(interface {
				Paths() []string
				Sizes() []int64
			}); ok {
				unpackedMu.Lock()
				for j, size := range pw.Sizes() {
					unpacked[pw.Paths()[j]] = size
				}
				unpackedMu.Unlock()
			}
			if pw, ok := w.(interface{ Paths() []string }); ok && len(pw.Paths()) > 1 {
				parts[i] = pw.Paths()
				fmt.Fprintf(env.Stderr, "occa-tools convert: %s: the Perfetto trace would pass the 2 GiB that ui.perfetto.dev loads: it is split by time into %d traces that each load by themselves (%s, then -part0002 on); flows between two of them are not shown\n",
					paths[i], len(parts[i]), files[i])
			}
			if tg, ok := w.(interface{ TaskGraph() analysis.GraphStats }); ok {
				if msg := tg.TaskGraph().Problem(); msg != "" {
					fmt.Fprintf(env.Stderr, "occa-tools convert: %s: %s\n", paths[i], msg)
				}
			}
			if lf, ok := w.(interface{ LostFlows() int64 }); ok && lf.LostFlows() > 0 {
				fmt.Fprintf(env.Stderr, "occa-tools convert: %s: %d task dependence flows are not drawn: the source task's completing segment was written (%d are held for their flows) or left out before the sink's first segment came; -to csv or parquet keeps every dependence\n",
					paths[i], lf.LostFlows(), perfetto.MaxHeldSegments)
			}
			if lo, ok := w.(interface{ LeftOut() int64 }); ok && lo.LeftOut() > 0 {
				fmt.Fprintf(env.Stderr, "occa-tools convert: %s: %d slices overlapped, without nesting, the slices of %d lanes of their track and were left out of the Perfetto trace; -to csv or parquet keeps every row\n",
					paths[i], lo.LeftOut(), perfetto.MaxLanes)
			}
		}
		return err
	}
	cost := traceCost(sizes, o.memory)
	groupCost := func(k int) int64 { // its traces are read one at a time
		var c int64
		for _, i := range groups[k] {
			c = max(c, cost(i))
		}
		return c
	}
	mem := convertMemory.orDefault(min(jobs(*convertJobs), len(groups)), mostCost(len(groups), groupCost))
	tuneGC(mem)
	groupErrs := analysis.Parallel(len(groups), *convertJobs, mem.tracesMemory(), groupCost, func(k int) error {
		if o.part == nil {
			i := groups[k][0]
			errs[i] = convertTrace(i, func(p *analysis.Process) (rankWriter, error) { return o.create(files[i], p, index[i]) })
			return nil
		}
		var pt *parquet.Part
		for _, i := range groups[k] {
			errs[i] = convertTrace(i, func(p *analysis.Process) (rankWriter, error) {
				if pt == nil {
					var err error
					if pt, err = o.part(files[i]); err != nil {
						return nil, err
					}
				}
				return pt.Trace(p), nil
			})
		}
		if pt == nil {
			return nil
		}
		return pt.Close()
	})
	errs = append(errs, groupErrs...)
	stop()
	failed := false
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(env.Stderr, "occa-tools convert: %v\n", explain(err))
			failed = true
		}
	}
	if o.finish != nil && !failed {
		var written []string
		for i, f := range files {
			switch {
			case parts[i] != nil:
				written = append(written, parts[i]...)
			case f != "":
				written = append(written, f)
			}
		}
		if err := o.finish(env, *convertOut, part, written, unpacked); err == errSilent {
			failed = true
		} else if err != nil {
			return err
		}
	}
	var list []analysis.ProcessInfo
	for i := range infos {
		if have[i] {
			list = append(list, infos[i])
		}
	}
	if err := writeProcesses(filepath.Join(*convertOut, processes), list); err != nil {
		return err
	}
	if failed {
		return errSilent
	}
	return nil
}

// processStrings shares the text that the process rows of one run have in
// common (the config, about 5 KiB, the command line, the executable), which
// convert holds for every trace until it writes the process table: 10,000
// copies of the config took 50 MiB.
type processStrings struct {
	mu       sync.Mutex
	text     map[string]string
	cmdlines map[string][]string
}

func (ps *processStrings) intern(i *analysis.ProcessInfo) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.text == nil {
		ps.text, ps.cmdlines = map[string]string{}, map[string][]string{}
	}
	for _, s := range []*string{&i.Host, &i.RankSource, &i.Executable, &i.ToolVersion, &i.ConfigPath, &i.ConfigText, &i.ClockSource} {
		if t, ok := ps.text[*s]; ok {
			*s = t
		} else if len(ps.text) < 1<<16 {
			ps.text[*s] = *s
		}
	}
	key := strings.Join(i.Cmdline, "\x00")
	if c, ok := ps.cmdlines[key]; ok {
		i.Cmdline = c
	} else if len(ps.cmdlines) < 1<<16 {
		ps.cmdlines[key] = i.Cmdline
	}
}

// writeProcesses writes the process table's part at path, as Parquet or
// CSV after its extension.
func writeProcesses(path string, list []analysis.ProcessInfo) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if filepath.Ext(path) == ".parquet" {
		return parquet.WriteProcesses(path, list)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = csv.WriteProcesses(f, list)
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// claimOutputs makes the output directory and checks that nothing convert
// is about to write is there already: a second conversion into one
// directory would otherwise replace some files and leave others of the
// first (its other ranks, its OpenMP tables), a dataset that is neither.
// earlier lists files that an earlier conversion of this shard would have
// written although this one does not (it split the shard into other
// groups). With -force all of them are removed first. A process table
// written in another number of shards cannot be told apart from this
// run's, so it is an error even with -force. want: the paths, relative to
// dir; earlier: paths in dir.
func claimOutputs(dir string, want, earlier []string, part shard) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	parts, _ := filepath.Glob(filepath.Join(dir, analysis.Processes.Name, "part-*-of-*"))
	for _, p := range parts {
		if !strings.Contains(filepath.Base(p), fmt.Sprintf("-of-%05d.", part.n)) {
			return fmt.Errorf("%s holds %s, from a conversion in another number of shards than %d: convert into a fresh directory (-o)", dir, p, part.n)
		}
	}
	paths := slices.Clone(earlier)
	for _, f := range want {
		paths = append(paths, filepath.Join(dir, f))
	}
	for _, path := range paths {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if !*convertForce {
			return fmt.Errorf("%s exists, from an earlier conversion: convert into a fresh directory (-o), or give -force to replace what this conversion writes", path)
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// jobs is the number of traces converted at once for -j n.
func jobs(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// rankGroups splits traces 0..len(ranks)-1 into at most n groups, each a
// run of consecutive ranks in rank order (input order within a rank), of
// about equal bytes: a part's file then holds a range of ranks, which a
// query on one rank finds in few row groups, and the parts take about as
// long to write.
func rankGroups(ranks, sizes []int64, n int) [][]int {
	order := make([]int, len(ranks))
	var total int64
	for i := range order {
		order[i] = i
		total += max(sizes[i], 1)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ranks[a], ranks[b]) })
	n = max(min(n, len(order)), 1)
	var groups [][]int
	var g []int
	var sum int64
	for _, i := range order {
		size := max(sizes[i], 1)
		// Close the group where its end comes nearest to its share of the
		// bytes: before this trace when its middle is past the share.
		k := int64(len(groups) + 1)
		if len(g) > 0 && len(groups) < n-1 && (2*sum+size)*int64(n) > 2*k*total {
			groups, g = append(groups, g), nil
		}
		g = append(g, i)
		sum += size
	}
	if len(g) > 0 {
		groups = append(groups, g)
	}
	return groups
}

// startProgress shows a progress line on a terminal (or always with
// -progress on) and returns the function that ends it.
func startProgress(env *Env, total, done *atomic.Int64, offsets []atomic.Int64) func() {
	show := *convertProgress == "on"
	if *convertProgress == "auto" {
		f, ok := env.Stderr.(*os.File)
		show = ok && isatty.IsTerminal(f.Fd())
	}
	if !show || total.Load() == 0 {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				fmt.Fprintf(env.Stderr, "\r%-60s\r", "")
				return
			case <-t.C:
				n := done.Load()
				for i := range offsets {
					n += offsets[i].Load()
				}
				pct := min(100*float64(n)/float64(total.Load()), 100)
				bar := strings.Repeat("#", int(pct/4)) + strings.Repeat(".", 25-int(pct/4))
				fmt.Fprintf(env.Stderr, "\rconverting [%s] %5.1f%%", bar, pct)
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}
