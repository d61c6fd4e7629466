package analysis

import (
	"strconv"

	"github.com/libocca/occa-tools/formats/trace"
)

// MPI rows name communicators by ids that are the same on every rank, so
// that the rows of different ranks can be joined (a send to its receive,
// a collective's participants): the trace holds each process's own handles
// (pointers, in Open MPI), which mean nothing to another process. Each
// mpi_comm event gives a communicator's parent, size and leader (the world
// rank of its rank 0); communicators are made collectively over their
// parent, in the same order on every member, so (parent's id, leader,
// size, how many the process made from that parent before) names a
// communicator identically on all its members.

// MpiCommWorld is the id of MPI_COMM_WORLD: the first communicator a trace
// gives without a parent.
const MpiCommWorld = 1

// mpiLocal marks the id of a handle the trace never described (a
// communicator made before tracing, MPI_COMM_SELF): it is the handle, and
// means something in its own trace only.
const mpiLocal = 1 << 63

// maxComms bounds the communicators a Pairer tells apart; past it, handles
// keep their local ids.
const maxComms = 1 << 16

type mpiComms struct {
	ids  map[uint64]uint64 // handle -> id
	made map[uint64]uint64 // parent id -> communicators made from it so far
}

// commID is the id of communicator handle h (0: none).
func (pr *Pairer) commID(h uint64) uint64 {
	if h == 0 {
		return 0
	}
	if id, ok := pr.comms.ids[h]; ok {
		return id
	}
	return h | mpiLocal
}

// newComm records the communicator of an mpi_comm event (comm, parent,
// size, rank, world_rank, leader) and returns its id.
func (pr *Pairer) newComm(a *[trace.MaxArgs]uint64) uint64 {
	c := &pr.comms
	if c.ids == nil {
		c.ids, c.made = map[uint64]uint64{}, map[uint64]uint64{}
	}
	parent := pr.commID(a[1])
	k := c.made[parent]
	id := uint64(MpiCommWorld)
	if parent != 0 || k != 0 {
		id = mix(parent, a[5], a[2], k)&^mpiLocal | 2 // never 0, 1 or local
	}
	if len(c.ids) < maxComms {
		c.ids[a[0]] = id
		c.made[parent] = k + 1
	}
	return id
}

// mix hashes vs into one value, the same on every machine.
func mix(vs ...uint64) uint64 {
	var h uint64
	for _, v := range vs {
		h = hash64(h ^ hash64(v+0x9e3779b97f4a7c15))
	}
	return h
}

// mpiName names an MPI row after its function.
func mpiName(f uint64) string {
	if n := trace.MpiFunctionName(f); n != "" {
		return n
	}
	return "function#" + strconv.FormatUint(f, 10)
}
