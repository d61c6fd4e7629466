package tests

import (
	"fmt"
	"math"

	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/formats/trace"
)

// This file models tests/workload/workload.c: the same calls in the same
// order, evaluated with the reference decisions (filters.Program) and the
// reference trigger machine (filters.Machine). What the model says is
// recorded is what the C runtime must have recorded. Keep it in step with
// workload.c.

const mib = 1 << 20

type options struct {
	threads, steps int
	tagMemory      bool
	apiStart       bool  // --api-pause: main calls occa_tools_start() after setup
	toggleAt       []int // --toggle-at: worker 0 raises the toggle signal at these steps
	tagDot         bool  // --tag-dot: occa_tools_tag_kernel("dot", "hot") before the workers
	flushKill      bool  // --flush-kill: flush and SIGKILL after the workers
}

type device struct {
	mode, props string
	index       int64
}

var devices = []device{
	{"CUDA", "{mode: 'CUDA', device_id: 0}", 0},
	{"CUDA", "{mode: 'CUDA', device_id: 1}", 1},
	{"Serial", "{mode: 'Serial'}", -1},
}

type kernel struct {
	name, props string
	dev         int
}

type memory struct {
	dev   int
	bytes uint64
	tag   string
}

// expect is the model's answer: events per kind, copy bytes per direction,
// and the trigger actions in order.
type expect struct {
	counts   map[trace.Kind]int
	bytes    map[uint64]uint64 // by direction (trace.CopyH2D...)
	triggers []filters.Action
}

type model struct {
	p    *filters.Program
	m    *filters.Machine
	mask uint64
	call uint64
	e    expect
	devs []filters.DeviceDecision
}

func newModel(p *filters.Program) *model {
	md := &model{p: p, m: p.NewMachine(), mask: p.EventMask(),
		e: expect{counts: map[trace.Kind]int{}, bytes: map[uint64]uint64{}}}
	for _, d := range devices {
		md.devs = append(md.devs, p.Device(d.mode, d.index, d.props))
	}
	return md
}

func (md *model) on(k trace.Kind) bool { return md.mask&(1<<k) != 0 }

func (md *model) step(s filters.Step) filters.Result {
	r := md.m.Step(s)
	md.e.triggers = append(md.e.triggers, r.Actions...)
	return r
}

// pair models a begin/end call of kind begin whose objects are selected.
func (md *model) pair(begin trace.Kind, selected bool) bool {
	md.call++
	s := filters.Begin(md.call)
	if !selected || !md.on(begin) {
		s = s.Skipped()
	}
	rec := md.step(s).Recorded
	md.step(filters.End(md.call))
	if rec {
		md.e.counts[begin]++
		md.e.counts[begin.Spec().Pair]++
	}
	return rec
}

func (md *model) instant(k trace.Kind, selected bool) bool {
	s := filters.Instant()
	if !selected || !md.on(k) {
		s = s.Skipped()
	}
	rec := md.step(s).Recorded
	if rec {
		md.e.counts[k]++
	}
	return rec
}

func (md *model) kernelSelected(k kernel) (bool, uint16) {
	d := md.p.Kernel(k.name, k.props)
	return d.Selected && md.devs[k.dev].Selected, d.Windows
}

func (md *model) run(thread int, k kernel, deviceTime bool) {
	sel, win := md.kernelSelected(k)
	md.call++
	s := filters.LaunchBegin(md.call, win)
	if !sel || !md.on(trace.RunBegin) {
		s = s.Skipped()
	}
	rec := md.step(s).Recorded
	md.step(filters.LaunchEnd(md.call))
	if rec {
		md.e.counts[trace.RunBegin]++
		md.e.counts[trace.RunEnd]++
		if deviceTime && md.on(trace.DeviceTime) {
			md.e.counts[trace.DeviceTime]++
		}
	}
}

func (md *model) memSelected(m memory) bool {
	d := md.devs[m.dev]
	lo, hi := md.p.MemorySizeRange()
	if hi == 0 {
		hi = math.MaxUint64
	}
	return d.Selected && d.MemorySelected && m.bytes >= lo && m.bytes <= hi && md.p.MemoryTagSelected(m.tag)
}

