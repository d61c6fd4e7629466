package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// small returns the bytes of tracetest's small trace.
func small(t testing.TB, o tracetest.SmallOptions) []byte {
	var b bytes.Buffer
	if err := tracetest.WriteSmall(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// headerOnly returns a valid file header with no chunks.
func headerOnly(t testing.TB) []byte {
	var b bytes.Buffer
	if _, err := trace.NewWriter(&b, tracetest.Header()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// chunk builds a chunk by hand (FORMAT.md §3), with a correct CRC.
func chunk(typ byte, body []byte) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
	return rawChunk(typ, enc.EncodeAll(body, nil), uint32(len(body)))
}

// s2chunk builds a chunk compressed with S2 from a zstd chunk's payload.
func s2chunk(typ byte, zstdPayload []byte) []byte {
	dec, _ := zstd.NewReader(nil)
	body, err := dec.DecodeAll(zstdPayload, nil)
	if err != nil {
		panic(err)
	}
	return rawChunk(typ|1<<4, s2.Encode(nil, body), uint32(len(body)))
}

func rawChunk(typ byte, payload []byte, rawLen uint32) []byte {
	c := []byte("\x8aOCK")
	c = append(c, typ)
	c = binary.LittleEndian.AppendUint32(c, uint32(len(payload)))
	c = binary.LittleEndian.AppendUint32(c, rawLen)
	crc := crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), c[4:13])
	crc = crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), payload)
	c = binary.LittleEndian.AppendUint32(c, crc)
	return append(c, payload...)
}

// finalStats is a hand-made final stats chunk.
var finalStats = chunk(4, []byte{1, 0, 0, 0, 0, 0})

// chunkOffsets returns the offset of every chunk of a valid trace.
func chunkOffsets(data []byte) []int {
	var offs []int
	i := 20 + int(binary.LittleEndian.Uint32(data[12:]))
	for i < len(data) {
		offs = append(offs, i)
		i += 17 + int(binary.LittleEndian.Uint32(data[i+5:]))
	}
	return offs
}

