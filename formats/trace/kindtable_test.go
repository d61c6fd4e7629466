package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// Kinds of the synthetic newer writer.
const (
	kindOMP    = trace.Kind(60) // a timed kind this reader does not know
	kindOMPDef = trace.Kind(80) // a definition kind with a text
	kindWide   = trace.Kind(61) // a timed kind with more than MaxArgs arguments
	kindWideDf = trace.Kind(90) // a definition kind with more than MaxArgs arguments and a text
)

// newerTable is the kind table of a newer writer: run_begin has an argument
// more, and kinds 60 and 80 are new.
func newerTable() []trace.KindDesc {
	t := trace.KindTable()
	for i := range t {
		if t[i].Kind == trace.RunBegin {
			t[i].Args = append(t[i].Args, trace.Arg{Name: "queue", Type: trace.ArgUint})
		}
	}
	t = append(t,
		trace.KindDesc{Kind: kindOMP, Name: "future_begin", Begin: true,
			Args: []trace.Arg{{Name: "corr", Type: trace.ArgCorr}, {Name: "threads", Type: trace.ArgUint}}},
		trace.KindDesc{Kind: kindOMPDef, Name: "def_omp_region", Text: true,
			Args: []trace.Arg{{Name: "region", Type: trace.ArgUint}}})
	slices.SortFunc(t, func(a, b trace.KindDesc) int { return int(a.Kind) - int(b.Kind) })
	return t
}

func ev(k trace.Kind, th uint32, t int64, args ...uint64) trace.Event {
	e := trace.Event{Kind: k, Thread: th, Time: t}
	copy(e.Args[:], args)
	return e
}

// newerEvents are written by the newer writer, all on thread 1.
var newerEvents = []trace.Event{
	ev(trace.RunBegin, 1, 1000, 5, 1, 1, 0, 42),
	ev(kindOMP, 1, 1100, 6, 8), // corr = prev+1 of a begin kind: C flag
	ev(kindOMP, 1, 1200, 7, 8), // C and S flags
	ev(trace.RunEnd, 1, 1300, 7, trace.StatusOK),
	ev(trace.RunBegin, 1, 1400, 8, 1, 1, 0, 42), // S flag covers the appended argument
	ev(trace.RunBegin, 1, 1500, 20, 2, 1, 0, 43),
	ev(trace.Marker, 1, 1600, tracetest.StrStep),
}

