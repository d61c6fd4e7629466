package perfetto

import (
	"cmp"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// The queue of packets due later gives them back earliest first, whether
// they come nearly in order (the slice of w.due) or far out of it (the
// heap), and in push order at equal keys.
func TestDueOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	w := &Writer{}
	var ref []pending
	var p pending
	now := int64(0)
	pop := func() {
		w.pop(&p)
		mi := 0
		for i := range ref {
			if ref[i].less(&ref[mi]) {
				mi = i
			}
		}
		if ref[mi] != p {
			t.Fatalf("popped %+v, the earliest is %+v", p, ref[mi])
		}
		ref = append(ref[:mi], ref[mi+1:]...)
	}
	for i := 0; i < 20000; i++ {
		now += rng.Int63n(10)
		span := int64(20)
		if rng.Intn(50) == 0 {
			span = 100000 // far out of order: the heap
		}
		if k := []uint8{pEnd, pSlice, pCounter}[rng.Intn(3)]; k == pEnd {
			w.pushEnd(rng.Intn(3), now+rng.Int63n(span), uint64(i), 0)
		} else {
			w.push(k, 0, now+rng.Int63n(span), uint64(i), dueExtra{})
		}
		ref = append(ref, w.find(uint64(i)))
		if rng.Intn(3) == 0 {
			for n := w.next(); n != nil && n.ts <= now; n = w.next() {
				pop()
			}
		}
	}
	for w.next() != nil {
		pop()
	}
	if cap(w.dueHeap) == 0 {
		t.Errorf("the heap was never used")
	}
}

// find returns the queued packet on track.
func (w *Writer) find(track uint64) pending {
	for _, q := range [][]pending{w.due[w.dueHead:], w.dueHeap} {
		for _, p := range q {
			if p.track == track {
				return p
			}
		}
	}
	panic("not queued")
}

