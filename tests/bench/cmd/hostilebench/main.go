// Command hostilebench checks that the offline tools stay in bounded memory
// on traces shaped to make them grow: it writes one trace per shape below,
// runs summary and the four converters on each, and prints wall and CPU
// seconds and peak RSS per command, and RSS over the trace's size.
//
//	devices  one launch on each of n device ids
//	threads  one launch on each of n/5 thread indexes
//	kernels  one launch of each of n/5 kernel ids
//	allocs   n allocations never freed
//	begins   n launch begins that never end
//	deep     n user regions begun on one thread and never ended
//	ties     n/2 user regions begun at one tick, 1024 on each of n/2048
//	         threads, ended one after another
//	tasks    n/4 OpenMP explicit tasks, each created, depending on the one
//	         before, run and completed: a task program's own shape
//	pending  n/2 OpenMP explicit tasks created with a depend item on a
//	         variable of their own, never run
//	ompruns  n/6 kernel launches, each running a parallel region of one
//	         thread: OCCA's OpenMP mode, launch after launch
//	names    n/333 string definitions of 1 MiB each (which compress to
//	         almost nothing: 124 KB at the default n) and a marker
//
// Device ids, thread indexes, kernel ids, memory ids and unpaired begins
// are what a damaged or hostile trace controls; each of these shapes once
// took a command to hundreds of MB from a trace of a few MB or less (the
// git log of formats/summary, formats/perfetto and formats/analysis says
// which; tasks, the task graph, which kept every task to the end; names,
// formats/trace's Dict, which kept every string: 3 GB). deep
// and ties once took the commands time: 1.3 s for a 5 KB
// trace (each push past the depth bound moved the stack down), and
// quadratic time in convert -to perfetto (slices that share a start, a
// coarse clock's or a hostile trace's). The traces stay in -dir between runs.
//
//	hostilebench -tools build/bin/occa-tools -dir build/bench-hostile
//
// It exits 1 when a command fails: no input may crash the tools.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

var (
	tools = flag.String("tools", "build/bin/occa-tools", "the occa-tools binary")
	dir   = flag.String("dir", "build/bench-hostile", "where the traces and outputs go")
	n     = flag.Int("n", 1_000_000, "the shapes' size (see the package comment)")
	// writeShape makes this process write one shape's trace (at the path
	// given after the flags) and print its number of events: the commands
	// are run by a process that never held a trace being written, since a
	// child's peak RSS starts from its parent's highest.
	writeShape = flag.String("write", "", "internal: write this shape's trace at the path given and print its events")
)

// shape writes the events of one trace shape, after tracetest.Defs and its
// own defs when it has some.
type shape struct {
	name   string
	events func(n int, add func(thread uint32, e trace.Event))
	defs   func(n int, add func(trace.Def) error) error
}