// writeNewer writes a trace as a newer writer with newerTable would.
func writeNewer(tb testing.TB) []byte {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header(), trace.WithKindTable(newerTable()))
	if err != nil {
		tb.Fatal(err)
	}
	defs := append(tracetest.Defs(), trace.Def{Kind: kindOMPDef, Args: [trace.MaxArgs]uint64{7}, Text: "outer"})
	if err := w.WriteDefs(defs); err != nil {
		tb.Fatal(err)
	}
	nargs := map[trace.Kind]int{}
	for _, d := range newerTable() {
		nargs[d.Kind] = len(d.Args)
	}
	b := w.Batch(1)
	for _, e := range newerEvents {
		if err := b.Add(e.Kind, e.Time, e.Args[:nargs[e.Kind]]...); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.WriteBatch(b); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestNewerWriter reads a trace whose writer knew more kinds and arguments
// than this reader: everything decodes, unknown kinds come back with their
// number and no Spec, appended arguments are kept.
func TestNewerWriter(t *testing.T) {
	data := writeNewer(t)
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Header().KindDesc(kindOMP); d == nil || d.Name != "future_begin" || d.ArgIndex("threads") != 1 {
		t.Errorf("KindDesc(60) = %+v", d)
	}
	var got []trace.Event
	var defs []trace.Def
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Type {
		case trace.RecordEvent:
			got = append(got, rec.Event)
		case trace.RecordDef:
			defs = append(defs, rec.Def)
		}
	}
	if !slices.Equal(got, newerEvents) {
		t.Errorf("events:\n got %+v\nwant %+v", got, newerEvents)
	}
	if got[1].Kind.Spec() != nil || got[1].Kind.String() != "kind(60)" {
		t.Errorf("kind 60: Spec %v, String %q", got[1].Kind.Spec(), got[1].Kind)
	}
	if c, ok := got[0].Corr(); !ok || c != 5 {
		t.Errorf("run_begin Corr = %d, %v", c, ok)
	}
	last := defs[len(defs)-1]
	if want := (trace.Def{Kind: kindOMPDef, Args: [trace.MaxArgs]uint64{7}, Text: "outer"}); last != want {
		t.Errorf("last def = %+v, want %+v", last, want)
	}
	if k := r.Dict().Kernel(1).Name; k != "axpy" {
		t.Errorf("kernel 1 = %q: the known defs around the unknown one were not absorbed", k)
	}
	s := r.Stats()
	if s.Events[kindOMP] != 2 || s.Events[trace.RunBegin] != 3 || s.TotalEvents() != uint64(len(newerEvents)) || !r.Complete() {
		t.Errorf("stats %+v", s)
	}

	// The dump names the new kind kind(60), with the file's argument names,
	// and lists the table entries that differ from this reader's.
	dump := string(dumpString(data))
	for _, want := range []string{
		"\nheader kind=11 name=run_begin flags=begin args=corr:corr,kernel:kernel,device:device,stream:stream,queue:uint\n" +
			"header kind=60 name=future_begin flags=begin args=corr:corr,threads:uint\n" +
			"header kind=80 name=def_omp_region flags=text args=region:uint\n",
		"\nkind(80) region=7 \"outer\"\n",
		"\n-999.999999000 t1 run_begin corr=5 kernel=1(axpy) device=1(CUDA:0) stream=0 queue=42\n" +
			"-999.999998900 t1 kind(60) corr=6 threads=8\n" +
			"-999.999998800 t1 kind(60) corr=7 threads=8\n" +
			"-999.999998700 t1 run_end corr=7 status=0\n" +
			"-999.999998600 t1 run_begin corr=8 kernel=1(axpy) device=1(CUDA:0) stream=0 queue=42\n" +
			"-999.999998500 t1 run_begin corr=20 kernel=2(dot) device=1(CUDA:0) stream=0 queue=43\n" +
			"-999.999998400 t1 marker name=11(\"timestep\")\n" +
			"stats final=1 end=-999.999998400 bytes=",
		"events=run_begin:3,run_end:1,marker:1,kind(60):2 dropped=none\n",
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("dump lacks\n%s\ndump:\n%s", want, dump)
		}
	}
	if strings.Contains(dump, "error") {
		t.Errorf("dump failed:\n%s", dump)
	}

	// What this reader knows re-encodes; the new kind is skipped.
	reencode(t, got)
}

// kindsHeader returns a file header whose body is only a kinds field.
func kindsHeader(value []byte) []byte {
	body := binary.AppendUvarint(nil, trace.TagKinds)
	body = binary.AppendUvarint(body, uint64(len(value)))
	return headerWithBody(append(body, value...))
}

// wideTable is the kind table with a timed and a definition kind that have
// more arguments than MaxArgs.
func wideTable() []trace.KindDesc {
	u := trace.Arg{Name: "a", Type: trace.ArgUint}
	table := append(trace.KindTable(),
		trace.KindDesc{Kind: kindWide, Name: "wide", Args: []trace.Arg{u, u, u, u, u, u, {Name: "c", Type: trace.ArgCorr}, u}},
		trace.KindDesc{Kind: kindWideDf, Name: "def_wide", Text: true, Args: []trace.Arg{u, u, u, u, u, u, {Name: "b", Type: trace.ArgInt}}})
	slices.SortFunc(table, func(a, b trace.KindDesc) int { return int(a.Kind) - int(b.Kind) })
	return table
}

// wideChunks are a defs and an events chunk (thread 2) of wideTable's kinds,
// made by hand: the writer takes at most MaxArgs arguments.
func wideChunks() []byte {
	w := byte(kindWide)
	events := []byte{2, 0xe8, 0x07, 3, // thread 2, base 1000, 3 events
		w, 0, 1, 2, 3, 4, 5, 6, 20, 99, // corr 10 (zig-zag 20), last argument 99
		w | 0xc0, 5, // S and C: every argument as before, corr 10
		byte(trace.RunEnd) | 0x80, 5, 0, // C: corr 10 (run_end is no begin)
	}
	defs := []byte{1, byte(kindWideDf), 1, 2, 3, 4, 5, 6, 3, 2, 'h', 'i'}
	return cat(chunk(1, defs), chunk(2, events))
}

