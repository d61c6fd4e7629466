package trace_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/libocca/occa-tools/formats/trace"
)

// A runtime's writer goroutine: header, defs before the events that use
// them, one batch per thread buffer, final stats on Close.
func ExampleWriter() {
	var file bytes.Buffer
	w, err := trace.NewWriter(&file, &trace.Header{ClockSource: "monotonic", Rank: -1, WorldSize: -1})
	if err != nil {
		panic(err)
	}
	w.WriteDefs([]trace.Def{
		{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{1}, Text: "axpy"},
		{Kind: trace.DefKernel, Args: [trace.MaxArgs]uint64{7, 0, 1}},
	})
	b := w.Batch(0)
	b.Add(trace.RunBegin, 1000, 1, 7, 0, 0) // corr, kernel, device, stream
	b.Add(trace.RunEnd, 3500, 1, trace.StatusOK)
	if err := w.WriteBatch(b); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	r, err := trace.NewReader(&file)
	if err != nil {
		panic(err)
	}
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		if kernel, ok := e.Arg("kernel"); ok {
			fmt.Println(e.Time, e.Kind, r.Dict().Kernel(kernel).Name)
		} else {
			fmt.Println(e.Time, e.Kind)
		}
	}
	fmt.Println("complete:", r.Complete(), "events:", r.Stats().TotalEvents())
	// Output:
	// 1000 run_begin axpy
	// 3500 run_end
	// complete: true events: 2
}
