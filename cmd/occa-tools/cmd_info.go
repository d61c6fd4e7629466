package main

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/summary"
	"github.com/libocca/occa-tools/formats/trace"
)

var cmdInfo = &Command{
	UsageLine: "info [-salvage] trace|rundir...",
	Short:     "summarize traces: process, clock, event counts, drops, completeness",
	Long: `
Info reads each trace to its end (for a run directory, every trace under
it) and prints what it holds: the process (host, pid, rank, command line),
the clock and its calibration, the start time, the config used, event
counts by kind, the time span, the threads, dropped events by reason, and
whether the trace is complete (closed cleanly, with its final stats) or was
cut, and where.

Exit status 1 when a trace cannot be read to its end; info still prints
what it read. With -salvage, info skips damaged chunks and counts what is
left.
`,
}

var infoSalvage = cmdInfo.Flag.Bool("salvage", false, "skip damaged chunks and count what is left")

func init() { cmdInfo.Run = runInfo }

func runInfo(env *Env, cmd *Command, args []string) error {
	if len(args) == 0 {
		return usagef("no trace files given")
	}
	failed, n := false, 0
	for _, arg := range args {
		paths, err := analysis.Expand([]string{arg})
		if err != nil {
			fmt.Fprintf(env.Stderr, "occa-tools info: %v\n", err)
			failed = true
		}
		for _, path := range paths {
			if n++; n > 1 {
				fmt.Fprintln(env.Stdout)
			}
			if err := infoOne(env, path); err != nil {
				fmt.Fprintf(env.Stderr, "occa-tools info: %v\n", err)
				failed = true
			}
		}
	}
	if failed {
		return errSilent
	}
	return nil
}

// traceSummary is what info learns by reading a trace to its end.
type traceSummary struct {
	kinds      [trace.NumKindCounters]uint64
	events     uint64
	first      int64
	last       int64
	threads    map[uint32]uint64 // events per thread, for the first infoMaxThreads seen
	pastEvents uint64            // events of the threads seen after those
	dropEvents [trace.NumReasonCounters]uint64
	err        error
}

func summarize(r *trace.Reader) *traceSummary {
	s := &traceSummary{threads: make(map[uint32]uint64)}
	for {
		e, err := r.ReadEvent()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			return s
		}
		if s.events == 0 || e.Time < s.first {
			s.first = e.Time
		}
		s.last = max(s.last, e.Time)
		s.events++
		s.kinds[e.Kind]++
		if n, ok := s.threads[e.Thread]; ok || len(s.threads) < infoMaxThreads {
			s.threads[e.Thread] = n + 1
		} else {
			s.pastEvents++
		}
		if e.Kind == trace.Dropped {
			reason := e.Args[1]
			if reason >= trace.NumReasonCounters {
				reason = 0
			}
			s.dropEvents[reason] += e.Args[0]
		}
	}
}

