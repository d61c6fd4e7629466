package trace_test

import (
	"bytes"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// TestSizePerEvent holds the format to the brief's budget: at most 5 bytes
// per event on disk for the steady-state stream, at every level. The size
// does not depend on the machine's load, so unlike the benchmarks it can be
// a test.
func TestSizePerEvent(t *testing.T) {
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
		disk := float64(buf.Len()) / float64(len(evs))
		t.Logf("level %v: %.3f B/event on disk, %.3f B/event before compression", lv, disk, float64(raw)/float64(len(evs)))
		if disk > 5 {
			t.Errorf("level %v: %.3f B/event on disk, over the 5 B/event budget", lv, disk)
		}
	}
}
