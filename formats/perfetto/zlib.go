package perfetto

import (
	"encoding/binary"

	"github.com/libocca/occa-tools/formats/deflate"
)

// packetZipper compresses a buffer of whole packets into one packet: a
// zlib stream (RFC 1950), which is what trace_processor inflates.
// Compressing is the largest part of a compressed conversion's CPU, so the
// deflate stream is formats/deflate's: twice the speed of
// klauspost/compress's fastest level, for a fifth more bytes
// (BenchmarkPack). The framing is written here rather than by a
// zlib.Writer for its checksum: hash/adler32 sums a byte at a time (3.6
// GB/s on this project's VM), adler32 below sixteen (6.9 GB/s,
// BenchmarkAdler32).
type packetZipper struct {
	buf []byte // packetHead bytes of room, then the stream
}

// zlibHeader is the stream's first two bytes: deflate with a 32 KiB
// window, the fastest level, and the check bits that make the pair a
// multiple of 31. A zlib.Writer at BestSpeed writes the same.
var zlibHeader = []byte{0x78, 0x01}

// packetHead is the room pack leaves before the stream for the tags and
// lengths that make it a packet (at most 1+5+2+5 bytes), so that the
// stream is not copied after it.
const packetHead = 16

// pack returns the packets of b as one packet holding them compressed,
// valid until the next pack.
func (z *packetZipper) pack(b []byte) []byte {
	out := append(z.buf[:0], make([]byte, packetHead)...)
	out = append(out, zlibHeader...)
	out = deflate.Encode(out, b)
	out = binary.BigEndian.AppendUint32(out, adler32(b))
	z.buf = out
	stream := uint64(len(out) - packetHead)
	// compressed_packets's tag and length, inside the packet's.
	var field, head [packetHead]byte
	f := enc(field[:0]).tag(fPktCompressed, wireLen).varint(stream)
	h := append(enc(head[:0]).tag(fTracePacket, wireLen).varint(uint64(len(f))+stream), f...)
	at := packetHead - len(h)
	copy(out[at:], h)
	return out[at:]
}

// adlerMod is Adler-32's modulus, the largest prime below 2^16.
const adlerMod = 65521

// adlerBlock is how many bytes adler32 sums before it reduces its sums:
// they stay below 2^52.
const adlerBlock = 1 << 20

// adler32 returns the Adler-32 checksum of p (RFC 1950): s1 is 1 plus the
// sum of the bytes, s2 the sum of s1 after each byte. Eight bytes at a
// time from one word: s2 gains 8*s1 and the bytes weighted 8 down to 1,
// s1 the bytes. The bytes are spread in lanes of 16 bits, even ones and
// odd ones apart, so that one multiply sums their lanes (weighted by the
// multiplier's lanes) into its top lane. Sixteen bytes at a time, the two
// words' lanes are added before they are weighted (a lane stays below
// 2^9, its weighted sum below 2^16), and the first word's bytes weigh 8
// more: four multiplies where two words apart take six.
func adler32(p []byte) uint32 {
	const (
		lanes = 0x00ff00ff_00ff00ff
		ones  = 0x0001_0001_0001_0001
		even  = 8<<48 | 6<<32 | 4<<16 | 2 // bytes 0, 2, 4, 6 weigh 8, 6, 4, 2
		odd   = 7<<48 | 5<<32 | 3<<16 | 1 // bytes 1, 3, 5, 7 weigh 7, 5, 3, 1
	)
	s1, s2 := uint64(1), uint64(0)
	for len(p) > 0 {
		q := p[:min(len(p), adlerBlock)]
		p = p[len(q):]
		for ; len(q) >= 16; q = q[16:] {
			w1, w2 := binary.LittleEndian.Uint64(q), binary.LittleEndian.Uint64(q[8:])
			e1, o1 := w1&lanes, w1>>8&lanes
			e2, o2 := w2&lanes, w2>>8&lanes
			sum1 := (e1 + o1) * ones >> 48
			s2 += 16*s1 + 8*sum1 + (e1+e2)*even>>48 + (o1+o2)*odd>>48
			s1 += sum1 + (e2+o2)*ones>>48
		}
		for ; len(q) >= 8; q = q[8:] {
			w := binary.LittleEndian.Uint64(q)
			e, o := w&lanes, w>>8&lanes
			s2 += 8*s1 + e*even>>48 + o*odd>>48
			s1 += (e + o) * ones >> 48
		}
		for _, c := range q {
			s1 += uint64(c)
			s2 += s1
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	return uint32(s2<<16 | s1)
}
