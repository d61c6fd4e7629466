package filters

import (
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
)

// compile parses and compiles a config text, failing the test on any error.
func compile(t testing.TB, text string) *Program {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	p, err := Compile(cfg)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

func bits(ks ...trace.Kind) uint64 {
	var m uint64
	for _, k := range ks {
		m |= 1 << k
	}
	return m
}

func TestEventMask(t *testing.T) {
	tool := bits(trace.Dropped, trace.Trigger, trace.Fork)
	var all uint64
	for _, k := range trace.EventKinds() {
		all |= 1 << k
	}
	for _, tc := range []struct {
		text string
		want uint64
	}{
		{"", all &^ bits(trace.DeviceTime)},
		{"[events]\ndevice_time = true", all},
		{"[events]\nenable = []", tool},
		{"[events]\ndisable = [\"all\"]", tool},
		{"[events]\nenable = [\"kernel\"]", bits(trace.RunBegin, trace.RunEnd) | tool},
		{"[events]\nenable = [\"kernel\"]\ndevice_time = true", bits(trace.RunBegin, trace.RunEnd, trace.DeviceTime) | tool},
		{"[events]\nenable = [\"run_end\", \"marker\"]", bits(trace.RunBegin, trace.RunEnd, trace.Marker) | tool},
		{"[events]\nenable = [\"memory\", \"copy\"]\ndisable = [\"memory_free_begin\"]",
			bits(trace.MemoryAllocBegin, trace.MemoryAllocEnd, trace.CopyBegin, trace.CopyEnd) | tool},
		{"[events]\ndisable = [\"user\", \"sync\", \"stream\", \"build\", \"device\", \"kernel\", \"memory\", \"openmp\", \"mpi\"]",
			bits(trace.CopyBegin, trace.CopyEnd) | tool},
		{"[events]\nenable = [\"openmp\"]\ndisable = [\"omp_task_depend\"]",
			bits(trace.OmpThreadBegin, trace.OmpThreadEnd, trace.OmpParallelBegin, trace.OmpParallelEnd,
				trace.OmpImplicitTaskBegin, trace.OmpImplicitTaskEnd, trace.OmpWorkBegin, trace.OmpWorkEnd,
				trace.OmpSyncBegin, trace.OmpSyncEnd, trace.OmpSyncWaitBegin, trace.OmpSyncWaitEnd,
				trace.OmpTaskCreate, trace.OmpTaskSchedule, trace.OmpTaskDependence) | tool},
		{"[events]\nenable = [\"mpi\"]\ndisable = [\"mpi_request_done\", \"mpi_comm\"]",
			bits(trace.MpiCallBegin, trace.MpiCallEnd, trace.MpiP2PBegin, trace.MpiP2PEnd, trace.MpiCollectiveBegin,
				trace.MpiCollectiveEnd, trace.MpiWaitBegin, trace.MpiWaitEnd, trace.MpiClockSync) | tool},
		{"[events]\nenable = [\"tool\"]", tool},
	} {
		got := compile(t, tc.text).EventMask()
		if got != tc.want {
			t.Errorf("%q: mask %#x, want %#x", tc.text, got, tc.want)
		}
		if got&1 != 0 {
			t.Errorf("%q: bit 0 (invalid kind) set", tc.text)
		}
	}
	if !compile(t, "[events]\ndevice_time = true").DeviceTime() || compile(t, "").DeviceTime() {
		t.Error("DeviceTime()")
	}
}

func TestDevice(t *testing.T) {
	p := compile(t, `
[filter.device]
modes = ["CUDA", "openmp"]
indices = [0, 2]
[filter.memory]
modes = ["cuda"]
indices = [2]
`)
	for _, tc := range []struct {
		mode     string
		index    int64
		sel, mem bool
	}{
		{"CUDA", 0, true, false},
		{"cuda", 2, true, true},
		{"OpenMP", 2, true, false},
		{"CUDA", 1, false, false},
		{"Serial", 0, false, false},
		{"", 0, false, false},
	} {
		if got := p.Device(tc.mode, tc.index, "{}"); got != (DeviceDecision{tc.sel, tc.mem}) {
			t.Errorf("Device(%q, %d) = %+v, want %v %v", tc.mode, tc.index, got, tc.sel, tc.mem)
		}
	}
	all := compile(t, "")
	if got := all.Device("Anything", -1, ""); !got.Selected || !got.MemorySelected {
		t.Errorf("default: %+v", got)
	}
}

func TestKernel(t *testing.T) {
	p := compile(t, `
[filter.kernel]
names = ["axpy*", "dot"]
regex = ["^gemm_[0-9]+$"]
tags = ["hot"]
exclude_names = ["*_debug"]
exclude_regex = ["slow"]
exclude_tags = ["skip"]
[[tag]]
kernel = "heat*"
tag = "hot"
[[tag]]
kernel_regex = "^(heat|cool)"
tag = "thermal"
[[tag]]
kernel = "heat_bad"
tag = "skip"
`)
	for _, tc := range []struct {
		name, props string
		sel         bool
		tags        []string
	}{
		{"axpy", "", true, nil},
		{"axpy_f32", "", true, nil},
		{"axpy_debug", "", false, nil},
		{"dot", "", true, nil},
		{"dot2", "", false, nil},
		{"gemm_16", "", true, nil},
		{"gemm_16x", "", false, nil},
		{"xgemm_16", "", false, nil},
		{"axpy_slow", "", false, nil},
		{"heat", "", true, []string{"hot", "thermal"}},
		{"cool", "", false, []string{"thermal"}},
		{"cool", "{occa_tools_tag: 'hot'}", true, []string{"thermal", "hot"}},
		{"cool", "{occa_tools_tag: ['hot', 'skip']}", false, []string{"thermal", "hot", "skip"}},
		{"heat_bad", "", false, []string{"hot", "thermal", "skip"}},
		{"other", "{occa_tools_tag: ['thermal', 'thermal']}", false, []string{"thermal"}},
	} {
		got := p.Kernel(tc.name, tc.props)
		if got.Selected != tc.sel || !reflect.DeepEqual(got.Tags, tc.tags) || got.Windows != 0 {
			t.Errorf("Kernel(%q, %q) = %+v, want selected %v tags %q", tc.name, tc.props, got, tc.sel, tc.tags)
		}
	}
	// No include lists: everything not excluded.
	p = compile(t, "[filter.kernel]\nexclude_tags = [\"cold\"]")
	if !p.Kernel("any", "").Selected || p.Kernel("any", "occa_tools_tag: 'cold'").Selected {
		t.Error("exclude-only filter")
	}
	if !compile(t, "").Kernel("", "").Selected {
		t.Error("default filter drops a kernel")
	}
}

func TestTagKernel(t *testing.T) {
	p := compile(t, `
[filter.kernel]
tags = ["hot"]
[[trigger.window]]
kernel_tag = "hot"
[[trigger.window]]
kernel = "axpy"
`)
	if d := p.Kernel("axpy", ""); d.Selected || d.Tags != nil || d.Windows != 0b10 {
		t.Fatalf("before: %+v", d)
	}
	p.TagKernel("axpy", "hot")
	p.TagKernel("axpy", "hot") // twice is harmless
	p.TagKernel("axpy", "")    // ignored
	p.TagKernel("", "hot")     // ignored
	if d := p.Kernel("axpy", ""); !d.Selected || !reflect.DeepEqual(d.Tags, []string{"hot"}) || d.Windows != 0b11 {
		t.Fatalf("after: %+v", d)
	}
	if d := p.Kernel("axpy2", ""); d.Selected || d.Windows != 0 {
		t.Errorf("exact names only: %+v", d)
	}
	if d := p.Kernel("", ""); d.Selected {
		t.Errorf("empty name: %+v", d)
	}
}

// Decisions are safe from many threads while TagKernel runs.
func TestConcurrentDecisions(t *testing.T) {
	p := compile(t, "[filter.kernel]\ntags = [\"t0\"]\n[[trigger.window]]\nkernel_tag = \"t1\"\n[[trigger.window]]\nregion = \"r*\"")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				name := "k" + string(rune('a'+i%5))
				if g%2 == 0 {
					p.TagKernel(name, "t"+string(rune('0'+i%3)))
				}
				p.Kernel(name, "{occa_tools_tag: 'x'}")
				p.Region("r1")
				p.Device("CUDA", 0, "")
				p.MemoryTagSelected("x")
				p.Windows()
			}
		}(g)
	}
	wg.Wait()
	d := p.Kernel("ka", "")
	sort.Strings(d.Tags) // TagKernel order depends on the schedule
	if !d.Selected || d.Windows != 1 || !reflect.DeepEqual(d.Tags, []string{"t0", "t1", "t2"}) {
		t.Errorf("after: %+v", d)
	}
}