// readAll reads every record and returns how many events came before the
// error (nil for a clean io.EOF).
func readAll(data []byte, opts ...trace.ReaderOption) (events int, r *trace.Reader, err error) {
	r, err = trace.NewReader(bytes.NewReader(data), opts...)
	if err != nil {
		return 0, nil, err
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return events, r, nil
		}
		if err != nil {
			return events, r, err
		}
		if rec.Type == trace.RecordEvent {
			events++
		}
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestCorrupt(t *testing.T) {
	good := small(t, tracetest.SmallOptions{})
	offs := chunkOffsets(good)
	hdr := headerOnly(t)
	// Chunk 3 is thread 0's batch of 20 events (defs, clock, events...).
	ev := offs[2]
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	events := func(thread, base uint64, n int, evs ...byte) []byte {
		b := binary.AppendUvarint(nil, thread)
		b = binary.AppendUvarint(b, base)
		b = binary.AppendUvarint(b, uint64(n))
		return chunk(2, append(b, evs...))
	}
	marker := byte(trace.Marker)

	cases := []struct {
		name   string
		data   []byte
		events int // events read before the error
		err    string
		is     error // errors.Is target, if any
	}{
		{"empty", nil, 0,
			"broken trace header at offset 0: the file is empty: not an occa-tools trace (was the traced process killed before it wrote anything?)", trace.ErrNotTrace},
		{"wrong magic", []byte("{\"traceEvents\": []}\n"), 0,
			`broken trace header at offset 0: not an occa-tools trace (the file starts with 7b 22 74 72 61 63 65 45, a trace with 89 4f 43 54 0d 0a 1a 0a)`, trace.ErrNotTrace},
		{"CRLF to LF", cat([]byte("\x89OCT\n\x1a\n"), good[8:]), 0,
			"broken trace header at offset 0: the file's line endings were converted: it went through a text-mode transfer; copy it again in binary mode", trace.ErrNotTrace},
		{"LF to CRLF", cat([]byte("\x89OCT\r\r\n\x1a\r\n"), good[8:]), 0,
			"broken trace header at offset 0: the file's line endings were converted: it went through a text-mode transfer; copy it again in binary mode", trace.ErrNotTrace},
		{"7-bit", cat([]byte{0x09}, good[1:]), 0,
			"broken trace header at offset 0: the file's first byte lost its high bit: it went through a 7-bit text transfer; copy it again in binary mode", trace.ErrNotTrace},
		{"cut in magic", good[:5], 0,
			"broken trace header at offset 0: the file ends inside the magic number (5 of 8 bytes)", io.ErrUnexpectedEOF},
		{"major 4", mod(func(b []byte) []byte { b[8], b[10] = 4, 1; return b }), 0,
			"broken trace header at offset 8: trace format version 4.1 is not supported: this occa-tools reads formats 1.x to 3.x; read it with the occa-tools release that wrote it (the header names it) or a newer one", trace.ErrVersion},
		{"major 0", mod(func(b []byte) []byte { b[8], b[10] = 0, 0; return b }), 0,
			"broken trace header at offset 8: trace format version 0.0 is not supported: this occa-tools reads formats 1.x to 3.x; read it with the occa-tools release that wrote it (the header names it) or a newer one", trace.ErrVersion},
		{"header crc", mod(func(b []byte) []byte { b[30] ^= 0x10; return b }), 0,
			"broken trace header at offset 20: header checksum mismatch (stored ", trace.ErrChecksum},
		{"header over limit", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[12:], 16<<20+1); return b }), 0,
			"broken trace header at offset 12: declared header length 16777217 is over the 16777216 limit", nil},
		{"cut in header prefix", good[:15], 0,
			"broken trace header at offset 15: the file ends inside the header (15 of 20 bytes)", io.ErrUnexpectedEOF},
		{"cut in header body", good[:60], 0,
			"broken trace header at offset 60: the file ends inside the header (60 of ", io.ErrUnexpectedEOF},
		{"bad header field", cat(headerWithBody([]byte{8, 3, 0x80, 0x80, 0x80})), 0,
			"broken trace header at offset 20: header field pid: value does not parse", nil},
		{"header field past end", cat(headerWithBody([]byte{7, 9, 'a'})), 0,
			"broken trace header at offset 20: header field 7 at body byte 0: length runs past the header", nil},

		{"no chunks", hdr, 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): trace ends without its final stats chunk: the process was killed or is still running; 0 chunks readable; the events before it are readable", trace.ErrNoFinalStats},
		{"cut at boundary", good[:offs[len(offs)-1]], 34,
			"broken trace at offset " + itoa(offs[len(offs)-1]) + " (chunk 8): trace ends without its final stats chunk: the process was killed or is still running; 8 chunks readable; the events before it are readable", io.ErrUnexpectedEOF},
		{"cut in chunk header", good[:ev+9], 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): the file ends inside a chunk header (9 of 17 bytes): the process was killed while writing or the file was cut; the events before it are readable", io.ErrUnexpectedEOF},
		{"cut in chunk payload", good[:ev+40], 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): the file ends inside a chunk (23 of its ", io.ErrUnexpectedEOF},
		{"cut after an events chunk", good[:offs[3]+30], 20,
			"broken trace at offset " + itoa(offs[3]) + " (chunk 3): the file ends inside a chunk", io.ErrUnexpectedEOF},
		{"flipped payload bit", mod(func(b []byte) []byte { b[ev+30] ^= 4; return b }), 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): chunk checksum mismatch (stored ", trace.ErrChecksum},
		{"flipped type", mod(func(b []byte) []byte { b[ev+4] = 1; return b }), 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): chunk checksum mismatch (stored ", trace.ErrChecksum},
		{"bad chunk magic", mod(func(b []byte) []byte { b[ev+1] = 'X'; return b }), 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): no chunk starts here (found 8a 58 43 4b, a chunk starts with 8a 4f 43 4b); the file is damaged; the events before it are readable", nil},
		{"payload over limit", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[ev+5:], 16<<20+1); return b }), 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): declared payload length 16777217 is over the 16777216 limit; the events before it are readable", nil},
		{"raw over limit", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[ev+9:], 64<<20+1); return b }), 0,
			"broken trace at offset " + itoa(ev) + " (chunk 2): declared uncompressed length 67108865 is over the 67108864 limit; the events before it are readable", nil},
		{"not zstd", cat(hdr, rawChunk(2, []byte("definitely not zstd"), 19)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): decompressing the chunk (zstd): invalid input: magic number mismatch; the events before it are readable", nil},
		{"raw length lie", cat(hdr, rawChunk(2, chunk(2, []byte{0, 0, 0})[17:], 2)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): decompressing the chunk (zstd): ", nil},
		{"not S2", cat(hdr, rawChunk(2|1<<4, []byte("\x13definitely not S2"), 19)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): decompressing the chunk (S2): s2: corrupt input; the events before it are readable", nil},
		{"S2 length lie", cat(hdr, rawChunk(2|1<<4, s2.Encode(nil, []byte{0, 0, 0}), 2)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): the chunk decompresses to 3 bytes, its header says 2; the events before it are readable", nil},
		{"unknown codec", cat(hdr, rawChunk(2|2<<4, []byte{0}, 1)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): the chunk's codec 2 is unknown (FORMAT.md §3 has 0 zstd and 1 S2): read the file with the occa-tools release that wrote it; the events before it are readable", nil},
		{"raw length short", cat(hdr, rawChunk(2, chunk(2, []byte{0, 0, 0})[17:], 5)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): the chunk decompresses to 3 bytes, its header says 5; the events before it are readable", nil},
		{"garbage kind", cat(hdr, events(1, 1000, 3, marker, 0, 0, marker, 5, 0, 60, 1, 0)), 2,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): event 2: unknown event kind 60 (the file's kind table has no such timed kind); the events before it are readable", nil},
		{"flag on fork", cat(hdr, events(1, 1000, 1, byte(trace.Fork)|0x40, 0)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): event 0 (fork): flags 0x40 do not apply to this kind; the events before it are readable", nil},
		{"varint overflow", cat(hdr, events(1, 1000, 2, marker, 0, 0, marker, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)), 1,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): event 1 (marker): time delta: bad varint (cut short or over 64 bits); the events before it are readable", nil},
		{"varint cut by chunk end", cat(hdr, events(1, 1000, 1, marker, 0, 0x80)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): event 0 (marker): argument 0: bad varint (cut short or over 64 bits); the events before it are readable", nil},
		{"time going backwards", cat(hdr, events(1, 1000, 2, marker, 0, 0, marker, 0xe8, 0x07, 0), events(1, 1500, 1, marker, 0, 0)), 2,
			"broken trace at offset " + itoa(len(hdr)+len(events(1, 1000, 2, marker, 0, 0, marker, 0xe8, 0x07, 0))) + " (chunk 1): thread 1: batch starts at 1500 ns, before its previous batch ended at 2000 ns (time going backwards); the events before it are readable", nil},
		{"time overflow", cat(hdr, events(1, 1<<62, 2, marker, 0, 0, marker, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0)), 1,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): event 1 (marker): time delta 9223372036854775807 overflows the clock (time going backwards); the events before it are readable", nil},
		{"count too large", cat(hdr, events(1, 1000, 100, marker, 0, 0)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): events chunk: declares 100 events but has room for at most 1; the events before it are readable", nil},
		{"count too small", cat(hdr, events(1, 1000, 1, marker, 0, 0, marker, 0, 0)), 1,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): 3 unexpected bytes after the last record of the chunk; the events before it are readable", nil},
		{"thread out of range", cat(hdr, events(1<<32, 1000, 1, marker, 0, 0)), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): events chunk: thread index 4294967296 is out of range; the events before it are readable", nil},
		{"unknown def kind", cat(hdr, chunk(1, []byte{1, 99, 1})), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): def 0: unknown definition kind 99 (the file's kind table has no such definition kind); the events before it are readable", nil},
		{"string over limit", cat(hdr, chunk(1, []byte{1, 64, 1, 0x81, 0x80, 0x40})), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): def 0 (def_string): text length 1048577 is over the 1048576 limit; the events before it are readable", nil},
		{"string past chunk", cat(hdr, chunk(1, []byte{1, 64, 1, 5, 'a'})), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): def 0 (def_string): text length 5 runs past the chunk; the events before it are readable", nil},
		{"bad stats", cat(hdr, chunk(4, []byte{1, 0, 0, 0, 1, 70, 1, 0})), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): stats chunk: event count for kind 70, beyond the timed kinds; the events before it are readable", nil},
		{"bad clock", cat(hdr, chunk(3, []byte{5, 1})), 0,
			"broken trace at offset " + itoa(len(hdr)) + " (chunk 0): clock chunk: bad count; the events before it are readable", nil},

		// Not errors.
		{"intact", good, 34, "", nil},
		{"S2 chunk", cat(hdr, s2chunk(2, events(1, 1000, 1, marker, 0, 0)[17:]), finalStats), 1, "", nil},
		{"unknown chunk type", cat(hdr, chunk(9, []byte("from a later minor version")), finalStats), 0, "", nil},
		{"stats after final", cat(hdr, finalStats, chunk(4, []byte{0, 0, 0, 0, 0, 0})), 0,
			"broken trace at offset " + itoa(len(hdr)+len(finalStats)*2) + " (chunk 2): trace ends without its final stats chunk: the process was killed or is still running; 2 chunks readable; the events before it are readable", nil},
		{"minor version 7", mod(func(b []byte) []byte { b[10] = 7; return b }), 34, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, _, err := readAll(c.data)
			if c.err == "" {
				if err != nil {
					t.Fatalf("got error %v", err)
				}
			} else {
				var te *trace.Error
				if err == nil || !strings.HasPrefix(err.Error(), c.err) || !errors.As(err, &te) {
					t.Fatalf("got error\n\t%v\nwant (*trace.Error)\n\t%s", err, c.err)
				}
				if c.is != nil && !errors.Is(err, c.is) {
					t.Errorf("errors.Is(err, %v) = false", c.is)
				}
			}
			if n != c.events {
				t.Errorf("read %d events before the error, want %d", n, c.events)
			}
		})
	}
}

// headerWithBody returns a file header holding body as its fields.
func headerWithBody(body []byte) []byte {
	b := []byte("\x89OCT\r\n\x1a\n\x01\x00\x00\x00")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, body...)
}

func itoa(i int) string { return strconvItoa(i) }

// TestTruncateEverywhere cuts the small trace at every length: the reader
// must return every chunk before the cut, then a truncation error; only the
// full file ends with io.EOF.
func TestTruncateEverywhere(t *testing.T) {
	good := small(t, tracetest.SmallOptions{})
	offs := chunkOffsets(good)
	for n := 0; n < len(good); n++ {
		_, r, err := readAll(good[:n])
		var te *trace.Error
		if !errors.As(err, &te) || !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, trace.ErrNotTrace) {
			t.Fatalf("cut at %d: got %v, want a truncation *trace.Error", n, err)
		}
		if r == nil {
			continue
		}
		whole := 0
		for _, o := range offs[1:] {
			if o <= n {
				whole++
			}
		}
		if r.Chunks() != whole {
			t.Fatalf("cut at %d: read %d chunks, want %d", n, r.Chunks(), whole)
		}
	}
	if _, _, err := readAll(good); err != nil {
		t.Fatal(err)
	}
}

func TestSalvage(t *testing.T) {
	good := small(t, tracetest.SmallOptions{})
	offs := chunkOffsets(good)
	// Damage the first events chunk and the middle of the file.
	bad := bytes.Clone(good)
	bad[offs[2]+30] ^= 1
	bad = cat(bad[:offs[4]], []byte("garbage\x8aOCKmore garbage"), bad[offs[4]:])
	n, r, err := readAll(bad, trace.WithSalvage(true))
	if err != nil {
		t.Fatal(err)
	}
	if n != 34-20 {
		t.Errorf("salvaged %d events, want 14", n)
	}
	if !r.Complete() {
		t.Error("salvaged trace not complete")
	}
	chunk2 := offs[3] - offs[2]
	if r.Skipped() != int64(chunk2+len("garbage\x8aOCKmore garbage")) {
		t.Errorf("skipped %d bytes, want %d", r.Skipped(), chunk2+len("garbage\x8aOCKmore garbage"))
	}
	if len(r.Problems()) != 2 || !errors.Is(r.Problems()[0], trace.ErrChecksum) {
		t.Errorf("problems = %v", r.Problems())
	}

	// A cut trace salvages to its complete chunks, then io.EOF.
	n, r, err = readAll(good[:offs[4]+20], trace.WithSalvage(true))
	if err != nil || n != 27 || r.Complete() || len(r.Problems()) != 1 || r.Skipped() != 20 {
		t.Errorf("cut: %d events, err %v, complete %v, problems %v, skipped %d", n, err, r.Complete(), r.Problems(), r.Skipped())
	}
	// A content error drops the rest of its chunk only.
	hdr := headerOnly(t)
	body := []byte{1, 10, 2, byte(trace.Marker), 0, 0, 60, 0}
	n, r, err = readAll(cat(hdr, chunk(2, body), good[offs[2]:]), trace.WithSalvage(true))
	if err != nil || n != 35 || len(r.Problems()) != 1 || !r.Complete() {
		t.Errorf("content error: %d events, err %v, problems %v", n, err, r.Problems())
	}
	// Events returned from a broken chunk still count for the thread's order.
	m := byte(trace.Marker)
	broken := chunk(2, []byte{1, 10, 3, m, 0, 0, m, 100, 0, 60, 0})
	n, r, err = readAll(cat(hdr, broken, chunk(2, []byte{1, 50, 1, m, 0, 0}), finalStats), trace.WithSalvage(true))
	if err != nil || n != 2 || len(r.Problems()) != 2 || !strings.Contains(r.Problems()[1].Error(), "time going backwards") {
		t.Errorf("order after a content error: %d events, err %v, problems %v", n, err, r.Problems())
	}
}

// TestReadError checks that an I/O error is reported, salvaging or not.
func TestReadError(t *testing.T) {
	good := small(t, tracetest.SmallOptions{})
	for _, salvage := range []bool{false, true} {
		cut := chunkOffsets(good)[2] + 100 // inside the first events chunk
		r, err := trace.NewReader(io.MultiReader(bytes.NewReader(good[:cut]), errReader{}), trace.WithSalvage(salvage))
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = r.Next()
		}
		if !errors.Is(err, errDiskFull) {
			t.Errorf("salvage=%v: got %v, want the read error", salvage, err)
		}
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errDiskFull }
