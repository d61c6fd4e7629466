package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/libocca/occa-tools/filters/config"
)

// tuneGC lets the heap grow to 5 times what is live before collecting,
// within three quarters of peak bytes, unless GOGC or GOMEMLIMIT say
// otherwise: the commands keep little live (the sums, a trace's window) and
// allocate a lot per trace, so with Go's default (2 times) a run of 10,000
// small traces spent most of its time marking. The limit keeps the peak
// near the target whatever the run.
func tuneGC(peak memorySize) {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(int64(peak / 4 * 3))
	}
}

// baseMemory is the peak that summary and convert aim at by default when
// they read at most four traces at once, and the least default.
const baseMemory memorySize = 256 << 20

// defaultMemory is the peak to aim at when -memory is not given and jobs
// traces, each holding up to cost bytes, are read at once: enough that
// their three eighths (tracesMemory) hold them all, so that -j traces are
// read at once, and at least baseMemory; but not over a quarter of the
// memory the process may use (the least of its cgroups' limits and the
// machine's memory, read from sys, the root file system), nor under
// baseMemory. Without a figure from sys (not Linux) it is not capped.
//
// Sized by the costliest trace, not a fixed amount per job: 64 MiB a job
// read Perfetto traces (then 96 MiB each) 4 at a time on 16 cores, which
// then sat mostly idle (tests/bench/README.md, "-j on 16 cores").
func defaultMemory(jobs int, cost int64, sys fs.FS) memorySize {
	need := memorySize(max(jobs, 0)) * memorySize(max(cost, 0))
	m := max(baseMemory, (need+2)/3*8) // (m/8)*3 >= need
	m = (m + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB, for -memory's help and the figures
	if usable := usableMemory(sys); usable > 0 {
		m = min(m, max(baseMemory, usable/4))
	}
	return m
}

// orDefault is m, or when -memory was not given (0), defaultMemory.
func (m memorySize) orDefault(jobs int, cost int64) memorySize {
	if m != 0 {
		return m
	}
	return defaultMemory(jobs, cost, os.DirFS("/"))
}

// usableMemory returns the least of the memory limits of the process's
// cgroups (v2: its own and its ancestors'; v1: its memory cgroup's) and the
// machine's memory (MemTotal), read from sys; 0 when none can be read. A
// batch job (Slurm, PBS) gets its limit from its cgroup, which is far below
// the node's memory on a shared node.
func usableMemory(sys fs.FS) memorySize {
	var least memorySize
	take := func(v memorySize) {
		if v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	if b, err := readSmall(sys, "proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB"); ok {
					if n, err := strconv.ParseUint(strings.TrimSpace(kb), 10, 64); err == nil && n < 1<<53 {
						take(memorySize(n) << 10)
					}
				}
			}
		}
	}
	b, err := readSmall(sys, "proc/self/cgroup")
	if err != nil {
		return least
	}
	for line := range strings.Lines(string(b)) {
		// hierarchy-id:controllers:path
		id, rest, ok1 := strings.Cut(strings.TrimSuffix(line, "\n"), ":")
		controllers, dir, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(dir, "/") {
			continue
		}
		switch {
		case id == "0" && controllers == "": // v2: the limit of each level holds
			for d := path.Join("sys/fs/cgroup", dir); strings.HasPrefix(d, "sys/fs/cgroup"); d = path.Dir(d) {
				take(cgroupLimit(sys, d+"/memory.max"))
			}
		case hasController(controllers, "memory"): // v1: mounted at the process's path, or in a container at the root
			d := path.Join("sys/fs/cgroup/memory", dir)
			if !strings.HasPrefix(d, "sys/fs/cgroup/memory") {
				continue
			}
			if v := cgroupLimit(sys, d+"/memory.limit_in_bytes"); v > 0 {
				take(v)
			} else {
				take(cgroupLimit(sys, "sys/fs/cgroup/memory/memory.limit_in_bytes"))
			}
		}
	}
	return least
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// cgroupLimit reads a cgroup memory limit file: 0 for none ("max", v1's
// page-rounded 2^63-1, or no file).
func cgroupLimit(sys fs.FS, name string) memorySize {
	b, err := readSmall(sys, name)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n >= 1<<60 {
		return 0
	}
	return memorySize(n)
}

// readSmall reads at most 64 KiB of name: the files read here are small,
// and a larger one is not what it should be.
func readSmall(sys fs.FS, name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, fs.ErrInvalid
	}
	f, err := sys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// memorySize is the -memory flag of summary and convert: the peak they aim
// at, or 0 for "auto" (the default: orDefault picks it). Three eighths of it is what
// the traces read at once may hold together (tracesMemory), three quarters
// the collector's limit (tuneGC): the collector then has about as much
// room as is live, and its work stays a small part of the run's. Given
// less room, with -j 8 it took a third of the CPU: twice the CPU for the
// same work.
type memorySize uint64

func (m *memorySize) String() string {
	if *m == 0 {
		return "auto"
	}
	return config.FormatSize(uint64(*m))
}

func (m *memorySize) Set(s string) error {
	if s == "auto" {
		*m = 0
		return nil
	}
	n, err := config.ParseSize(s)
	if err == nil && n < 64<<20 {
		err = fmt.Errorf("%s is below the 64MiB the commands need", s)
	}
	if err == nil {
		*m = memorySize(n)
	}
	return err
}

// memoryFlag defines fs's -memory flag.
func memoryFlag(fs *flag.FlagSet) *memorySize {
	m := memorySize(0)
	fs.Var(&m, "memory", "the peak memory to aim at (`size`: 512MiB, 4GiB; auto: what -j of the largest traces hold at once, at least 256MiB, within a quarter of the memory the process may use); more lets -j read more large traces at once")
	return &m
}

// tracesMemory is what the traces read at once may hold together
// (analysis.Parallel's budget).
func (m memorySize) tracesMemory() int64 { return int64(m / 8 * 3) }

// readCost is what reading one trace holds (analysis.Parallel's cost):
// Fixed bytes whatever its size (a converter's buffers), and PerByte bytes
// per byte of its file (the pairing window, the sums), up to Max where
// what grows with the trace is bounded (0: no bound). Measured as the
// largest live heap with -j 1 (GODEBUG=gctrace=1) on traces of the bundled
// workload: 1.75 MB ones of 1 M events, and ones of 853 events.
type readCost struct{ Fixed, PerByte, Max int64 }

// summaryCost is what summing a trace holds: its busy-time unions and its
// pairing window grow with it up to their bounds. Largest live heap 29,
// 26 and 35 MiB on workload traces of 1.7, 8.2 and 16.6 MB.
var summaryCost = readCost{4 << 20, 28, 40 << 20}

// traceCost returns the cost of reading trace i, of sizes[i] bytes.
func traceCost(sizes []int64, c readCost) func(i int) int64 {
	return func(i int) int64 {
		n := c.Fixed + sizes[i]*c.PerByte
		if c.Max > 0 {
			n = min(n, c.Max)
		}
		return n
	}
}

// readAtOnce is how many of n traces analysis.Parallel reads at once with
// jobs workers and budget, when it can: as many as the costliest trace
// lets the budget hold (at least one).
func readAtOnce(n, jobs int, budget int64, cost func(i int) int64) int {
	return min(n, jobs, int(max(1, budget/max(1, mostCost(n, cost)))))
}

// mostCost is the largest cost(i) of i < n (0 when n is 0).
func mostCost(n int, cost func(i int) int64) int64 {
	var most int64
	for i := range n {
		most = max(most, cost(i))
	}
	return most
}