func TestMemory(t *testing.T) {
	p := compile(t, "")
	if !p.MemoryTagSelected("") || !p.MemoryTagSelected("x") {
		t.Error("empty tag list must select everything")
	}
	if min, max := p.MemorySizeRange(); min != 0 || max != math.MaxUint64 {
		t.Errorf("range %d %d", min, max)
	}
	p = compile(t, "[filter.memory]\ntags = [\"a\", \"b\"]\nmin_bytes = 10\nmax_bytes = \"1KiB\"")
	for tag, want := range map[string]bool{"a": true, "b": true, "": false, "c": false, "A": false} {
		if p.MemoryTagSelected(tag) != want {
			t.Errorf("MemoryTagSelected(%q) != %v", tag, want)
		}
	}
	if min, max := p.MemorySizeRange(); min != 10 || max != 1024 {
		t.Errorf("range %d %d", min, max)
	}
}

func TestWindowsAndRegions(t *testing.T) {
	p := compile(t, `
[[trigger.window]]
region = "step*"
from = 3
to = 4
[[trigger.window]]
kernel_regex = "^ax"
from = 2
[[trigger.window]]
region = "step"
[[trigger.window]]
delay = "10s"
[[trigger.window]]
duration = "2s"
[[trigger.window]]
kernel_tag = "t"
to = 1
`)
	ws := p.Windows()
	want := []string{
		`instances 3..4 of region "step*"`,
		`launches 2..(no end) of kernel_regex "^ax"`,
		`instances 1..(no end) of region "step"`,
		"time from 10s after start, no end",
		"time from 0s after start for 2s",
		`launches 1..1 of kernel_tag "t"`,
	}
	if len(ws) != len(want) {
		t.Fatalf("%d windows", len(ws))
	}
	for i, w := range ws {
		if w.Describe() != want[i] {
			t.Errorf("window %d: %q, want %q", i, w.Describe(), want[i])
		}
	}
	if ws[0].Kind != WindowRegion || ws[1].Kind != WindowLaunch || ws[3].Kind != WindowTime || ws[3].Delay != 10*time.Second {
		t.Errorf("kinds %+v", ws)
	}
	ws[0].From = 99 // a copy
	if p.Windows()[0].From != 3 {
		t.Error("Windows() returned shared state")
	}
	for name, mask := range map[string]uint16{"step": 0b101, "step2": 0b001, "other": 0, "": 0} {
		if got := p.Region(name); got != mask {
			t.Errorf("Region(%q) = %b, want %b", name, got, mask)
		}
	}
	if got := p.Kernel("axpy", "{occa_tools_tag: 't'}").Windows; got != 0b100010 {
		t.Errorf("kernel windows %b", got)
	}
	if (Window{Kind: WindowLaunch, Kernel: "k", From: 1, To: 2}).Describe() != `launches 1..2 of kernel "k"` ||
		WindowKind(9).String() != "window(9)" || WindowTime.String() != "time" {
		t.Error("Describe / String")
	}
}

