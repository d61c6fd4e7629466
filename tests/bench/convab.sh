#!/bin/sh
# convab.sh: the offline tools' speed (formats/bench, Mevents/cpu-s) of two
# builds in the same run, interleaved, so their figures compare on a machine
# whose speed drifts (this project's 2-vCPU VM moves by a third within
# minutes).
#
#   tests/bench/convab.sh BENCH_A BENCH_B TRACE [ROUNDS] [BENCHMARKS]
#
# BENCH_A, BENCH_B: test binaries of formats/bench (go test -c -o FILE
# ./formats/bench), e.g. one built in a worktree of the base commit. TRACE:
# the trace to convert (make bench-convert leaves the workload's in
# build/bench-convert). For each benchmark (a regular expression each; by
# default decoding, pairing, the summary and the three converters) it runs A
# then B, ROUNDS times (5 by default), and prints each one's median and best.
# Each run converts the trace BENCHTIME times (-test.benchtime, 1x by
# default) in one process: 5x or more shows what a run of many traces gains
# from what one trace's writers leave to the next (pools).
set -eu
. "$(dirname "$0")/abrow.sh"
[ $# -ge 3 ] || { echo "usage: $0 BENCH_A BENCH_B TRACE [ROUNDS] [BENCHMARKS]" >&2; exit 2; }
A=$(realpath "$1") B=$(realpath "$2") TRACE=$(realpath "$3") ROUNDS=${4:-5} BENCHTIME=${BENCHTIME:-1x}
BENCHES=${5:-'Decode$ Pair$ Summary$ Parquet$ CSV$ Perfetto$'}
cd "$(dirname "$0")/../../formats/bench" # the binaries' package directory
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '%-10s %8s %8s %8s %8s  (Mevents/cpu-s)\n' benchmark A_median B_median A_best B_best
for bench in $BENCHES; do
  for r in $(seq "$ROUNDS"); do
    for bin in A B; do
      eval exe=\$$bin
      OCCA_BENCH_TRACE=$TRACE "$exe" -test.run XXX -test.bench "$bench" -test.benchtime "$BENCHTIME" |
        awk '/^Benchmark/ { for (i = 1; i < NF; i++) if ($(i+1) == "Mevents/cpu-s") print $i }' >>"$TMP/$bin"
    done
  done
  ab_row 10 "$bench" "$TMP"
done
