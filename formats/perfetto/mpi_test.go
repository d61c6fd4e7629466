package perfetto

import (
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// mpiFunction is the "function" code of an MPI function name.
func mpiFunction(t *testing.T, name string) uint64 {
	for f := uint64(1); f < 256; f++ {
		if trace.MpiFunctionName(f) == name {
			return f
		}
	}
	t.Fatalf("no MPI function %q", name)
	return 0
}

// writeRank writes events as the trace of rank.
func writeRank(t *testing.T, rank int64, evs []trace.Event) string {
	h := tracetest.Header()
	h.Rank, h.PID = rank, 1000+rank
	return writeFile(t, h, evs)
}

// Each message is a flow from its send, on the sender's trace, to its
// receive, on the receiver's, matched by channel and order alone; a
// receive from any source gets none. MPI calls are named as MPI names them.
func TestMPIFlows(t *testing.T) {
	// The two ranks' handles for MPI_COMM_WORLD differ, as in two processes.
	world := func(handle uint64, rank uint64) trace.Event {
		return ev(trace.MpiComm, 1, handle, 0, 2, rank, rank, 0)
	}
	var corr uint64
	p2p := func(us int64, fn string, peer int64, tag int64, bytes, comm uint64) []trace.Event {
		corr++
		return []trace.Event{ev(trace.MpiP2PBegin, us, corr, mpiFunction(t, fn), uint64(peer), uint64(tag), bytes, comm),
			ev(trace.MpiP2PEnd, us+5, corr, 0, 0)}
	}
	r0 := []trace.Event{world(0xa0, 0)}
	r0 = append(r0, p2p(10, "send", 1, 5, 8, 0xa0)...)
	r0 = append(r0, p2p(20, "send", 1, 5, 8, 0xa0)...)
	r0 = append(r0, p2p(30, "send", 1, 6, 8, 0xa0)...)
	r0 = append(r0, p2p(40, "isend", 1, 5, 8, 0xa0)...)
	r1 := []trace.Event{world(0xb0, 1)}
	r1 = append(r1, p2p(12, "recv", 0, 6, 8, 0xb0)...) // tag 6 first: its own channel
	r1 = append(r1, p2p(22, "recv", 0, 5, 8, 0xb0)...)
	r1 = append(r1, p2p(32, "recv", 0, 5, 8, 0xb0)...)
	r1 = append(r1, p2p(42, "irecv", -1, 5, 8, 0xb0)...) // any source: no flow
	r1 = append(r1, p2p(52, "recv", 0, 5, 8, 0xb0)...)   // after a wildcard: no flow
	type end struct {
		name       string
		flow, term int // flow numbers, by first appearance; 0 none
	}
	ids := map[uint64]int{}
	number := func(fs []uint64) int {
		if len(fs) == 0 {
			return 0
		}
		if ids[fs[0]] == 0 {
			ids[fs[0]] = len(ids) + 1
		}
		return ids[fs[0]]
	}
	var got [2][]end
	for rank, evs := range [][]trace.Event{r0, r1} {
		d := decode(t, convertFile(t, writeRank(t, int64(rank), evs)))
		for _, ss := range d.slices(t) {
			for _, s := range ss {
				got[rank] = append(got[rank], end{s.b.name, number(s.flows), number(s.term)})
			}
		}
	}
	want := [2][]end{
		{{"MPI_Send", 1, 0}, {"MPI_Send", 2, 0}, {"MPI_Send", 3, 0}, {"MPI_Isend", 4, 0}},
		{{"MPI_Recv", 0, 3}, {"MPI_Recv", 0, 1}, {"MPI_Recv", 0, 2}, {"MPI_Irecv", 0, 0}, {"MPI_Recv", 0, 0}},
	}
	for r := range got {
		if !slices.Equal(got[r], want[r]) {
			t.Errorf("rank %d: %v, want %v", r, got[r], want[r])
		}
	}
}
