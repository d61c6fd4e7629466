package summary

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

func writeSmall(t testing.TB, dir, name string, o tracetest.SmallOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteSmall(&buf, o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func collect(t *testing.T, paths ...string) *Report {
	var cs []*Collector
	for i, p := range paths {
		c := NewCollector()
		res, err := analysis.Read(p, i, analysis.Options{}, c.Add)
		if err != nil {
			t.Fatal(err)
		}
		c.Finish(res)
		cs = append(cs, c)
	}
	return Merge(cs...).Report()
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	one := writeSmall(t, dir, "a.occatrace", tracetest.SmallOptions{})
	rep := collect(t, one)
	for _, f := range Formats {
		var out bytes.Buffer
		if err := rep.Write(&out, f, ""); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "small."+f), out.Bytes())
	}
	var out bytes.Buffer
	if err := rep.Write(&out, "csv", "kernels"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "small-kernels.csv"), out.Bytes())
	// The same trace twice is one rank with twice the counts (same header).
	two := collect(t, one, one)
	out.Reset()
	if err := two.Write(&out, "table", ""); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "small-twice.table"), out.Bytes())
}

func TestDist(t *testing.T) {
	var d Dist
	for _, v := range []int64{5, 1, 3, 2, 4} {
		d.Add(v)
	}
	if d.N != 5 || d.Sum != 15 || d.Min != 1 || d.Max != 5 || d.Median() != 3 || d.Stddev() < 1.414 || d.Stddev() > 1.415 {
		t.Errorf("dist %+v median %d stddev %f", d, d.Median(), d.Stddev())
	}
	// Past maxSamples the median comes from the histogram, within 1.6 %.
	var big, half Dist
	for i := int64(1); i <= 3*maxSamples; i++ {
		big.Add(i * 1000)
		if i%2 == 0 {
			half.Add(i * 1000)
		}
	}
	want := int64(3*maxSamples/2) * 1000
	if m := big.Median(); m < want*98/100 || m > want*102/100 {
		t.Errorf("median %d, want about %d", m, want)
	}
	var merged Dist
	merged.Merge(&half)
	merged.Merge(&big)
	if merged.N != big.N+half.N || merged.Sum != big.Sum+half.Sum {
		t.Errorf("merge: %d %d", merged.N, merged.Sum)
	}
}

func TestUnion(t *testing.T) {
	var u Union
	u.Add(10, 20)
	u.Add(15, 30)
	u.Add(40, 50)
	u.Add(0, 5)
	if got := u.Total(); got != 35 {
		t.Errorf("union %d, want 35", got)
	}
	// Many intervals, out of order within the lag, overlapping in pairs.
	var v Union
	v.Lag = 1000
	for i := int64(0); i < 100000; i++ {
		j := i ^ 1 // swap neighbours
		v.Add(j*100, j*100+150)
	}
	if got, want := v.Total(), int64(100000*100+50); got != want {
		t.Errorf("union %d, want %d", got, want)
	}
}

func TestKernelTotals(t *testing.T) {
	// The kernels table agrees with a direct sum over the events.
	evs := tracetest.Steady(7, 200000)
	sum := map[uint64]int64{}
	open := map[uint64]trace.Event{}
	for _, e := range evs {
		switch e.Kind {
		case trace.RunBegin:
			open[e.Args[0]] = e
		case trace.RunEnd:
			b := open[e.Args[0]]
			sum[b.Args[1]] += e.Time - b.Time
		}
	}
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	c := NewCollector()
	pr := analysis.NewPairer(p, c.Add)
	for i := range evs {
		pr.Add(&evs[i])
	}
	pr.Flush()
	rep := c.Report()
	got := map[string]int64{}
	for _, row := range rep.Table("kernels").Rows {
		got[row[0].(string)] = int64(row[2].(Dur))
	}
	for k, s := range sum {
		name := "kernel#" + string(rune('0'+k))
		if got[name] != s {
			t.Errorf("%s: total %d, want %d", name, got[name], s)
		}
	}
}

