package analysis

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// A launch waits for its device time only where one may come: in a trace
// whose final stats count device times, or one without final stats (cut
// short). In a cleanly closed trace without device times it goes out as it
// ends, before the copy after it.
func TestLaunchesWaitOnlyForDeviceTimes(t *testing.T) {
	for _, c := range []struct {
		name       string
		deviceTime bool // a device time for another launch
		closed     bool
		want       string
	}{
		{"closed, no device times", false, true, "run copy"},
		{"closed, device times", true, true, "copy device_time run"},
		{"cut short", false, false, "copy run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := trace.NewWriter(&buf, tracetest.Header())
			if err != nil {
				t.Fatal(err)
			}
			w.WriteDefs(tracetest.Defs())
			b := w.Batch(0)
			b.Add(trace.RunBegin, tracetest.MonoStart+10, 1, 1, 1, 0)
			b.Add(trace.RunEnd, tracetest.MonoStart+20, 1, trace.StatusOK)
			b.Add(trace.CopyBegin, tracetest.MonoStart+30, 2, trace.CopyH2D, 0, 5, 8, 0)
			b.Add(trace.CopyEnd, tracetest.MonoStart+40, 2, trace.StatusOK)
			if c.deviceTime {
				b.Add(trace.DeviceTime, tracetest.MonoStart+50, 99, 100, 200)
			}
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			if c.closed {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(t.TempDir(), "t.occatrace")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []string
			_, err = Read(path, 0, Options{}, func(p *Process, r *Row) error {
				got = append(got, KindName(r.Kind))
				return nil
			})
			if c.closed && err != nil || !c.closed && !errors.Is(err, trace.ErrNoFinalStats) {
				t.Fatalf("Read: %v", err)
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("rows %q, want %q", s, c.want)
			}
		})
	}
}
