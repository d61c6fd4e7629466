#!/bin/sh
# costab.sh: the per-event cost (eventcost, section 1 of README.md) of two
# builds of the runtime in the same run, interleaved, so their figures
# compare: a change to the hot path against the build before it.
#
#   tests/bench/costab.sh BUILD_A BUILD_B [ROUNDS]
#
# BUILD_A, BUILD_B: build directories (each with lib/libocca_tools.so and the
# Go core next to it), e.g. a worktree of the base commit built with make.
# For each case (no-config, recorded with the default config, filtered) and
# each round it runs `eventcost lib BUILD/lib/libocca_tools.so` for A, then B,
# and prints the median over all repetitions of the thread's CPU ns/event,
# and B - A. Needs build/tests/bench/eventcost (make bench-programs).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) ROUNDS=${3:-3}
EC=${EVENTCOST:-build/tests/bench/eventcost}
[ -x "$EC" ] || { echo "$0: $EC missing: run make bench-programs" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '[output]\n' >"$TMP/recorded.toml"
printf '[output]\n[filter.kernel]\nnames = ["nomatch"]\n' >"$TMP/filtered.toml"

run() { # case build -> appends the "case" series to $TMP/case.build
  cfg=
  [ "$1" = no-config ] || cfg="$TMP/$1.toml"
  mkdir -p "$TMP/out"
  OCCA_TOOLS_CONFIG=$cfg OCCA_TOOLS_OUTPUT_DIR="$TMP/out" \
    "$EC" lib "$2/lib/libocca_tools.so" --reps 10 |
    awk '$1 == "series" && $2 == "case" { for (i = 3; i <= NF; i++) print $i }' >>"$TMP/$1.$3"
  rm -rf "$TMP/out"
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for c in no-config recorded filtered; do
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    run $c "$A" a
    run $c "$B" b
    r=$((r + 1))
  done
  ma=$(median "$TMP/$c.a") mb=$(median "$TMP/$c.b")
  awk -v c=$c -v a="$ma" -v b="$mb" -v n="$(wc -l <"$TMP/$c.a")" \
    'BEGIN { printf "%-10s A %6.2f ns/event  B %6.2f ns/event  B-A %+6.2f  (median of %d reps each)\n", c, a, b, b - a, n }'
done
