package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// FuzzReader feeds arbitrary bytes to the reader, plain and salvaging. It
// must never panic, every failure must be an *Error, and whatever events it
// returns must survive a round trip through the writer.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(fuzzOne)
}

func fuzzOne(t *testing.T, data []byte) {
	for _, salvage := range []bool{false, true} {
		r, err := trace.NewReader(bytes.NewReader(data), trace.WithSalvage(salvage))
		if err != nil {
			var te *trace.Error
			if !errors.As(err, &te) {
				t.Fatalf("NewReader error is %T, not *trace.Error: %v", err, err)
			}
			return
		}
		var evs []trace.Event
		var text bytes.Buffer
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var te *trace.Error
				if !errors.As(err, &te) {
					t.Fatalf("Next error is %T, not *trace.Error: %v", err, err)
				}
				if salvage {
					t.Fatalf("salvaging reader failed: %v", err)
				}
				if _, err2 := r.Next(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				break
			}
			text.Write(trace.AppendRecord(nil, r.Header(), r.Dict(), &rec))
			if rec.Type == trace.RecordEvent {
				evs = append(evs, rec.Event)
			}
		}
		reencode(t, evs)
	}
}

// reencode writes evs (one batch per thread) and checks they read back the
// same. Events of kinds this package does not know are skipped, and
// arguments a newer writer appended are dropped (FORMAT.md §4): the writer
// writes kinds.go's table.
func reencode(t *testing.T, all []trace.Event) {
	var evs []trace.Event
	for _, e := range all {
		if s := e.Kind.Spec(); s != nil {
			clear(e.Args[len(s.Args):])
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return
	}
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, &trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	batches := map[uint32]*trace.Batch{}
	var order []uint32
	for i := range evs {
		b := batches[evs[i].Thread]
		if b == nil {
			b = w.Batch(evs[i].Thread)
			batches[evs[i].Thread] = b
			order = append(order, evs[i].Thread)
		}
		if err := b.AddEvent(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var want []trace.Event
	for _, th := range order {
		for i := range evs {
			if evs[i].Thread == th {
				want = append(want, evs[i])
			}
		}
		if err := w.WriteBatch(batches[th]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Clamped != 0 {
		t.Fatalf("the reader returned a thread's events out of time order (%d clamped)", s.Clamped)
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		e, err := r.ReadEvent()
		if err != nil || e != want[i] {
			t.Fatalf("re-encoded event %d = %+v, %v; want %+v", i, e, err, want[i])
		}
	}
	if _, err := r.ReadEvent(); err != io.EOF {
		t.Fatalf("re-encoded trace: %v, want io.EOF", err)
	}
}

// fuzzSeeds returns the inputs of the committed corpus
// (testdata/fuzz/FuzzReader), rewriting it with -update.
func fuzzSeeds(tb testing.TB) [][]byte {
	seeds := map[string][]byte{
		"small":  small(tb, tracetest.SmallOptions{}),
		"nodefs": small(tb, tracetest.SmallOptions{NoDefs: true}),
		"cut":    small(tb, tracetest.SmallOptions{NoClose: true}),
		"header": headerOnly(tb),
	}
	var steady bytes.Buffer
	w, _ := trace.NewWriter(&steady, &trace.Header{ClockSource: "monotonic"})
	b := w.Batch(0)
	for _, e := range tracetest.Steady(3, 300) {
		b.AddEvent(&e)
		if b.Len() == 100 {
			w.WriteBatch(b)
		}
	}
	w.Close()
	seeds["steady"] = steady.Bytes()
	// Kinds and arguments of a newer writer (FORMAT.md §4).
	seeds["newer"] = writeNewer(tb)
	seeds["wide"] = cat(kindsHeader(trace.AppendKindTable(nil, wideTable())), wideChunks(), finalStats)
	seeds["raw"] = rawSeed(tb)
	dir := filepath.Join("testdata", "fuzz", "FuzzReader")
	if *golden.Update {
		os.MkdirAll(dir, 0o755)
		for name, data := range seeds {
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			if err := os.WriteFile(filepath.Join(dir, "seed-"+name), []byte(content), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	var out [][]byte
	for _, s := range seeds {
		out = append(out, s)
	}
	return out
}

// rawSeed is a trace of two raw events chunks (FORMAT.md §5a) after a
// clock chunk: a buffer's records of several kinds (S and C flags, a tick
// argument) in two spans, the second starting from the state the first
// left.
func rawSeed(tb testing.TB) []byte {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		tb.Fatal(err)
	}
	w.WriteClock([]trace.ClockSync{{TSC: 1000, Mono: 5000}, {TSC: 26000, Mono: 15000}})
	var enc trace.RawEncoder
	var data []byte
	var counts [64]uint32
	add := func(k trace.Kind, ticks uint64, args ...uint64) {
		if data, err = enc.Append(data, k, ticks, args...); err != nil {
			tb.Fatal(err)
		}
		counts[k]++
	}
	for i := range uint64(4) {
		add(trace.RunBegin, 2000+100*i, 1+i, 7, 1, 2)
		add(trace.RunEnd, 2050+100*i, 1+i, 0)
	}
	var tickArgs [64]uint8
	tickArgs[trace.Dropped] = 1 << 2
	write := func(start *trace.RawState) {
		b := w.Batch(1)
		if err := b.SetRaw(data, &tickArgs, start, &counts, 1000); err != nil {
			tb.Fatal(err)
		}
		if err := w.WriteBatch(b); err != nil {
			tb.Fatal(err)
		}
		data, counts = nil, [64]uint32{}
	}
	write(nil)
	start := enc.State()
	add(trace.RunBegin, 2450, 5, 7, 1, 2)
	add(trace.Dropped, 2500, 3, trace.DropBufferFull, 2400)
	add(trace.RegionPush, 2600, 9)
	write(&start)
	w.Close()
	return buf.Bytes()
}

// FuzzChunkBody fuzzes what lies behind the chunk CRC, which FuzzReader
// rarely gets past: two chunk bodies of any type, wrapped into valid chunks
// after a valid header, then read as FuzzReader reads.
func FuzzChunkBody(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		bodies := chunkBodies(f, s)
		for i := 0; i+1 < len(bodies); i++ {
			f.Add(bodies[i].typ, bodies[i].body, bodies[i+1].typ, bodies[i+1].body)
		}
	}
	hdr := headerOnly(f)
	f.Fuzz(func(t *testing.T, typ1 byte, body1 []byte, typ2 byte, body2 []byte) {
		fuzzOne(t, cat(hdr, chunk(typ1, body1), chunk(typ2, body2), finalStats))
	})
}

// FuzzHeader fuzzes the header body, the kind table above all, behind a
// valid header CRC (which FuzzReader rarely gets past), followed by chunks
// whose decoding depends on the table: those of a newer writer's trace and
// of kinds wider than MaxArgs.
func FuzzHeader(f *testing.F) {
	newer := writeNewer(f)
	f.Add(headerBody(newer))
	f.Add(headerBody(small(f, tracetest.SmallOptions{})))
	// Both tables at once: every chunk decodes.
	both := newerTable()
	for _, d := range wideTable() {
		if d.Kind == kindWide || d.Kind == kindWideDf {
			both = append(both, d)
		}
	}
	slices.SortFunc(both, func(a, b trace.KindDesc) int { return int(a.Kind) - int(b.Kind) })
	table := trace.AppendKindTable(nil, both)
	f.Add(cat(binary.AppendUvarint([]byte{trace.TagKinds}, uint64(len(table))), table))
	offs := chunkOffsets(newer)
	chunks := cat(newer[offs[0]:offs[len(offs)-1]], wideChunks(), finalStats)
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzOne(t, cat(headerWithBody(body), chunks))
	})
}

// headerBody returns the header fields of a trace (FORMAT.md §1).
func headerBody(data []byte) []byte {
	return data[20 : 20+binary.LittleEndian.Uint32(data[12:])]
}

type chunkBody struct {
	typ  byte
	body []byte
}

// chunkBodies returns the decompressed bodies of a valid trace's chunks,
// with their types (without the codec, FORMAT.md §3).
func chunkBodies(tb testing.TB, data []byte) []chunkBody {
	dec, _ := zstd.NewReader(nil)
	var out []chunkBody
	for _, off := range chunkOffsets(data) {
		n := int(binary.LittleEndian.Uint32(data[off+5:]))
		payload := data[off+17 : off+17+n]
		var body []byte
		var err error
		if data[off+4]>>4 == 1 {
			body, err = s2.Decode(nil, payload)
		} else {
			body, err = dec.DecodeAll(payload, nil)
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, chunkBody{data[off+4] & 0x0f, body})
	}
	return out
}
