package model

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/libocca/occa-tools/formats/trace"
)

func sortEvents(evs []trace.Event) {
	slices.SortStableFunc(evs, func(a, b trace.Event) int {
		if a.Time != b.Time {
			return cmp.Compare(a.Time, b.Time)
		}
		if a.Thread != b.Thread {
			return cmp.Compare(int64(a.Thread), int64(b.Thread))
		}
		return cmp.Compare(int64(a.Args[0]), int64(b.Args[0]))
	})
}

// MemoryInUse follows the bytes allocated and not yet freed per device, from
// memory_alloc and memory_free rows. An allocation's size comes from its
// begin (bytes argument); a free's from its own bytes argument, or from the
// allocation of the same memory object when that is 0.
type MemoryInUse struct {
	live  map[uint64]Alloc // memory object -> allocation
	InUse map[uint64]int64 // device -> bytes in use now
	Peak  map[uint64]int64 // device -> most bytes in use at once
}

// Alloc is a live allocation.
type Alloc struct {
	Device uint64
	Bytes  uint64
	Name   string
	Time   int64
}

// NewMemoryInUse returns an empty tracker.
func NewMemoryInUse() *MemoryInUse {
	return &MemoryInUse{live: make(map[uint64]Alloc), InUse: make(map[uint64]int64), Peak: make(map[uint64]int64)}
}

// Add follows r; it reports the device whose use changed and its new value
// (ok false when r changes nothing).
func (m *MemoryInUse) Add(r *Row) (device uint64, inUse int64, ok bool) {
	switch r.Kind {
	case trace.MemoryAllocBegin:
		if r.Dur == Unpaired && r.Memory == 0 || r.Status != trace.StatusOK {
			return 0, 0, false // no object: failed or its end was lost
		}
		if r.Memory != 0 {
			m.live[r.Memory] = Alloc{Device: r.Device, Bytes: r.Bytes, Name: r.Name, Time: r.Start}
		}
		device = r.Device
		m.InUse[device] += int64(r.Bytes)
	case trace.MemoryFreeBegin:
		a, known := m.live[r.Memory]
		delete(m.live, r.Memory)
		device = r.Device
		bytes := r.Bytes
		if known {
			device = a.Device
			if bytes == 0 {
				bytes = a.Bytes
			}
		} else if bytes == 0 {
			return 0, 0, false
		}
		m.InUse[device] -= int64(bytes)
		if m.InUse[device] < 0 { // freed what the trace never saw allocated
			m.InUse[device] = 0
		}
	default:
		return 0, 0, false
	}
	if m.InUse[device] > m.Peak[device] {
		m.Peak[device] = m.InUse[device]
	}
	return device, m.InUse[device], true
}

// Live returns the allocations never freed, by memory object id.
func (m *MemoryInUse) Live() map[uint64]Alloc { return m.live }

// Format writes r as one readable line, for golden tests and debugging.
func Format(w io.Writer, p *Process, r *Row) error {
	b := make([]byte, 0, 160)
	b = fmt.Appendf(b, "rank=%d t%d %s", p.Rank, r.Thread, KindName(r.Kind))
	if r.Name != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, r.Name)
	}
	b = fmt.Appendf(b, " start=%d dur=%d", r.Start-p.Header.MonoStart, r.Dur)
	field := func(name string, v uint64) {
		if v != 0 {
			b = fmt.Appendf(b, " %s=%d", name, v)
		}
	}
	field("corr", r.Corr)
	field("status", r.Status)
	field("device", r.Device)
	field("stream", r.Stream)
	field("kernel", r.Kernel)
	field("memory", r.Memory)
	field("src", r.Src)
	field("dst", r.Dst)
	field("bytes", r.Bytes)
	field("aux", r.Aux)
	if d := r.Direction(); d != "" {
		b = append(b, " dir="+d...)
	}
	if r.DevDur >= 0 {
		if r.DevStart != 0 {
			b = fmt.Appendf(b, " dev_start=%d", r.DevStart-p.Header.MonoStart)
		}
		b = fmt.Appendf(b, " dev_dur=%d", r.DevDur)
	}
	if o := r.OMP; o != nil {
		b = append(b, " omp:"...)
		field("id", o.ID)
		field("parallel", o.Parallel)
		field("task", o.Task)
		field("parent", o.Parent)
		field("src_task", o.SrcTask)
		switch {
		case r.Kind == trace.OmpParallelBegin:
			field("requested_team", uint64(o.TeamSize))
		case o.TeamSize != 0:
			b = fmt.Appendf(b, " thread_num=%d team=%d", o.ThreadNum, o.TeamSize)
		}
		field("type", o.Type)
		field("count", o.Count)
		field("flags", o.Flags)
		field("launch", o.Launch)
		field("address", o.Address)
		if o.Created != 0 {
			b = fmt.Appendf(b, " created=%d", o.Created-p.Header.MonoStart)
		}
		if o.TaskTime != 0 {
			b = fmt.Appendf(b, " task_time=%d", o.TaskTime)
		}
		if o.Completed {
			b = append(b, " completed"...)
		}
		if o.HasDeps {
			b = append(b, " has_deps"...)
		}
	}
	b = append(b, '\n')
	_, err := w.Write(b)
	return err
}
