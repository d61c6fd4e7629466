package analysis

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// A trace with clock measurements has its times put on rank 0's timeline:
// the offset measured at MPI_Init before it, the one at MPI_Finalize after
// it, a straight line between; on rank 0's epoch. Without a reference, or
// without measurements, times stay on the trace's own clock.
func TestClockAlignment(t *testing.T) {
	ms := func(v int64) int64 { return tracetest.MonoStart + v*1e6 }
	evs := []trace.Event{
		{Kind: trace.Marker, Time: ms(1), Args: [trace.MaxArgs]uint64{0}},
		{Kind: trace.MpiClockSync, Time: ms(10), Args: [trace.MaxArgs]uint64{0, uint64(5000), 300, trace.MpiSyncInit}},
		{Kind: trace.Marker, Time: ms(60)},
		{Kind: trace.MpiClockSync, Time: ms(110), Args: [trace.MaxArgs]uint64{0, 1<<64 - 15000, 200, trace.MpiSyncFinalize}},
		{Kind: trace.Marker, Time: ms(200)},
	}
	var buf bytes.Buffer
	if err := tracetest.WriteEvents(&buf, tracetest.Header(), nil, evs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.occatrace")
	os.WriteFile(path, buf.Bytes(), 0o644)

	ref := &Reference{MonoStart: 7e12, WallStart: 1767225600_500000000}
	read := func(ref *Reference) (times []int64, p *Process) {
		res, err := Read(path, 0, Options{Reference: ref}, func(p *Process, r *Row) error {
			if r.Kind == trace.Marker {
				times = append(times, p.WallTime(r.Start))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return times, res.Process
	}
	got, p := read(ref)
	// Offsets: +5000 ns up to 10 ms, -15000 from 110 ms, -5000 at 60 ms.
	on0 := func(v, off int64) int64 { return ms(v) + off - ref.MonoStart + ref.WallStart }
	if want := []int64{on0(1, 5000), on0(60, -5000), on0(200, -15000)}; !slices.Equal(got, want) {
		t.Errorf("aligned: %v, want %v", got, want)
	}
	if want := []ClockSync{{ms(10), 5000, 300}, {ms(110), -15000, 200}}; !slices.Equal(p.Clock, want) {
		t.Errorf("clock: %v, want %v", p.Clock, want)
	}
	if info := Info(p, nil); info.ClockOffset != 5000 || info.ClockError != 300 {
		t.Errorf("info: offset %d, error %d", info.ClockOffset, info.ClockError)
	}
	h := tracetest.Header()
	got, p = read(nil)
	if want := []int64{h.WallTime(ms(1)), h.WallTime(ms(60)), h.WallTime(ms(200))}; !slices.Equal(got, want) || p.Clock != nil {
		t.Errorf("no reference: %v, want %v (clock %v)", got, want, p.Clock)
	}
	// Cut before its final stats (a killed rank), the trace is still read
	// twice for its measurements: only final stats that count none spare
	// it the first pass.
	r, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f := c.(*os.File)
	st, _ := f.Stat()
	fs := r.FinalStats(f, st.Size())
	c.Close()
	if fs == nil || fs.Events[trace.MpiClockSync] != 2 {
		t.Fatalf("final stats %+v, want 2 clock measurements", fs)
	}
	if err := os.Truncate(path, int64(fs.Bytes)); err != nil {
		t.Fatal(err)
	}
	res, err := Read(path, 0, Options{Reference: ref}, func(*Process, *Row) error { return nil })
	if err == nil || res == nil {
		t.Fatalf("cut trace: %v, want the error that says it was cut", err)
	}
	if want := []ClockSync{{ms(10), 5000, 300}, {ms(110), -15000, 200}}; !slices.Equal(res.Process.Clock, want) {
		t.Errorf("cut trace: clock %v, want %v", res.Process.Clock, want)
	}
}
