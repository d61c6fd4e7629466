package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// writeTraces makes the test traces in dir: small.occa (complete),
// cut.occa (no final stats), nodefs.occa, damaged.occa (a flipped bit in
// its third chunk) and text.txt (not a trace).
func writeTraces(t *testing.T, dir string) {
	var small bytes.Buffer
	for name, o := range map[string]tracetest.SmallOptions{
		"small.occa":  {},
		"cut.occa":    {NoClose: true},
		"nodefs.occa": {NoDefs: true},
	} {
		var b bytes.Buffer
		if err := tracetest.WriteSmall(&b, o); err != nil {
			t.Fatal(err)
		}
		if name == "small.occa" {
			small = b
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	damaged := bytes.Clone(small.Bytes())
	off := 20 + int(binary.LittleEndian.Uint32(damaged[12:])) // first chunk
	for range 2 {
		off += 17 + int(binary.LittleEndian.Uint32(damaged[off+5:]))
	}
	damaged[off+30] ^= 1
	os.WriteFile(filepath.Join(dir, "damaged.occa"), damaged, 0o644)
	os.WriteFile(filepath.Join(dir, "text.txt"), []byte("hello\n"), 0o644)
	// A run directory: ranks' traces under it, and a file that is not one.
	os.MkdirAll(filepath.Join(dir, "ranks", "node1"), 0o755)
	os.WriteFile(filepath.Join(dir, "ranks", "app-r0.occatrace"), small.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "ranks", "node1", "app-r1.occatrace"), small.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "ranks", "notes.txt"), []byte("hello\n"), 0o644)
}

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	writeTraces(t, dir)
	cases := []struct {
		name string
		args string
	}{
		{"usage", ""},
		{"help", "help"},
		{"help-dump", "help dump"},
		{"help-info", "help info"},
		{"help-unknown", "help frobnicate"},
		{"unknown", "frobnicate"},
		{"dump", "dump small.occa"},
		{"dump-n", "dump -n 3 small.occa"},
		{"dump-two", "dump -n 0 small.occa nodefs.occa"},
		{"dump-nodefs", "dump nodefs.occa"},
		{"dump-cut", "dump cut.occa"},
		{"dump-damaged", "dump damaged.occa"},
		{"dump-salvage", "dump -salvage damaged.occa"},
		{"dump-no-args", "dump"},
		{"dump-bad-flag", "dump -x small.occa"},
		{"dump-missing", "dump nosuch.occa"},
		{"dump-text", "dump text.txt"},
		{"info", "info small.occa"},
		{"info-cut", "info cut.occa"},
		{"info-nodefs", "info nodefs.occa"},
		{"info-damaged", "info damaged.occa"},
		{"info-salvage", "info -salvage damaged.occa"},
		{"info-two", "info small.occa text.txt"},
		{"info-rundir", "info ranks nosuch"},
		{"summary-same-trace", "summary ranks"},
		{"convert-same-trace", "convert -to csv -o out-same small.occa small.occa"},
		{"summary-small-memory", "summary -memory 10MiB small.occa"},
		{"convert-bad-memory", "convert -to csv -o out-mem -memory 1.5 small.occa"},
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := run(strings.Fields(c.args), &Env{Stdout: &stdout, Stderr: &stderr})
			got := fmt.Sprintf("$ occa-tools %s\nexit status %d\n-- stdout --\n%s-- stderr --\n%s", c.args, status, stdout.String(), stderr.String())
			golden.Check(t, filepath.Join(wd, "testdata", c.name+".golden"), []byte(got))
		})
	}
}

// -memory sets the collector's limit at three quarters of it and the
// traces' budget at three eighths, for the run it is given to.
func TestMemoryFlag(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: they decide the collector's limit")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	dir := t.TempDir()
	writeTraces(t, dir)
	for _, c := range []struct {
		args          []string
		limit, traces int64
	}{
		{[]string{"summary", "-memory", "1GiB"}, 768 << 20, 384 << 20},
		{[]string{"summary"}, 192 << 20, 96 << 20}, // one trace: 256 MiB
		{[]string{"summary", "-memory", "auto"}, 192 << 20, 96 << 20},
		{[]string{"convert", "-to", "csv", "-o", filepath.Join(dir, "out"), "-memory", "4GiB"}, 3 << 30, 1536 << 20},
	} {
		var out bytes.Buffer
		args := append(c.args, filepath.Join(dir, "small.occa"))
		if code := run(args, &Env{Stdout: &out, Stderr: &out}); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out.String())
		}
		if got := debug.SetMemoryLimit(-1); got != c.limit {
			t.Errorf("%v: the collector's limit is %d, want %d", args, got, c.limit)
		}
		m := summaryMemory
		if c.args[0] == "convert" {
			m = convertMemory
		}
		if got := m.orDefault(1, 0).tracesMemory(); got != c.traces {
			t.Errorf("%v: the traces' budget is %d, want %d", args, got, c.traces)
		}
	}
}

