package analysis

import "github.com/libocca/occa-tools/formats/trace"

// MemoryInUse follows the bytes allocated and not yet freed per device, from
// memory_alloc and memory_free rows. An allocation's size comes from its
// begin (bytes argument); a free's from its own bytes argument, or from the
// allocation of the same memory object when that is 0.
//
// It keeps at most MaxLive live allocations: memory ids are event
// arguments, and 2,000,000 allocations never freed, in a 17.5 MB trace,
// held 262 MB. Past that, an allocation counts in InUse and Peak but is
// not kept (Untracked counts it): Live misses it, and its free subtracts
// its own bytes argument as any free of an object not seen allocated.
type MemoryInUse struct {
	live    map[uint64]Alloc // memory object -> allocation
	maxLive int
	InUse   map[uint64]int64 // device -> bytes in use now
	Peak    map[uint64]int64 // device -> most bytes in use at once
	// Untracked counts the allocations not kept in Live because MaxLive
	// were live.
	Untracked int64
}

// MaxLive is how many live allocations a MemoryInUse keeps (about 35 MB):
// a program that holds more device buffers at once is hard to imagine.
const MaxLive = 1 << 18

// Alloc is a live allocation.
type Alloc struct {
	Device uint64
	Bytes  uint64
	Name   string
	Time   int64
}

// NewMemoryInUse returns an empty tracker.
func NewMemoryInUse() *MemoryInUse {
	return &MemoryInUse{live: make(map[uint64]Alloc), maxLive: MaxLive, InUse: make(map[uint64]int64), Peak: make(map[uint64]int64)}
}

// MemoryChange is what MemoryInUse reads of a memory_alloc or memory_free
// row: a writer that keeps rows of its own (Perfetto's reorder ring) makes
// one from the fields it keeps, and cannot miss one that Add reads.
type MemoryChange struct {
	Kind           trace.Kind
	Start, Dur     int64
	Status         uint64
	Device, Memory uint64
	Bytes          uint64
	Name           string
}

// MemoryChange is r's change to the memory in use.
func (r *Row) MemoryChange() MemoryChange {
	return MemoryChange{Kind: r.Kind, Start: r.Start, Dur: r.Dur, Status: r.Status, Device: r.Device,
		Memory: r.Memory, Bytes: r.Bytes, Name: r.Name}
}

// Add follows r; it reports the device whose use changed and its new value
// (ok false when r changes nothing).
func (m *MemoryInUse) Add(r *MemoryChange) (device uint64, inUse int64, ok bool) {
	switch r.Kind {
	case trace.MemoryAllocBegin:
		if r.Dur == Unpaired && r.Memory == 0 || r.Status != trace.StatusOK {
			return 0, 0, false // no object: failed or its end was lost
		}
		if r.Memory != 0 {
			if _, again := m.live[r.Memory]; again || len(m.live) < m.maxLive {
				m.live[r.Memory] = Alloc{Device: r.Device, Bytes: r.Bytes, Name: r.Name, Time: r.Start}
			} else {
				m.Untracked++
			}
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
