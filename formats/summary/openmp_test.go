package summary

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp/omptest"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// The OpenMP section of omptest's trace, figure by figure (the trace's
// doc gives the arithmetic), and in every format.
func TestOpenMP(t *testing.T) {
	path := omptest.SmallFile(t)
	rep := collect(t, path)
	ot := rep.Table("openmp")
	if ot == nil {
		t.Fatal("no openmp table")
	}
	us := func(n int64) Dur { return Dur(n * 1000) }
	want := map[string][]any{
		// kernel: launches, regions, implicit tasks, imbalance, wait %, implicit, wait,
		// created, completed, task time, critical path, parallelism
		"dot":          {int64(1), int64(1), int64(2), 77 / 53.0, 100 * 288 / 394.0, us(394), us(288), int64(5), int64(5), us(80), us(65), 80 / 65.0},
		"axpy":         {int64(1), int64(1), int64(2), 51 / 41.5, 100 * 21 / 104.0, us(104), us(21), int64(0), int64(0), us(0), us(0), 0.0},
		OutsideKernels: {int64(0), int64(1), int64(2), 38 / 28.5, 100 * 140 / 197.0, us(197), us(140), int64(4), int64(3), us(30), us(30), 1.0},
	}
	order := []string{"dot", OutsideKernels, "axpy"} // by implicit + task time: 474, 227, 104
	if len(ot.Rows) != len(order) {
		t.Fatalf("%d rows, want %d", len(ot.Rows), len(order))
	}
	for i, row := range ot.Rows {
		name := row[0].(string)
		if name != order[i] {
			t.Errorf("row %d is %q, want %q", i, name, order[i])
		}
		for j, w := range want[name] {
			got := row[j+1]
			if f, ok := w.(float64); ok {
				if g, ok := got.(float64); !ok || math.Abs(g-f) > 1e-9 {
					t.Errorf("%s %s: %v, want %v", name, ot.Columns[j+1], got, w)
				}
				continue
			}
			if got != w {
				t.Errorf("%s %s: %v (%T), want %v", name, ot.Columns[j+1], got, got, w)
			}
		}
	}
	// OpenMP regions are no host API calls.
	for _, row := range rep.Table("api").Rows {
		if n := row[0].(string); len(n) > 4 && n[:4] == "omp_" {
			t.Errorf("api table has %s", n)
		}
	}
	for _, f := range Formats {
		var out bytes.Buffer
		if err := rep.Write(&out, f, ""); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "omp."+f), out.Bytes())
	}
	var out bytes.Buffer
	if err := rep.Write(&out, "csv", "openmp"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "omp-openmp.csv"), out.Bytes())
}

// The real trace of formats/omp/testdata: OpenMP outside launches only, a
// parallel for and the task diamond; the worker's last implicit task never
// ended (the process exited first).
func TestOpenMPReal(t *testing.T) {
	rep := collect(t, filepath.Join("..", "omp", "testdata", "t1.occatrace"))
	ot := rep.Table("openmp")
	if ot == nil || len(ot.Rows) != 1 {
		t.Fatalf("openmp table %v, want one row", ot)
	}
	row := ot.Rows[0]
	got := fmt.Sprint(row[0], row[1], row[2], row[3], row[8], row[9])
	if want := fmt.Sprint(OutsideKernels, int64(0), int64(2), int64(4), int64(4), int64(4)); got != want {
		t.Errorf("kernel launches regions implicit created completed: %s, want %s", got, want)
	}
	// The critical path is a -> (b or c) -> d, shorter than the tasks' sum.
	task, crit := row[10].(Dur), row[11].(Dur)
	if crit <= 0 || crit >= task {
		t.Errorf("critical path %d, task time %d", crit, task)
	}
}

// Without Finish (rows from a Pairer straight to Add), Report still sums
// the OpenMP rows; a trace without them has no openmp section.
func TestOpenMPWithoutFinish(t *testing.T) {
	path := omptest.SmallFile(t)
	c := NewCollector()
	if _, err := analysis.Read(path, 0, analysis.Options{}, c.Add); err != nil {
		t.Fatal(err)
	}
	if ot := c.Report().Table("openmp"); ot == nil || len(ot.Rows) != 3 {
		t.Errorf("openmp table %v, want 3 rows", ot)
	}
	if rep := collect(t, writeSmall(t, t.TempDir(), "small.occatrace", tracetest.SmallOptions{})); rep.Table("openmp") != nil {
		t.Error("a trace without OpenMP events has an openmp section")
	}
}

// Two traces merge into sums: the same trace twice doubles the counts and
// times and keeps the ratios.
func TestOpenMPMerge(t *testing.T) {
	path := omptest.SmallFile(t)
	one, two := collect(t, path).Table("openmp"), collect(t, path, path).Table("openmp")
	for i, row := range one.Rows {
		for j, v := range row {
			w := two.Rows[i][j]
			switch v := v.(type) {
			case int64:
				if w != 2*v {
					t.Errorf("%s %s: %v, want %v", row[0], one.Columns[j], w, 2*v)
				}
			case Dur:
				if w != 2*v {
					t.Errorf("%s %s: %v, want %v", row[0], one.Columns[j], w, 2*v)
				}
			case float64:
				if math.Abs(w.(float64)-v) > 1e-9 {
					t.Errorf("%s %s: %v, want %v", row[0], one.Columns[j], w, v)
				}
			}
		}
	}
}

