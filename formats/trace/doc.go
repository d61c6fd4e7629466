// Package trace reads and writes occa-tools trace files.
//
// A trace is one file per process: a header describing the process and its
// clock, then self-delimiting, checksummed, compressed (S2 or zstd) chunks holding
// definitions, per-thread event batches, clock sync points and counters.
// FORMAT.md, next to this file, is the specification; the code cites its
// sections as "FORMAT.md §N".
//
// Writing: NewWriter writes the header; the caller fills a Batch per thread
// and hands it to WriteBatch (or compresses batches on several goroutines with
// EncodeBatch and appends them in order with WriteEncoded), and calls Close.
//
// Reading: NewReader (or Open) checks the header; ReadEvent returns the
// events in file order, Next every record. Broken input gives an *Error,
// never a panic.
//
// The header carries the writer's kind table (Header.Kinds), and the reader
// decodes with it: a trace from a newer writer reads, its new kinds coming
// back as events whose Kind.Spec() is nil, for consumers to skip.
//
// A chunk whose write fails without leaving bytes behind (disk full) is lost
// without breaking the Writer; see Writer and Rewinder.
package trace