func infoOne(env *Env, path string) error {
	r, c, err := openTrace(path, *infoSalvage)
	if err != nil {
		return err
	}
	defer c.Close()
	sum := summarize(r)
	h := r.Header()
	w := env.Stdout

	size := ""
	if fi, err := os.Stat(path); err == nil {
		size = fmt.Sprintf(" (%s)", summary.FormatBytes(float64(fi.Size()), "B"))
	}
	fmt.Fprintf(w, "file:        %s%s\n", path, size)
	fmt.Fprintf(w, "format:      %d.%d, written by occa-tools %s (ABI %d)\n", h.Major, h.Minor, orNone(h.ToolVersion), h.ABIVersion)
	fmt.Fprintf(w, "host:        %s, pid %d (parent %d)\n", orNone(h.Host), h.PID, h.PPID)
	if h.Rank >= 0 {
		fmt.Fprintf(w, "rank:        %d of %d (from %s)\n", h.Rank, h.WorldSize, orNone(h.RankSource))
	} else {
		fmt.Fprintf(w, "rank:        none (not started by an MPI launcher)\n")
	}
	fmt.Fprintf(w, "command:     %s\n", shellJoin(h.Cmdline))
	fmt.Fprintf(w, "executable:  %s\n", orNone(h.Executable))
	fmt.Fprintf(w, "config:      %s (%d bytes of config text)\n", orNone(h.ConfigPath), len(h.ConfigText))
	switch h.ClockSource {
	case "tsc":
		fmt.Fprintf(w, "clock:       tsc at %.6f GHz, calibrated tsc %d = monotonic %d ns\n", h.TSCHz/1e9, h.TSC0, h.Mono0)
	default:
		fmt.Fprintf(w, "clock:       %s\n", orNone(h.ClockSource))
	}
	fmt.Fprintf(w, "started:     %s (monotonic %d ns)\n", time.Unix(0, h.WallStart).UTC().Format(time.RFC3339Nano), h.MonoStart)
	if h.BufferSize != 0 || h.BufferCount != 0 {
		// The runtime sizes each thread's buffers by use, up to buffer_size;
		// buffer_count x buffer_size is what they may hold together.
		total := "an impossible amount" // a damaged or forged header
		if hi, lo := bits.Mul64(h.BufferCount, h.BufferSize); hi == 0 {
			total = summary.FormatBytes(float64(lo), "B")
		}
		fmt.Fprintf(w, "buffers:     %s in buffers of up to %s, limit %s\n",
			total, summary.FormatBytes(float64(h.BufferSize), "B"), summary.FormatBytes(float64(h.MemoryLimit), "B"))
	}

	if sum.events > 0 {
		fmt.Fprintf(w, "span:        %s to %s after start, %s\n", sinceStart(sum.first-h.MonoStart), sinceStart(sum.last-h.MonoStart), summary.FormatDuration(sum.last-sum.first))
	} else {
		fmt.Fprintf(w, "span:        no events\n")
	}
	fmt.Fprintf(w, "threads:     %s\n", threadList(r.Dict(), sum.threads, sum.pastEvents))
	fmt.Fprintf(w, "events:      %d in %d chunks", sum.events, r.Chunks())
	if st := r.Stats(); st != nil && st.TotalEvents() != sum.events {
		fmt.Fprintf(w, " (the last stats chunk counts %d written)", st.TotalEvents())
	}
	fmt.Fprintln(w)
	if sum.events > 0 {
		fmt.Fprintf(w, "  %-22s %12s\n", "kind", "count")
		for k, n := range sum.kinds {
			if n > 0 {
				fmt.Fprintf(w, "  %-22s %12d\n", trace.Kind(k), n)
			}
		}
	}
	fmt.Fprintf(w, "%s\n", drops(r.Stats(), &sum.dropEvents))
	if n := r.Dict().LeftOut(); n > 0 {
		fmt.Fprintf(w, "not kept:    %s\n", leftOutText(n))
	}
	if st := r.Stats(); st != nil && st.Clamped > 0 {
		fmt.Fprintf(w, "clamped:     %d event times raised to keep a thread in order\n", st.Clamped)
	}
	if *infoSalvage {
		if len(r.Problems()) > 0 {
			fmt.Fprintf(w, "salvaged:    skipped %d damaged bytes, %d problems\n", r.Skipped(), len(r.Problems()))
		} else {
			fmt.Fprintf(w, "salvaged:    nothing to skip\n")
		}
	}

	switch {
	case sum.err == nil && r.Complete() && len(r.Problems()) > 0:
		fmt.Fprintf(w, "complete:    closed cleanly, but damaged parts were skipped (see above)\n")
		reportSalvage(env, path, r)
		return nil
	case sum.err == nil && r.Complete():
		fmt.Fprintf(w, "complete:    yes (closed cleanly with its final stats)\n")
		return nil
	case sum.err == nil:
		fmt.Fprintf(w, "complete:    NO: salvaged, without its final stats\n")
		reportSalvage(env, path, r)
		return nil
	case errors.Is(sum.err, trace.ErrNoFinalStats):
		fmt.Fprintf(w, "complete:    NO: the trace ends without its final stats at offset %d: the process was killed or is still running\n", offsetOf(sum.err))
	default:
		fmt.Fprintf(w, "complete:    NO: broken at offset %d; counts above cover the events before it\n", offsetOf(sum.err))
	}
	return fmt.Errorf("%s: %w", path, explain(sum.err))
}