var shapes = []shape{
	{name: "devices", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n {
			launch(add, 0, uint64(i+1), 1, uint64(1000+i))
		}
	}},
	{name: "threads", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n / 5 {
			launch(add, uint32(10+i), uint64(i+1), 1, 1)
		}
	}},
	{name: "kernels", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n / 5 {
			launch(add, 0, uint64(i+1), uint64(1000+i), 1)
		}
	}},
	{name: "allocs", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n {
			corr, mem := uint64(i+1), uint64(i+1)
			add(0, trace.Event{Kind: trace.MemoryAllocBegin, Args: [trace.MaxArgs]uint64{corr, 1, 4096}})
			add(0, trace.Event{Kind: trace.MemoryAllocEnd, Args: [trace.MaxArgs]uint64{corr, mem, 0x7f0000000000 + mem<<12, trace.StatusOK}})
		}
	}},
	{name: "begins", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n {
			add(0, trace.Event{Kind: trace.RunBegin, Args: [trace.MaxArgs]uint64{uint64(i + 1), 1, 1}})
		}
	}},
	{name: "deep", events: func(n int, add func(uint32, trace.Event)) {
		for range n {
			add(0, trace.Event{Kind: trace.RegionPush, Args: [trace.MaxArgs]uint64{tracetest.StrStep}})
		}
	}},
	{name: "tasks", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n / 4 {
			task := uint64(i + 2) // task 1 is the implicit task that creates them
			add(0, trace.Event{Kind: trace.OmpTaskCreate, Args: [trace.MaxArgs]uint64{task, 1, 4, 1}})
			if i > 0 {
				add(0, trace.Event{Kind: trace.OmpTaskDependence, Args: [trace.MaxArgs]uint64{task - 1, task}})
			}
			add(0, trace.Event{Kind: trace.OmpTaskSchedule, Args: [trace.MaxArgs]uint64{1, analysis.TaskSwitch, task}})
			add(0, trace.Event{Kind: trace.OmpTaskSchedule, Args: [trace.MaxArgs]uint64{task, analysis.TaskComplete, 1}})
		}
	}},
	{name: "pending", events: func(n int, add func(uint32, trace.Event)) {
		for i := range n / 2 {
			task := uint64(i + 2)
			add(0, trace.Event{Kind: trace.OmpTaskCreate, Args: [trace.MaxArgs]uint64{task, 1, 4, 1}})
			add(0, trace.Event{Kind: trace.OmpTaskDepend, Args: [trace.MaxArgs]uint64{task, 0x1000 + 8*task, analysis.DepInOut}})
		}
	}},
	{name: "ompruns", events: func(n int, add func(uint32, trace.Event)) {
		const parallelFlags = 0x80000002
		for i := range n / 6 {
			corr, par, task := uint64(3*i+100), uint64(3*i+101), uint64(3*i+102)
			add(0, trace.Event{Kind: trace.RunBegin, Args: [trace.MaxArgs]uint64{corr, 1, 1}})
			add(0, trace.Event{Kind: trace.OmpParallelBegin, Args: [trace.MaxArgs]uint64{par, 50, 1, parallelFlags, corr}})
			add(0, trace.Event{Kind: trace.OmpImplicitTaskBegin, Args: [trace.MaxArgs]uint64{task, par, 0, 1, corr}})
			add(0, trace.Event{Kind: trace.OmpImplicitTaskEnd, Args: [trace.MaxArgs]uint64{task}})
			add(0, trace.Event{Kind: trace.OmpParallelEnd, Args: [trace.MaxArgs]uint64{par}})
			add(0, trace.Event{Kind: trace.RunEnd, Args: [trace.MaxArgs]uint64{corr, trace.StatusOK}})
		}
	}},
	{name: "names", events: func(n int, add func(uint32, trace.Event)) {
		add(0, trace.Event{Kind: trace.Marker, Args: [trace.MaxArgs]uint64{tracetest.StrStep}})
	}, defs: func(n int, add func(trace.Def) error) error {
		big := strings.Repeat("n", trace.MaxString-16)
		for i := range max(n/333, 1) {
			id := uint64(1000 + i)
			if err := add(trace.Def{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{id}, Text: big + strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return nil
	}},
	{name: "ties", events: func(n int, add func(uint32, trace.Event)) {
		const depth = analysis.MaxDepth // regions open on a thread
		threads := max(n/(2*depth), 1)
		for t := range threads {
			for i := range depth {
				e := trace.Event{Kind: trace.RegionPush, Args: [trace.MaxArgs]uint64{tracetest.StrStep}}
				if t > 0 || i > 0 {
					e.Time = sameTick
				}
				add(uint32(t), e)
			}
		}
		for t := range threads {
			for range depth {
				add(uint32(t), trace.Event{Kind: trace.RegionPop, Args: [trace.MaxArgs]uint64{tracetest.StrStep}})
			}
		}
	}},
}

// sameTick, as an event's Time, gives it the time of the event before it;
// write spaces the others 500 ns apart.
const sameTick = -1

func launch(add func(uint32, trace.Event), thread uint32, corr, kernel, device uint64) {
	add(thread, trace.Event{Kind: trace.RunBegin, Args: [trace.MaxArgs]uint64{corr, kernel, device}})
	add(thread, trace.Event{Kind: trace.RunEnd, Args: [trace.MaxArgs]uint64{corr, trace.StatusOK}})
}

// write writes shape s's trace at path, 500 ns between events (but for
// those at sameTick), and returns its number of events.
func write(path string, s shape) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	tw, err := trace.NewWriter(bw, tracetest.Header())
	if err != nil {
		return 0, err
	}
	if err := tw.WriteDefs(tracetest.Defs()); err != nil {
		return 0, err
	}
	if s.defs != nil {
		// One def a chunk: a chunk holds at most trace.MaxRaw.
		if err := s.defs(*n, func(d trace.Def) error { return tw.WriteDefs([]trace.Def{d}) }); err != nil {
			return 0, err
		}
	}
	now, events := int64(tracetest.MonoStart), 0
	var bt *trace.Batch
	var btThread uint32
	s.events(*n, func(thread uint32, e trace.Event) {
		if err != nil {
			return
		}
		if bt != nil && (btThread != thread || bt.Len() >= 1<<14) {
			err = tw.WriteBatch(bt)
			bt = nil
		}
		if bt == nil {
			bt, btThread = tw.Batch(thread), thread
		}
		if e.Time == sameTick {
			e.Time = now - 500
		} else {
			e.Time, now = now, now+500
		}
		if err == nil {
			err = bt.AddEvent(&e)
		}
		events++
	})
	if err == nil && bt != nil {
		err = tw.WriteBatch(bt)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	return events, err
}

// tail keeps the last 4 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-4<<10:]...)
	}
	return len(p), nil
}