// The default -memory holds -j of the costliest traces at once, and is at
// least 256 MiB, capped at a quarter of the least of the machine's memory
// and the limits of the process's cgroups (each level of a v2 hierarchy;
// v1's memory controller at the process's path or, in a container, the
// root), never under 256 MiB; files that say nothing usable (no limit,
// garbage, a path out of the hierarchy) are passed over.
func TestDefaultMemory(t *testing.T) {
	const mi, gi = 1 << 20, 1 << 30
	meminfo := func(kb string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("MemTotal:       " + kb + " kB\nMemFree:         1000 kB\n")}
	}
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, c := range []struct {
		name string
		sys  fstest.MapFS
		jobs int
		cost int64
		want memorySize
	}{
		{"no files, one job", fstest.MapFS{}, 1, 96 * mi, 256 * mi},
		{"no files, 4 jobs", fstest.MapFS{}, 4, 40 * mi, 427 * mi},
		{"no files, 16 jobs", fstest.MapFS{}, 16, 96 * mi, 4 * gi},
		{"no files, 0 jobs", fstest.MapFS{}, 0, 96 * mi, 256 * mi},
		{"no files, small traces", fstest.MapFS{}, 16, 4 * mi, 256 * mi},
		{"machine of 24 GiB", fstest.MapFS{"proc/meminfo": meminfo("25165824")}, 128, 96 * mi, 6 * gi},
		{"small machine", fstest.MapFS{"proc/meminfo": meminfo("1048576")}, 16, 96 * mi, 256 * mi},
		{"v2 limit at a parent", fstest.MapFS{
			"proc/meminfo":     meminfo("268435456"),
			"proc/self/cgroup": file("0::/slurm/job_7/step_0\n"),
			"sys/fs/cgroup/slurm/job_7/step_0/memory.max": file("max\n"),
			"sys/fs/cgroup/slurm/job_7/memory.max":        file("2147483648\n"),
			"sys/fs/cgroup/slurm/memory.max":              file("max\n"),
		}, 16, 40 * mi, 512 * mi},
		{"v1 at the process's path", fstest.MapFS{
			"proc/self/cgroup": file("5:cpuacct,cpu:/\n4:memory:/job_7\n"),
			"sys/fs/cgroup/memory/job_7/memory.limit_in_bytes": file("4294967296\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":       file("9223372036854771712\n"),
		}, 64, 12 * mi, 1 * gi},
		{"v1 in a container, unlimited", fstest.MapFS{
			"proc/meminfo":     meminfo("25165824"),
			"proc/self/cgroup": file("4:memory:/process_api/95f6\n0::/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, 16, 12 * mi, 512 * mi},
		{"garbage and escapes", fstest.MapFS{
			"proc/meminfo":             file("MemTotal: lots kB\n"),
			"proc/self/cgroup":         file("0::/../../etc\nnonsense\n4:memory:../x\n0::/\n"),
			"etc/memory.max":           file("1048576\n"),
			"sys/fs/cgroup/memory.max": file("-5\n"),
		}, 16, 12 * mi, 512 * mi},
	} {
		if got := defaultMemory(c.jobs, c.cost, c.sys); got != c.want {
			t.Errorf("%s: defaultMemory(%d, %d) = %s, want %s", c.name, c.jobs, c.cost, &got, &c.want)
		}
	}
	// Uncapped, the traces' budget reads all jobs at once, whatever the cost.
	for jobs := 1; jobs <= 64; jobs++ {
		for _, cost := range []int64{1, 3 * mi, 12*mi + 5, 40 * mi, 96 * mi, 1<<30 + 1} {
			m := defaultMemory(jobs, cost, fstest.MapFS{})
			at := readAtOnce(jobs, jobs, m.tracesMemory(), func(int) int64 { return cost })
			if at != jobs || m%mi != 0 || m < 256*mi {
				t.Fatalf("defaultMemory(%d, %d) = %s: reads %d at once", jobs, cost, &m, at)
			}
		}
	}
}

func outputCost(name string) readCost {
	for _, o := range outputs {
		if o.name == name {
			return o.memory
		}
	}
	panic("no output " + name)
}

// A summed trace costs its fixed part plus 28 bytes a byte, up to the
// 40 MiB its bounded sums and window hold; a cost without a bound grows
// with the trace.
func TestTraceCost(t *testing.T) {
	sizes := []int64{0, 1 << 20, 100 << 20}
	for _, c := range []struct {
		cost readCost
		want []int64
	}{
		{summaryCost, []int64{4 << 20, 32 << 20, 40 << 20}},
		{readCost{4 << 20, 28, 0}, []int64{4 << 20, 32 << 20, 2804 << 20}},
		{outputCost("perfetto"), []int64{4 << 20, 80 << 20, 80 << 20}},
		{outputCost("csv"), []int64{4 << 20, 8 << 20, 12 << 20}},
	} {
		f := traceCost(sizes, c.cost)
		for i, w := range c.want {
			if got := f(i); got != w {
				t.Errorf("%+v: a trace of %d bytes costs %d, want %d", c.cost, sizes[i], got, w)
			}
		}
	}
}

// readAtOnce: the traces, the jobs, or what the budget holds of the
// costliest trace, whichever is least, and at least one.
func TestReadAtOnce(t *testing.T) {
	cost := traceCost([]int64{1 << 20, 100 << 20, 0}, summaryCost) // 32, 40 and 4 MiB
	for _, c := range []struct {
		n, jobs int
		budget  int64
		want    int
	}{
		{3, 16, 96 << 20, 2},  // 96 MiB holds two of 40
		{3, 16, 384 << 20, 3}, // every trace
		{3, 2, 384 << 20, 2},  // the jobs
		{1, 16, 96 << 20, 1},  // only the first trace: 96 MiB holds three of 32, but there is one
		{3, 16, 10 << 20, 1},  // a trace over the budget still runs, alone
		{0, 16, 96 << 20, 0},
	} {
		if got := readAtOnce(c.n, c.jobs, c.budget, cost); got != c.want {
			t.Errorf("readAtOnce(%d, %d, %d MiB) = %d, want %d", c.n, c.jobs, c.budget>>20, got, c.want)
		}
	}
}
