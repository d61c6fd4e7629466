package model

import (
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// TestOnLaunchEnd checks that the launch hook gets each launch at its end,
// without device time, and that the Sink still gets it later, with its
// device time and Early set, the rest of the rows unchanged.
func TestOnLaunchEnd(t *testing.T) {
	path := writeSmall(t, tracetest.SmallOptions{})
	var plain []Row
	if _, err := Read(path, 0, Options{}, func(p *Process, r *Row) error { plain = append(plain, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	var hooked, ended []Row
	set := false
	_, err := Read(path, 0, Options{}, func(p *Process, r *Row) error {
		if !set {
			if !p.OnLaunchEnd(func(p *Process, r *Row) error { ended = append(ended, *r); return nil }) {
				t.Fatal("OnLaunchEnd: false on a process without a hook")
			}
			if p.OnLaunchEnd(func(*Process, *Row) error { return nil }) {
				t.Fatal("OnLaunchEnd: a second hook replaced the first")
			}
			set = true
		}
		hooked = append(hooked, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hooked) != len(plain) {
		t.Fatalf("%d rows with the hook, %d without", len(hooked), len(plain))
	}
	var early []Row
	for i := range hooked {
		r := hooked[i]
		if r.Early {
			early = append(early, r)
			r.Early = false
		}
		if r != plain[i] {
			t.Fatalf("row %d: %+v with the hook, %+v without", i, hooked[i], plain[i])
		}
	}
	if len(early) == 0 || len(early) > len(ended) {
		t.Fatalf("%d early rows, %d given to the hook", len(early), len(ended))
	}
	// The hook saw the launches in the order the Sink later does (the
	// launches that ended before it was set are not among them).
	off := len(ended) - len(early)
	for i, r := range early {
		e := ended[off+i]
		if e.Kind != trace.RunBegin || e.Corr != r.Corr || e.Start != r.Start || e.Dur != r.Dur || e.DevDur != -1 || e.Early {
			t.Fatalf("launch %d: hook got %+v, sink %+v", i, e, r)
		}
	}
}
