// Package tracetest makes deterministic traces for tests and benchmarks of
// the trace format and of the tools that read it.
package tracetest

import (
	"math/rand/v2"

	"github.com/libocca/occa-tools/formats/trace"
)

// MonoStart is the CLOCK_MONOTONIC time at which the test traces start.
const MonoStart = 1_000_000_000_000

// Header returns a fixed header with every field set.
func Header() *trace.Header {
	return &trace.Header{
		ClockSource: "tsc",
		TSCHz:       2.45e9,
		TSC0:        123456789,
		Mono0:       MonoStart - 1000,
		WallStart:   1767225600_000000000, // 2026-01-01T00:00:00Z
		MonoStart:   MonoStart,
		Host:        "node7",
		PID:         4242,
		PPID:        4200,
		Rank:        3,
		WorldSize:   8,
		RankSource:  "PMI_RANK",
		Executable:  "/opt/app/bin/solver",
		Cmdline:     []string{"solver", "--steps", "10", "in put.json"},
		ToolVersion: "0.1.0-test",
		ABIVersion:  20261122, // a fixed value (the goldens hold it), not abi.Version
		ConfigPath:  "/home/u/occa-tools.toml",
		ConfigText:  "[output]\npath = \"trace-%r.occa\"\n",
		BufferSize:  1 << 20,
		BufferCount: 16,
		MemoryLimit: 64 << 20,
	}
}

// String ids of the defs made by Defs.
const (
	StrCUDA = 1 + iota
	StrSerial
	StrAxpy
	StrDot
	StrNorm
	StrSource
	StrProps
	StrMain
	StrWorker
	StrTagHot
	StrStep
	StrSolve
	StrBufX
)

// Defs returns definitions for a CUDA device (1), a Serial device (2), three
// kernels (1..3), a stream (1), a memory object (1) and threads 0..2.
func Defs() []trace.Def {
	s := func(id uint64, text string) trace.Def {
		return trace.Def{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{id}, Text: text}
	}
	d := func(k trace.Kind, args ...uint64) trace.Def {
		def := trace.Def{Kind: k}
		copy(def.Args[:], args)
		return def
	}
	return []trace.Def{
		s(StrCUDA, "CUDA"), s(StrSerial, "Serial"), s(StrAxpy, "axpy"), s(StrDot, "dot"),
		s(StrNorm, "norm"), s(StrSource, "kernels.okl"), s(StrProps, `{"verbose": true}`),
		s(StrMain, "main"), s(StrWorker, "worker"), s(StrTagHot, "hot"), s(StrStep, "timestep"),
		s(StrSolve, "solve"), s(StrBufX, "x"),
		d(trace.DefDevice, 1, StrCUDA, 0, StrProps),
		d(trace.DefDevice, 2, StrSerial, uint64(neg1), 0),
		d(trace.DefKernel, 1, 1, StrAxpy, StrSource, 0xfeed),
		d(trace.DefKernel, 2, 1, StrDot, StrSource, 0xbeef),
		d(trace.DefKernel, 3, 2, StrNorm, StrSource, 0),
		d(trace.DefKernelTag, 1, StrTagHot),
		d(trace.DefStream, 1, 1),
		d(trace.DefMemory, 1, 1, 1<<20, 0x7f0000001000, StrBufX),
		d(trace.DefThread, 0, 4242, StrMain),
		d(trace.DefThread, 1, 4243, StrWorker),
		d(trace.DefThread, 2, 4244, StrWorker),
	}
}

var neg1 = int64(-1)

// Gen produces a steady-state stream of one thread's events: kernel
// launches 1-5 us apart, with copies, device times and allocations mixed in,
// as a solver's time loop makes them.
type Gen struct {
	rng   *rand.Rand
	Time  int64  // time of the last event
	Corr  uint64 // last correlation id handed out
	iter  int
	queue []trace.Event
	mem   uint64
}

// NewGen returns a generator seeded with seed, starting at MonoStart.
func NewGen(seed uint64) *Gen {
	return &Gen{rng: rand.New(rand.NewPCG(seed, 0x0cca)), Time: MonoStart, mem: 1}
}

func (g *Gen) tick() int64 {
	g.Time += 1000 + g.rng.Int64N(4000)
	return g.Time
}

// corr hands out the next correlation id; other threads take some too.
func (g *Gen) corr() uint64 {
	g.Corr += 1 + uint64(g.rng.IntN(4)/3)
	return g.Corr
}

func ev(k trace.Kind, t int64, args ...uint64) trace.Event {
	e := trace.Event{Kind: k, Time: t}
	copy(e.Args[:], args)
	return e
}

// Next fills e with the next event.
func (g *Gen) Next(e *trace.Event) {
	if len(g.queue) == 0 {
		g.iteration()
	}
	*e = g.queue[0]
	g.queue = g.queue[1:]
}

func (g *Gen) iteration() {
	g.iter++
	q := g.queue[:0]
	kernel := uint64(1 + (g.iter/10)%3)
	c := g.corr()
	start := g.tick()
	q = append(q, ev(trace.RunBegin, start, c, kernel, 1, 0))
	end := g.tick()
	q = append(q, ev(trace.RunEnd, end, c, trace.StatusOK))
	if g.iter%16 == 0 {
		q = append(q, ev(trace.DeviceTime, g.tick(), c, uint64(start+300), uint64(end-200)))
	}
	if g.iter%4 == 0 {
		c := g.corr()
		q = append(q, ev(trace.CopyBegin, g.tick(), c, trace.CopyD2H, 1, 0, 1<<20, 0))
		q = append(q, ev(trace.CopyEnd, g.tick(), c, trace.StatusOK))
	}
	if g.iter%64 == 0 {
		g.mem++
		c := g.corr()
		q = append(q, ev(trace.MemoryAllocBegin, g.tick(), c, 1, 4096, 0))
		q = append(q, ev(trace.MemoryAllocEnd, g.tick(), c, g.mem, 0x7f0000000000+g.mem<<16, trace.StatusOK))
		c = g.corr()
		q = append(q, ev(trace.MemoryFreeBegin, g.tick(), c, g.mem, 1, 4096))
		q = append(q, ev(trace.MemoryFreeEnd, g.tick(), c, trace.StatusOK))
	}
	g.queue = q
}

// Steady returns n events of thread 0's steady stream, for benchmarks.
func Steady(seed uint64, n int) []trace.Event {
	g := NewGen(seed)
	evs := make([]trace.Event, n)
	for i := range evs {
		g.Next(&evs[i])
	}
	return evs
}
