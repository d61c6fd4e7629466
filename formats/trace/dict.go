package trace

import (
	"slices"
	"strconv"
	"sync"
)

// Dict holds the definitions read so far (FORMAT.md §6) and resolves ids to
// names. An id without a definition resolves to a placeholder such as
// "string#17", so a trace that lost its defs still reads. The Reader adds
// defs as it reads (OCCA defines a kernel it JIT-compiles mid-run): a
// goroutine other than the reader's looks up through SharedKernel and
// SharedDevice.
type Dict struct {
	mu      sync.RWMutex // held by add, and by the Shared lookups
	strings map[uint64]string
	devices map[uint64]*Def
	kernels map[uint64]*KernelInfo
	streams map[uint64]*Def
	memory  map[uint64]*Def
	threads map[uint64]*Def
	text    int64 // bytes of the strings kept
	leftOut int   // defs not kept (MaxDictText, MaxDictStrings, MaxKernelTags)
}

// What a Dict keeps of definitions whose size the file, not the program,
// decides. A DefString holds up to MaxString bytes that compress to almost
// nothing: kept whole, 3,000 of them in a 124 KB file hold 3 GB. A trace
// the runtime writes interns far less (its string table is bounded,
// runtime/src/strings.c). Strings past MaxDictText bytes or MaxDictStrings
// strings are not kept: they read as "string#ID", as a string without a
// def. A kernel keeps its first MaxKernelTags distinct tags. LeftOut counts
// what was not kept. Variables so that tests reach them with small traces.
var (
	MaxDictText    int64 = 64 << 20
	MaxDictStrings       = 1 << 20
	MaxKernelTags        = 256
)

// DeviceInfo describes a device (DefDevice).
type DeviceInfo struct {
	ID         uint64
	Known      bool   // a def was read
	Mode       string // backend: "CUDA", "Serial", ...
	Index      int64  // backend device number, -1 when none
	Properties string
}

// Name returns "Mode:Index", "Mode" when Index is negative, or "device#ID"
// when the device has no def or its def no mode (a runtime that never saw
// the device's setup).
func (d DeviceInfo) Name() string {
	if !d.Known || d.Mode == "" {
		return "device#" + strconv.FormatUint(d.ID, 10)
	}
	if d.Index < 0 {
		return d.Mode
	}
	return d.Mode + ":" + strconv.FormatInt(d.Index, 10)
}

// KernelInfo describes a kernel (DefKernel and its DefKernelTags).
type KernelInfo struct {
	ID             uint64
	Known          bool // a DefKernel was read
	Device         uint64
	Name           string // "kernel#ID" when unknown
	Source         string
	PropertiesHash uint64
	Tags           []string
	name, source   uint64 // string ids, resolved on lookup
	tags           []uint64
}

// StreamInfo describes a stream (DefStream).
type StreamInfo struct {
	ID     uint64
	Known  bool
	Device uint64
}

// MemoryInfo describes a memory object (DefMemory).
type MemoryInfo struct {
	ID      uint64
	Known   bool
	Device  uint64
	Bytes   uint64
	Address uint64
	Tag     string
}

// ThreadInfo describes a thread (DefThread).
type ThreadInfo struct {
	Index uint64
	Known bool
	TID   uint64 // operating system thread id
	Name  string
}

// add absorbs one def. The def's string references stay ids until lookup,
// so defs may come in any order.
func (d *Dict) add(def *Def) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.strings == nil {
		d.strings = make(map[uint64]string)
		d.devices = make(map[uint64]*Def)
		d.kernels = make(map[uint64]*KernelInfo)
		d.streams = make(map[uint64]*Def)
		d.memory = make(map[uint64]*Def)
		d.threads = make(map[uint64]*Def)
	}
	id := def.Args[0]
	cp := *def
	switch def.Kind {
	case DefString:
		text := validText(def.Text)
		old, had := d.strings[id]
		grow := int64(len(text)) - int64(len(old))
		if (!had && len(d.strings) >= MaxDictStrings) || d.text+grow > MaxDictText {
			d.leftOut++
			break
		}
		d.strings[id], d.text = text, d.text+grow
	case DefDevice:
		d.devices[id] = &cp
	case DefKernel:
		k := d.kernel(id)
		k.Known = true
		k.Device, k.name, k.source, k.PropertiesHash = def.Args[1], def.Args[2], def.Args[3], def.Args[4]
	case DefKernelTag:
		// The runtime writes a kernel's tags again when it decides anew
		// (occa_tools_tag_kernel): a reader keeps the union.
		k := d.kernel(id)
		if slices.Contains(k.tags, def.Args[1]) {
			break
		}
		if len(k.tags) >= MaxKernelTags {
			d.leftOut++
			break
		}
		k.tags = append(k.tags, def.Args[1])
	case DefStream:
		d.streams[id] = &cp
	case DefMemory:
		d.memory[id] = &cp
	case DefThread:
		d.threads[id] = &cp
	}
}

