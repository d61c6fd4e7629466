package trace

import (
	"hash/crc32"
	"io"
)

// Format constants (FORMAT.md §1, §3, §6).
const (
	FormatMajor = 3
	FormatMinor = 0
	// oldestMajor is the oldest major version a Reader still reads: 2.0
	// only changed how chunks are compressed (FORMAT.md §3).
	oldestMajor = 1

	magic      = "\x89OCT\r\n\x1a\n"
	chunkMagic = "\x8aOCK"

	fileHeaderSize  = 20
	chunkHeaderSize = 17

	MaxHeaderBody = 16 << 20 // largest header body
	MaxPayload    = 16 << 20 // largest compressed chunk payload
	MaxRaw        = 64 << 20 // largest uncompressed chunk body
	MaxString     = 1 << 20  // longest DefString text

	// maxBatchRaw keeps a batch small enough that even incompressible data
	// fits MaxPayload after either codec's framing.
	maxBatchRaw = 8 << 20
)

// Chunk types (FORMAT.md §3).
const (
	chunkDefs   = 1
	chunkEvents = 2
	chunkClock  = 3
	chunkStats  = 4
	chunkRaw    = 5
)

// Chunk codecs: the high nibble of a chunk's type byte (FORMAT.md §3).
const (
	codecZstd  = 0 // one zstd frame
	codecS2    = 1 // one S2 block
	typeMask   = 0x0f
	codecShift = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errUnexpectedEOF = io.ErrUnexpectedEOF
