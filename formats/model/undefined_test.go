package model

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// TestFlattenDeviceNames flattens a launch on devices whose setup the
// runtime reported badly or never: a def without a mode (string id 0, or
// a string defined empty), with or without an index, and no def at all.
// Each launch's row names its device, "device#ID" when the def gives no
// name. An empty mode with index -1 made Flatten index an empty string.
func TestFlattenDeviceNames(t *testing.T) {
	const strEmpty, strCUDA = 1, 2
	defs := []trace.Def{
		{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{strEmpty}, Text: ""},
		{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{strCUDA}, Text: "CUDA"},
	}
	neg1 := uint64(1<<64 - 1)
	cases := []struct {
		name       string
		mode       uint64 // 0: no def
		index      uint64
		noDef      bool
		wantDevice string
	}{
		{"mode NULL, no index", 0, neg1, false, "device#1"},
		{"mode empty, no index", strEmpty, neg1, false, "device#1"},
		{"mode NULL, index 0", 0, 0, false, "device#1"},
		{"mode empty, index 3", strEmpty, 3, false, "device#1"},
		{"mode undefined string", 9, neg1, false, "string#9"},
		{"never set up", 0, 0, true, "device#1"},
		{"CUDA:2", strCUDA, 2, false, "CUDA:2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := trace.NewWriter(&buf, tracetest.Header())
			if err != nil {
				t.Fatal(err)
			}
			d := defs
			if !c.noDef {
				d = append(d[:len(d):len(d)], trace.Def{Kind: trace.DefDevice, Args: [trace.MaxArgs]uint64{1, c.mode, c.index, 0}})
			}
			if err := w.WriteDefs(d); err != nil {
				t.Fatal(err)
			}
			b := w.Batch(0)
			b.Add(trace.RunBegin, tracetest.MonoStart+10, 1, 0, 1, 0)
			b.Add(trace.RunEnd, tracetest.MonoStart+20, 1, trace.StatusOK)
			b.Add(trace.CopyBegin, tracetest.MonoStart+30, 2, 0xf9, 0, 5, 8, 0) // direction: D2H with unknown bits
			b.Add(trace.CopyEnd, tracetest.MonoStart+40, 2, 99)                 // status 99
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "t.occatrace")
			os.WriteFile(path, buf.Bytes(), 0o644)
			var got []Record
			var f *Flattener
			_, err = Read(path, 0, Options{}, func(p *Process, r *Row) error {
				if f == nil {
					f = NewFlattener(p)
				}
				var rec Record
				f.Flatten(&rec, r)
				got = append(got, rec)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("%d rows, want 2: %+v", len(got), got)
			}
			copyRow, run := got[0], got[1] // the launch waits for its device time
			if run.Kind != "run" || run.Device != c.wantDevice || run.DeviceID != 1 || run.Name != "kernel#0" && run.Name != "" {
				t.Errorf("launch row: kind %q device %q (id %d) name %q, want run on %q (1)", run.Kind, run.Device, run.DeviceID, run.Name, c.wantDevice)
			}
			if copyRow.Kind != "copy" || copyRow.Dir != "D2H" || copyRow.Status != 99 || copyRow.Aux != 0xf9 || copyRow.Memory != 0 || copyRow.Device != "" {
				t.Errorf("copy row: %+v", copyRow)
			}
		})
	}
}
