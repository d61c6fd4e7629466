package perfetto

import (
	"strings"

	"github.com/libocca/occa-tools/formats/trace"
)

// MPI calls are slices on their thread's track named as in the MPI
// standard (MPI_Send, MPI_Allreduce), and each message is a flow from its
// send to its receive, so that a receive waiting on a late sender shows
// where the sender was.
//
// Both ends compute the flow's id alone, from what MPI guarantees: messages
// from one sender to one receiver with one tag on one communicator are
// received in the order they were sent. The k-th send from rank s to rank
// d with tag g on communicator c (analysis ids, the same on every rank)
// and the k-th receive by d from s with tag g on c are one message. A
// receive from any source or with any tag cannot be told apart this way:
// it gets no flow, and neither does any later receive on its communicator,
// whose count it may have shifted; MPI_Sendrecv, whose source the trace
// does not hold, counts as such a receive.

// mpiChannel is one ordered stream of messages.
type mpiChannel struct {
	comm          uint64
	src, dst, tag int32
}

// maxChannels bounds the channels a writer counts; past it, messages on
// new channels get no flow.
const maxChannels = 1 << 16

type mpiFlows struct {
	sent, received map[mpiChannel]uint64 // messages so far
	wild           map[uint64]bool       // communicators with a wildcard receive
}

// mpiTagAny is MPI_ANY_TAG as the library records it.
const mpiTagAny = -1

// sends and receives name the point-to-point functions by direction.
var sends = map[string]bool{"send": true, "ssend": true, "bsend": true, "rsend": true, "isend": true, "issend": true, "ibsend": true, "irsend": true}
var receives = map[string]bool{"recv": true, "irecv": true}

// mpiFlow returns the flow that leaves (a send) or ends in (a receive)
// point-to-point row r of rank me: 0 when it has none.
func (f *mpiFlows) mpiFlow(r *ringRow, me int64) (flow, term uint64) {
	if r.Kind != trace.MpiP2PBegin || r.Comm == 0 || r.Comm>>63 != 0 || me < 0 {
		return 0, 0
	}
	if f.sent == nil {
		f.sent, f.received, f.wild = map[mpiChannel]uint64{}, map[mpiChannel]uint64{}, map[uint64]bool{}
	}
	switch {
	case r.Name == "sendrecv":
		// Its send counts on its channel, but it has no flow: the trace
		// does not say where its receive came from, so it is a wildcard.
		if r.Peer >= 0 {
			f.next(f.sent, mpiChannel{r.Comm, int32(me), r.Peer, r.Tag})
		}
		f.wild[r.Comm] = true
		return 0, 0
	case sends[r.Name] && r.Peer >= 0:
		ch := mpiChannel{r.Comm, int32(me), r.Peer, r.Tag}
		return f.next(f.sent, ch), 0
	case receives[r.Name]:
		if r.Peer < 0 || r.Tag == mpiTagAny {
			f.wild[r.Comm] = true
			return 0, 0
		}
		if f.wild[r.Comm] {
			return 0, 0
		}
		ch := mpiChannel{r.Comm, r.Peer, int32(me), r.Tag}
		return 0, f.next(f.received, ch)
	}
	return 0, 0
}

// next counts a message on ch and returns its flow id.
func (f *mpiFlows) next(count map[mpiChannel]uint64, ch mpiChannel) uint64 {
	k, ok := count[ch]
	if !ok && len(count) >= maxChannels {
		return 0
	}
	count[ch] = k + 1
	return hash(0x6d7069, ch.comm, uint64(uint32(ch.src)), uint64(uint32(ch.dst)), uint64(uint32(ch.tag)), k)
}

// mpiName is the MPI standard's name of function f: MPI_Allreduce for
// "allreduce", MPI_Comm_split for "comm_split".
func mpiName(f string) string {
	if f == "" {
		return "MPI call"
	}
	return "MPI_" + strings.ToUpper(f[:1]) + f[1:]
}
