package trace_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// FinalStats finds, from the end of the file alone, the stats a reader
// reads last, for a trace of each codec and of each older format; and
// nothing for a file that does not end with its final stats chunk whole.
func TestFinalStats(t *testing.T) {
	traces := map[string][]byte{}
	for name, level := range map[string]trace.Level{"s2": trace.LevelFastest, "zstd": trace.LevelDefault} {
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, tracetest.Header(), trace.WithLevel(level))
		if err != nil {
			t.Fatal(err)
		}
		w.WriteDefs(tracetest.Defs())
		b := w.Batch(0)
		b.Add(trace.RunBegin, tracetest.MonoStart+10, 1, 1, 1, 0)
		b.Add(trace.RunEnd, tracetest.MonoStart+20, 1, trace.StatusOK)
		b.Add(trace.DeviceTime, tracetest.MonoStart+30, 1, 100, 200)
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		traces[name] = buf.Bytes()
	}
	olds, _ := filepath.Glob(filepath.Join("testdata", "v*", "small.txtar"))
	for _, path := range olds {
		traces[path], _ = readGolden(t, path)
	}
	if len(traces) != 4 {
		t.Fatalf("%d traces, want 2 written and 2 of older formats", len(traces))
	}
	for name, data := range traces {
		t.Run(name, func(t *testing.T) {
			_, r, err := readAll(data)
			if err != nil {
				t.Fatal(err)
			}
			want := r.Stats()
			if want == nil || !want.Final {
				t.Fatalf("the trace does not end with final stats: %+v", want)
			}
			got := r.FinalStats(bytes.NewReader(data), int64(len(data)))
			if got == nil || *got != *want {
				t.Fatalf("FinalStats = %+v, want %+v", got, want)
			}
			if name == "s2" && got.Events[trace.DeviceTime] != 1 {
				t.Errorf("%d device times counted, want 1", got.Events[trace.DeviceTime])
			}
			// Cut anywhere in its last chunk, or with bytes after it, or
			// with a byte changed there: no final stats.
			for cut := int(want.Bytes); cut < len(data); cut++ {
				if s := r.FinalStats(bytes.NewReader(data[:cut]), int64(cut)); s != nil {
					t.Fatalf("cut to %d of %d bytes: %+v", cut, len(data), s)
				}
			}
			for _, extra := range [][]byte{{0}, data[want.Bytes:]} {
				longer := append(bytes.Clone(data), extra...)
				if s := r.FinalStats(bytes.NewReader(longer), int64(len(longer))); s != nil {
					t.Errorf("%d bytes after the final stats: %+v", len(extra), s)
				}
			}
			for i := int(want.Bytes); i < len(data); i++ {
				bad := bytes.Clone(data)
				bad[i] ^= 0x10
				if s := r.FinalStats(bytes.NewReader(bad), int64(len(bad))); s != nil {
					t.Fatalf("byte %d changed: %+v", i, s)
				}
			}
		})
	}
}
