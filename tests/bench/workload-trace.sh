#!/usr/bin/env bash
# workload-trace.sh BUILD OUT: records the bundled workload's benchmark
# trace (two threads, 100,000 steps, about 3.9 M events of an OCCA
# program's mix: launches, copies, allocations, regions) into the file
# OUT, with configs/default.toml. make bench-convert and bench-cores
# (tests/bench/cores.sh) measure on it.
set -euo pipefail
build=$1 out=$2
rec=$(mktemp -d "$(dirname "$out")/record.XXXXXX")
trap 'rm -rf "$rec"' EXIT
env OCCA_TOOLS_CONFIG="$PWD/configs/default.toml" OCCA_TOOLS_OUTPUT_DIR="$rec" \
  "$build/tests/workload" -t 2 -s 100000 -w 0 >/dev/null
mv "$rec"/*.occatrace "$out"
