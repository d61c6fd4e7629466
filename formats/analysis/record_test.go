package analysis

import (
	"reflect"
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/table"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// events_csv.go is the CSV encoder that Events declares; -update writes it.
func TestCSVCode(t *testing.T) {
	src, err := table.GoFile("analysis", "TestCSVCode", Events.GoCSV("appendEventsCSV", "Record"))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "events_csv.go", src)
}

// TestFlattenEveryField: Flatten sets every field of the record it fills,
// so that a reused record keeps nothing of the row before: flattened over
// a record whose every field holds something else, each row gives what it
// gives into a zero record.
func TestFlattenEveryField(t *testing.T) {
	p := &Process{Header: tracetest.Header(), Dict: &trace.Dict{}, Rank: 3}
	rows := []Row{
		{Kind: trace.RunBegin, Thread: 1, Start: 5e9, Dur: 700, Corr: 9, Device: 2, Stream: 4, Kernel: 6, Name: "axpy", DevStart: 5e9 + 100, DevDur: 500},
		{Kind: trace.RunBegin, Thread: 1, Start: 6e9, Dur: 700, Corr: 10, Device: 2, Kernel: 6, Name: "axpy", DevDur: -1},
		{Kind: trace.CopyBegin, Start: 7e9, Dur: 30, Src: 3, Dst: 5, Bytes: 4096, Aux: trace.CopyD2H, Memory: 3, Device: 2, DevDur: -1},
		{Kind: trace.MpiP2PBegin, Start: 8e9, Dur: 40, Name: "MPI_Isend", Peer: 1, Tag: 7, Comm: 2, Request: 11, Bytes: 64, DevDur: -1},
		{Kind: trace.RegionPush, Start: 9e9, Dur: 1000, Name: "step", Status: trace.StatusFailed, DevDur: -1},
	}
	f := NewFlattener(p)
	for _, r := range rows {
		var want, got Record
		f.Flatten(&want, &r)
		v := reflect.ValueOf(&got).Elem()
		for i := range v.NumField() {
			switch fv := v.Field(i); fv.Kind() {
			case reflect.String:
				fv.SetString("stale")
			default:
				fv.SetInt(-77)
			}
		}
		f.Flatten(&got, &r)
		if got != want {
			t.Errorf("%v row over a used record:\n%+v\nwant\n%+v", r.Kind, got, want)
		}
	}
}
