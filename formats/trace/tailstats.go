package trace

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// maxTailStats is how far from the end FinalStats looks for the final
// stats chunk: one holds a pair of varints per kind and drop reason, a
// few hundred bytes.
const maxTailStats = 16 << 10

// FinalStats returns the stats of the final stats chunk that ends a
// cleanly closed trace (FORMAT.md §3, End of file), reading only the last
// bytes of f, which holds size bytes; nil when f does not end with one
// (the trace was cut, or is damaged there). So a reader knows, before it
// reads the events, what kinds of event the file holds. Only a chunk
// whose framing, checksum and body hold, that ends exactly at the end of
// the file, and whose own count of the bytes before it is its offset,
// counts: a hostile file gets nil, or stats that its events contradict,
// which readers must (and do) tolerate anyway.
func (r *Reader) FinalStats(f io.ReaderAt, size int64) *Stats {
	n := min(size, maxTailStats)
	if n < chunkHeaderSize {
		return nil
	}
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil {
		return nil
	}
	for end := len(tail); ; {
		i := bytes.LastIndex(tail[:end], []byte(chunkMagic))
		if i < 0 {
			return nil
		}
		end = i + len(chunkMagic) - 1 // the next candidate starts before i
		if s := r.statsChunkAt(tail, i, size-n+int64(i)); s != nil {
			return s
		}
	}
}

// statsChunkAt returns the stats of the final stats chunk at tail[i:],
// which is at offset off in the file, when one is there and ends tail.
func (r *Reader) statsChunkAt(tail []byte, i int, off int64) *Stats {
	if len(tail)-i < chunkHeaderSize {
		return nil
	}
	h := tail[i : i+chunkHeaderSize]
	typ, codec := h[4], byte(codecZstd)
	if r.hdr.Major >= 2 {
		typ, codec = h[4]&typeMask, h[4]>>codecShift
	}
	plen := binary.LittleEndian.Uint32(h[5:])
	rlen := binary.LittleEndian.Uint32(h[9:])
	if typ != chunkStats || int64(plen) != int64(len(tail)-i-chunkHeaderSize) || rlen > maxTailStats {
		return nil
	}
	payload := tail[i+chunkHeaderSize:]
	crc := crc32.Update(0, castagnoli, h[4:13])
	if crc32.Update(crc, castagnoli, payload) != binary.LittleEndian.Uint32(h[13:]) {
		return nil
	}
	body, err := r.decompress(codec, payload, make([]byte, 0, rlen))
	if err != nil || len(body) != int(rlen) {
		return nil
	}
	s, err := parseStats(body)
	if err != nil || !s.Final || s.Bytes != uint64(off) {
		return nil
	}
	return s
}
