package analysis

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// FuzzPairer pairs the events of a trace made by tracetest.FromBytes, with
// several windows, and checks that nothing is lost or made up: every event
// outside OpenMP is in exactly one row (a pair's two halves in one, a
// launch's device time in the launch's row or its own). OpenMP rows are
// left out of the count: task_schedule events delimit segments rather
// than make rows.
func FuzzPairer(f *testing.F) {
	// testdata/fuzz/FuzzPairer holds the inputs that failed before
	// (device-time-twice: a launch's second device time was lost).
	f.Fuzz(func(t *testing.T, data []byte) {
		var buf bytes.Buffer
		if err := tracetest.FromBytes(&buf, data); err != nil {
			t.Fatal(err)
		}
		for _, window := range []int{-1, 1, 3, DefaultWindow} {
			r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			p := &Process{Header: r.Header(), Dict: r.Dict()}
			var events, inRows int
			pr := NewPairer(p, func(p *Process, r *Row) error {
				if r.OMP != nil {
					return nil
				}
				s := r.Kind.Spec()
				switch {
				case r.Dur != Unpaired && (s.Pair != trace.KindInvalid || r.Kind == trace.RegionPush):
					inRows += 2
				default:
					inRows++
				}
				if r.Kind == trace.RunBegin && r.DevDur >= 0 {
					inRows++
				}
				return nil
			})
			pr.Window = window
			for {
				e, err := r.ReadEvent()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if s := e.Kind.Spec(); s != nil && s.Domain != trace.DomainOpenMP {
					events++
				}
				if err := pr.Add(&e); err != nil {
					t.Fatal(err)
				}
			}
			if err := pr.Flush(); err != nil {
				t.Fatal(err)
			}
			if inRows != events {
				t.Fatalf("window %d: %d events, %d in rows", window, events, inRows)
			}
		}
	})
}
