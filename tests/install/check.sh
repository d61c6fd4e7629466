#!/usr/bin/env bash
# CI checks of `make install` and `make dist` (run by `make test-install`):
#   1. make install DESTDIR=... lays out the expected tree; make install
#      PREFIX=... into a temporary prefix, which is then moved (relocation);
#   2. from the moved prefix, with no build-tree paths in the environment:
#      occa-tools version/help, the workload traced with an installed config,
#      info and dump on its trace (convert and summary when `help` lists them),
#      a check with LD_DEBUG that every library came from the prefix, and
#      occa-prof on the stand-in libocca's driver (make standin);
#   3. a C program built with pkg-config and another with CMake against the
#      installed header and library, run traced;
#   4. make dist; its checksum; the tarball built as the Spack recipe builds
#      it (make all workload) with GOFLAGS=-mod=vendor GOPROXY=off and an
#      empty module cache (no network, no cache);
#   5. python3 -m py_compile of the Spack recipe, the recipe consistency
#      test (go test ./tests/install), and the recipe's test_* methods run
#      on the installed prefix and its check()'s Go environment
#      (tests/install/recipe_smoke.py).
# Needs: cc, make, go, pkg-config, cmake, python3, readelf (binutils).
# KEEP=1 keeps the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
tmp=$(mktemp -d "${TMPDIR:-/tmp}/occa-tools-install.XXXXXX")
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; else echo "keeping $tmp"; fi
step() { printf '\n==> %s\n' "$*"; }
fail() { echo "check.sh: FAIL: $*" >&2; exit 1; }

version=$(make -s print-version)
abi=$(sed -n 's/^#define OCCA_TOOLS_ABI_VERSION \([0-9]*\)u*$/\1/p' runtime/include/occa_tools.h)
major=$(sed -n 's/^\tFormatMajor = \([0-9]*\)$/\1/p' formats/trace/limits.go)
minor=$(sed -n 's/^\tFormatMinor = \([0-9]*\)$/\1/p' formats/trace/limits.go)
[ -n "$abi" ] && [ -n "$major" ] && [ -n "$minor" ] || fail "cannot read ABI or format version from the sources"

step "make install DESTDIR=$tmp/stage PREFIX=/opt/occa-tools"
make -s install DESTDIR="$tmp/stage" PREFIX=/opt/occa-tools >/dev/null
for f in bin/occa-tools bin/occa-tools-workload bin/occa-prof lib/libocca_tools.so.1 lib/libocca_tools.so \
  lib/libocca_tools_core.so lib/libocca_tools_occa.so lib/libocca_tools_preload.so \
  share/occa-tools/examples/occa/vectors.cpp include/occa_tools.h lib/pkgconfig/occa-tools.pc \
  lib/cmake/OccaTools/OccaToolsConfig.cmake lib/cmake/OccaTools/OccaToolsConfigVersion.cmake \
  share/occa-tools/configs/default.toml share/man/man1/occa-tools.1; do
  [ -e "$tmp/stage/opt/occa-tools/$f" ] || fail "DESTDIR install lacks $f"
done
[ "$(readlink "$tmp/stage/opt/occa-tools/lib/libocca_tools.so")" = libocca_tools.so.1 ] ||
  fail "lib/libocca_tools.so is not a relative link to libocca_tools.so.1"
[ "$(ls configs/*.toml | wc -l)" = "$(ls "$tmp/stage/opt/occa-tools/share/occa-tools/configs/" | wc -l)" ] ||
  fail "not every config was installed"
echo "ok: layout"