// The imbalance table names the rank with the least and the most of each
// metric: three ranks whose one launch takes 3, 1 and 2 us.
func TestImbalanceNamesRanks(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for rank, us := range []int64{3, 1, 2} {
		h := tracetest.Header()
		h.Rank, h.PID = int64(rank), int64(100+rank)
		var buf bytes.Buffer
		tw, err := trace.NewWriter(&buf, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteDefs(tracetest.Defs()); err != nil {
			t.Fatal(err)
		}
		b := tw.Batch(1)
		t0 := int64(tracetest.MonoStart + 1000)
		for _, e := range []struct {
			k    trace.Kind
			t    int64
			args []uint64
		}{
			{trace.RunBegin, t0, []uint64{1, 1, 1, 0}},
			{trace.RunEnd, t0 + us*1000, []uint64{1, trace.StatusOK}},
		} {
			if err := b.Add(e.k, e.t, e.args...); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("r%d.occatrace", rank)))
		if err := os.WriteFile(paths[rank], buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := collect(t, paths...).Write(&out, "csv", "imbalance"); err != nil {
		t.Fatal(err)
	}
	want := "metric,min,min_rank,mean,max,max_rank,imbalance\n" +
		"kernel_sum_ns,1000.0000,1,2000.0000,3000.0000,0,0.5000\n" +
		"api_busy_ns,1000.0000,1,2000.0000,3000.0000,0,0.5000\n" +
		"copy_bytes,0.0000,0,0.0000,0.0000,0,0.0000\n"
	if got := out.String(); got != want {
		t.Errorf("imbalance table:\n%s\nwant\n%s", got, want)
	}
}

// An inline Collector sums as the one with a goroutine does, to the byte,
// on traces of every event kind, OpenMP, and several of them merged; it
// starts no goroutine.
func TestInlineCollector(t *testing.T) {
	dir := t.TempDir()
	small := writeSmall(t, dir, "a.occatrace", tracetest.SmallOptions{})
	other := writeSmall(t, dir, "b.occatrace", tracetest.SmallOptions{Rank: 3, PID: 77})
	omp := omptest.SmallFile(t)
	for _, paths := range [][]string{{small}, {omp}, {small, other, omp}} {
		var reports [2]bytes.Buffer
		for k, newCollector := range []func() *Collector{NewCollector, NewInlineCollector} {
			total := newCollector()
			for i, p := range paths {
				c := newCollector()
				res, err := analysis.Read(p, i, analysis.Options{}, c.Add)
				if err != nil {
					t.Fatal(err)
				}
				if c.inline && c.pipe.work != nil {
					t.Fatalf("%s: the inline collector started a goroutine", p)
				}
				c.Finish(res)
				total.Absorb(c)
			}
			if err := total.Report().Write(&reports[k], "json", ""); err != nil {
				t.Fatal(err)
			}
		}
		if reports[0].String() != reports[1].String() {
			t.Errorf("%v: inline report differs:\n%s\nwant:\n%s", paths, &reports[1], &reports[0])
		}
		if reports[0].Len() < 1000 {
			t.Errorf("%v: a report of %d bytes", paths, reports[0].Len())
		}
	}
}

// TestManyDevices: a trace's devices past maxDevices are summed in one
// row, and many busy devices share their unions' memory (unionShare).
func TestManyDevices(t *testing.T) {
	const devices, busy, launches = maxDevices + 500, 24, 20000
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	c := NewCollector()
	pr := analysis.NewPairer(p, c.Add)
	now, corr := int64(tracetest.MonoStart), uint64(0)
	launch := func(dev uint64) {
		corr++
		b := trace.Event{Kind: trace.RunBegin, Time: now, Args: [trace.MaxArgs]uint64{corr, 1, dev}}
		e := trace.Event{Kind: trace.RunEnd, Time: now + 500, Args: [trace.MaxArgs]uint64{corr}}
		pr.Add(&b)
		pr.Add(&e)
		now += 1000
	}
	for d := range devices { // one launch on each device
		launch(uint64(100 + d))
	}
	for i := range busy * launches { // then many on the first busy ones
		launch(uint64(100 + i%busy))
	}
	pr.Flush()
	// kernelBusy of each busy device and of the row of the devices past
	// maxDevices (500 launches), and the rank's API calls.
	if want := busy + 1 + 1; c.share.big != want || c.share.held != sharedHeld/want {
		t.Errorf("share: %d unions joined, each holds %d; want %d, %d", c.share.big, c.share.held, want, sharedHeld/want)
	}
	rep := c.Report()
	rows := rep.Table("devices").Rows
	if len(rows) != maxDevices+1 {
		t.Fatalf("%d device rows, want %d", len(rows), maxDevices+1)
	}
	var total, other int64
	for _, row := range rows {
		n := row[2].(int64)
		total += n
		if row[1].(string) == otherDevices {
			other = n
		}
		if want := int64(n) * 500; row[4].(Dur) != Dur(want) || row[9].(Dur) != Dur(want) {
			t.Errorf("%s: busy %v and %v, want %v", row[1], row[4], row[9], Dur(want))
		}
	}
	if total != devices+busy*launches || other != devices-maxDevices {
		t.Errorf("kernels: %d in all, %d in %q; want %d, %d", total, other, otherDevices, devices+busy*launches, devices-maxDevices)
	}
}

// TestManyNames: the kernels table keeps the maxNames smallest names and
// sums the others in one row, and the report is the same whatever order
// the launches are summed in, by one collector or several merged.
func TestManyNames(t *testing.T) {
	const kernels = maxNames + 700
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}}
	var evs []trace.Event
	now := int64(tracetest.MonoStart)
	for i := range 3 * kernels { // kernel k launched 3 times, taking k ns
		k := uint64(1 + i%kernels)
		evs = append(evs,
			trace.Event{Kind: trace.RunBegin, Time: now, Args: [trace.MaxArgs]uint64{uint64(i + 1), k, 1}},
			trace.Event{Kind: trace.RunEnd, Time: now + int64(k), Args: [trace.MaxArgs]uint64{uint64(i + 1)}})
		now += 10000
	}
	sum := func(parts ...[]trace.Event) string {
		var cs []*Collector
		for _, part := range parts {
			c := NewCollector()
			pr := analysis.NewPairer(p, c.Add)
			for i := range part {
				pr.Add(&part[i])
			}
			pr.Flush()
			cs = append(cs, c)
		}
		var b bytes.Buffer
		if err := Merge(cs...).Report().Write(&b, "json", "kernels"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	whole := sum(evs)
	half := len(evs) / 2 // launches are pairs: an even split keeps them whole
	if got := sum(evs[half:], evs[:half]); got != whole {
		t.Errorf("two collectors, second half first: report differs")
	}
	rev := make([]trace.Event, 0, len(evs)) // the kernels in the other order
	for i := len(evs) - 2; i >= 0; i -= 2 {
		rev = append(rev, evs[i], evs[i+1])
	}
	if got := sum(rev); got != whole {
		t.Errorf("launches in reverse: report differs")
	}

	c := NewCollector()
	pr := analysis.NewPairer(p, c.Add)
	for i := range evs {
		pr.Add(&evs[i])
	}
	pr.Flush()
	rows := c.Report().Table("kernels").Rows
	if len(rows) != maxNames+1 {
		t.Fatalf("%d kernel rows, want %d", len(rows), maxNames+1)
	}
	names := make([]string, kernels)
	for k := range names {
		names[k] = "kernel#" + strconv.Itoa(k+1)
	}
	slices.Sort(names)
	kept := map[string]bool{}
	for _, n := range names[:maxNames] {
		kept[n] = true
	}
	var calls, other int64
	for _, row := range rows {
		n := row[1].(int64)
		calls += n
		switch name := row[0].(string); {
		case name == otherKernels:
			other = n
		case !kept[name]:
			t.Errorf("row %q: not among the %d smallest names", name, maxNames)
		}
	}
	if calls != 3*kernels || other != 3*(kernels-maxNames) {
		t.Errorf("calls: %d in all, %d in %q; want %d, %d", calls, other, otherKernels, 3*kernels, 3*(kernels-maxNames))
	}
}

// TestUntrackedAllocs: allocations past analysis.MaxLive live ones are
// said in a warning, which a partial summary carries.
func TestUntrackedAllocs(t *testing.T) {
	const extra = 3
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}, Rank: 3}
	c := NewCollector()
	pr := analysis.NewPairer(p, c.Add)
	now := int64(tracetest.MonoStart)
	for i := range analysis.MaxLive + extra { // never freed
		corr, mem := uint64(i+1), uint64(i+1)
		b := trace.Event{Kind: trace.MemoryAllocBegin, Time: now, Args: [trace.MaxArgs]uint64{corr, 1, 4096}}
		e := trace.Event{Kind: trace.MemoryAllocEnd, Time: now + 10, Args: [trace.MaxArgs]uint64{corr, mem, 0x7f0000000000 + mem<<12, trace.StatusOK}}
		pr.Add(&b)
		pr.Add(&e)
		now += 100
	}
	pr.Flush()
	c.Finish(&analysis.Result{Process: p, Complete: true})
	want := "rank 3: " + strconv.Itoa(extra) + " allocations made while " + strconv.Itoa(analysis.MaxLive) +
		" were live were not followed: the memory table's never-freed figures undercount"
	path := filepath.Join(t.TempDir(), "part.json")
	var b bytes.Buffer
	if err := c.WritePartial(&b, "0/1", nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadPartial(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*Report{"collector": c.Report(), "partial": back.Report()} {
		if !slices.Contains(rep.Warnings, want) {
			t.Errorf("%s: warnings %q, want %q among them", name, rep.Warnings, want)
		}
		if rows := rep.Table("memory").Rows; len(rows) != 1 || rows[0][6].(int64) != analysis.MaxLive {
			t.Errorf("%s: memory table %v, want %d never freed", name, rows, analysis.MaxLive)
		}
	}
}
