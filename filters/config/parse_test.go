package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/libocca/occa-tools/configs"
)

// The embedded default.toml is the default config, key for key.
func TestDefaultTOMLIsDefault(t *testing.T) {
	cfg, err := Parse("default.toml", configs.Default)
	if err != nil {
		t.Fatal(err)
	}
	def := Default()
	cfg.Name = def.Name
	if !reflect.DeepEqual(cfg, def) {
		t.Errorf("default.toml parses to\n%+v\nDefault() is\n%+v", cfg, def)
	}
	if def.Text != string(configs.Default) {
		t.Error("Default().Text is not default.toml")
	}
}

// default.toml sets every leaf key of the schema, and mentions every array
// of tables key in its comments.
func TestDefaultTOMLHasEveryKey(t *testing.T) {
	md, err := toml.Decode(string(configs.Default), new(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, k := range md.Keys() {
		have[k.String()] = true
	}
	var walk func(prefix string, tb *table)
	walk = func(prefix string, tb *table) {
		for _, f := range tb.fields {
			key := prefix + f.name
			switch {
			case f.sub != nil:
				walk(key+".", f.sub)
			case f.elems != nil:
				if !strings.Contains(string(configs.Default), "[["+key+"]]") {
					t.Errorf("default.toml does not show [[%s]]", key)
				}
				for _, ef := range f.elems.table.fields {
					if !strings.Contains(string(configs.Default), ef.name+" = ") {
						t.Errorf("default.toml does not show %s.%s", key, ef.name)
					}
				}
			default:
				if !have[key] {
					t.Errorf("default.toml lacks %s", key)
				}
			}
		}
	}
	walk("", rootTable)
	for _, line := range strings.Split(string(configs.Default), "\n") {
		if strings.Contains(line, " = ") && !strings.HasPrefix(line, "#") && !strings.Contains(line, "  # ") {
			t.Errorf("default.toml: key without a comment: %q", line)
		}
	}
}

func TestOverlay(t *testing.T) {
	cfg, err := Parse("t.toml", []byte(`
on_error = "abort"
[output]
memory = 268435456
buffer_size = "4 MiB"
flush_interval = "250ms"
compression = "best"
on_full = "wait"
name = "{exe}.{time}.{pid}"
[clock]
source = "monotonic"
[log]
level = "DEBUG"
[events]
enable = ["kernel", "copy_begin"]
disable = ["device_time"]
device_time = true
[filter.device]
modes = ["cuda"]
indices = [0, -1]
[filter.memory]
min_bytes = "1KiB"
max_bytes = 1048576
[[tag]]
kernel_regex = "^k"
tag = "t"
[trigger]
toggle_signal = "usr1"
max_events = 10
max_bytes = "1GiB"
[[trigger.window]]
kernel_tag = "t"
to = 5
[[trigger.window]]
duration = "1s"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Name, want.Text = cfg.Name, cfg.Text
	want.OnError = OnErrorAbort
	want.Output.Memory, want.Output.BufferSize = 256<<20, 4<<20
	want.Output.FlushInterval = 250 * time.Millisecond
	want.Output.Compression, want.Output.OnFull = CompressionBest, OnFullWait
	want.Output.Name = "{exe}.{time}.{pid}"
	want.Clock.Source = ClockMonotonic
	want.Log.Level = LevelDebug
	want.Events = Events{Enable: []string{"kernel", "copy_begin"}, Disable: []string{"device_time"}, DeviceTime: true}
	want.Filter.Device = DeviceFilter{Modes: []string{"cuda"}, Indices: []int64{0, -1}}
	want.Filter.Memory.MinBytes, want.Filter.Memory.MaxBytes = 1024, 1<<20
	want.Tags = []TagRule{{KernelRegex: "^k", Tag: "t", Line: 24}}
	want.Trigger = Trigger{ToggleSignal: "SIGUSR1", MaxEvents: 10, MaxBytes: 1 << 30, Windows: []WindowConfig{
		{KernelTag: "t", From: 1, To: 5, Line: 31},
		{Duration: time.Second, From: 1, Line: 34},
	}}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got\n%+v\nwant\n%+v", cfg, want)
	}
	if !cfg.Trigger.Windows[1].IsTime() || cfg.Trigger.Windows[0].IsTime() {
		t.Error("IsTime")
	}
}

// An empty file, or one with comments only, is the default.
func TestEmpty(t *testing.T) {
	for _, text := range []string{"", "# nothing\n\n", "[output]\n[filter.kernel]\n"} {
		cfg, err := Parse("e.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		def := Default()
		def.Name, def.Text = cfg.Name, cfg.Text
		if !reflect.DeepEqual(cfg, def) {
			t.Errorf("%q: not the default", text)
		}
	}
}

// Every kind of mistake, with its exact message.
func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown key", "[output]\nflush = \"1s\"\n",
			"trace.toml:2: unknown key output.flush"},
		{"typo with suggestion", "[filter.kernel]\n\nname = [\"axpy\"]\n",
			"trace.toml:3: unknown key filter.kernel.name (did you mean names?)"},
		{"unknown table with suggestion", "[filtre.kernel]\nnames = []\n",
			"trace.toml:1: unknown key filtre (did you mean filter?)"},
		{"case typo", "[Output]\n",
			"trace.toml:1: unknown key Output (did you mean output?)"},
		{"unknown key in window", "[[trigger.window]]\nkernal = \"a\"\n",
			"trace.toml:1: trigger.window[0]: needs one of kernel, kernel_regex, kernel_tag, region, delay or duration\n" +
				"trace.toml:2: unknown key trigger.window[0].kernal (did you mean kernel?)"},
		{"quoted unknown key", "[output]\n\"my key\" = 1\n",
			`trace.toml:2: unknown key output."my key"`},
		{"wrong type", "[events]\ndevice_time = \"yes\"\n",
			`trace.toml:2: events.device_time: expected true or false, got string "yes"`},
		{"wrong type string", "[output]\ndirectory = 5\n",
			"trace.toml:2: output.directory: expected a string, got integer 5"},
		{"wrong type list", "[filter.kernel]\nnames = \"axpy\"\n",
			`trace.toml:2: filter.kernel.names: expected an array, got string "axpy"`},
		{"wrong type element", "[filter.kernel]\nnames = [\"a\",\n  3]\n",
			"trace.toml:3: filter.kernel.names[1]: expected a string, got integer 3"},
		{"table expected", "output = 3\n",
			"trace.toml:1: output: expected a table ([output]), got integer 3"},
		{"array of tables expected", "[trigger.window]\nkernel = \"a\"\n",
			"trace.toml:1: trigger.window: expected an array of tables ([[trigger.window]]), got a table"},
		{"table not array", "[[output]]\n",
			"trace.toml:1: output: expected a table ([output]), got an array of tables"},
		{"enum", "[output]\ncompression = \"fast\"\n",
			`trace.toml:2: output.compression: "fast" is not one of fastest, default, better, best`},
		{"enum suggestion", "on_error = \"abrot\"\n",
			`trace.toml:1: on_error: "abrot" is not one of continue, abort (did you mean abort?)`},
		{"level", "[log]\nlevel = \"warning\"\n",
			`trace.toml:2: log.level: "warning" is not one of trace, debug, info, warn, error, disabled`},
		{"bad size unit", "[output]\nmemory = \"64MB\"\n",
			`trace.toml:2: output.memory: bad size "64MB": unit "MB" is not one of B, KiB, MiB, GiB, TiB`},
		{"bad size type", "[output]\nmemory = 1.5\n",
			`trace.toml:2: output.memory: expected a size (bytes, or a string such as "64MiB"), got float 1.5`},
		{"negative size", "[filter.memory]\nmin_bytes = -1\n",
			`trace.toml:2: filter.memory.min_bytes: -1 is negative; want a size in bytes or a string such as "64MiB"`},
		{"size out of range", "[output]\nmemory = \"512KiB\"\n",
			"trace.toml:2: output.memory: 512KiB is out of range 1MiB..16GiB"},
		{"buffer out of range", "[output]\nbuffer_size = 1000\n",
			"trace.toml:2: output.buffer_size: 1000B is out of range 64KiB..64MiB"},
		{"too few buffers", "[output]\nmemory = \"4MiB\"\nbuffer_size = \"2MiB\"\n",
			"trace.toml:3: output.buffer_size: output.memory (4MiB) holds only 2 buffers of output.buffer_size (2MiB); need at least 4"},
		{"too few buffers, memory set", "[output]\nmemory = \"2MiB\"\n",
			"trace.toml:2: output.memory: output.memory (2MiB) holds only 2 buffers of output.buffer_size (1MiB); need at least 4"},
		{"bad duration", "[output]\nflush_interval = \"1 sec\"\n",
			`trace.toml:2: output.flush_interval: "1 sec" is not a duration (write it like "250ms", "1s", "2m")`},
		{"duration type", "[output]\nflush_interval = 1\n",
			`trace.toml:2: output.flush_interval: expected a duration string such as "250ms" or "1s", got integer 1`},
		{"duration out of range", "[output]\nflush_interval = \"5ms\"\n",
			"trace.toml:2: output.flush_interval: 5ms is out of range 10ms..60s"},
		{"duration too long", "[output]\nflush_timeout = \"1h\"\n",
			"trace.toml:2: output.flush_timeout: 3600s is out of range 10ms..600s"},
		{"negative delay", "[[trigger.window]]\ndelay = \"-1s\"\n",
			"trace.toml:2: trigger.window[0].delay: -1s is out of range (must be >= 0s)"},
		{"zero duration", "[[trigger.window]]\nduration = \"0s\"\n",
			"trace.toml:2: trigger.window[0].duration: 0s is out of range (must be >= 1ns)"},
		{"negative count", "[trigger]\nmax_events = -5\n",
			"trace.toml:2: trigger.max_events: -5 is out of range (must be >= 0)"},
		{"count type", "[trigger]\nmax_events = \"1M\"\n",
			`trace.toml:2: trigger.max_events: expected an integer, got string "1M"`},
		{"bad regex", "[filter.kernel]\nregex = [\"ok\", \"gemm_(\"]\n",
			"trace.toml:2: filter.kernel.regex[1]: \"gemm_(\" is not a valid regular expression: missing closing ) in `gemm_(`"},
		{"bad regex in tag rule", "[[tag]]\nkernel_regex = \"a**\"\ntag = \"x\"\n",
			"trace.toml:2: tag[0].kernel_regex: \"a**\" is not a valid regular expression: invalid nested repetition operator in `**`"},
		{"bad glob", "[filter.kernel]\nexclude_names = [\"axpy[\"]\n",
			`trace.toml:2: filter.kernel.exclude_names[0]: "axpy[" is not a valid glob: syntax error in pattern`},
		{"bad glob in window", "[[trigger.window]]\nregion = \"step\\\\\"\n",
			`trace.toml:2: trigger.window[0].region: "step\\" is not a valid glob: syntax error in pattern`},
		{"empty regex", "[[tag]]\nkernel_regex = \"\"\ntag = \"t\"\n",
			"trace.toml:2: tag[0].kernel_regex: must not be empty"},
		{"empty glob", "[filter.kernel]\nnames = [\"\"]\n",
			"trace.toml:2: filter.kernel.names[0]: must not be empty"},
		{"empty tag", "[filter.memory]\ntags = [\"a\", \"\"]\n",
			"trace.toml:2: filter.memory.tags[1]: must not be empty"},
		{"unknown event domain", "[events]\nenable = [\"kernels\"]\n",
			`trace.toml:2: events.enable[0]: "kernels" is not a domain, an event kind or "all" (did you mean kernel?)`},
		{"unknown event kind", "[events]\ndisable = [\"run_begn\"]\n",
			`trace.toml:2: events.disable[0]: "run_begn" is not a domain, an event kind or "all" (did you mean run_begin?)`},
		{"empty event word", "[events]\nenable = [\"\"]\n",
			`trace.toml:2: events.enable[0]: "" is not a domain, an event kind or "all"`},
		{"definition kind", "[events]\nenable = [\"def_string\"]\n",
			`trace.toml:2: events.enable[0]: "def_string" is not a domain, an event kind or "all"`},
		{"tool cannot be disabled", "[events]\ndisable = [\"tool\"]\n",
			`trace.toml:2: events.disable[0]: "tool" cannot be disabled (the tool's own events are always recorded)`},
		{"dropped cannot be disabled", "[events]\ndisable = [\"dropped\"]\n",
			`trace.toml:2: events.disable[0]: "dropped" cannot be disabled (the tool's own events are always recorded)`},
		{"device mode", "[filter.device]\nmodes = [\"CDUA\"]\n",
			`trace.toml:2: filter.device.modes[0]: "CDUA" is not a device mode; known: Serial, OpenMP, CUDA, HIP, OpenCL, Metal, dpcpp (did you mean CUDA?)`},
		{"device index", "[filter.memory]\nindices = [-2]\n",
			"trace.toml:2: filter.memory.indices[0]: -2 is not a device index (must be >= -1; -1 is a device without one)"},
		{"max below min", "[filter.memory]\nmin_bytes = \"4KiB\"\nmax_bytes = \"1KiB\"\n",
			"trace.toml:3: filter.memory.max_bytes: 1KiB is below min_bytes (4KiB); 0 means no maximum"},
		{"window with two forms", "\n[[trigger.window]]\nkernel = \"a\"\nregion = \"b\"\ndelay = \"1s\"\n",
			"trace.toml:2: trigger.window[0]: give only one of kernel, kernel_regex, kernel_tag, region or delay/duration (found kernel, region and delay)"},
		{"window with two kernel forms", "[[trigger.window]]\nkernel = \"a\"\nkernel_tag = \"b\"\n",
			"trace.toml:1: trigger.window[0]: give only one of kernel, kernel_regex, kernel_tag, region or delay/duration (found kernel and kernel_tag)"},
		{"window with none", "[[trigger.window]]\nkernel = \"a\"\n[[trigger.window]]\nfrom = 2\nto = 3\n",
			"trace.toml:3: trigger.window[1]: needs one of kernel, kernel_regex, kernel_tag, region, delay or duration"},
		{"to < from", "[[trigger.window]]\nkernel = \"a\"\nfrom = 10\nto = 5\n",
			"trace.toml:4: trigger.window[0].to: 5 is before from = 10 (to = 0 means no end)"},
		{"from zero", "[[trigger.window]]\nregion = \"a\"\nfrom = 0\n",
			"trace.toml:3: trigger.window[0].from: 0 is out of range (must be >= 1)"},
		{"from on time window", "[[trigger.window]]\ndelay = \"1s\"\nfrom = 2\n",
			"trace.toml:3: trigger.window[0].from: only launch and region windows take from and to"},
		{"tag rule with both", "[[tag]]\nkernel = \"a\"\nkernel_regex = \"b\"\ntag = \"t\"\n",
			"trace.toml:1: tag[0]: give exactly one of kernel or kernel_regex"},
		{"tag rule without tag", "[[tag]]\nkernel = \"a\"\n",
			"trace.toml:1: tag[0]: missing key tag (the tag to give)"},
		{"bad signal", "[trigger]\ntoggle_signal = \"SIGKILL\"\n",
			`trace.toml:2: trigger.toggle_signal: "SIGKILL" cannot be used; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"unknown signal", "[trigger]\ntoggle_signal = \"SIGUSR3\"\n",
			`trace.toml:2: trigger.toggle_signal: "SIGUSR3" is not a signal name; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"signal out of range", "[trigger]\ntoggle_signal = \"SIGRTMIN+12\"\n",
			`trace.toml:2: trigger.toggle_signal: "SIGRTMIN+12" is out of range; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"too many windows", strings.Repeat("[[trigger.window]]\nregion = \"r\"\n", 18),
			"trace.toml:33: trigger.window: 18 windows; at most 16 are allowed"},
		{"bad name pattern token", "[output]\nname = \"{exe}-{user}-{pid}\"\n",
			`trace.toml:2: output.name: unknown token {user} in "{exe}-{user}-{pid}"; allowed: {exe} {host} {pid} {rank} {time}`},
		{"name without pid", "[output]\nname = \"{exe}-r{rank}\"\n",
			`trace.toml:2: output.name: "{exe}-r{rank}" must contain {pid}`},
		{"name with slash", "[output]\nname = \"sub/{pid}\"\n",
			`trace.toml:2: output.name: "sub/{pid}" must not contain '/' (put directories in output.directory)`},
		{"empty directory", "[output]\ndirectory = \"\"\n",
			"trace.toml:2: output.directory: must not be empty"},
		{"syntax error", "[output\nname = 1\n",
			"trace.toml:2: TOML syntax: expected '.' or ']' to end table name, but got '\\n' instead"},
		{"duplicate key", "a = 1\na = 2\n",
			"trace.toml:2: TOML syntax: Key 'a' has already been defined."},
		{"inline window list", "[trigger]\nwindow = [{kernel = \"a\", to = 0}, {kernal = \"b\"}]\n",
			"trace.toml:2: unknown key trigger.window[1].kernal (did you mean kernel?)\n" +
				"trace.toml:2: trigger.window[1]: needs one of kernel, kernel_regex, kernel_tag, region, delay or duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("trace.toml", []byte(tc.text))
			if cfg == nil {
				t.Fatal("nil config")
			}
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", err, tc.want)
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is %T, not Errors", err)
			}
			for _, e := range es {
				if e.Line == 0 || e.File != "trace.toml" {
					t.Errorf("error without position: %#v", e)
				}
			}
		})
	}
}

// All errors are reported, sorted by line, and every bad key keeps its
// default while good keys take effect.
func TestAllErrorsAndBestEffort(t *testing.T) {
	text := `
[trigger]
max_events = -1
[[trigger.window]]
kernel = "good"
[[trigger.window]]
region = "x"
delay = "1s"
[output]
compression = "better"
memory = "lots"
[filter.kernel]
names = ["ok", "bad["]
regex = ["fine"]
[events]
enable = ["nope"]
`
	cfg, err := Parse("all.toml", []byte(text))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("err = %v", err)
	}
	var lines []int
	for _, e := range es {
		lines = append(lines, e.Line)
	}
	if want := []int{3, 6, 11, 13, 16}; !reflect.DeepEqual(lines, want) {
		t.Errorf("error lines %v, want %v\n%s", lines, want, err)
	}
	def := Default()
	if cfg.Trigger.MaxEvents != 0 || cfg.Output.Memory != def.Output.Memory ||
		len(cfg.Filter.Kernel.Names) != 0 || !reflect.DeepEqual(cfg.Events.Enable, def.Events.Enable) {
		t.Errorf("bad keys did not keep their defaults: %+v", cfg)
	}
	if cfg.Output.Compression != CompressionBetter || !reflect.DeepEqual(cfg.Filter.Kernel.Regex, []string{"fine"}) ||
		len(cfg.Trigger.Windows) != 1 || cfg.Trigger.Windows[0].Kernel != "good" {
		t.Errorf("good keys were lost: %+v", cfg)
	}
	if es[0].Key != "trigger.max_events" || !strings.HasPrefix(es[0].Msg, "trigger.max_events: ") {
		t.Errorf("first error %#v", es[0])
	}
}

func TestSyntaxErrorKeepsAbort(t *testing.T) {
	for text, abort := range map[string]bool{
		"on_error = \"abort\"\n[output\n":           true,
		"  on_error = 'abort'  # stop\nx = = 1\n":   true,
		"on_error = \"continue\"\n[output\n":        false,
		"[output]\non_error = \"abort\"\nx = = 1\n": false,
		"x = = 1\n": false,
		"on_error = \"abort\"\n[output]\ncompression=1\n": true,
	} {
		cfg, err := Parse("s.toml", []byte(text))
		if err == nil {
			t.Errorf("%q: no error", text)
		}
		if (cfg.OnError == OnErrorAbort) != abort {
			t.Errorf("%q: on_error = %v, want abort %v", text, cfg.OnError, abort)
		}
		if cfg.Text != text || cfg.Name != "s.toml" {
			t.Errorf("%q: Text/Name not kept", text)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(p, []byte("[output]\ncompression = \"fast\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err == nil || err.Error() != p+`:2: output.compression: "fast" is not one of fastest, default, better, best` {
		t.Errorf("Load: %v", err)
	}
	if cfg.Name != p || cfg.Text == "" {
		t.Errorf("Load: name %q", cfg.Name)
	}
	missing := filepath.Join(dir, "missing.toml")
	cfg, err = Load(missing)
	if err == nil || err.Error() != missing+": cannot read config: no such file or directory" {
		t.Errorf("Load(missing): %v", err)
	}
	if cfg == nil || cfg.Output.Memory != Default().Output.Memory {
		t.Error("Load(missing) did not return the default")
	}
}

func TestSizesAndDurations(t *testing.T) {
	for _, tc := range []struct {
		text string
		get  func(*Config) any
		want any
	}{
		{"[output]\nmemory = \"1 GiB\"", func(c *Config) any { return c.Output.Memory }, uint64(1 << 30)},
		{"[output]\nmemory = 16777216", func(c *Config) any { return c.Output.Memory }, uint64(16 << 20)},
		{"[output]\nmemory = \"16GiB\"\nbuffer_size=\"64MiB\"", func(c *Config) any { return c.Output.BufferSize }, uint64(64 << 20)},
		{"[output]\nbuffer_size = \"64KiB\"", func(c *Config) any { return c.Output.BufferSize }, uint64(64 << 10)},
		{"[output]\nflush_interval = \"10ms\"", func(c *Config) any { return c.Output.FlushInterval }, 10 * time.Millisecond},
		{"[output]\nflush_interval = \"1m\"", func(c *Config) any { return c.Output.FlushInterval }, time.Minute},
		{"[trigger]\nmax_bytes = \"4096\"", func(c *Config) any { return c.Trigger.MaxBytes }, uint64(4096)},
		{"[filter.memory]\nmax_bytes = \"16777215TiB\"", func(c *Config) any { return c.Filter.Memory.MaxBytes }, uint64(16777215) << 40},
		{"[trigger]\nmax_events = 9223372036854775807", func(c *Config) any { return c.Trigger.MaxEvents }, uint64(math.MaxInt64)},
		{"[[trigger.window]]\ndelay = \"1h30m\"", func(c *Config) any { return c.Trigger.Windows[0].Delay }, 90 * time.Minute},
	} {
		cfg, err := Parse("s.toml", []byte(tc.text))
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if got := tc.get(cfg); got != tc.want {
			t.Errorf("%q: got %v, want %v", tc.text, got, tc.want)
		}
	}
}