step "make install PREFIX=$tmp/prefix, then moved to $tmp/moved"
make -s install PREFIX="$tmp/prefix" >/dev/null
mv "$tmp/prefix" "$tmp/moved"
p=$tmp/moved
soname=$(readelf -d "$p/lib/libocca_tools.so.1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libocca_tools.so.1 ] || fail "libocca_tools.so.1 has SONAME '$soname'"
for b in "$p"/bin/*; do
  # Every rpath must be $ORIGIN-relative: nothing may point at the build tree.
  readelf -d "$b" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p' | tr : '\n' | while read -r rp; do
    case $rp in '$ORIGIN'*) ;; *) fail "$b has rpath $rp";; esac
  done
done
echo "ok: SONAME libocca_tools.so.1, rpaths \$ORIGIN-relative"

# From here on nothing of the build tree is reachable through the environment.
run() { (cd "$tmp/run" && env -u LD_LIBRARY_PATH -u OCCA_TOOLS_CORE -u OCCA_TOOLS_BUILD \
  PATH="$p/bin:/usr/bin:/bin" "$@"); }
mkdir -p "$tmp/run"

step "occa-tools version (installed)"
run occa-tools version | tee "$tmp/version.txt"
printf 'occa-tools version %s\nABI version %s (libocca_tools.so.1)\ntrace format version %s.%s\n' \
  "$version" "$abi" "$major" "$minor" > "$tmp/version.want"
head -3 "$tmp/version.txt" | diff "$tmp/version.want" - || fail "occa-tools version does not match the sources"
run occa-tools help > "$tmp/help.txt"
for c in $(sed -n 's/^\t\([a-z][a-z-]*\)  .*/\1/p' "$tmp/help.txt"); do
  grep -q "^\.SS $c\$" "$p/share/man/man1/occa-tools.1" || fail "the man page lacks command $c"
done
echo "ok: version, man page lists every command of help"

step "the installed workload, traced with the installed default config"
run env OCCA_TOOLS_CONFIG="$p/share/occa-tools/configs/default.toml" LD_DEBUG=files \
  LD_DEBUG_OUTPUT="$tmp/lddebug" occa-tools-workload -t 2 -s 20
trace=$(ls "$tmp"/run/occa-tools-traces/*.occatrace)
[ "$(echo "$trace" | wc -l)" = 1 ] || fail "expected one trace, got: $trace"
# The paths the loader actually opened (not the names it looked for),
# resolved: $ORIGIN gives <prefix>/bin/../lib.
cat "$tmp"/lddebug.* | sed -n 's/.*calling init: \(.*libocca_tools.*\)/\1/p' | sort -u |
  xargs -r realpath | tee "$tmp/inits"
[ "$(grep -c . "$tmp/inits")" = 2 ] || fail "expected libocca_tools.so.1 and the core to be initialised"
grep -v "^$p/lib/" "$tmp/inits" && fail "a library was loaded from outside the prefix"
echo "ok: runtime and core loaded from $p/lib"

step "occa-tools info / dump on that trace"
run occa-tools info "$trace" | tee "$tmp/info.txt"
grep -q "written by occa-tools $version (ABI $abi)" "$tmp/info.txt" || fail "info does not show version $version and ABI $abi"
run occa-tools dump "$trace" > "$tmp/dump.txt"
[ -s "$tmp/dump.txt" ] || fail "dump printed nothing"
echo "ok: dump printed $(wc -l < "$tmp/dump.txt") lines"
if grep -q '^	convert ' "$tmp/help.txt"; then
  step "occa-tools convert (listed by help)"
  run occa-tools convert -to csv -o "$tmp/csv" -progress off "$trace"
  ls "$tmp/csv"
  [ -s "$tmp/csv/processes/part-00000-of-00001.csv" ] && ls "$tmp"/csv/events/events-rank*.csv >/dev/null || fail "convert -to csv wrote no tables"
  echo "ok: convert -to csv: $(cat "$tmp"/csv/events/events-rank*.csv | wc -l) lines"
fi
if grep -q '^	summary ' "$tmp/help.txt"; then
  step "occa-tools summary (listed by help)"
  run occa-tools summary "$trace" > "$tmp/summary.txt"
  sed -n '1,12p' "$tmp/summary.txt"
  grep -q axpy "$tmp/summary.txt" || fail "summary does not name the workload's kernel axpy"
fi

step "the installed occa-prof on an OCCA program (the stand-in libocca of the build tree)"
# The program and its libocca are test inputs; occa-prof, the adapter, the
# shim and the runtime all come from the moved prefix.
make -s standin >/dev/null
driver=$(pwd)/${BUILD:-build}/standin/occa-standin-driver
run env OCCA_CACHE_DIR="$tmp/occa-cache" LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/lddebug-prof" \
  occa-prof --output "$tmp/prof" "$driver" -n 5 > "$tmp/prof.txt" 2>&1 || { cat "$tmp/prof.txt"; fail "occa-prof failed"; }
grep -q "^ok$" "$tmp/prof.txt" || fail "the driver under occa-prof did not print ok"
grep -q "addVectors  *7 " "$tmp/prof.txt" || { cat "$tmp/prof.txt"; fail "occa-prof's table lacks addVectors with 7 launches"; }
cat "$tmp"/lddebug-prof.* | sed -n 's/.*calling init: \(.*libocca_tools[^ ]*\)$/\1/p' | sort -u > "$tmp/prof-inits"
[ "$(grep -c . "$tmp/prof-inits")" = 4 ] || { cat "$tmp/prof-inits"; fail "expected the adapter, shim, runtime and core initialised"; }
grep -v "^$p/lib/" "$tmp/prof-inits" && fail "an occa-tools library was loaded from outside the prefix"
echo "ok: occa-prof traced the driver with the installed adapter: $(ls "$tmp"/prof/*.occatrace | wc -l) trace"

step "a C program built with pkg-config against the installed tree"
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
echo "pkg-config --modversion: $(pkg-config --modversion occa-tools); flags: $(pkg-config --cflags --libs occa-tools)"
# Numeric, as CMake's version file (X.Y.Z of a tag, 0.0.0 untagged), so that
# --atleast-version compares numbers.
numeric=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$p/lib/cmake/OccaTools/OccaToolsConfigVersion.cmake")
echo "$numeric" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' || fail "OccaToolsConfigVersion.cmake has version '$numeric'"
[ "$(pkg-config --modversion occa-tools)" = "$numeric" ] || fail "occa-tools.pc says version $(pkg-config --modversion occa-tools), want $numeric"
pkg-config --atleast-version="$numeric" occa-tools || fail "pkg-config --atleast-version=$numeric fails"
! pkg-config --atleast-version="$((${numeric%%.*} + 1)).0.0" occa-tools || fail "pkg-config --atleast-version: a newer major passes"
[ "$(pkg-config --variable=abi_version occa-tools)" = "$abi" ] || fail "occa-tools.pc abi_version"
libdir=$(pkg-config --variable=libdir occa-tools)
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -o "$tmp/app-pc" tests/install/app/app.c \
  $(pkg-config --cflags --libs occa-tools) -Wl,-rpath,"$libdir"
run "$tmp/app-pc" | tee "$tmp/app.txt"
grep -q "traced=0" "$tmp/app.txt" || fail "untraced run"
rm -rf "$tmp/run/occa-tools-traces"
run env OCCA_TOOLS_CONFIG="$p/share/occa-tools/configs/default.toml" "$tmp/app-pc" | tee "$tmp/app.txt"
grep -q "traced=1" "$tmp/app.txt" || fail "the pkg-config program was not traced"
run occa-tools dump "$tmp"/run/occa-tools-traces/app-pc-*.occatrace | grep -q built-against-the-installed-tree ||
  fail "the marker is not in the pkg-config program's trace"
echo "ok: pkg-config"

step "a C program built with CMake (find_package(OccaTools))"
cmake -S tests/install/app -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$p" >"$tmp/cmake.log" ||
  { cat "$tmp/cmake.log"; fail "cmake configure"; }
grep 'OccaTools ' "$tmp/cmake.log"
cmake --build "$tmp/cmake-build" >"$tmp/cmake-build.log" || { cat "$tmp/cmake-build.log"; fail "cmake build"; }
rm -rf "$tmp/run/occa-tools-traces"
run env OCCA_TOOLS_CONFIG="$p/share/occa-tools/configs/default.toml" "$tmp/cmake-build/app" | tee "$tmp/app.txt"
grep -q "traced=1" "$tmp/app.txt" || fail "the CMake program was not traced"
echo "ok: CMake"

step "make dist, then build the tarball offline"
make -s dist 2>&1 | tail -3
tarball=$(ls -t dist/occa-tools-*.tar.gz | sed -n '1,1p')
(cd dist && sha256sum -c "${tarball##*/}.sha256")
mkdir -p "$tmp/dist" && tar -xzf "$tarball" -C "$tmp/dist"
src=$(echo "$tmp"/dist/occa-tools-*)
[ -f "$src/VERSION" ] && [ -f "$src/vendor/modules.txt" ] || fail "the tarball lacks VERSION or vendor/modules.txt"
[ ! -e "$src/.git" ] || fail "the tarball holds .git"
(cd "$src" && env -u VERSION GOFLAGS=-mod=vendor GOPROXY=off GOMODCACHE="$tmp/empty-modcache" \
  GOPATH="$tmp/empty-gopath" GOTOOLCHAIN=local make -s all workload >/dev/null)
(cd "$src" && ./build/bin/occa-tools version | sed -n '1,1p') | tee "$tmp/dist-version.txt"
[ "$(cat "$tmp/dist-version.txt")" = "occa-tools version $(cat "$src/VERSION")" ] ||
  fail "the tarball's build does not report its VERSION file"
(cd "$src" && make -s install PREFIX="$tmp/dist-prefix" >/dev/null)
(cd "$tmp/run" && rm -rf occa-tools-traces && OCCA_TOOLS_CONFIG="$tmp/dist-prefix/share/occa-tools/configs/minimal-overhead.toml" \
  "$tmp/dist-prefix/bin/occa-tools-workload" -t 1 -s 5 && "$tmp/dist-prefix/bin/occa-tools" info occa-tools-traces/*.occatrace | sed -n '1,3p')
echo "ok: dist builds with GOFLAGS=-mod=vendor GOPROXY=off and an empty module cache"

step "Spack recipe: py_compile and consistency with the project"
find spack -name '*.py' -print0 | xargs -0 -n1 python3 -m py_compile
find spack -name __pycache__ -prune -exec rm -rf {} +
go test -count=1 ./tests/install
# The recipe's stand-alone tests (test_*), run on the moved prefix with a
# stand-in for Spack's package API.
python3 -B tests/install/recipe_smoke.py "$p"
echo
echo "check.sh: all install checks passed"
