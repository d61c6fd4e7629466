package analysis

import (
	"errors"
	"io"

	"github.com/libocca/occa-tools/formats/trace"
)

// Ranks on different nodes read different clocks: each trace's times are
// its own node's CLOCK_MONOTONIC. The MPI library (runtime/mpi) measures,
// at MPI_Init and at MPI_Finalize, each rank's offset to rank 0's clock
// (mpi_clock_sync: rank 0's clock minus this one's, within a bound of half
// the fastest ping-pong's round trip). Given rank 0's epoch (Reference),
// a trace's times are put on rank 0's timeline: t + offset(t), offset
// interpolated linearly between the two measurements (constant before the
// first and after the last), then rank 0's epoch turns them into unix
// time. The error is the measurement's bound at the sync points, plus
// the drift the straight line misses between them.

// Reference is rank 0's epoch: the CLOCK_MONOTONIC and unix times its
// trace started at (its header's MonoStart and WallStart).
type Reference struct {
	MonoStart, WallStart int64
}

// ClockSync is one mpi_clock_sync measurement of a trace.
type ClockSync struct {
	Time   int64 // when it was measured, on the trace's clock
	Offset int64 // rank 0's clock minus the trace's, ns
	Error  int64 // the bound on the offset's error, ns
}

// clockMap puts a trace's times on rank 0's clock.
type clockMap struct {
	ref    Reference
	first  ClockSync
	slope  float64 // offset change per ns after first, until last
	lastAt int64
	last   int64 // the offset from lastAt on
}

func newClockMap(ref Reference, syncs []ClockSync) *clockMap {
	m := &clockMap{ref: ref, first: syncs[0], lastAt: syncs[0].Time, last: syncs[0].Offset}
	if l := syncs[len(syncs)-1]; l.Time > m.first.Time {
		m.slope = float64(l.Offset-m.first.Offset) / float64(l.Time-m.first.Time)
		m.lastAt, m.last = l.Time, l.Offset
	}
	return m
}

// wallTime is trace time t as unix time on rank 0's clock.
func (m *clockMap) wallTime(t int64) int64 {
	off := m.first.Offset
	switch {
	case t >= m.lastAt:
		off = m.last
	case t > m.first.Time:
		off += int64(float64(t-m.first.Time) * m.slope)
	}
	return t + off - m.ref.MonoStart + m.ref.WallStart
}

// ClockSyncs returns the clock measurements of the trace at path, in
// time order: the first and the last, at most (MPI_Init's and
// MPI_Finalize's). It reads the whole trace; a damaged one gives what was
// read before the damage (with salvage, past it).
func ClockSyncs(path string, salvage bool) ([]ClockSync, error) {
	r, c, err := trace.Open(path, trace.WithSalvage(salvage))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []ClockSync
	for {
		e, err := r.ReadEvent()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, err
		}
		if e.Kind != trace.MpiClockSync {
			continue
		}
		s := ClockSync{Time: e.Time, Offset: int64(e.Args[1]), Error: int64(e.Args[2])}
		if len(out) < 2 {
			out = append(out, s)
		} else {
			out[1] = s
		}
	}
}