// TestWideKinds reads kinds with more arguments than MaxArgs: the reader
// keeps the first MaxArgs and drops the rest, still following a correlation
// id among them.
func TestWideKinds(t *testing.T) {
	data := cat(kindsHeader(trace.AppendKindTable(nil, wideTable())), wideChunks(), finalStats)
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []trace.Event
	var def trace.Def
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type == trace.RecordEvent {
			got = append(got, rec.Event)
		} else if rec.Type == trace.RecordDef {
			def = rec.Def
		}
	}
	want := []trace.Event{
		ev(kindWide, 2, 1000, 1, 2, 3, 4, 5, 6),
		ev(kindWide, 2, 1005, 1, 2, 3, 4, 5, 6),
		ev(trace.RunEnd, 2, 1010, 10, 0),
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	if want := (trace.Def{Kind: kindWideDf, Args: [trace.MaxArgs]uint64{1, 2, 3, 4, 5, 6}, Text: "hi"}); def != want {
		t.Errorf("def = %+v, want %+v", def, want)
	}
}

// TestKindTableIncompatible: a table that changes a kind this reader knows
// in a way it cannot read is rejected, naming the kind.
func TestKindTableIncompatible(t *testing.T) {
	edit := func(k trace.Kind, f func(d *trace.KindDesc)) []byte {
		table := trace.KindTable()
		for i := range table {
			if table[i].Kind == k {
				f(&table[i])
			}
		}
		return trace.AppendKindTable(nil, table)
	}
	const tail = "; the trace was written by an occa-tools that did not record its version, whose format should have had a new major version: read it with that release"
	for _, c := range []struct {
		name  string
		table []byte
		err   string
	}{
		{"fewer args", edit(trace.RunBegin, func(d *trace.KindDesc) { d.Args = d.Args[:3] }),
			"kind 11 (run_begin): the file's kind table gives it 3 arguments, this reader needs 4"},
		{"other type", edit(trace.CopyBegin, func(d *trace.KindDesc) { d.Args[4].Type = trace.ArgInt }),
			"kind 7 (copy_begin): argument 4 (bytes) is of type int in the file's kind table, uint in this reader"},
		{"renamed", edit(trace.Marker, func(d *trace.KindDesc) { d.Name = "mark" }),
			`kind 22 (marker): the file's kind table calls it "mark"`},
		{"begin flag", edit(trace.RunEnd, func(d *trace.KindDesc) { d.Begin = true }),
			"kind 12 (run_end): the file's kind table sets its begin flag to true, this reader has false"},
		{"text flag", edit(trace.DefString, func(d *trace.KindDesc) { d.Text = false }),
			"kind 64 (def_string): the file's kind table sets its text flag to false, this reader has true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 2 { // the second time from the tables read lately
				_, err := trace.NewReader(bytes.NewReader(kindsHeader(c.table)))
				want := "broken trace header at offset 20: the file's kind table is incompatible with this reader's: " + c.err + tail
				var te *trace.Error
				if err == nil || err.Error() != want || !errors.As(err, &te) || !errors.Is(err, trace.ErrVersion) {
					t.Errorf("got %v\nwant %s", err, want)
				}
			}
		})
	}
	// Argument names are informative: a renamed argument reads.
	if _, err := trace.NewReader(bytes.NewReader(kindsHeader(edit(trace.RunBegin, func(d *trace.KindDesc) { d.Args[3].Name = "queue" })))); err != nil {
		t.Errorf("renamed argument: %v", err)
	}
	// A table may lack kinds: their events then do not decode.
	table := trace.KindTable()[1:]
	evs := chunk(2, []byte{0, 0, 1, byte(trace.DeviceSetupBegin), 0, 1, 0, 0, 0})
	if n, _, err := readAll(cat(kindsHeader(trace.AppendKindTable(nil, table)), evs, finalStats)); n != 0 || err == nil ||
		!strings.Contains(err.Error(), "event 0: unknown event kind 1 (the file's kind table has no such timed kind)") {
		t.Errorf("kind missing from the table: %d events, %v", n, err)
	}
}

