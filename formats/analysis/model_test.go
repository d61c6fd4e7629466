package analysis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

func writeSmall(t testing.TB, o tracetest.SmallOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteSmall(&buf, o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "small.occa")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func dump(t *testing.T, path string, window int) []byte {
	var out bytes.Buffer
	_, err := Read(path, 0, Options{Window: window}, func(p *Process, r *Row) error { return Format(&out, p, r) })
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "small.rows"), dump(t, writeSmall(t, tracetest.SmallOptions{}), 0))
	golden.Check(t, filepath.Join("testdata", "small-nodefs.rows"), dump(t, writeSmall(t, tracetest.SmallOptions{NoDefs: true}), 0))
}

// With no window, launches go out before their device time: it becomes a
// row of its own, and nothing is lost.
func TestNoWindow(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "small-nowindow.rows"), dump(t, writeSmall(t, tracetest.SmallOptions{}), -1))
}

// Every event ends up in exactly one row (two for a pair), whatever the
// window: count them on a generated trace.
func TestConservation(t *testing.T) {
	evs := tracetest.Steady(1, 100000)
	for _, window := range []int{-1, 1, 7, DefaultWindow} {
		p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
		var rows, runs, withDev, devRows, halves int
		pr := NewPairer(p, func(p *Process, r *Row) error {
			rows++
			if r.Dur == Unpaired {
				halves++ // the generated stream may stop inside a pair
			}
			switch r.Kind {
			case trace.RunBegin:
				runs++
				if r.DevDur >= 0 {
					withDev++
				}
			case trace.DeviceTime:
				devRows++
			}
			return nil
		})
		pr.Window = window
		var wantRuns, wantDev, wantRows int
		for i := range evs {
			e := &evs[i]
			if s := e.Kind.Spec(); s.Pair == 0 || s.Begin {
				wantRows++
			}
			switch e.Kind {
			case trace.RunBegin:
				wantRuns++
			case trace.DeviceTime:
				wantDev++
			}
			if err := pr.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := pr.Flush(); err != nil {
			t.Fatal(err)
		}
		if runs != wantRuns || withDev+devRows != wantDev || rows != wantRows-withDev {
			t.Errorf("window %d: rows %d runs %d (dev %d, orphan dev %d); want rows %d runs %d dev %d",
				window, rows, runs, withDev, devRows, wantRows-withDev, wantRuns, wantDev)
		}
		if halves > 1 {
			t.Errorf("window %d: %d unpaired rows", window, halves)
		}
		if window == DefaultWindow && devRows != 0 {
			t.Errorf("window %d: %d device times not matched", window, devRows)
		}
	}
}

func TestMemoryInUse(t *testing.T) {
	m := NewMemoryInUse()
	rows := []MemoryChange{
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 100, Memory: 5},
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 50, Memory: 6},
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 70, Memory: 0, Status: trace.StatusFailed},
		{Kind: trace.MemoryFreeBegin, Device: 1, Bytes: 0, Memory: 5},
		{Kind: trace.MemoryAllocBegin, Device: 2, Bytes: 8, Memory: 7},
	}
	var got []int64
	for i := range rows {
		if _, v, ok := m.Add(&rows[i]); ok {
			got = append(got, v)
		}
	}
	if want := []int64{100, 150, 50, 8}; !equal(got, want) {
		t.Errorf("in use %v, want %v", got, want)
	}
	if m.Peak[1] != 150 || m.Peak[2] != 8 || len(m.Live()) != 2 {
		t.Errorf("peak %v live %v", m.Peak, m.Live())
	}
}

