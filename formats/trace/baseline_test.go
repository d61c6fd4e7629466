package trace_test

import (
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/libocca/occa-tools/formats/trace"
)

// The baseline is the plain encoding the measured anchors use
// (shared/notes/measured-anchors.md: "delta + varint + zstd SpeedFastest",
// 5.1 B/event): kind byte, uvarint time delta, every argument as a uvarint
// of its raw value, one zstd frame per batch. Benchmarking it in the same
// run as the real format gives ratios that survive the machine's load.

func baselineEncode(enc *zstd.Encoder, evs []trace.Event, raw, out []byte) ([]byte, []byte) {
	raw = raw[:0]
	var last int64
	for i := range evs {
		e := &evs[i]
		raw = append(raw, byte(e.Kind))
		raw = binary.AppendUvarint(raw, uint64(e.Time-last))
		last = e.Time
		for j := range len(e.Kind.Spec().Args) {
			raw = binary.AppendUvarint(raw, e.Args[j])
		}
	}
	return raw, enc.EncodeAll(raw, out)
}

func BenchmarkWriteBaseline(b *testing.B) {
	evs := steady()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	var raw, out []byte
	var size int
	b.ResetTimer()
	for range b.N {
		size = 0
		for i := 0; i < len(evs); i += benchBatch {
			raw, out = baselineEncode(enc, evs[i:min(i+benchBatch, len(evs))], raw, out[:0])
			size += len(out)
		}
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(size)/float64(len(evs)), "B/event")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkReadBaseline(b *testing.B) {
	evs := steady()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	var frames [][]byte
	var raw []byte
	for i := 0; i < len(evs); i += benchBatch {
		var out []byte
		raw, out = baselineEncode(enc, evs[i:min(i+benchBatch, len(evs))], raw, nil)
		frames = append(frames, out)
	}
	b.ResetTimer()
	var e trace.Event
	for range b.N {
		n := 0
		for _, f := range frames {
			raw, _ = dec.DecodeAll(f, raw[:0])
			var t int64
			for i := 0; i < len(raw); {
				e.Kind = trace.Kind(raw[i])
				d, k := binary.Uvarint(raw[i+1:])
				i += 1 + k
				t += int64(d)
				e.Time = t
				for j := range len(e.Kind.Spec().Args) {
					e.Args[j], k = binary.Uvarint(raw[i:])
					i += k
				}
				n++
			}
		}
		if n != len(evs) {
			b.Fatalf("decoded %d events", n)
		}
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}