// Headers with the same kind table share one parsed table; tables that
// differ, more of them than are kept, are each read as written.
func TestKindTableShared(t *testing.T) {
	a, err := trace.NewReader(bytes.NewReader(kindsHeader(trace.AppendKindTable(nil, trace.KindTable()))))
	if err != nil {
		t.Fatal(err)
	}
	b, err := trace.NewReader(bytes.NewReader(kindsHeader(trace.AppendKindTable(nil, trace.KindTable()))))
	if err != nil {
		t.Fatal(err)
	}
	if ka, kb := a.Header().Kinds, b.Header().Kinds; len(ka) == 0 || &ka[0] != &kb[0] {
		t.Errorf("two headers of one table hold %d and %d kinds apart", len(ka), len(kb))
	}
	for round := range 2 {
		for i := range 6 { // argument names are informative: each table reads
			table := trace.KindTable()
			for j := range table {
				if table[j].Kind == trace.RunBegin {
					table[j].Args[3].Name = fmt.Sprintf("queue%d", i)
				}
			}
			r, err := trace.NewReader(bytes.NewReader(kindsHeader(trace.AppendKindTable(nil, table))))
			if err != nil {
				t.Fatalf("round %d, table %d: %v", round, i, err)
			}
			if got := r.Header().KindDesc(trace.RunBegin).Args[3].Name; got != fmt.Sprintf("queue%d", i) {
				t.Errorf("round %d, table %d: run_begin's argument 3 is %q", round, i, got)
			}
		}
	}
}