// writeApart writes shape s's trace at path in a child process (-write)
// and returns its number of events.
func writeApart(path string, s shape) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	out, err := exec.Command(self, "-n", fmt.Sprint(*n), "-write", s.name, path).Output()
	if err != nil {
		return 0, fmt.Errorf("writing the trace: %w", err)
	}
	var events int
	if _, err := fmt.Sscan(string(out), &events); err != nil {
		return 0, fmt.Errorf("writing the trace: %q: %w", out, err)
	}
	return events, nil
}

func main() {
	flag.Parse()
	if *writeShape != "" {
		for _, s := range shapes {
			if s.name == *writeShape && flag.NArg() == 1 {
				events, err := write(flag.Arg(0), s)
				if err != nil {
					fmt.Fprintf(os.Stderr, "hostilebench: %s: %v\n", flag.Arg(0), err)
					os.Exit(1)
				}
				fmt.Println(events)
				return
			}
		}
		fmt.Fprintf(os.Stderr, "hostilebench: -write %s: no such shape, or no path\n", *writeShape)
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "hostilebench:", err)
		os.Exit(1)
	}
	commands := [][]string{{"summary"}, {"convert", "-to", "csv"}, {"convert", "-to", "parquet"}, {"convert", "-to", "perfetto"}, {"convert", "-to", "chrome"}}
	fmt.Printf("%-8s %9s %9s  %-20s %7s %7s %8s %10s\n", "shape", "events", "bytes", "command", "wall_s", "cpu_s", "rss_MB", "rss/bytes")
	failed := false
	for _, s := range shapes {
		path := filepath.Join(*dir, fmt.Sprintf("%s-%d.occatrace", s.name, *n))
		events, err := writeApart(path, s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hostilebench: %s: %v\n", path, err)
			os.Exit(1)
		}
		st, err := os.Stat(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostilebench:", err)
			os.Exit(1)
		}
		for _, c := range commands {
			args := append([]string(nil), c...)
			if c[0] == "convert" {
				out := filepath.Join(*dir, "out")
				os.RemoveAll(out)
				args = append(args, "-o", out)
			}
			// Output to /dev/null, stderr's end kept: a report held here
			// would count in the next commands' peak RSS (a child's starts
			// from its parent's, as it is forked).
			cmd := exec.Command(*tools, append(args, path)...)
			var stderr tail
			cmd.Stderr = &stderr
			t0 := time.Now()
			err := cmd.Run()
			wall := time.Since(t0)
			out := stderr.b
			label := c[0]
			if len(c) > 2 {
				label += " " + c[2]
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "hostilebench: %s %s: %v\n%s", label, path, err, out)
				failed = true
				continue
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			rss := float64(ru.Maxrss) * 1024 // kB on Linux
			fmt.Printf("%-8s %9d %9d  %-20s %7.2f %7.2f %8.1f %10.1f\n", s.name, events, st.Size(), label,
				wall.Seconds(), cpu.Seconds(), rss/(1<<20), rss/float64(st.Size()))
		}
	}
	os.RemoveAll(filepath.Join(*dir, "out"))
	if failed {
		os.Exit(1)
	}
}
