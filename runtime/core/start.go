package main

/*
#include "ot_internal.h"
*/
import "C"

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/runtime/abi"
	"github.com/libocca/occa-tools/runtime/procinfo"
	"github.com/libocca/occa-tools/runtime/writer"
)

// Version is the tool version, set at link time (-X main.Version=...).
var Version = "dev"

var core struct {
	prog *filters.Program
	loop *writer.Loop
}

const (
	startOK        = 0
	startUntraced  = -1
	startAbortProc = -2
)

// start loads the config, fills the C settings and opens the trace file.
// Nothing from outside may end the program here: what cannot be used is
// reported and the program runs untraced, or stops (startAbortProc) when
// on_error says abort.
func start(h cHost, s *C.ot_settings_t) (rc int) {
	defer func() {
		if r := recover(); r != nil {
			logger.Error().Msgf("internal error while starting (%v); running untraced: please report it", r)
			rc = startUntraced
		}
	}()
	// Start the Go runtime's poller now, so that its descriptors exist
	// before the C side records which descriptors are the tool's
	// (runtime/src/fds.c): a timer is what starts it, and one would later
	// anyway (the collector's scavenger, the writer's own waits).
	time.Sleep(time.Microsecond)
	env := readEnv()
	cfg, err := config.Load(env.config)
	if err == nil {
		logger = newLogger(levelFrom(cfg.Log.Level))
	}
	var prog *filters.Program
	if err == nil {
		prog, err = filters.Compile(cfg)
	}
	if err != nil {
		return configFailed(cfg, err, env.onError)
	}
	core.prog = prog
	logger = logger.With().Str("config", config.Printable(env.config, 4096)).Logger()

	useTSC := false
	switch cfg.Clock.Source {
	case config.ClockAuto:
		useTSC = s.tsc_usable != 0
	case config.ClockTSC:
		useTSC = s.tsc_usable != 0
		if !useTSC {
			logger.Warn().Msg("clock.source = \"tsc\" but this CPU or kernel has no invariant, trusted TSC; using CLOCK_MONOTONIC")
		}
	}
	h.SetClock(useTSC)
	fillSettings(s, cfg, prog, useTSC)

	info := procinfo.Current()
	for _, msg := range info.Ignored {
		logger.Warn().Msg(msg)
	}
	startTime := time.Now()
	dir := cfg.Output.Directory
	if env.outputDir != "" {
		dir = env.outputDir // the launcher's --output
	}
	f, err := procinfo.Create(dir, info.Expand(cfg.Output.Name, startTime))
	if err != nil {
		logger.Error().Msg(err.Error() + "; running untraced")
		return startUntraced
	}
	hdr := header(h, cfg, &info, startTime, useTSC, poolBuffers(cfg.Output.Memory, cfg.Output.BufferSize))
	limitGoMemory(cfg.Output.Memory)
	out := newGuardedFile(f)
	s.trace_fd = C.int32_t(out.fd)
	// Two compressors: the writer keeps up with bursts while the application
	// uses the other core, and on a busy machine it still has a second one.
	encoders := min(2, runtime.NumCPU())
	// The tool's goroutines: the writer and the encoders. More Ps would only
	// let the collector take more of the application's cores (a quarter of
	// GOMAXPROCS) and grow the runtime's per-P memory inside the reserve.
	runtime.GOMAXPROCS(encoders + 1)
	tw, err := trace.NewWriter(out, hdr, trace.WithLevel(trace.Level(cfg.Output.Compression)),
		trace.WithConcurrency(encoders))
	if err != nil {
		logger.Error().Err(err).Str("trace", f.Name()).Msg("cannot write the trace header; running untraced")
		f.Close()
		os.Remove(f.Name())
		return startUntraced
	}
	var windows []writer.TimeWindow
	for i, w := range prog.Windows() {
		if w.Kind == filters.WindowTime {
			windows = append(windows, writer.TimeWindow{Index: i, Delay: w.Delay, Duration: w.Duration})
		}
	}
	_, maxBytes := prog.Budget()
	core.loop = writer.New(h, tw, out, writer.Options{
		FlushInterval: cfg.Output.FlushInterval,
		FlushTimeout:  cfg.Output.FlushTimeout,
		TimeWindows:   windows,
		MaxBytes:      maxBytes,
		IdentityClock: !useTSC,
		Encoders:      encoders,
		Start:         startTime,
		Log:           logger,
		Path:          f.Name(),
	})
	logger.Info().Str("trace", f.Name()).Msg("tracing")
	return startOK
}

// environment is what the runtime takes from its environment variables.
type environment struct {
	config    string          // OCCA_TOOLS_CONFIG
	outputDir string          // OCCA_TOOLS_OUTPUT_DIR; "" for the config's
	onError   *config.OnError // OCCA_TOOLS_ON_ERROR; nil for the config's
}

// readEnv reads the variables once, and sets the logger's level from
// OCCA_TOOLS_LOG_LEVEL; a value it cannot use is reported in one warning
// and ignored.
func readEnv() environment {
	envLevel = nil
	logger = newLogger(zerolog.WarnLevel)
	if v := os.Getenv("OCCA_TOOLS_LOG_LEVEL"); v != "" {
		if l, err := config.ParseLevel(v); err == nil {
			zl := zerolog.Level(l)
			envLevel = &zl
		} else {
			logger.Warn().Msg("OCCA_TOOLS_LOG_LEVEL=" + procinfo.Quote(v) + " is not a log level (trace, debug, info, warn, error, disabled); ignored")
		}
	}
	logger = newLogger(levelFrom(config.LevelWarn))
	e := environment{config: os.Getenv("OCCA_TOOLS_CONFIG"), outputDir: os.Getenv("OCCA_TOOLS_OUTPUT_DIR")}
	switch v := os.Getenv("OCCA_TOOLS_ON_ERROR"); v {
	case "":
	case "continue", "abort":
		o := config.OnErrorContinue
		if v == "abort" {
			o = config.OnErrorAbort
		}
		e.onError = &o
	default:
		logger.Warn().Msg("OCCA_TOOLS_ON_ERROR=" + procinfo.Quote(v) + " is not continue or abort; ignored")
	}
	return e
}

