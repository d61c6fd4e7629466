#!/usr/bin/env bash
# make bench-scale: how the offline tools grow with the number of ranks and
# with the length of one trace. It records runs of fake ranks (the bundled
# workload with OMPI_COMM_WORLD_RANK=k, as a launcher would set it) and one
# long trace, then runs each stage on each and prints wall time, CPU time
# (user + system) and peak RSS, with the ratio of RSS to the 1-rank case.
#
#   SCALE_RANKS      rank counts (default "1 100 1000 10000")
#   SCALE_STEPS      workload steps per rank (default 20, about 800 events)
#   SCALE_BIG_STEPS  steps of the long trace (default 300000, about 11 M
#                    events; 2600000 gives 10^8)
#   OCCA_TOOLS       the occa-tools binary to measure (default build/bin/occa-tools)
#   SCALE_DIR        where runs are kept between invocations (default build/bench-scale)
set -euo pipefail
build=${1:-build}
ranks=${SCALE_RANKS:-1 100 1000 10000}
steps=${SCALE_STEPS:-20}
big_steps=${SCALE_BIG_STEPS:-300000}
tool=${OCCA_TOOLS:-$build/bin/occa-tools}
dir=${SCALE_DIR:-$build/bench-scale}
workload=$build/tests/workload
config=$PWD/configs/default.toml
[ -x /usr/bin/time ] || { echo "bench-scale: needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }
mkdir -p "$dir"
max=0
for n in $ranks; do [ "$n" -gt "$max" ] && max=$n; done

# One recorded trace per rank, made once and kept (the runs of smaller
# rank counts are hard links to the first n of them).
pool=$dir/pool-s$steps
mkdir -p "$pool"
have=$(find "$pool" -name '*.occatrace' | wc -l)
if [ "$have" -lt "$max" ]; then
  echo "bench-scale: recording $((max - have)) fake ranks (workload -t 2 -s $steps) into $pool"
  seq "$have" $((max - 1)) | xargs -P "$(nproc)" -I{} env OMPI_COMM_WORLD_RANK={} OMPI_COMM_WORLD_SIZE="$max" \
    OCCA_TOOLS_OUTPUT_DIR="$pool" OCCA_TOOLS_CONFIG="$config" "$workload" -t 2 -s "$steps" -w 0 >/dev/null 2>&1
fi
big=$dir/big-s$big_steps
if [ -z "$(ls "$big"/*.occatrace 2>/dev/null)" ]; then
  echo "bench-scale: recording one long trace (workload -t 2 -s $big_steps) into $big"
  mkdir -p "$big"
  OCCA_TOOLS_OUTPUT_DIR="$big" OCCA_TOOLS_CONFIG="$config" "$workload" -t 2 -s "$big_steps" -w 0 >/dev/null 2>&1
fi

mapfile -t traces < <(find "$pool" -name '*.occatrace' | sort | head -n "$max")
printf '\n%-12s %-18s %9s %9s %10s %9s  %s\n' input stage wall_s cpu_s rss_MiB rss_ratio events
declare -A base
# measure NAME INPUT STAGE CMD...: one line of the table. Each stage but
# the DuckDB query (which reads the Parquet dataset the stage before it
# wrote) converts into a fresh out/.
measure() {
  local name=$1 input=$2 stage=$3; shift 3
  [ "$stage" != "duckdb rank=7" ] && rm -rf "$dir/out"
  local t; t=$(mktemp)
  local status=ok
  if ! /usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >/dev/null 2>"$t.err"; then
    # Measured all the same (a Perfetto trace over 2 GiB is an error, for
    # one): the figures say what it cost to get there.
    status="failed: $(tail -1 "$t.err" | cut -c1-100)"
  fi
  read -r wall user sys rss < <(tail -1 "$t")
  rm -f "$t" "$t.err"
  local mib=$((rss / 1024))
  [ -z "${base[$stage]:-}" ] && base[$stage]=$mib
  printf '%-12s %-18s %9.2f %9.2f %10d %9.2f  %s\n' "$name" "$stage" "$wall" "$(echo "$user + $sys" | bc)" "$mib" \
    "$(echo "scale=2; $mib / ${base[$stage]}" | bc)" "$input"
  [ "$status" = ok ] || echo "             ($stage $status)"
}
stages() { # name input-dir events
  local name=$1 in=$2 events=$3
  measure "$name" "$events" summary "$tool" summary "$in"
  measure "$name" "$events" "convert parquet" "$tool" convert -to parquet -o "$dir/out" "$in"
  # One rank out of many, from the dataset as convert lays it out.
  if [ "$name" != "1 long" ] && [ "${name%% *}" -gt 7 ] && python3 -c 'import duckdb' 2>/dev/null; then
    local glob="$dir/out/events/*.parquet"
    measure "$name" "$events" "duckdb rank=7" python3 -c "import duckdb; duckdb.sql(\"select count(*), sum(duration_ns) from read_parquet('$glob') where rank = 7\").fetchall()"
  fi
  measure "$name" "$events" "convert csv" "$tool" convert -to csv -o "$dir/out" "$in"
  measure "$name" "$events" "convert perfetto" "$tool" convert -to perfetto -o "$dir/out" "$in"
}
for n in $ranks; do
  run=$dir/run-$n && rm -rf "$run" && mkdir -p "$run"
  ln "${traces[@]:0:$n}" "$run"/
  events=$("$tool" info "${traces[0]}" | awk '/^events:/ {print $2}')
  stages "$n ranks" "$run" "~$events events per rank"
done
bigtrace=$(ls "$big"/*.occatrace)
stages "1 long" "$bigtrace" "$("$tool" info "$bigtrace" | awk '/^events:/ {print $2}') events"
