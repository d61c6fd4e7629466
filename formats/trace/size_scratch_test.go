package trace_test

import (
	"bytes"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

func TestSizeScratch(t *testing.T) {
	evs := steady()
	for _, lv := range []trace.Level{trace.LevelFastest, trace.LevelDefault} {
		var buf bytes.Buffer
		writeSteady(t, &buf, evs, 1, trace.WithLevel(lv))
		raw := 0
		b := trace.NewBatch(0, 0)
		for i := range evs {
			b.AddEvent(&evs[i])
			if b.Len() == benchBatch {
				raw += b.Size()
				b.Reset()
			}
		}
		raw += b.Size()
		t.Logf("%v: %.3f B/event on disk, %.3f B/event raw", lv, float64(buf.Len())/float64(len(evs)), float64(raw)/float64(len(evs)))
	}
}