// maxReported is how many config errors are printed, one line each: a
// file of thousands of mistakes is not what the user meant to load.
const maxReported = 20

// configFailed reports the config errors, one line each, and runs the
// application untraced unless on_error (OCCA_TOOLS_ON_ERROR over the
// config's) says abort.
func configFailed(cfg *config.Config, err error, env *config.OnError) int {
	var errs config.Errors
	if errors.As(err, &errs) {
		for i, e := range errs {
			if i == maxReported {
				logger.Error().Msgf("and %d more errors in %s", len(errs)-i, cfg.Name)
				break
			}
			logger.Error().Msg(e.Error())
		}
	} else {
		logger.Error().Msg(err.Error())
	}
	onError := cfg.OnError
	if env != nil {
		onError = *env
	}
	if onError == config.OnErrorAbort {
		return startAbortProc
	}
	logger.Error().Msg("config errors above: the program runs untraced (set on_error = \"abort\" to stop it instead)")
	return startUntraced
}

func fillSettings(s *C.ot_settings_t, cfg *config.Config, prog *filters.Program, useTSC bool) {
	s.enabled_mask = C.uint64_t(prog.EventMask())
	s.memory_bytes = C.uint64_t(cfg.Output.Memory)
	s.buffer_bytes = C.uint64_t(cfg.Output.BufferSize)
	s.flush_timeout_ms = C.uint64_t(cfg.Output.FlushTimeout.Milliseconds())
	events, _ := prog.Budget()
	s.budget_events = C.uint64_t(events)
	lo, hi := prog.MemorySizeRange()
	s.mem_min_bytes = C.uint64_t(lo)
	s.mem_max_bytes = C.uint64_t(hi)
	s.use_tsc = cint(useTSC)
	s.on_full_wait = cint(cfg.Output.OnFull == config.OnFullWait)
	s.start_paused = cint(prog.StartPaused())
	s.toggle_signal = C.int32_t(prog.ToggleSignal())
	s.device_time = cint(prog.DeviceTime())
	s.omp_all = cint(prog.OpenMPAll())
	s.log_level = C.int32_t(logger.GetLevel())
	ws := prog.Windows()
	s.nwindows = C.uint32_t(len(ws))
	for i, w := range ws {
		kind := map[filters.WindowKind]C.uint32_t{filters.WindowLaunch: C.OT_WINDOW_LAUNCH,
			filters.WindowRegion: C.OT_WINDOW_REGION, filters.WindowTime: C.OT_WINDOW_TIME}[w.Kind]
		s.windows[i] = C.ot_window_setting_t{kind: kind, from: C.uint64_t(w.From), to: C.uint64_t(w.To)}
	}
}

// writerReserve: see abi.WriterReserve.
const writerReserve = abi.WriterReserve

// goMemoryLimit bounds the Go runtime's memory as it counts it (heap,
// stacks, metadata, mapped pages not yet touched, so above what is
// resident) to the reserve: a backstop against the heap growing into the
// buffers' share. Much lower and the collector runs without pause (at
// 6 MiB, hundreds of cycles a second at 10 M events/s).
const goMemoryLimit = writerReserve

// poolBuffers is how many buffers ot_pool_init makes of the memory budget
// (runtime/src/buffers.c).
func poolBuffers(memory, buffer uint64) uint64 {
	n := memory / buffer
	if memory >= 4*writerReserve {
		n = (memory - writerReserve) / buffer
	}
	return max(n, 2)
}

// limitGoMemory makes the Go runtime collect harder rather than grow past
// its share of the reserve, so that buffers and writer stay within
// output.memory together. The limit is soft: the heap the writer really
// needs is never refused, it only costs more collections.
func limitGoMemory(memory uint64) {
	if memory >= 4*writerReserve {
		debug.SetMemoryLimit(goMemoryLimit)
	}
}

func cint(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// header describes the process and the clock. With the TSC, a first rate
// estimate comes from two sync points 1 ms apart; the exact conversion uses
// the sync points of the clock chunks.
func header(h cHost, cfg *config.Config, info *procinfo.Info, start time.Time, useTSC bool, buffers uint64) *trace.Header {
	t0, m0 := h.SyncPoint()
	hdr := &trace.Header{
		ClockSource: "monotonic",
		TSC0:        t0,
		Mono0:       m0,
		WallStart:   start.UnixNano(),
		MonoStart:   m0,
		Host:        info.Host,
		PID:         int64(info.PID),
		PPID:        int64(info.PPID),
		Rank:        info.Rank,
		WorldSize:   info.WorldSize,
		RankSource:  info.RankSource,
		Executable:  info.Executable,
		Cmdline:     info.Cmdline,
		ToolVersion: Version,
		ABIVersion:  abi.Version,
		ConfigPath:  cfg.Name,
		ConfigText:  cfg.Text,
		BufferSize:  cfg.Output.BufferSize,
		BufferCount: buffers,
		MemoryLimit: cfg.Output.Memory,
	}
	if useTSC {
		hdr.ClockSource = "tsc"
		time.Sleep(time.Millisecond)
		t1, m1 := h.SyncPoint()
		if m1 > m0 && t1 > t0 {
			hdr.TSCHz = float64(t1-t0) / (float64(m1-m0) / 1e9)
		}
	}
	return hdr
}