func (md *model) copy(dir uint64, src, dst *memory, bytes uint64) {
	sel := src == nil && dst == nil || src != nil && md.memSelected(*src) || dst != nil && md.memSelected(*dst)
	if md.pair(trace.CopyBegin, sel) {
		md.e.bytes[dir] += bytes
	}
}

func (md *model) region(thread int, name string, body func()) {
	s := filters.RegionPush(thread, md.p.Region(name))
	if !md.on(trace.RegionPush) {
		s = s.Skipped()
	}
	rec := md.step(s).Recorded
	if rec {
		md.e.counts[trace.RegionPush]++
	}
	body()
	md.step(filters.RegionPop(thread))
	if rec {
		md.e.counts[trace.RegionPop]++
	}
}

// predict walks the workload in program order; workers run one after the
// other, which matches the real run whenever the outcome does not depend on
// how threads interleave (one worker, or no windows and no budget).
func predict(p *filters.Program, o options) expect {
	md := newModel(p)
	for i := range devices {
		md.pair(trace.DeviceSetupBegin, md.devs[i].Selected)
		for s := 0; s < 2; s++ {
			md.instant(trace.StreamCreate, md.devs[i].Selected)
		}
	}
	var kernels [2][3]kernel
	for i := 0; i < 2; i++ {
		kernels[i] = [3]kernel{{"axpy", "{occa_tools_tag: 'hot'}", i}, {"dot", "{}", i}, {"gemm_small", "{defines: {N: 16}}", i}}
		for _, k := range kernels[i] {
			sel, _ := md.kernelSelected(k)
			md.pair(trace.BuildBegin, sel)
		}
	}
	initFill := kernel{"init_fill", "{}", 2}
	sel, _ := md.kernelSelected(initFill)
	md.pair(trace.BuildBegin, sel)
	md.run(0, initFill, false)
	if o.apiStart {
		md.step(filters.APIStart())
	}
	if o.tagDot {
		md.p.TagKernel("dot", "hot")
	}
	for w := 0; w < o.threads; w++ {
		thread := w + 1
		d := w % 2
		a := memory{d, 1 * mib, "halo"}
		b := memory{d, 64 * 1024, "scratch"}
		c := memory{d, 16 * mib, ""}
		for _, m := range []memory{a, b, c} {
			md.pair(trace.MemoryAllocBegin, md.memSelected(m))
		}
		if o.tagMemory {
			c.tag = "big"
		}
		md.copy(trace.CopyH2D, nil, &a, 1*mib)
		for step := 1; step <= o.steps; step++ {
			for _, at := range o.toggleAt {
				if w == 0 && at == step {
					md.step(filters.Signal())
				}
			}
			md.region(thread, "timestep", func() {
				md.instant(trace.StreamSet, md.devs[d].Selected)
				for i := 0; i < 3; i++ {
					md.run(thread, kernels[d][0], true)
				}
				md.run(thread, kernels[d][1], false)
				for i := 0; i < 2; i++ {
					md.run(thread, kernels[d][2], false)
				}
				md.copy(trace.CopyD2D, &a, &c, 1*mib)
				md.copy(trace.CopyD2H, &b, nil, 64*1024)
				if step%5 == 0 {
					md.instant(trace.Marker, true)
					md.pair(trace.StreamFinishBegin, md.devs[d].Selected)
				}
			})
		}
		md.pair(trace.DeviceFinishBegin, md.devs[d].Selected)
		for _, m := range []memory{a, b, c} {
			md.pair(trace.MemoryFreeBegin, md.memSelected(m))
		}
	}
	if o.flushKill {
		md.e.counts[trace.Trigger] += len(md.e.triggers)
		return md.e
	}
	md.region(0, "teardown", func() { md.instant(trace.Marker, true) })
	for i := range devices {
		md.pair(trace.DeviceFinishBegin, md.devs[i].Selected)
	}
	md.e.counts[trace.Trigger] += len(md.e.triggers)
	return md.e
}

// diffCounts lists the kinds whose counts differ.
func diffCounts(want map[trace.Kind]int, got map[trace.Kind]int) []string {
	var out []string
	for _, k := range trace.EventKinds() {
		if want[k] != got[k] {
			out = append(out, fmt.Sprintf("%s: got %d, want %d", k, got[k], want[k]))
		}
	}
	return out
}
