package trace

import (
	"hash/crc32"
	"io"
)

// Format constants (FORMAT.md §1, §3, §6).
const (
	FormatMajor = 1
	FormatMinor = 1

	magic      = "\x89OCT\r\n\x1a\n"
	chunkMagic = "\x8aOCK"

	fileHeaderSize  = 20
	chunkHeaderSize = 17

	MaxHeaderBody = 16 << 20 // largest header body
	MaxPayload    = 16 << 20 // largest compressed chunk payload
	MaxRaw        = 64 << 20 // largest uncompressed chunk body
	MaxString     = 1 << 20  // longest DefString text

	// maxBatchRaw keeps a batch small enough that even incompressible data
	// fits MaxPayload after zstd's framing.
	maxBatchRaw = 8 << 20
)

// Chunk types (FORMAT.md §3).
const (
	chunkDefs   = 1
	chunkEvents = 2
	chunkClock  = 3
	chunkStats  = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errUnexpectedEOF = io.ErrUnexpectedEOF
