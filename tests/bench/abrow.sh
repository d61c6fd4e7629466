# abrow.sh, sourced by convab.sh and cmdab.sh (POSIX sh): ab_row WIDTH
# LABEL DIR prints LABEL, then the median of A's and of B's figures (one
# a line in DIR/A and DIR/B), then the best of each, and empties DIR/A and
# DIR/B for the next row.
ab_row() {
  for ab_bin in A B; do sort -g "$3/$ab_bin" >"$3/$ab_bin.sorted"; done
  printf "%-${1}s %8s %8s %8s %8s\n" "$2" \
    "$(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' "$3/A.sorted")" \
    "$(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' "$3/B.sorted")" \
    "$(tail -1 "$3/A.sorted")" "$(tail -1 "$3/B.sorted")"
  rm -f "$3/A" "$3/B"
}
