package analysis

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// TestFlattenDeviceNames flattens a launch on devices whose setup the
// runtime reported badly or never: a def without a mode (string id 0, or
// a string defined empty), with or without an index, and no def at all.
// Each launch's row names its device, "device#ID" when the def gives no
// name. An empty mode with index -1 made Flatten index an empty string.
func TestFlattenDeviceNames(t *testing.T) {
	const strEmpty, strCUDA = 1, 2
	defs := []trace.Def{
		{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{strEmpty}, Text: ""},
		{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{strCUDA}, Text: "CUDA"},
	}
	neg1 := uint64(1<<64 - 1)
	cases := []struct {
		name       string
		mode       uint64 // 0: no def
		index      uint64
		noDef      bool
		wantDevice string
	}{
		{"mode NULL, no index", 0, neg1, false, "device#1"},
		{"mode empty, no index", strEmpty, neg1, false, "device#1"},
		{"mode NULL, index 0", 0, 0, false, "device#1"},
		{"mode empty, index 3", strEmpty, 3, false, "device#1"},
		{"mode undefined string", 9, neg1, false, "string#9"},
		{"never set up", 0, 0, true, "device#1"},
		{"CUDA:2", strCUDA, 2, false, "CUDA:2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := trace.NewWriter(&buf, tracetest.Header())
			if err != nil {
				t.Fatal(err)
			}
			d := defs
			if !c.noDef {
				d = append(d[:len(d):len(d)], trace.Def{Kind: trace.DefDevice, Args: [trace.MaxArgs]uint64{1, c.mode, c.index, 0}})
			}
			if err := w.WriteDefs(d); err != nil {
				t.Fatal(err)
			}
			b := w.Batch(0)
			b.Add(trace.RunBegin, tracetest.MonoStart+10, 1, 0, 1, 0)
			b.Add(trace.RunEnd, tracetest.MonoStart+20, 1, trace.StatusOK)
			b.Add(trace.CopyBegin, tracetest.MonoStart+30, 2, 0xf9, 0, 5, 8, 0) // direction: D2H with unknown bits
			b.Add(trace.CopyEnd, tracetest.MonoStart+40, 2, 99)                 // status 99
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "t.occatrace")
			os.WriteFile(path, buf.Bytes(), 0o644)
			var got []Record
			var f *Flattener
			_, err = Read(path, 0, Options{}, func(p *Process, r *Row) error {
				if f == nil {
					f = NewFlattener(p)
				}
				var rec Record
				f.Flatten(&rec, r)
				got = append(got, rec)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("%d rows, want 2: %+v", len(got), got)
			}
			run, copyRow := got[0], got[1] // the trace has no device times: the launch goes out as it ends
			if run.Kind != "run" || run.Device != c.wantDevice || run.DeviceID != 1 || run.Name != "kernel#0" && run.Name != "" {
				t.Errorf("launch row: kind %q device %q (id %d) name %q, want run on %q (1)", run.Kind, run.Device, run.DeviceID, run.Name, c.wantDevice)
			}
			if copyRow.Kind != "copy" || copyRow.Dir != "D2H" || copyRow.Status != 99 || copyRow.Aux != 0xf9 || copyRow.Memory != 0 || copyRow.Device != "" {
				t.Errorf("copy row: %+v", copyRow)
			}
		})
	}
}

func newTestPairer(sink Sink) *Pairer {
	return NewPairer(&Process{Header: tracetest.Header(), Dict: &trace.Dict{}}, sink)
}

func event(k trace.Kind, thread uint32, t int64, args ...uint64) *trace.Event {
	e := &trace.Event{Kind: k, Thread: thread, Time: t}
	copy(e.Args[:], args)
	return e
}

