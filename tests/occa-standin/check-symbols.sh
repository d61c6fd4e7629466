#!/bin/sh
# check-symbols.sh LIB: prints the names listed in symbols.txt (next to this
# script) that LIB does not export as defined dynamic symbols, and exits 1 if
# there is any (2 on a usage or tool error). Run it against the stand-in and
# against a real OCCA 2.0 libocca.so: the list is the set of mangled names the
# stand-in promises to share with real OCCA.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 LIB" >&2
	exit 2
fi
lib=$1
list=$(dirname "$0")/symbols.txt
if [ ! -r "$lib" ]; then
	echo "$0: cannot read $lib" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! nm -D --defined-only "$lib" >"$tmp/nm"; then
	echo "$0: nm failed on $lib" >&2
	exit 2
fi
awk 'NF >= 3 { print $3 }' "$tmp/nm" | sed 's/@.*//' | LC_ALL=C sort -u >"$tmp/exported"
grep -v '^[[:space:]]*$' "$list" | LC_ALL=C sort -u >"$tmp/wanted"
LC_ALL=C comm -23 "$tmp/wanted" "$tmp/exported" >"$tmp/missing"

total=$(wc -l <"$tmp/wanted")
missing=$(wc -l <"$tmp/missing")
if [ "$missing" -ne 0 ]; then
	cat "$tmp/missing"
	echo "$lib: $missing of $total names in symbols.txt are not exported" >&2
	exit 1
fi
echo "$lib: all $total names in symbols.txt are exported"
