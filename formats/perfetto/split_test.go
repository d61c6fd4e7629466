package perfetto

import (
	"cmp"
	"os"
	"slices"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// A trace whose Perfetto output would pass MaxTrace is split by time into
// parts: each under MaxTrace, each a trace of its own (its tracks
// described, its names interned, no slice cut in two), and together the
// slices of the unsplit output, exactly.
func TestSplit(t *testing.T) {
	path := genTrace(t, 40000)
	type key struct {
		track, name string
		start, end  int64
	}
	slicesOf := func(data []byte) []key {
		d := decode(t, data)
		var out []key
		for u, ss := range d.slices(t) {
			for _, s := range ss {
				out = append(out, key{d.tracks[u], s.b.name, s.start, s.end})
			}
		}
		return out
	}
	cmpKey := func(a, b key) int {
		return cmp.Or(cmp.Compare(a.track, b.track), cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end), cmp.Compare(a.name, b.name))
	}
	whole := convertFile(t, path)
	want := slicesOf(whole)
	slices.SortFunc(want, cmpKey)

	defer func(m int64) { MaxTrace = m }(MaxTrace)
	MaxTrace = int64(len(whole)) / 5
	w, _ := convertWith(t, path)
	if len(w.Paths()) < 5 {
		t.Fatalf("%d parts of a %d-byte trace with parts of %d bytes", len(w.Paths()), len(whole), partSize())
	}
	var got []key
	for i, p := range w.Paths() {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) >= MaxTrace {
			t.Errorf("part %d: %d bytes, not under %d", i+1, len(data), MaxTrace)
		}
		got = append(got, slicesOf(data)...) // decode fails on a part that is not a trace of its own
		checkStart(t, data)
	}
	slices.SortFunc(got, cmpKey)
	if len(got) != len(want) || !slices.Equal(got, want) {
		t.Errorf("the parts hold %d slices, the whole trace %d; they differ", len(got), len(want))
	}
	if PartPath("d/events-rank00003.perfetto-trace", 2) != "d/events-rank00003-part0002.perfetto-trace" {
		t.Errorf("PartPath: %s", PartPath("d/events-rank00003.perfetto-trace", 2))
	}
}

// checkStart checks that a trace (or part) begins with the packet that
// clears incremental state, makes the incremental clock the default one
// and declares it: its timestamps need nothing from another file.
func checkStart(t *testing.T, data []byte) {
	t.Helper()
	first := fields(t, fields(t, data)[0].b)
	var flags, clock uint64
	var snap bool
	for _, f := range first {
		switch f.num {
		case fPktSeqFlags:
			flags = f.v
		case fPktDefaults:
			for _, g := range fields(t, f.b) {
				if g.num == fDefClock {
					clock = g.v
				}
			}
		case fPktClockSnapshot:
			snap = true
		}
	}
	if flags&seqIncrementalClr == 0 || clock != clockIncremental || !snap {
		t.Errorf("the first packet: flags %d, default clock %d, snapshot %v", flags, clock, snap)
	}
}

// Parts of a few rows each, while device intervals that begin after their
// launch wait in the queue: each part still ends every slice it begins
// (the queue is drained at each split) and holds its slices whole.
func TestSplitOften(t *testing.T) {
	defer func(m int64) { MaxTrace = m }(MaxTrace)
	MaxTrace = 4000
	w, p, _ := testWriter(t)
	const n = 400
	for i := int64(0); i < n; i++ {
		s := 1000 + 100*i
		r := analysis.Row{Kind: trace.RunBegin, Name: "k", Start: s, Dur: 10, Corr: uint64(i + 1), Device: 7, Stream: 1,
			DevStart: s + 20 + 30*(i%3), DevDur: 15}
		if err := w.Add(p, &r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if len(w.Paths()) < 10 {
		t.Fatalf("%d parts", len(w.Paths()))
	}
	total := 0
	for _, part := range w.Paths() {
		data, err := os.ReadFile(part)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) >= MaxTrace {
			t.Errorf("%s: %d bytes, not under %d", part, len(data), MaxTrace)
		}
		checkStart(t, data)
		d := decode(t, data) // fails on a slice cut in two
		for u, ss := range d.slices(t) {
			for _, s := range ss {
				if s.end-s.start != map[bool]int64{true: 15, false: 10}[d.tracks[u] == "stream 1"] {
					t.Errorf("%s: %s [%d, %d)", d.tracks[u], s.b.name, s.start, s.end)
				}
			}
			total += len(ss)
		}
	}
	if total != 2*n {
		t.Errorf("%d slices in the parts, want %d", total, 2*n)
	}
}