// OCCA's OpenMP mode: a parallel region and an explicit task in every
// launch, more launches than the summary holds at once. It holds at most
// maxLaunches of them, summing each it forgets, and the figures are those
// of every launch.
func TestOpenMPManyLaunches(t *testing.T) {
	const n, window = 1000, 100
	var evs []trace.Event
	us := int64(0)
	add := func(k trace.Kind, args ...uint64) {
		e := trace.Event{Kind: k, Time: tracetest.MonoStart + us*1000}
		copy(e.Args[:], args)
		evs = append(evs, e)
		us++
	}
	for i := range uint64(n) {
		corr, par, implicit, task := 10*i+100, 10*i+101, 10*i+102, 10*i+103
		add(trace.RunBegin, corr, 1, 1)
		add(trace.OmpParallelBegin, par, 50, 1, 0x80000002, corr)
		add(trace.OmpImplicitTaskBegin, implicit, par, 0, 1, corr)
		add(trace.OmpTaskCreate, task, implicit, 4, 0, corr)
		add(trace.OmpTaskSchedule, implicit, 7, task)
		add(trace.OmpTaskSchedule, task, 1, implicit) // 1 us of task
		add(trace.OmpImplicitTaskEnd, implicit)
		add(trace.OmpParallelEnd, par)
		add(trace.RunEnd, corr, trace.StatusOK)
	}
	var buf bytes.Buffer
	if err := tracetest.WriteEvents(&buf, tracetest.Header(), tracetest.Defs(), evs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "launches.occatrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewInlineCollector()
	var op *ompProc
	res, err := analysis.Read(path, 0, analysis.Options{Open: func(p *analysis.Process) error {
		op = c.ompProc(p)
		op.maxLaunches = window
		return nil
	}}, func(p *analysis.Process, r *analysis.Row) error {
		c.Add(p, r)
		if len(op.launches) > window {
			t.Fatalf("%d launches held", len(op.launches))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Finish(res)
	ot := c.Report().Table("openmp")
	if ot == nil || len(ot.Rows) != 1 {
		t.Fatalf("openmp table %v, want one row", ot)
	}
	row := ot.Rows[0]
	got := fmt.Sprint(row[0], row[1], row[2], row[3], row[8], row[9], row[10], row[11])
	want := fmt.Sprint("axpy", int64(n), int64(n), int64(n), int64(n), int64(n), Dur(n*1000), Dur(n*1000))
	if got != want {
		t.Errorf("kernel launches regions implicit created completed task critical:\n%s, want\n%s", got, want)
	}
}

// OCCA defines a kernel it JIT-compiles mid-run: its defs come after rows
// of other kernels' OpenMP regions. The summing goroutine reads kernel
// and device names while the reader adds those defs (go test -race saw
// them race; a real OCCA trace crashed summary once in a few runs:
// concurrent map read and map write).
func TestOpenMPDefsMidTrace(t *testing.T) {
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteDefs(tracetest.Defs()); err != nil {
		t.Fatal(err)
	}
	us := int64(0)
	const launches = 3000 // batches of rows go to the summing goroutine before the defs come
	for part := range 3 {
		b := tw.Batch(0)
		add := func(k trace.Kind, args ...uint64) {
			e := trace.Event{Kind: k, Time: tracetest.MonoStart + us*1000}
			copy(e.Args[:], args)
			if err := b.AddEvent(&e); err != nil {
				t.Fatal(err)
			}
			us++
		}
		for i := range uint64(launches) {
			id := 100*(uint64(part)*launches+i) + 100
			kernel := uint64(1 + part) // kernels 1 and 2, then 10, defined just before
			if part == 2 {
				kernel = 10
			}
			add(trace.RunBegin, id, kernel, 1)
			add(trace.OmpParallelBegin, id+1, 50, 1, 0x80000002, id)
			add(trace.OmpImplicitTaskBegin, id+2, id+1, 0, 1, id)
			add(trace.OmpImplicitTaskEnd, id+2)
			add(trace.OmpParallelEnd, id+1)
			add(trace.RunEnd, id, trace.StatusOK)
		}
		if err := tw.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
		if part == 1 {
			defs := []trace.Def{{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{100}, Text: "_occa_jit_kernel"}}
			for k := range uint64(200) { // many, so that the reader adds them while the summing runs
				defs = append(defs, trace.Def{Kind: trace.DefKernel, Args: [trace.MaxArgs]uint64{10 + k, 1, 100, tracetest.StrSource}})
			}
			if err := tw.WriteDefs(defs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jit.occatrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := collect(t, path)
	got := map[string]int64{}
	for _, row := range rep.Table("openmp").Rows {
		got[row[0].(string)] = row[1].(int64)
	}
	if want := map[string]int64{"axpy": launches, "dot": launches, "_occa_jit_kernel": launches}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("launches by kernel %v, want %v", got, want)
	}
}
