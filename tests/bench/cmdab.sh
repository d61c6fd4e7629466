#!/bin/bash
# cmdab.sh: the offline commands' speed per core (Mevents per CPU second,
# user + system) for two builds of occa-tools, run in turns on one trace so
# that their figures compare on a machine whose speed drifts. convab.sh
# measures the formats/bench library stages; this measures what a user
# runs: process start, the commands' GC settings (tuneGC), the report or
# the files written. The two disagreed once (a change that made the
# benchmark 18 % faster left the commands unchanged), so a speed change
# is checked with both.
#
#   tests/bench/cmdab.sh OCCA_TOOLS_A OCCA_TOOLS_B TRACE [ROUNDS] [COMMANDS]
#
# OCCA_TOOLS_A, OCCA_TOOLS_B: occa-tools binaries (go build -o FILE
# ./cmd/occa-tools, one of them in a worktree of the base commit). TRACE: a
# trace file (make bench-convert leaves the workload's in
# build/bench-convert). COMMANDS: semicolon-separated command lines, by
# default "summary; convert -to csv; convert -to parquet; convert -to
# perfetto"; convert gets -o and a fresh directory each run. For each
# command it runs A then B, ROUNDS times (5 by default), and prints each
# one's median and best.
set -eu
. "$(dirname "$0")/abrow.sh"
[ $# -ge 3 ] || { echo "usage: $0 OCCA_TOOLS_A OCCA_TOOLS_B TRACE [ROUNDS] [COMMANDS]" >&2; exit 2; }
A=$(realpath "$1") B=$(realpath "$2") TRACE=$(realpath "$3") ROUNDS=${4:-5}
COMMANDS=${5:-'summary; convert -to csv; convert -to parquet; convert -to perfetto'}
EVENTS=$("$A" info "$TRACE" | awk '$1 == "events:" { print $2 }')
[ -n "$EVENTS" ] || { echo "$0: $TRACE: no event count in 'occa-tools info'" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TIMEFORMAT='%3U %3S' # bash's time: the child's user and system seconds, to the ms
printf '%-36s %8s %8s %8s %8s  (Mevents/cpu-s, %s events)\n' command A_median B_median A_best B_best "$EVENTS"
IFS=';' read -ra cmds <<<"$COMMANDS"
for cmd in "${cmds[@]}"; do
  read -ra words <<<"$cmd"
  label=${words[*]}
  [ "${words[0]:-}" = convert ] && words+=(-o "$TMP/out")
  for r in $(seq "$ROUNDS"); do
    for bin in A B; do
      rm -rf "$TMP/out"
      { time "${!bin}" "${words[@]}" "$TRACE" >/dev/null 2>"$TMP/stderr"; } 2>"$TMP/time" ||
        { echo "$0: ${!bin} ${words[*]} $TRACE failed:" >&2; cat "$TMP/stderr" >&2; exit 1; }
      awk -v n="$EVENTS" '{ printf "%.3f\n", n / ($1 + $2) / 1e6 }' "$TMP/time" >>"$TMP/$bin"
    done
  done
  ab_row 36 "$label" "$TMP"
done