func (d *Dict) kernel(id uint64) *KernelInfo {
	k := d.kernels[id]
	if k == nil {
		k = &KernelInfo{ID: id}
		d.kernels[id] = k
	}
	return k
}

// LeftOut returns how many definitions were not kept (see MaxDictText).
func (d *Dict) LeftOut() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.leftOut
}

// String returns the interned string id; "" for id 0 and "string#ID" for an
// id without a def.
func (d *Dict) String(id uint64) string {
	if id == 0 {
		return ""
	}
	if s, ok := d.strings[id]; ok {
		return s
	}
	return "string#" + strconv.FormatUint(id, 10)
}

// HasString reports whether a def for string id was read.
func (d *Dict) HasString(id uint64) bool {
	_, ok := d.strings[id]
	return ok
}

// Device describes device id.
func (d *Dict) Device(id uint64) DeviceInfo {
	def := d.devices[id]
	if def == nil {
		return DeviceInfo{ID: id, Index: -1}
	}
	return DeviceInfo{ID: id, Known: true, Mode: d.String(def.Args[1]), Index: int64(def.Args[2]), Properties: d.String(def.Args[3])}
}

// Kernel describes kernel id.
func (d *Dict) Kernel(id uint64) KernelInfo {
	k := d.kernels[id]
	if k == nil {
		return KernelInfo{ID: id, Name: "kernel#" + strconv.FormatUint(id, 10)}
	}
	out := *k
	out.Name = d.String(k.name)
	if !k.Known {
		out.Name = "kernel#" + strconv.FormatUint(id, 10)
	}
	out.Source = d.String(k.source)
	out.Tags = nil
	for _, t := range k.tags {
		out.Tags = append(out.Tags, d.String(t))
	}
	return out
}

// SharedKernel is Kernel for a goroutine other than the reader's.
func (d *Dict) SharedKernel(id uint64) KernelInfo {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.Kernel(id)
}

// SharedDevice is Device for a goroutine other than the reader's.
func (d *Dict) SharedDevice(id uint64) DeviceInfo {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.Device(id)
}

// Stream describes stream id.
func (d *Dict) Stream(id uint64) StreamInfo {
	if def := d.streams[id]; def != nil {
		return StreamInfo{ID: id, Known: true, Device: def.Args[1]}
	}
	return StreamInfo{ID: id}
}

// Memory describes memory object id.
func (d *Dict) Memory(id uint64) MemoryInfo {
	if def := d.memory[id]; def != nil {
		return MemoryInfo{ID: id, Known: true, Device: def.Args[1], Bytes: def.Args[2], Address: def.Args[3], Tag: d.String(def.Args[4])}
	}
	return MemoryInfo{ID: id}
}

// MemoryDevice returns the device of memory object id, 0 if unknown: what
// a copy's row needs of it, for one map lookup (Memory also looks up its
// tag).
func (d *Dict) MemoryDevice(id uint64) uint64 {
	if def := d.memory[id]; def != nil {
		return def.Args[1]
	}
	return 0
}

// Thread describes thread index.
func (d *Dict) Thread(index uint64) ThreadInfo {
	if def := d.threads[index]; def != nil {
		return ThreadInfo{Index: index, Known: true, TID: def.Args[1], Name: d.String(def.Args[2])}
	}
	return ThreadInfo{Index: index}
}

// Threads returns the indexes of the threads defined so far, in no order.
func (d *Dict) Threads() []uint64 {
	ids := make([]uint64, 0, len(d.threads))
	for id := range d.threads {
		ids = append(ids, id)
	}
	return ids
}