// TestOpenBound begins more copies than a Pairer holds open, then ends
// them all: the begins held past MaxOpen go out as halves, their ends
// later as halves too, and the rest pair.
func TestOpenBound(t *testing.T) {
	const n = MaxOpen + 100
	var beginHalves, endHalves, paired int
	pr := newTestPairer(func(p *Process, r *Row) error {
		switch {
		case r.Dur != Unpaired:
			paired++
		case r.Start <= n:
			beginHalves++
		default:
			endHalves++
		}
		return nil
	})
	for i := int64(1); i <= n; i++ {
		if err := pr.Add(event(trace.CopyBegin, 0, i, uint64(i))); err != nil {
			t.Fatal(err)
		}
		if len(pr.open) > MaxOpen {
			t.Fatalf("%d begins open", len(pr.open))
		}
	}
	for i := int64(1); i <= n; i++ {
		if err := pr.Add(event(trace.CopyEnd, 0, n+i, uint64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	// The (MaxOpen+2)th begin put the thread's previous one in the map,
	// the (MaxOpen+1)th there: all went out.
	if want := MaxOpen + 1; beginHalves != want || endHalves != want || paired != n-want {
		t.Errorf("%d begin halves, %d end halves, %d paired; want %d, %d, %d", beginHalves, endHalves, paired, want, want, n-want)
	}
}

// TestDepthBound pushes more regions and begins more OpenMP implicit tasks
// and waits on a thread than a Pairer keeps: the outermost regions go out
// as halves at once, in push order, the rest at the end; the stacks stay
// at MaxDepth.
func TestDepthBound(t *testing.T) {
	const extra = 5
	var names []string
	pr := newTestPairer(func(p *Process, r *Row) error {
		if r.Kind == trace.RegionPush && r.Dur == Unpaired {
			names = append(names, r.Name)
		}
		return nil
	})
	for i := uint64(1); i <= MaxDepth+extra; i++ {
		for _, e := range []*trace.Event{
			event(trace.RegionPush, 0, int64(i), i),
			event(trace.OmpImplicitTaskBegin, 0, int64(i), 1<<20+i, 1, 0, 1, 0),
			event(trace.OmpSyncWaitBegin, 0, int64(i), 1<<21+i, 1, 1, 1<<20+i),
		} {
			if err := pr.Add(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(names) != extra || names[0] != "string#1" || names[extra-1] != "string#5" {
		t.Errorf("halves at once: %q, want string#1..5", names)
	}
	th := pr.omp.thread(0)
	regions, implicit, waits := pr.regions[0].items(), th.implicit.items(), th.waits.items()
	if len(regions) != MaxDepth || len(implicit) != MaxDepth || len(waits) != MaxDepth {
		t.Errorf("stacks %d, %d, %d, want %d", len(regions), len(implicit), len(waits), MaxDepth)
	}
	if implicit[0].id != 1<<20+extra+1 {
		t.Errorf("outermost implicit task kept: %d", implicit[0].id)
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(names) != MaxDepth+extra {
		t.Errorf("%d region halves, want %d", len(names), MaxDepth+extra)
	}
}

// TestPendingOrderBound gives a Pairer task segments that each wait for
// their task's creation, which then comes: the list of tasks with waiting
// segments stays bounded, and every segment goes out with its creation.
func TestPendingOrderBound(t *testing.T) {
	const n = 3 * MaxPendingSegments
	var segs, withCreate int
	pr := newTestPairer(func(p *Process, r *Row) error {
		if r.Kind == trace.OmpTaskSchedule {
			segs++
			if r.OMP.Created != 0 {
				withCreate++
			}
		}
		return nil
	})
	for i := uint64(1); i <= n; i++ {
		ts := int64(3 * i)
		for _, e := range []*trace.Event{
			event(trace.OmpTaskSchedule, 0, ts, 0, TaskSwitch, i),
			event(trace.OmpTaskSchedule, 0, ts+1, i, TaskComplete, 0),
			event(trace.OmpTaskCreate, 0, ts+2, i, 0, 0, 0, 0),
		} {
			if err := pr.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		if len(pr.omp.order) > 2*MaxPendingSegments {
			t.Fatalf("%d tasks listed", len(pr.omp.order))
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	if segs != n || withCreate != n {
		t.Errorf("%d segments, %d with their creation, want %d", segs, withCreate, n)
	}
}

// TestDeviceTimeTwice gives a launch two device times, and a device time a
// correlation id launched twice: the launch keeps its first device time
// and the second becomes a row of its own, not lost; of a correlation id
// launched twice, the later launch takes the device time.
func TestDeviceTimeTwice(t *testing.T) {
	var out bytes.Buffer
	pr := newTestPairer(func(p *Process, r *Row) error { return Format(&out, p, r) })
	m := int64(tracetest.MonoStart)
	for _, e := range []*trace.Event{
		event(trace.RunBegin, 0, m+10, 1, 0, 0, 0),
		event(trace.RunEnd, 0, m+20, 1, 0),
		event(trace.DeviceTime, 0, m+30, 1, uint64(m+11), uint64(m+19)),
		event(trace.DeviceTime, 0, m+40, 1, uint64(m+12), uint64(m+18)),
		event(trace.RunBegin, 0, m+50, 2, 0, 0, 0),
		event(trace.RunEnd, 0, m+60, 2, 0),
		event(trace.RunBegin, 0, m+70, 2, 0, 0, 0),
		event(trace.RunEnd, 0, m+80, 2, 0),
		event(trace.DeviceTime, 0, m+90, 2, uint64(m+71), uint64(m+79)),
	} {
		if err := pr.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `rank=0 t0 device_time start=12 dur=6 corr=1 dev_start=12 dev_dur=6
rank=0 t0 run start=10 dur=10 corr=1 dev_start=11 dev_dur=8
rank=0 t0 run start=50 dur=10 corr=2
rank=0 t0 run start=70 dur=10 corr=2 dev_start=71 dev_dur=8
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestCrossThreadEnds ends, on thread 0, copies begun on the last slotted
// thread: all pair; that thread becomes shared after the first, its begins
// kept in the map, so that later ends find them there instead of scanning
// every thread's slot each (4096 slots per end).
func TestCrossThreadEnds(t *testing.T) {
	const n = 1000
	var paired int
	pr := newTestPairer(func(p *Process, r *Row) error {
		if r.Dur == 5 && r.Kind == trace.CopyBegin {
			paired++
		}
		return nil
	})
	const far = maxSlots - 1
	for i := uint64(1); i <= n; i++ {
		if err := pr.Add(event(trace.CopyBegin, far, int64(10*i), i)); err != nil {
			t.Fatal(err)
		}
		if i > 1 && (pr.slots[far].used || len(pr.open) != 1) {
			t.Fatalf("begin %d: in the slot %v, %d in the map", i, pr.slots[far].used, len(pr.open))
		}
		if err := pr.Add(event(trace.CopyEnd, 0, int64(10*i+5), i, 0)); err != nil {
			t.Fatal(err)
		}
		if !pr.slots[far].shared || pr.inSlots != 0 {
			t.Fatalf("end %d: shared %v, %d slots used", i, pr.slots[far].shared, pr.inSlots)
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	if paired != n {
		t.Errorf("%d paired, want %d", paired, n)
	}
}

// TestSameCorrTwice begins one correlation id on two threads, then another
// on each, which moves the first ones out of the threads' slots: the
// earlier of the two goes out as a half (its end is lost), the later pairs
// with the end; none is lost.
func TestSameCorrTwice(t *testing.T) {
	var out bytes.Buffer
	pr := newTestPairer(func(p *Process, r *Row) error { return Format(&out, p, r) })
	m := int64(tracetest.MonoStart)
	for _, e := range []*trace.Event{
		event(trace.CopyBegin, 0, m+10, 5),
		event(trace.CopyBegin, 1, m+30, 5),
		event(trace.CopyBegin, 0, m+20, 6),
		event(trace.CopyBegin, 1, m+40, 7),
		event(trace.CopyEnd, 1, m+50, 5, 0),
	} {
		if err := pr.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `rank=0 t0 copy start=10 dur=-1 corr=5 dir=H2D
rank=0 t1 copy start=30 dur=20 corr=5 dir=H2D
rank=0 t0 copy start=20 dur=-1 corr=6 dir=H2D
rank=0 t1 copy start=40 dur=-1 corr=7 dir=H2D
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
