#!/bin/bash
# insnab.sh: the instructions per event of the offline commands, for two
# builds of occa-tools, counted by valgrind's cachegrind (without its cache
# simulation). The count hardly depends on the machine's load: the same
# binary on the same trace varies by a few in 10,000 from run to run, where
# its CPU time on this project's VM moves by a third (cmdab.sh). So a
# change of a few percent shows here that no timing can show.
#
# Instructions are not time: a change to memory traffic or to how well
# branches are guessed shows in cmdab.sh and not here, and fewer
# instructions can run slower. Check a change with both.
#
#   tests/bench/insnab.sh OCCA_TOOLS_A OCCA_TOOLS_B TRACE [COMMANDS]
#
# OCCA_TOOLS_A, OCCA_TOOLS_B: occa-tools binaries. TRACE: a trace file;
# under valgrind a command runs about 40 times slower, so take one of a few
# hundred thousand events (make bench-convert's workload with -s 10000, or
# formats/bench's generator). COMMANDS: as cmdab.sh's, by default
# "summary; convert -to csv; convert -to parquet; convert -to perfetto".
# Each runs once per binary, with -j 1 and GOMAXPROCS=1: the work of one
# core, without the scheduler's share of it; and with the garbage
# collector stopping the program while it marks (GODEBUG=gcstoptheworld=1):
# under valgrind a concurrent mark lasts long enough that the program's
# write barriers moved a summary's count by a tenth from run to run.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OCCA_TOOLS_A OCCA_TOOLS_B TRACE [COMMANDS]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "$0: needs valgrind (Debian: apt-get install valgrind)" >&2; exit 2; }
A=$(realpath "$1") B=$(realpath "$2") TRACE=$(realpath "$3")
COMMANDS=${4:-'summary; convert -to csv; convert -to parquet; convert -to perfetto'}
EVENTS=$("$A" info "$TRACE" | awk '$1 == "events:" { print $2 }')
[ -n "$EVENTS" ] || { echo "$0: $TRACE: no event count in 'occa-tools info'" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '%-36s %10s %10s %7s  (instructions/event, %s events)\n' command A B B/A "$EVENTS"
IFS=';' read -ra cmds <<<"$COMMANDS"
for cmd in "${cmds[@]}"; do
  read -ra words <<<"$cmd"
  label=${words[*]}
  words+=(-j 1)
  [ "${words[0]:-}" = convert ] && words+=(-o "$TMP/out")
  for bin in A B; do
    rm -rf "$TMP/out"
    # cachegrind's summary line: "==PID== I   refs:      693,304,567".
    GOMAXPROCS=1 GODEBUG=gcstoptheworld=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      "${!bin}" "${words[@]}" "$TRACE" >/dev/null 2>"$TMP/stderr" ||
      { echo "$0: ${!bin} ${words[*]} $TRACE failed under valgrind:" >&2; tail -5 "$TMP/stderr" >&2; exit 1; }
    awk '/I +refs:/ { gsub(",", "", $NF); print $NF }' "$TMP/stderr" >"$TMP/$bin"
    [ -s "$TMP/$bin" ] || { echo "$0: no instruction count in valgrind's output:" >&2; tail -5 "$TMP/stderr" >&2; exit 1; }
  done
  awk -v n="$EVENTS" -v label="$label" -v a="$(cat "$TMP/A")" -v b="$(cat "$TMP/B")" \
    'BEGIN { printf "%-36s %10.1f %10.1f %7.4f\n", label, a / n, b / n, b / a }'
done