// At equal times ends come before the rest, the deepest first, then in
// push order.
func TestDueTies(t *testing.T) {
	w := &Writer{}
	w.push(pInstant, 0, 10, 1, dueExtra{})
	w.pushEnd(0, 10, 2, 0)
	w.push(pSlice, 0, 10, 3, dueExtra{})
	w.pushEnd(2, 10, 4, 0)
	w.pushEnd(1, 10, 5, 0)
	w.pushEnd(0, 9, 6, 0)
	var got []uint64
	var p pending
	for w.next() != nil {
		w.pop(&p)
		got = append(got, p.track)
	}
	want := []uint64{6, 4, 5, 2, 1, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

// Two ends per row, popped at the next row: the common case.
func BenchmarkDue(b *testing.B) {
	w := &Writer{}
	var p pending
	for i := 0; i < b.N; i++ {
		ts := int64(i) * 100
		w.pushEnd(1, ts+50, 5, 0)
		w.pushEnd(0, ts+50, 6, 0)
		for n := w.next(); n != nil && n.ts <= ts+100; n = w.next() {
			w.pop(&p)
		}
	}
}

// writeRows writes rows (added in this order) with a writer of its own and
// returns the decoded trace and the process (for WallTime).
func writeRows(t *testing.T, rows []analysis.Row) (*decoded, *analysis.Process, *Writer) {
	t.Helper()
	w, p, path := testWriter(t)
	for i := range rows {
		if rows[i].DevDur == 0 {
			rows[i].DevDur = -1
		}
		if err := w.Add(p, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, data), p, w
}

// Exact times, to the ns, for what the writer places out of row order:
// slice ends, a device interval that begins after its launch ends (held
// until the rows reach it) and one that begins before its launch (written
// with its unix time on BOOTTIME, past the incremental clock), a drop's
// instant at its end, a counter at an allocation's end, nested slices that
// end together (each end closes its own slice: the device one carries the
// flow's end).
func TestTimestamps(t *testing.T) {
	rows := []analysis.Row{
		{Kind: trace.RegionPush, Name: "outer", Start: 1000, Dur: 9000},
		{Kind: trace.RunBegin, Name: "k", Start: 1100, Dur: 100, Corr: 1, Device: 7, Stream: 1, DevStart: 5000, DevDur: 300},
		{Kind: trace.RunBegin, Name: "early", Start: 1300, Dur: 100, Corr: 2, Device: 7, Stream: 2, DevStart: 1250, DevDur: 10},
		{Kind: trace.RunBegin, Name: "same", Start: 1500, Dur: 1000, Corr: 3, Device: 7, Stream: 1, DevStart: 1500, DevDur: 1000},
		{Kind: trace.RegionPush, Name: "inner", Start: 2600, Dur: 7400},
		{Kind: trace.Dropped, Name: "buffer_full", Start: 3000, Dur: 4000, Bytes: 5},
		{Kind: trace.MemoryAllocBegin, Name: "x", Start: 3500, Dur: 2000, Device: 7, Memory: 9, Bytes: 64, Status: trace.StatusOK},
		{Kind: trace.RunBegin, Name: "a", Start: 4000, Dur: 50, Corr: 4, Device: 7, Stream: 3, DevStart: 6000, DevDur: 1000},
		{Kind: trace.RunBegin, Name: "b", Start: 4100, Dur: 50, Corr: 5, Device: 7, Stream: 3, DevStart: 6500, DevDur: 500},
		{Kind: trace.Marker, Name: "m", Start: 12000},
	}
	d, p, _ := writeRows(t, rows)
	wall := func(ns int64) int64 { return p.WallTime(ns) }
	type sl struct {
		track, name string
		start, end  int64
		depth       int
		flows, term int
	}
	var got []sl
	for u, ss := range d.slices(t) {
		for _, s := range ss {
			got = append(got, sl{d.tracks[u], s.b.name, s.start, s.end, s.depth, len(s.flows), len(s.term)})
		}
	}
	slices.SortFunc(got, func(a, b sl) int {
		return cmp.Or(cmp.Compare(a.track, b.track), cmp.Compare(a.start, b.start), cmp.Compare(a.depth, b.depth))
	})
	th := "thread 0 (tid 1000)"
	want := []sl{
		{"stream 1", "k", wall(5000), wall(5300), 0, 0, 1},
		{"stream 1", "same", wall(1500), wall(2500), 0, 0, 1},
		{"stream 2", "early", wall(1250), wall(1260), 0, 0, 1},
		{th, "outer", wall(1000), wall(10000), 0, 0, 0},
		{th, "run k", wall(1100), wall(1200), 1, 1, 0},
		{th, "run early", wall(1300), wall(1400), 1, 1, 0},
		{th, "run same", wall(1500), wall(2500), 1, 1, 0},
		{th, "inner", wall(2600), wall(10000), 1, 0, 0},
		{th, "memory_alloc x", wall(3500), wall(5500), 2, 0, 0},
		{th, "run a", wall(4000), wall(4050), 3, 1, 0},
		{th, "run b", wall(4100), wall(4150), 3, 1, 0},
		{"stream 3", "a", wall(6000), wall(7000), 0, 0, 1},
		{"stream 3", "b", wall(6500), wall(7000), 1, 0, 1},
	}
	slices.SortFunc(want, func(a, b sl) int {
		return cmp.Or(cmp.Compare(a.track, b.track), cmp.Compare(a.start, b.start), cmp.Compare(a.depth, b.depth))
	})
	if !slices.Equal(got, want) {
		t.Errorf("slices\n%v\nwant\n%v", got, want)
	}
	// Each device slice ends its own launch's flow.
	flow := map[string]uint64{}
	for _, ss := range d.slices(t) {
		for _, s := range ss {
			for _, f := range s.flows {
				flow[s.b.name] = f
			}
		}
	}
	for _, ss := range d.slices(t) {
		for _, s := range ss {
			if len(s.term) == 1 && flow["run "+s.b.name] != s.term[0] {
				t.Errorf("device slice %s ends another launch's flow", s.b.name)
			}
		}
	}
	var inst []string
	for _, e := range d.events {
		switch e.typ {
		case typeInstant:
			inst = append(inst, fmt.Sprintf("%s@%d", e.name, e.ts))
		case typeCounter:
			inst = append(inst, fmt.Sprintf("counter %d@%d", e.counter, e.ts))
		}
	}
	wantInst := []string{fmt.Sprintf("counter 64@%d", wall(5500)), fmt.Sprintf("DROPPED 5 events (buffer_full)@%d", wall(7000)),
		fmt.Sprintf("m@%d", wall(12000))}
	if !slices.Equal(inst, wantInst) {
		t.Errorf("instants %v, want %v", inst, wantInst)
	}
	if d.absolute != 2 {
		t.Errorf("%d packets on BOOTTIME, want 2 (the device interval that began and ended before its launch)", d.absolute)
	}
	if d.snapshots != 1 || d.clears != 1 {
		t.Errorf("%d snapshots, %d clears, want 1 and 1", d.snapshots, d.clears)
	}
}