func TestTriggerSettings(t *testing.T) {
	p := compile(t, "[trigger]\nstart_paused = true\ntoggle_signal = \"SIGRTMIN+2\"\nmax_events = 5\nmax_bytes = \"1MiB\"")
	if !p.StartPaused() || p.ToggleSignal() != config.SigRTMin+2 {
		t.Errorf("paused %v signal %d", p.StartPaused(), p.ToggleSignal())
	}
	if ev, by := p.Budget(); ev != 5 || by != 1<<20 {
		t.Errorf("budget %d %d", ev, by)
	}
	if p.Config().Trigger.MaxEvents != 5 {
		t.Error("Config()")
	}
	p = compile(t, "")
	if p.StartPaused() || p.ToggleSignal() != 0 {
		t.Error("defaults")
	}
	if ev, by := p.Budget(); ev != 0 || by != 0 {
		t.Error("default budget")
	}
}

// Compile re-checks configs built by hand.
func TestCompileErrors(t *testing.T) {
	if _, err := Compile(nil); err == nil {
		t.Error("nil config")
	}
	for _, tc := range []struct {
		edit func(c *config.Config)
		want string
	}{
		{func(c *config.Config) { c.Events.Enable = []string{"bogus"} }, `events.enable: unknown word "bogus"`},
		{func(c *config.Config) { c.Events.Disable = []string{""} }, `events.disable: unknown word ""`},
		{func(c *config.Config) { c.Filter.Kernel.Names = []string{"["} }, `filter.kernel.names: bad glob "["`},
		{func(c *config.Config) { c.Filter.Kernel.ExcludeNames = []string{""} }, `filter.kernel.exclude_names: bad glob ""`},
		{func(c *config.Config) { c.Filter.Kernel.Regex = []string{"("} }, "filter.kernel.regex: error parsing regexp"},
		{func(c *config.Config) { c.Filter.Kernel.ExcludeRegex = []string{"*"} }, "filter.kernel.exclude_regex: error parsing regexp"},
		{func(c *config.Config) { c.Tags = []config.TagRule{{Kernel: "a"}} }, "tag[0]: empty tag"},
		{func(c *config.Config) { c.Tags = []config.TagRule{{Tag: "t"}} }, "tag[0]: give exactly one of kernel or kernel_regex"},
		{func(c *config.Config) { c.Tags = []config.TagRule{{Tag: "t", Kernel: "["}} }, `tag[0].kernel: bad glob "["`},
		{func(c *config.Config) { c.Tags = []config.TagRule{{Tag: "t", KernelRegex: "("}} }, "tag[0].kernel_regex: error parsing regexp"},
		{func(c *config.Config) { c.Filter.Memory.MinBytes, c.Filter.Memory.MaxBytes = 5, 4 }, "filter.memory.max_bytes is below min_bytes"},
		{func(c *config.Config) { c.Trigger.Windows = make([]config.WindowConfig, 17) }, "trigger.window: 17 windows; at most 16 are allowed"},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{Kernel: "a", Region: "b", From: 1}} },
			"trigger.window[0]: more than one of kernel, kernel_regex, kernel_tag, region"},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{Kernel: "a"}} }, "trigger.window[0]: from must be >= 1"},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{Region: "a", From: 3, To: 2}} },
			"trigger.window[0]: to (2) is before from (3)"},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{Region: "["}} }, `trigger.window[0].region: bad glob "["`},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{Kernel: "["}} }, `trigger.window[0].kernel: bad glob "["`},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{KernelRegex: "("}} }, "trigger.window[0].kernel_regex: error parsing regexp"},
		{func(c *config.Config) { c.Trigger.Windows = []config.WindowConfig{{Delay: -1}} }, "trigger.window[0]: negative delay or duration"},
		{func(c *config.Config) { c.Trigger.ToggleSignal = "SIGKILL" }, `trigger.toggle_signal: "SIGKILL" cannot be used`},
	} {
		c := config.Default()
		tc.edit(c)
		_, err := Compile(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile: %v, want %q", err, tc.want)
		}
	}
	c := config.Default()
	c.Events.Enable = []string{"x"}
	c.Trigger.ToggleSignal = "x"
	if _, err := Compile(c); err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("all errors are reported: %v", err)
	}
}
