package perfetto

import (
	"bytes"
	"compress/zlib"
	stdadler32 "hash/adler32"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
)

// adler32 agrees with hash/adler32 on every length up to 300 (each tail
// past the words), on all-0xff input (the largest sums) across reductions,
// and on random bytes.
func TestAdler32(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	check := func(p []byte) {
		t.Helper()
		if got, want := adler32(p), stdadler32.Checksum(p); got != want {
			t.Fatalf("adler32 of %d bytes = %#08x, want %#08x", len(p), got, want)
		}
	}
	for n := range 301 {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		check(p)
		check(bytes.Repeat([]byte{0xff}, n))
	}
	for _, n := range []int{adlerBlock - 1, adlerBlock, adlerBlock + 7, 3*adlerBlock + 5} {
		check(bytes.Repeat([]byte{0xff}, n))
	}
}

func FuzzAdler32(f *testing.F) {
	f.Add([]byte("Adler-32"))
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := adler32(p), stdadler32.Checksum(p); got != want {
			t.Fatalf("adler32(%q) = %#08x, want %#08x", p, got, want)
		}
	})
}

// pack's packet is one compressed_packets field, and its stream a zlib
// stream: Go's zlib reader, which checks the header and the checksum,
// gives back the packets, and the header and checksum are the ones a
// zlib.Writer at BestSpeed writes. The streams' lengths take varints of every size from one byte to
// four.
func TestPackZlib(t *testing.T) {
	var z packetZipper
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		n      int
		random bool // incompressible: a stream of over 2 MiB
	}{{0, false}, {1, false}, {1000, false}, {3 << 20, false}, {3 << 20, true}} {
		n, b := c.n, make([]byte, c.n)
		for i := range b {
			b[i] = byte(i * i >> 7)
			if c.random {
				b[i] = byte(rng.Uint32())
			}
		}
		pkt := z.pack(b)
		// One packet whose one field is compressed_packets.
		outer := fields(t, pkt)
		if len(outer) != 1 || outer[0].num != fTracePacket || outer[0].wire != wireLen {
			t.Fatalf("%d bytes: the packet's fields are %+v", n, outer)
		}
		inner := fields(t, outer[0].b)
		if len(inner) != 1 || inner[0].num != fPktCompressed || inner[0].wire != wireLen {
			t.Fatalf("%d bytes: the packet holds %+v", n, inner)
		}
		stream := inner[0].b
		zr, err := zlib.NewReader(bytes.NewReader(stream))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: inflated %d bytes (%v)", n, len(got), err)
		}
		var ref bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&ref, zlib.BestSpeed)
		zw.Write(b)
		zw.Close()
		if !bytes.Equal(stream[:2], ref.Bytes()[:2]) || !bytes.Equal(stream[len(stream)-4:], ref.Bytes()[ref.Len()-4:]) {
			t.Fatalf("%d bytes: header and checksum % x ... % x, zlib's % x ... % x", n, stream[:2], stream[len(stream)-4:], ref.Bytes()[:2], ref.Bytes()[ref.Len()-4:])
		}
	}
}

// BenchmarkAdler32 is a 1 MiB buffer of packets through adler32, against
// hash/adler32 in the same run.
func BenchmarkAdler32(b *testing.B) {
	p := make([]byte, 1<<20)
	for i := range p {
		p[i] = byte(i * i >> 5)
	}
	for _, c := range []struct {
		name string
		sum  func([]byte) uint32
	}{{"adler32", adler32}, {"hash/adler32", stdadler32.Checksum}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for range b.N {
				c.sum(p)
			}
		})
	}
}

// BenchmarkPack compresses the plain packets of a generated trace's
// conversion, in buffers of outFlush bytes as the writer hands them over,
// with pack (formats/deflate) and, for comparison in the same run, with
// klauspost/compress's flate at its fastest level (BestSpeed, which pack
// used before): MB/s of packets, and the compressed size over the plain.
func BenchmarkPack(b *testing.B) {
	plain := convertFile(b, genTrace(b, 400_000))
	var bufs [][]byte
	for p := plain; len(p) > 0; p = p[min(len(p), outFlush):] {
		bufs = append(bufs, p[:min(len(p), outFlush)])
	}
	b.Run("deflate", func(b *testing.B) {
		var z packetZipper
		b.SetBytes(int64(len(plain)))
		var size int
		for range b.N {
			size = 0
			for _, p := range bufs {
				size += len(z.pack(p))
			}
		}
		b.ReportMetric(float64(size)/float64(len(plain)), "ratio")
	})
	b.Run("klauspost-BestSpeed", func(b *testing.B) {
		var out bytes.Buffer
		fw, _ := flate.NewWriter(&out, flate.BestSpeed)
		b.SetBytes(int64(len(plain)))
		var size int
		for range b.N {
			size = 0
			for _, p := range bufs {
				out.Reset()
				fw.Reset(&out)
				fw.Write(p)
				fw.Close()
				size += out.Len() + 6 + 4 // with zlib's header and checksum, and a packet's head
			}
		}
		b.ReportMetric(float64(size)/float64(len(plain)), "ratio")
	})
}