// Past maxLive live allocations, the others count in use but are not
// kept; a free subtracts its own bytes when its allocation was not kept.
func TestMemoryInUseBounded(t *testing.T) {
	m := NewMemoryInUse()
	m.maxLive = 3
	rows := []MemoryChange{
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 10, Memory: 1},
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 20, Memory: 2},
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 30, Memory: 3},
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 40, Memory: 4}, // not kept
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 25, Memory: 2}, // kept: replaces 2
		{Kind: trace.MemoryFreeBegin, Device: 1, Bytes: 40, Memory: 4},
		{Kind: trace.MemoryFreeBegin, Device: 1, Bytes: 0, Memory: 1},
		{Kind: trace.MemoryAllocBegin, Device: 1, Bytes: 50, Memory: 5}, // kept: room again
	}
	var got []int64
	for i := range rows {
		if _, v, ok := m.Add(&rows[i]); ok {
			got = append(got, v)
		}
	}
	if want := []int64{10, 30, 60, 100, 125, 85, 75, 125}; !equal(got, want) {
		t.Errorf("in use %v, want %v", got, want)
	}
	live := m.Live()
	if m.Untracked != 1 || m.Peak[1] != 125 || len(live) != 3 || live[2].Bytes != 25 || live[5].Bytes != 50 {
		t.Errorf("untracked %d, peak %v, live %v", m.Untracked, m.Peak, live)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A full window must keep the launch that overflowed it (regression: pop
// reused the row being added).
func TestWindowOverflowKeepsRows(t *testing.T) {
	p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	var got []uint64
	pr := NewPairer(p, func(p *Process, r *Row) error { got = append(got, r.Corr); return nil })
	pr.Window = 2
	for c := uint64(1); c <= 5; c++ {
		pr.Add(&trace.Event{Kind: trace.RunBegin, Time: int64(c * 10), Args: [trace.MaxArgs]uint64{c, 1}})
		pr.Add(&trace.Event{Kind: trace.RunEnd, Time: int64(c*10 + 5), Args: [trace.MaxArgs]uint64{c}})
	}
	pr.Flush()
	if len(got) != 5 || got[0] != 1 || got[4] != 5 || got[2] != 3 {
		t.Errorf("corrs %v, want 1..5", got)
	}
}

func TestCorrIndex(t *testing.T) {
	var c corrIndex
	want := map[uint64]int32{}
	x := uint64(12345)
	for i := 0; i < 200000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		k := x >> 50 // many collisions
		switch x % 3 {
		case 0, 1:
			c.put(k, int32(i))
			want[k] = int32(i)
		case 2:
			if v, ok := want[k]; ok && x%7 == 0 {
				c.del(k, v+1) // another value: stays
			} else {
				c.del(k, v)
				delete(want, k)
			}
		}
		if i%1000 == 0 {
			for k, v := range want {
				if got, ok := c.get(k); !ok || got != v {
					t.Fatalf("step %d: get(%d) = %d, %v; want %d", i, k, got, ok, v)
				}
			}
			if c.n != len(want) {
				t.Fatalf("n %d, want %d", c.n, len(want))
			}
		}
	}
}

// An end on another thread than its begin still pairs.
func TestCrossThread(t *testing.T) {
	p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	var rows []Row
	pr := NewPairer(p, func(p *Process, r *Row) error { rows = append(rows, *r); return nil })
	pr.Window = 0
	pr.Add(&trace.Event{Kind: trace.CopyBegin, Thread: 0, Time: 10, Args: [trace.MaxArgs]uint64{7}})
	pr.Add(&trace.Event{Kind: trace.CopyBegin, Thread: 1, Time: 11, Args: [trace.MaxArgs]uint64{8}})
	pr.Add(&trace.Event{Kind: trace.CopyEnd, Thread: 1, Time: 20, Args: [trace.MaxArgs]uint64{7}})
	pr.Add(&trace.Event{Kind: trace.CopyEnd, Thread: 0, Time: 21, Args: [trace.MaxArgs]uint64{8}})
	pr.Flush()
	if len(rows) != 2 || rows[0].Dur != 10 || rows[1].Dur != 10 {
		t.Errorf("rows %+v", rows)
	}
}

// Device times find the newest waiting launch of their correlation id, as
// a plain scan of the window does, whether the ids come in ascending runs
// (found by binary search) or in disorder (found through corrIndex).
//
// A window larger than smallRing makes the ring grow while launches wait,
// in both indexes.
func TestWaitIndex(t *testing.T) {
	for _, c := range []struct {
		mode   string
		window int
	}{{"runs", 256}, {"disorder", 256}, {"reused", 256}, {"runs", 3000}, {"disorder", 3000}, {"reused", 3000}} {
		mode, window := c.mode, c.window
		t.Run(fmt.Sprintf("%s-%d", mode, window), func(t *testing.T) {
			x := uint64(99)
			rnd := func(n uint64) uint64 {
				x = x*6364136223846793005 + 1442695040888963407
				return (x >> 33) % n
			}
			p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
			type got struct {
				corr uint64
				dev  int64
			}
			var rows []got
			pr := NewPairer(p, func(p *Process, r *Row) error {
				rows = append(rows, got{r.Corr, r.DevStart})
				return nil
			})
			pr.Window = window
			type wait struct {
				corr uint64
				dev  int64
			}
			var want []got
			var fifo []wait
			next := [4]uint64{1 << 40, 2 << 40, 3 << 40, 4 << 40}
			tm := int64(1)
			for i := 0; i < 20000; i++ {
				th := (i / 100) % 4 // runs of 100 launches per thread
				var c uint64
				switch mode {
				case "runs":
					next[th] += 1 + rnd(3)
					c = next[th]
				case "disorder":
					c = rnd(1 << 20)
					if i%5000 < 2500 {
						next[th] += 1 + rnd(3)
						c = next[th]
					}
				case "reused":
					c = rnd(300)
				}
				tm += 10
				pr.Add(&trace.Event{Kind: trace.RunBegin, Time: tm, Args: [trace.MaxArgs]uint64{c, 1}})
				pr.Add(&trace.Event{Kind: trace.RunEnd, Time: tm + 5, Args: [trace.MaxArgs]uint64{c}})
				if len(fifo) == window {
					want = append(want, got{fifo[0].corr, fifo[0].dev})
					fifo = fifo[1:]
				}
				fifo = append(fifo, wait{c, 0})
				for range rnd(3) {
					// a device time for a recent launch, an old one, or none
					var dc uint64
					switch rnd(3) {
					case 0:
						dc = fifo[len(fifo)-1-int(rnd(uint64(min(len(fifo), 8))))].corr
					case 1:
						dc = fifo[int(rnd(uint64(len(fifo))))].corr
					default:
						dc = rnd(1 << 20)
					}
					tm++
					pr.Add(&trace.Event{Kind: trace.DeviceTime, Time: tm, Args: [trace.MaxArgs]uint64{dc, uint64(tm), uint64(tm + 1)}})
					// The newest launch with that id takes it, unless it
					// has one already.
					found := false
					for k := len(fifo) - 1; k >= 0; k-- {
						if fifo[k].corr == dc {
							if fifo[k].dev == 0 {
								fifo[k].dev, found = tm, true
							}
							break
						}
					}
					if !found {
						want = append(want, got{dc, tm})
					}
				}
			}
			pr.Flush()
			for _, w := range fifo {
				want = append(want, got{w.corr, w.dev})
			}
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for i := range rows {
				if rows[i] != want[i] {
					t.Fatalf("row %d: %+v, want %+v", i, rows[i], want[i])
				}
			}
			if wantHashed := mode != "runs"; pr.hashed != wantHashed {
				t.Errorf("hashed %v, want %v", pr.hashed, wantHashed)
			}
		})
	}
}

// The OpenMP rows of omptest's trace: pairs with their ids, task segments
// (one held back until its create is read), creates, depend items and
// reported dependences; halves for what was still open at the end.
func TestGoldenOpenMP(t *testing.T) {
	path := omptest.SmallFile(t)
	golden.Check(t, filepath.Join("testdata", "omp.rows"), dump(t, path, 0))
	// A real trace (formats/omp/testdata/t1.c run with LLVM's libomp).
	golden.Check(t, filepath.Join("testdata", "omp-t1.rows"), dump(t, filepath.Join("..", "omp", "testdata", "t1.occatrace"), 0))
}
