package config

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/libocca/occa-tools/configs"
)

// Config is one process's tracing configuration: the user's file laid over
// the defaults. The zero value is not useful; start from Default, Parse or
// Load.
type Config struct {
	// Name is where the text came from, as used in error messages
	// ("trace.toml", "configs/budget.toml"); "default" for Default.
	Name string
	// Text is the text the config was read from, verbatim: the user's file, or
	// configs/default.toml for Default. The runtime stores it in every trace
	// header.
	Text string

	OnError OnError
	Output  Output
	Clock   Clock
	Log     Log
	Events  Events
	OpenMP  OpenMP
	Filter  Filter
	Tags    []TagRule
	Trigger Trigger
}

// OpenMP configures the runtime's OMPT tool (LLVM's OpenMP runtime; which
// OpenMP kinds are recorded is up to [events], domain "openmp").
type OpenMP struct {
	Scope OpenMPScope
}

// Output says where and how traces are written.
type Output struct {
	Directory     string
	Name          string // file name pattern; see ValidateName and ExpandName
	FlushInterval time.Duration
	FlushTimeout  time.Duration
	Memory        uint64 // total buffer memory per process, bytes
	BufferSize    uint64 // per-thread buffer, bytes
	Compression   Compression
	OnFull        OnFull
}

// Clock selects the timestamp source.
type Clock struct {
	Source ClockSource
}

// Log sets the runtime's own log level.
type Log struct {
	Level Level
}

// Events switches event kinds on and off.
type Events struct {
	// Enable and Disable hold domain names, event kind names and "all", as
	// written; Disable applies after Enable.
	Enable  []string
	Disable []string
	// DeviceTime asks sources for device-side kernel timing.
	DeviceTime bool
}

// Filter selects objects whose events are recorded.
type Filter struct {
	Device DeviceFilter
	Kernel KernelFilter
	Memory MemoryFilter
}

// DeviceFilter selects devices. Empty lists select every device.
type DeviceFilter struct {
	Modes   []string // matched case-insensitively against the device mode
	Indices []int64
}

// KernelFilter selects kernels: a kernel is selected when (Names, Regex and
// Tags are all empty, or it matches one of them) and it matches none of the
// Exclude lists.
type KernelFilter struct {
	Names        []string // path.Match globs on the whole name
	Regex        []string // RE2, unanchored unless anchored by the user
	Tags         []string
	ExcludeNames []string
	ExcludeRegex []string
	ExcludeTags  []string
}

// MemoryFilter selects memory objects (on top of the device filter).
type MemoryFilter struct {
	Tags     []string // empty = every tag, including none
	MinBytes uint64
	MaxBytes uint64 // 0 = no maximum
	Modes    []string
	Indices  []int64
}

// TagRule gives Tag to every kernel whose name matches Kernel (a glob) or
// KernelRegex; exactly one of the two is set.
type TagRule struct {
	Kernel      string
	KernelRegex string
	Tag         string
	Line        int // line of its [[tag]] header, 0 when not from a file
}

// Trigger holds the recording switches, budgets and windows.
type Trigger struct {
	StartPaused  bool
	ToggleSignal string // canonical name ("SIGUSR2", "SIGRTMIN+3"), "" for none
	MaxEvents    uint64 // 0 = no budget
	MaxBytes     uint64 // 0 = no budget
	Windows      []WindowConfig
}

// WindowConfig is one [[trigger.window]] table. Exactly one form is set:
// Kernel, KernelRegex, KernelTag or Region (with From and To), or a time
// window (Delay and/or Duration, when all four selectors are empty).
type WindowConfig struct {
	Kernel      string
	KernelRegex string
	KernelTag   string
	Region      string
	From        uint64        // 1-based, default 1
	To          uint64        // inclusive; 0 = no end
	Delay       time.Duration // time window: opens this long after start
	Duration    time.Duration // time window: stays open this long; 0 = forever
	Line        int           // line of its [[trigger.window]] header, 0 when not from a file
}

// IsTime reports whether w is a time window.
func (w *WindowConfig) IsTime() bool {
	return w.Kernel == "" && w.KernelRegex == "" && w.KernelTag == "" && w.Region == ""
}

// Default returns the default configuration, the values written in
// configs/default.toml.
func Default() *Config {
	return &Config{
		Name:    "default",
		Text:    string(configs.Default),
		OnError: OnErrorContinue,
		Output: Output{
			Directory:     "./occa-tools-traces",
			Name:          "{exe}-{host}-r{rank}-p{pid}",
			FlushInterval: time.Second,
			FlushTimeout:  5 * time.Second,
			Memory:        64 << 20,
			BufferSize:    1 << 20,
			Compression:   CompressionFastest,
			OnFull:        OnFullDrop,
		},
		Clock:  Clock{Source: ClockAuto},
		Log:    Log{Level: LevelWarn},
		Events: Events{Enable: []string{"all"}, Disable: []string{}},
		OpenMP: OpenMP{Scope: OpenMPKernels},
		Filter: Filter{
			Device: DeviceFilter{Modes: []string{}, Indices: []int64{}},
			Kernel: KernelFilter{Names: []string{}, Regex: []string{}, Tags: []string{},
				ExcludeNames: []string{}, ExcludeRegex: []string{}, ExcludeTags: []string{}},
			Memory: MemoryFilter{Tags: []string{}, Modes: []string{}, Indices: []int64{}},
		},
		Tags:    []TagRule{},
		Trigger: Trigger{Windows: []WindowConfig{}},
	}
}

// Load reads and parses the config file at path (see ReadFile). Like
// Parse, it returns a usable config together with any error; when the file
// cannot be read the config is Default.
func Load(path string) (*Config, error) {
	text, err := ReadFile(path)
	if err != nil {
		return Default(), Errors{{File: path, Msg: "cannot read config: " + errText(err)}}
	}
	return Parse(path, text)
}

// ReadFile reads a config file: only a regular file (symbolic links are
// followed), opened without blocking, and at most MaxSize+1 bytes of it
// (Parse reports a longer text). A named pipe would block the reader until
// a writer comes, a device like /dev/zero never ends, and opening a device
// can have effects of its own: they are refused before they are opened, and
// checked again once open, in case the path changed in between.
func ReadFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	return io.ReadAll(io.LimitReader(f, MaxSize+1))
}

// notRegular is an *fs.PathError, like ReadFile's other errors.
func notRegular(path string, m fs.FileMode) error {
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	}
	return &fs.PathError{Op: "open", Path: path, Err: errors.New(what + ", not a regular file; give the path of a TOML file")}
}

// errText is err's message without the path that os errors repeat.
func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
