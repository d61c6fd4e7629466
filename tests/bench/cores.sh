#!/usr/bin/env bash
# make bench-cores: the offline commands' speed per core (Mevents per CPU
# second, user + system) against the per-core targets of issue 14, on the
# bundled workload's event mix and on formats/bench's generated one (four
# threads in 16 K-event batches, all on one device: the unions' worst
# case). Each command runs ROUNDS times on each trace, with -j 1, in a
# process of its own, as a user runs it, in two ways: on one core
# (GOMAXPROCS=1), as each trace is read when -j has every core busy; and
# alone on the machine, where a command may hand work to goroutines of its
# own to finish sooner (summary's collector: about a sixth more CPU for
# 1.6 times the speed on one trace). Perfetto runs compressed, as by
# default (about 6 bytes per event), and plain (-compress=false, about
# 33): the two ends of its trade of bytes for CPU. The table gives each
# one's median, both over the target, and the one-core median over `info`
# in the same run: `info` only reads and counts the events, the floor
# under every command. Per-core figures are the machine's as much as the
# code's: the same binary ran summary at 14.2 and 6.9 Mevents/cpu-s on a
# quiet 2-core VM and on a 16-core server host, and its reading at 39 and
# 26 (tests/bench/README.md, "Figures: per core on two machines").
#
#   CORES_ROUNDS  runs per command and trace (default 5)
#   OCCA_TOOLS    the occa-tools binary to measure (default build/bin/occa-tools)
#   CORES_DIR     where the two traces are kept between runs (default build/bench-cores)
set -euo pipefail
build=${1:-build}
rounds=${CORES_ROUNDS:-5}
tool=${OCCA_TOOLS:-$build/bin/occa-tools}
dir=${CORES_DIR:-$build/bench-cores}
mkdir -p "$dir"

workload=$dir/workload.occatrace
[ -s "$workload" ] || tests/bench/workload-trace.sh "$build" "$workload"
# formats/bench writes its generated trace into the temporary directory.
generated=$dir/occa-tools-bench-4000000.occatrace
if [ ! -s "$generated" ]; then
  TMPDIR=$(realpath "$dir") OCCA_BENCH_EVENTS=4000000 ${GO:-go} test -run XXX -bench 'Decode$' -benchtime 1x ./formats/bench >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TIMEFORMAT='%3U %3S' # bash's time: the child's user and system seconds, to the ms

# measure TRACE EVENTS PROCS WORDS...: ROUNDS runs with GOMAXPROCS=PROCS
# (unset if empty), one Mevents/cpu-s figure a line in $tmp/runs.
measure() {
  local trace=$1 events=$2 procs=$3
  shift 3
  local words=("$@")
  [ "${words[0]}" = convert ] && words+=(-o "$tmp/out")
  [ "${words[0]}" = info ] || words+=(-j 1)
  : >"$tmp/runs"
  for _ in $(seq "$rounds"); do
    rm -rf "$tmp/out"
    { time env ${procs:+GOMAXPROCS=$procs} "$tool" "${words[@]}" "$trace" </dev/null >/dev/null 2>"$tmp/stderr"; } 2>"$tmp/time" ||
      { echo "bench-cores: $tool ${words[*]} $trace failed:" >&2; cat "$tmp/stderr" >&2; exit 1; }
    awk -v n="$events" '{ printf "%.3f\n", n / max($1 + $2, 0.001) / 1e6 } function max(a, b) { return a > b ? a : b }' \
      "$tmp/time" >>"$tmp/runs"
  done
  sort -g "$tmp/runs" -o "$tmp/runs"
}
median() { awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' "$tmp/runs"; }
# row COMMAND FIGURES...: one line of the table.
row() { printf '%-38s %8s %8s %7s %11s %11s %12s\n' "$@"; }

model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "bench-cores: $tool on $(nproc) cores (${model:-unknown CPU}), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for trace in "$workload" "$generated"; do
  events=$("$tool" info "$trace" | awk '$1 == "events:" { print $2 }')
  [ -n "$events" ] || { echo "bench-cores: $trace: no event count in 'occa-tools info'" >&2; exit 1; }
  measure "$trace" "$events" 1 info
  reading=$(median)
  echo "== $trace: $events events, $rounds runs a command, medians in Mevents/cpu-s"
  row command one_core alone target core/target alone/target core/reading
  row "info (reading only)" "$reading" - - - - 1.00
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  while read -r target cmd; do
    read -ra words <<<"$cmd"
    measure "$trace" "$events" 1 "${words[@]}"
    core=$(median)
    measure "$trace" "$events" "" "${words[@]}"
    alone=$(median)
    row "$cmd" "$core" "$alone" "$target" \
      "$(ratio "$core" "$target")" "$(ratio "$alone" "$target")" "$(ratio "$core" "$reading")"
  done <<'EOF'
15 summary
5 convert -to csv
5 convert -to parquet
8 convert -to perfetto
8 convert -to perfetto -compress=false
EOF
done
