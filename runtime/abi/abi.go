// Package abi holds the version of the callback ABI between event sources
// and the runtime (runtime/include/occa_tools.h), and the constants the
// runtime's C and Go halves share. The header's OCCA_TOOLS_ABI_VERSION is
// generated from Version (gentables), the runtime's Go core writes it into
// every trace header, and `occa-tools version` prints it.
package abi

//go:generate go run ./gentables ../..

// Version is the date (YYYYMMDD) of the last change to the contract of
// occa_tools.h: a new kind, entry point or rule. A tool accepts sources built
// against the same or an older version. Change it here, then run
// `make generate`.
const Version = 20261123

// WriterReserve is the part of output.memory kept for the writer when the
// budget is at least 4 times as large: the Go core's code pages (about 6 MiB
// resident), the Go runtime and heap (the chunk of a whole buffer being
// written, the batches of other spans, zstd encoders of 1 MiB windows
// above the fastest level) and the C side's copy of the definitions. The
// buffers get the rest (runtime/src/buffers.c, ot_pool_init, whose
// OT_WRITER_RESERVE is generated from it); smaller budgets go to buffers
// whole, and the writer comes on top.
const WriterReserve = 13 << 20