// TestKindTableMalformed feeds broken tables: each is a header error, never
// a panic.
func TestKindTableMalformed(t *testing.T) {
	uv := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	entry := func(k, flags uint64, name string, args ...trace.Arg) []byte {
		b := cat(uv(k, flags, uint64(len(name))), []byte(name), uv(uint64(len(args))))
		for _, a := range args {
			b = cat(b, uv(uint64(a.Type), uint64(len(a.Name))), []byte(a.Name))
		}
		return b
	}
	a := func(name string, typ trace.ArgType) trace.Arg { return trace.Arg{Name: name, Type: typ} }
	argCut := cat(uv(1), entry(1, 0, "a", a("x", trace.ArgUint), a("y", trace.ArgUint)))
	many := make([]trace.Arg, 17)
	for i := range many {
		many[i] = a("x", trace.ArgUint)
	}
	for _, c := range []struct {
		name, err string
		value     []byte
	}{
		{"empty", "bad entry count varint", nil},
		{"too many", "300 entries, over the 255 kinds there are", uv(300)},
		{"count over room", "declares 2 entries but has room for at most 1", cat(uv(2), entry(1, 0, "a"))},
		{"kind 0", "entry 0: kind 0 is out of order or out of range", cat(uv(1), entry(0, 0, "a"))},
		{"kind 256", "entry 0: kind 256 is out of order or out of range", cat(uv(1), entry(256, 0, "a"))},
		{"out of order", "entry 1: kind 3 is out of order", cat(uv(2), entry(4, 0, "a"), entry(3, 0, "b"))},
		{"duplicate", "entry 1: kind 4 is out of order", cat(uv(2), entry(4, 0, "a"), entry(4, 0, "b"))},
		{"unknown flag", "kind 1: unknown flags 0x4", cat(uv(1), entry(1, 4, "a"))},
		{"name past end", "kind 1: name: length runs past the field", cat(uv(1), uv(1, 0, 50), []byte("abc"))},
		{"empty name", "kind 1: name: length 0 is out of range 1..64", cat(uv(1), entry(1, 0, ""), []byte{0, 0})},
		{"long name", "kind 1: name: length 65 is out of range 1..64", cat(uv(1), entry(1, 0, strings.Repeat("a", 65)))},
		{"bad name", `kind 1: name: "a b": names are [a-z][a-z0-9_]*`, cat(uv(1), entry(1, 0, "a b"))},
		{"digit first", `kind 1: name: "1a": names are [a-z][a-z0-9_]*`, cat(uv(1), entry(1, 0, "1a"))},
		{"too many args", "kind 1: 17 arguments, over the 16 limit", cat(uv(1), entry(1, 0, "a", many...))},
		{"type 0", "kind 1 (a): argument 0: type 0 is out of range 1..127", cat(uv(1), entry(1, 0, "a", a("x", 0)))},
		{"type 128", "kind 1: argument 0: type 128 is out of range 1..127", cat(uv(1), entry(1, 0, "a", a("x", 128)))},
		{"unnamed unknown type", `kind 1 (a): argument 0: name: "type(11)": names are`, cat(uv(1), entry(1, 0, "a", a("", 11)))},
		{"arg cut", "kind 1: argument 1: name: length runs past the field", argCut[:len(argCut)-1]},
		{"two corr", "kind 1 (a): 2 correlation id arguments; a kind has at most one", cat(uv(1), entry(1, 0, "a", a("c", trace.ArgCorr), a("d", trace.ArgCorr)))},
		{"begin on def", "kind 64 (d): the begin flag is set on a definition kind", cat(uv(1), entry(64, 1, "d"))},
		{"text on timed", "kind 1 (a): the text flag is set on a timed kind", cat(uv(1), entry(1, 2, "a"))},
		{"trailing", "1 unexpected bytes after the last entry", cat(uv(1), entry(1, 0, "a"), []byte{0})},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := trace.NewReader(bytes.NewReader(kindsHeader(c.value)))
			want := "broken trace header at offset 20: header field kinds: " + c.err
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %v\nwant %s", err, want)
			}
		})
	}
	// No table at all.
	_, err := trace.NewReader(bytes.NewReader(headerWithBody(nil)))
	if want := "broken trace header at offset 20: the header has no kind table (field kinds): the file was not written by a format 1.0 writer"; err == nil || err.Error() != want {
		t.Errorf("no table: %v", err)
	}
	// A table a writer cannot write with.
	bad := []trace.KindDesc{{Kind: 61, Name: "x", Args: make([]trace.Arg, 7)}}
	for i := range bad[0].Args {
		bad[0].Args[i] = a("x", trace.ArgUint)
	}
	if _, err := trace.NewWriter(io.Discard, tracetest.Header(), trace.WithKindTable(bad)); err == nil || !strings.Contains(err.Error(), "kind 61 (x): 7 arguments, over the writer's 6") {
		t.Errorf("writer with 7 arguments: %v", err)
	}
}

func TestKindNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{trace.TriggerActionName(trace.TriggerOpen), "open"},
		{trace.TriggerActionName(trace.TriggerBudget), "budget"},
		{trace.TriggerActionName(0), ""},
		{trace.TriggerActionName(6), ""},
		{trace.TriggerCauseName(trace.CauseLaunch), "launch"},
		{trace.TriggerCauseName(trace.CauseBudget), "budget"},
		{trace.TriggerCauseName(7), ""},
		{trace.ArgStream.String(), "stream"},
		{trace.ArgType(11).String(), "type(11)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// KindTable is a copy.
	kt := trace.KindTable()
	kt[0].Args[0].Name = "changed"
	if trace.KindTable()[0].Args[0].Name != "corr" || trace.DeviceSetupBegin.Spec().Args[0].Name != "corr" {
		t.Error("KindTable shares its Args with kinds.go")
	}
}

// TestKindTableNotCopied: a kinds field among a header's Unknown fields (a
// converter copying them) does not replace the writer's own table.
func TestKindTableNotCopied(t *testing.T) {
	h := tracetest.Header()
	h.Unknown = []trace.HeaderField{{Tag: trace.TagKinds, Value: []byte{1, 1, 0, 1, 'x', 0}}}
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Header().Kinds) != len(trace.KindTable()) || len(r.Header().Unknown) != 0 {
		t.Errorf("kinds %d entries, unknown fields %v", len(r.Header().Kinds), r.Header().Unknown)
	}
}
