package trace_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// Names and the command line come from the program byte for byte: a reader
// hands them out as valid UTF-8, every invalid sequence replaced by U+FFFD,
// so that Parquet's strings, JSON and CSV stay readable by every engine.
func TestInvalidUTF8ReadsAsReplacement(t *testing.T) {
	h := tracetest.Header()
	h.Host = "node\xff7"
	h.Cmdline = []string{"./app", "caf\xe9", "ok"}
	var b bytes.Buffer
	w, err := trace.NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDefs([]trace.Def{{Kind: trace.DefString, Args: [trace.MaxArgs]uint64{1}, Text: "kern\xfe\xffel"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.ReadEvent(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	if got := r.Header().Host; got != "node\uFFFD7" {
		t.Errorf("host %q", got)
	}
	if got := r.Header().Cmdline; !slices.Equal(got, []string{"./app", "caf\uFFFD", "ok"}) {
		t.Errorf("cmdline %q", got)
	}
	if got := r.Dict().String(1); got != "kern\uFFFDel" {
		t.Errorf("string 1 %q", got)
	}
}

// Only the reasons that count events are events missing from the trace;
// names and definitions lost are counted apart.
func TestDroppedEventsAndNamesLost(t *testing.T) {
	var s trace.Stats
	s.Dropped[trace.DropBufferFull] = 5
	s.Dropped[trace.DropStringTable] = 7
	s.Dropped[trace.DropDefinitions] = 11
	s.Dropped[trace.DropReentrant] = 13
	s.Dropped[trace.DropTooDeep] = 17
	if got := s.TotalDropped(); got != 5+13+17 {
		t.Errorf("TotalDropped = %d, want %d", got, 5+13+17)
	}
	if got := s.NamesLost(); got != 7+11 {
		t.Errorf("NamesLost = %d, want %d", got, 7+11)
	}
}