func offsetOf(err error) int64 {
	var te *trace.Error
	if errors.As(err, &te) {
		return te.Offset
	}
	return -1
}

// drops says how many events were lost and why, prominently when any were.
// Names and definitions lost (string_table_full, definition_queue_full) are
// no missing events: they get a line of their own.
func drops(st *trace.Stats, fromEvents *[trace.NumReasonCounters]uint64) string {
	var events, names uint64
	var eventParts, nameParts []string
	for reason := range trace.NumReasonCounters {
		n := fromEvents[reason]
		if st != nil {
			n = max(n, st.Dropped[reason])
		}
		if n == 0 {
			continue
		}
		part := fmt.Sprintf("%s: %d", trace.DropReasonName(uint64(reason)), n)
		if trace.DropCountsEvents(uint64(reason)) {
			events += n
			eventParts = append(eventParts, part)
		} else {
			names += n
			nameParts = append(nameParts, part)
		}
	}
	line := "dropped:     none"
	if events > 0 {
		line = fmt.Sprintf("DROPPED:     %d events (%s)", events, strings.Join(eventParts, ", "))
	}
	if names > 0 {
		line += fmt.Sprintf("\nnames lost:  %d (%s): their events are in the trace, with ids for names", names, strings.Join(nameParts, ", "))
	}
	return line
}

// infoMaxThreads bounds the threads info counts events for: thread
// indexes come from the file, and a program that makes a thread per task
// has hundreds of thousands. The events of threads seen after these are
// counted together. A variable so that tests reach it with small traces.
var infoMaxThreads = 1 << 16

// infoListThreads is how many threads the threads line names: all of them
// up to this many, else this many of the busiest: naming every thread of a
// trace of 100,000 makes a line of 3.5 MB.
const infoListThreads = 16

// threadList says how many threads recorded events and names the busiest
// (ties by index), each with its name, OS tid and event count; past is the
// events of the threads seen after the first infoMaxThreads.
func threadList(d *trace.Dict, counts map[uint32]uint64, past uint64) string {
	if len(counts) == 0 {
		return "none"
	}
	ids := make([]uint32, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	named := ids
	if len(ids) > infoListThreads || past > 0 {
		sort.Slice(ids, func(i, j int) bool {
			if a, b := counts[ids[i]], counts[ids[j]]; a != b {
				return a > b
			}
			return ids[i] < ids[j]
		})
		named = ids[:min(len(ids), infoListThreads)]
	}
	sort.Slice(named, func(i, j int) bool { return named[i] < named[j] })
	parts := make([]string, 0, len(named)+1)
	for _, id := range named {
		p := "t" + strconv.FormatUint(uint64(id), 10)
		if th := d.Thread(uint64(id)); th.Known {
			p += fmt.Sprintf(" %s (tid %d)", th.Name, th.TID)
		}
		parts = append(parts, fmt.Sprintf("%s: %d events", p, counts[id]))
	}
	total := strconv.Itoa(len(ids))
	if rest := ids[len(named):]; len(rest) > 0 {
		var events uint64
		for _, id := range rest {
			events += counts[id]
		}
		parts = append(parts, fmt.Sprintf("%d more threads: %d events", len(rest), events))
	}
	if past > 0 {
		total = "more than " + total
		parts = append(parts, fmt.Sprintf("threads past the first %d: %d events", infoMaxThreads, past))
	}
	if len(named) < len(ids) || past > 0 {
		return fmt.Sprintf("%s (the %d busiest: %s)", total, len(named), strings.Join(parts, "; "))
	}
	return fmt.Sprintf("%s (%s)", total, strings.Join(parts, "; "))
}

// sinceStart writes a time in the trace as seconds after its start, to the
// microsecond: a place on the timeline, not a duration.
func sinceStart(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', 6, 64) + " s"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// shellJoin quotes argv so it can be pasted into a shell.
func shellJoin(argv []string) string {
	if len(argv) == 0 {
		return "(none)"
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}
