// Package bench measures the offline tools on a generated trace: decode
// alone, pairing, each output format and the summary, in events per second
// and peak heap; and pairing, the summary and CSV on a trace of OpenMP
// events as OCCA's OpenMP backend makes them (about 2 M events); and the
// Perfetto conversion of 10 k and 80 k device times that match no launch,
// with the ratio of their times (BenchmarkPerfettoUnmatched: linear is
// about 8); and the floor under any Perfetto writer that deflates these
// packets (BenchmarkPerfettoFloor: reading and pairing, then deflate on the
// plain conversion's bytes, the writing itself taken as free). Run with
//
//	go test -run XXX -bench . -benchtime 1x ./formats/bench
//
// OCCA_BENCH_EVENTS sets the trace size (default 10 M events); the trace is
// generated once per run in the temporary directory. OCCA_BENCH_TRACE names
// a trace to measure instead (make bench-convert runs both: the generated
// trace, then one of the bundled workload, whose mix of events is an OCCA
// program's).
package bench
