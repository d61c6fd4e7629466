# occa-tools build. `make` builds the runtime libraries and the commands into
# build/; `make test` runs every test; `make demo` traces the bundled workload.
GO      ?= go
CC      ?= cc
# make predefines CXX as g++ (origin "default"), which ?= would keep.
ifeq ($(origin CXX),default)
CXX     = c++
endif
BUILD   ?= build
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
CFLAGS  ?= -O2 -g
RT_CFLAGS = -std=c11 -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Iruntime/include -Iruntime/src
GOFLAGS_BUILD = -trimpath -ldflags "-X main.Version=$(VERSION)"
# The Go core is loaded by path (dlopen), never linked against; it still gets
# a SONAME so packaging tools see a proper shared library.
GOFLAGS_CORE  = -trimpath -ldflags "-X main.Version=$(VERSION) -extldflags=-Wl,-soname,libocca_tools_core.so"

RT_SRC  = $(wildcard runtime/src/*.c)
RT_HDR  = $(wildcard runtime/src/*.h) runtime/include/occa_tools.h
GO_SRC  = $(shell find . -name '*.go' -not -path './build/*') go.mod go.sum

.PHONY: all runtime commands clean test check-header demo bench-convert
all: runtime commands

# The preload shim for unmodified OCCA applications (occa-prof): PRELOAD_LIB;
# the OCCA adapter they preload with it: OCCA_ADAPTER.
include runtime/preload/preload.mk
include runtime/occa/occa.mk
include runtime/mpi/mpi.mk

# The C library carries SONAME libocca_tools.so.1 (the ABI's major version);
# libocca_tools.so is the link-time name. It stays mapped after dlclose
# (-z nodelete): its TSD destructor, its signal handlers and the Go core's
# threads point into it for the life of the process.
runtime: $(BUILD)/lib/libocca_tools.so $(BUILD)/lib/libocca_tools_core.so $(PRELOAD_LIB) $(OCCA_ADAPTER)

$(BUILD)/lib/libocca_tools.so.1: $(RT_SRC) $(RT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(RT_CFLAGS) -shared -Wl,-soname,libocca_tools.so.1 -Wl,-z,nodelete -o $@ $(RT_SRC) -ldl -lpthread

$(BUILD)/lib/libocca_tools.so: $(BUILD)/lib/libocca_tools.so.1
	ln -sf libocca_tools.so.1 $@

$(BUILD)/lib/libocca_tools_core.so: $(GO_SRC) runtime/src/ot_internal.h
	@mkdir -p $(@D)
	$(GO) build $(GOFLAGS_CORE) -buildmode=c-shared -o $@ ./runtime/core
	@rm -f $(BUILD)/lib/libocca_tools_core.h

commands: $(BUILD)/bin/occa-tools $(BUILD)/bin/occa-prof

$(BUILD)/bin/occa-tools $(BUILD)/bin/occa-prof: $(BUILD)/bin/%: $(GO_SRC)
	@mkdir -p $(@D)
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $@ ./cmd/$*

clean:
	rm -rf $(BUILD)

# ---- The two commands of the README ----------------------------------------

# Builds everything, traces the bundled workload, says where the trace went
# and what it holds.
DEMO = $(BUILD)/demo
demo: all test-programs
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	cd $(DEMO) && OCCA_TOOLS_CONFIG=$(CURDIR)/configs/default.toml ../tests/workload -t 2 -s 500
	@echo "trace written to: $$(ls $(DEMO)/occa-tools-traces/*.occatrace)"
	@$(BUILD)/bin/occa-tools info $(DEMO)/occa-tools-traces/*.occatrace
	@echo
	@$(BUILD)/bin/occa-tools summary -section kernels $(DEMO)/occa-tools-traces

# Every test: Go (with the race detector), the end-to-end tests on the real
# libraries, the C header as C99 and C++, the C hot path under
# ThreadSanitizer, and the converters' outputs read by pandas, DuckDB and
# Perfetto's schema (Python packages pinned in tests/python/requirements.txt;
# tests/python/run.sh installs them under build/pyenv when python3 lacks them).
test: all test-programs check-header
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) test -race -count=1 -timeout 5m ./...
	$(MAKE) tsan bench-repro
	tests/python/run.sh $(BUILD)

# Spark (spark.read.parquet, default settings) reads convert's Parquet
# dataset and agrees with the summary (tests/python/test_spark.py). pyspark
# is a source package and needs a JRE (Debian: openjdk-17-jre-headless), so
# `make test` does not run this: pip install pyspark, then make test-spark.
.PHONY: test-spark
test-spark: all test-programs
	@python3 -c 'import pyspark' 2>/dev/null || { echo "test-spark: no pyspark: python3 -m pip install pyspark (and a JRE: apt-get install openjdk-17-jre-headless)"; exit 2; }
	python3 -m pytest -q tests/python/test_spark.py

# The OCCA adapter against a real OCCA installation (OCCA_DIR=/path/to/occa;
# OCCA is in no package registry, so CI cannot run this): small OCCA
# programs (tests/occa/programs) in Serial, OpenMP, OpenCL and CUDA (each
# when OCCA has it and a device answers, e.g. POCL for OpenCL; otherwise
# those tests skip saying why) under occa-prof, their traces checked
# exactly, also of programs that crash; on CUDA, device times against
# CUPTI's (CUPTI_DIR, else the CUDA toolkit's); on every supported OCCA
# (1.x and nekRS's copy too) the stand-in's version scenario
# (tests/occa-standin/driver_versions.cpp). See CONTRIBUTING, "On a GPU".
.PHONY: test-occa
test-occa: all
	@test -n "$(OCCA_DIR)" || { echo "test-occa: set OCCA_DIR to an OCCA installation (include/occa.hpp, lib/libocca.so)"; exit 2; }
	OCCA_DIR=$(abspath $(OCCA_DIR)) OCCA_TOOLS_BUILD=$(abspath $(BUILD)) $(GO) test -count=1 -v ./tests/occa

# The offline tools on a generated trace (OCCA_BENCH_EVENTS events, 10 M by
# default): events/s of decoding, pairing, each converter and the summary,
# with peak memory; then pairing, summary and CSV on a trace of OpenMP events;
# then the same stages on a trace of the bundled workload (about 3.9 M events
# of an OCCA program's mix: launches, copies, allocations, regions).
BENCH_WORKLOAD_TRACE = $(BUILD)/bench-convert/workload.occatrace
bench-convert: all test-programs
	OCCA_BENCH_EVENTS=$${OCCA_BENCH_EVENTS:-10000000} $(GO) test -run XXX -bench . -benchtime 1x -timeout 30m ./formats/bench
	@rm -rf $(BUILD)/bench-convert && mkdir -p $(BUILD)/bench-convert
	tests/bench/workload-trace.sh $(BUILD) $(BENCH_WORKLOAD_TRACE)
	@echo "== the same on the workload's event mix ($(BENCH_WORKLOAD_TRACE))"
	OCCA_BENCH_TRACE=$(abspath $(BENCH_WORKLOAD_TRACE)) $(GO) test -run XXX -bench 'Decode|Pair$$|Summary$$|SummaryInline$$|Parquet$$|CSV$$|Perfetto$$|PerfettoPlain$$|PerfettoFloor$$' -benchtime 1x -timeout 30m ./formats/bench

# How summary and convert grow with the number of ranks (1 to 10,000 fake
# ranks of the bundled workload) and with one long trace: wall, CPU and peak
# RSS per stage, and RSS over the 1-rank case (tests/bench/scale.sh says
# which variables change the sizes). The first run records the traces
# (about 2 minutes for 10,000 ranks on 2 cores) and keeps them in
# build/bench-scale.
.PHONY: bench-scale
bench-scale: all test-programs
	tests/bench/scale.sh $(BUILD)

# The offline commands' speed per core against issue 14's targets, on the
# workload's event mix and the generated one, with each figure over the
# reading alone in the same run (tests/bench/cores.sh). The traces are
# kept in build/bench-cores; about a minute on 2 cores.
.PHONY: bench-cores
bench-cores: all test-programs
	GO=$(GO) tests/bench/cores.sh $(BUILD)

# Rewrites the committed generated files: the C tables (kinds, domains,
# definition kinds, drop/trigger values, OCCA_TOOLS_ABI_VERSION) in
# occa_tools.h and ot_internal.h from formats/trace/kinds.go and
# runtime/abi/abi.go, and the OCCA adapter's operator() hooks. `go test ./...`
# fails while either is stale.
.PHONY: generate
generate:
	$(GO) run ./runtime/abi/gentables
	$(GO) run ./runtime/occa/genops runtime/occa

# The public header must compile as strict C99 and as C++.
check-header:
	@mkdir -p $(BUILD)/tests
	printf '#include "occa_tools.h"\nint main(void){occa_tools_call_t c = OCCA_TOOLS_CALL_INIT; occa_tools_data_t d = OCCA_TOOLS_DATA_NONE; (void)c; (void)d; return 0;}\n' > $(BUILD)/tests/header.c
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iruntime/include -c -o $(BUILD)/tests/header_c.o $(BUILD)/tests/header.c
	$(CXX) -std=c++11 -pedantic -Wall -Wextra -Werror -Iruntime/include -x c++ -c -o $(BUILD)/tests/header_cxx.o $(BUILD)/tests/header.c

# ---- Test programs --------------------------------------------------------
TEST_BIN = $(BUILD)/tests
WORKLOAD = $(TEST_BIN)/workload
STRESS = $(TEST_BIN)/stress
.PHONY: test-programs
test-programs: $(WORKLOAD) $(STRESS)

$(WORKLOAD): tests/workload/workload.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	  -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib' -lpthread

# The workload built with AddressSanitizer (tests/hostile_env_test.go,
# TestAddressSanitizedProgram), where the compiler has it; the test skips
# without it.
ASAN_PROBE = printf 'int main(void){return 0;}\n' | $(CC) -fsanitize=address -x c -o /dev/null - >/dev/null 2>&1
test-programs: $(WORKLOAD)-asan
$(WORKLOAD)-asan: tests/workload/workload.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	@if $(ASAN_PROBE); then \
	  echo "$(CC) -fsanitize=address ... -o $@ $<"; \
	  $(CC) -O1 -g -fsanitize=address -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	    -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib' -lpthread; \
	else echo "test-programs: $(CC) -fsanitize=address does not link: the ASan test skips"; rm -f $@; fi

# The exit-signal and unloading tests (tests/signals_test.go): sigprog
# linked against the runtime (it starts before main) and without it (plain
# runs, the preload shim), unload (dlopens it).
SIGPROG = $(TEST_BIN)/sigprog
test-programs: $(SIGPROG) $(SIGPROG)-plain $(TEST_BIN)/unload

$(SIGPROG): tests/signals/sigprog.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	  -L$(BUILD)/lib -Wl,--no-as-needed -locca_tools -Wl,--as-needed -Wl,-rpath,'$$ORIGIN/../lib' -ldl -lpthread

$(SIGPROG)-plain: tests/signals/sigprog.c runtime/include/occa_tools.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< -ldl -lpthread

$(TEST_BIN)/unload: tests/signals/unload.c runtime/include/occa_tools.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< -ldl -lpthread

# Programs that call the runtime through dlsym, each built linked against
# it (NAME) and without it (NAME-plain: untraced, or under the preload
# shim): itimer, storm, early, sigargs and vfork (SIGPROF, SIGURG, SIGCHLD,
# SIGSTKFLT, the signal functions' arguments, a child's signals:
# tests/signals_test.go), closeall
# (tests/descriptors_test.go), mainexit and cancel (tests/threads_test.go),
# endings (tests/endings_test.go).
BOTH_WAYS = $(TEST_BIN)/itimer $(TEST_BIN)/storm $(TEST_BIN)/early $(TEST_BIN)/sigargs $(TEST_BIN)/vfork $(TEST_BIN)/closeall $(TEST_BIN)/mainexit $(TEST_BIN)/endings $(TEST_BIN)/cancel
vpath %.c tests/signals tests/descriptors tests/threads tests/endings
test-programs: $(BOTH_WAYS) $(BOTH_WAYS:=-plain)

$(BOTH_WAYS): $(TEST_BIN)/%: %.c $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -o $@ $< \
	  -L$(BUILD)/lib -Wl,--no-as-needed -locca_tools -Wl,--as-needed -Wl,-rpath,'$$ORIGIN/../lib' -ldl -lpthread

$(BOTH_WAYS:=-plain): $(TEST_BIN)/%-plain: %.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -o $@ $< -ldl -lpthread

# A Go program that records through cgo (tests/endings_test.go): Go ends a
# process with a system call, not exit().
GO_HOST = $(TEST_BIN)/gohost
test-programs: $(GO_HOST)

$(GO_HOST): tests/testdata/gohost/main.go runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	CGO_ENABLED=1 CGO_CFLAGS='-I$(CURDIR)/runtime/include' \
	  CGO_LDFLAGS='-L$(abspath $(BUILD))/lib -locca_tools -Wl,-rpath,$$ORIGIN/../lib' $(GO) build -o $@ ./tests/testdata/gohost

# A stand-in for the tracing core that makes a thread as it starts running
# (tests/signals_test.go), loaded with OCCA_TOOLS_CORE.
LATE_CORE = $(TEST_BIN)/latecore.so
test-programs: $(LATE_CORE)

$(LATE_CORE): tests/signals/latecore.c runtime/src/ot_internal.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -shared -Iruntime/src -o $@ $< -lpthread

# The control API's domain and kind switches (tests/domains_test.go), a
# source built as strict C99.
DOMAINS = $(TEST_BIN)/domains
test-programs: $(DOMAINS)

$(DOMAINS): tests/control/domains.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c99 -pedantic -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	  -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib'

$(STRESS): tests/workload/stress.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	  -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib' -lpthread

# OpenMP programs for the OMPT tool's tests (tests/openmp), and the same
# linked with another OMPT tool after the runtime (othertool): LLVM's libomp
# is the OpenMP runtime with OMPT, so they need clang and libomp-dev;
# without them they are skipped (tests/openmp then skips, except under CI).
OMP_CC ?= clang
OMP_PROGRAMS = $(TEST_BIN)/omp-programs
.PHONY: omp-programs
test-programs: omp-programs
omp-programs: $(BUILD)/lib/libocca_tools.so
	@if printf '#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n' | \
	    $(OMP_CC) -fopenmp -x c -o /dev/null - >/dev/null 2>&1; then \
	  echo "$(OMP_CC) -fopenmp ... -o $(OMP_PROGRAMS) tests/openmp/programs/programs.c"; \
	  mkdir -p $(TEST_BIN) && \
	  $(OMP_CC) -O2 -g -std=c11 -fopenmp -Wall -Wextra -Werror -Iruntime/include -o $(OMP_PROGRAMS) \
	    tests/openmp/programs/programs.c -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib' && \
	  $(OMP_CC) -O2 -g -std=c11 -fopenmp -Wall -Wextra -Werror -DPLAIN -o $(OMP_PROGRAMS)-plain \
	    tests/openmp/programs/programs.c && \
	  $(OMP_CC) -O2 -g -std=c11 -fopenmp -Wall -Wextra -Werror -shared -fPIC -o $(TEST_BIN)/libothertool.so \
	    tests/openmp/programs/othertool.c && \
	  $(OMP_CC) -O2 -g -std=c11 -fopenmp -Wall -Wextra -Werror -Iruntime/include -o $(OMP_PROGRAMS)-othertool \
	    tests/openmp/programs/programs.c -L$(BUILD)/lib -L$(TEST_BIN) -Wl,--no-as-needed -locca_tools -lothertool \
	    -Wl,--as-needed -Wl,-rpath,'$$ORIGIN/../lib' -Wl,-rpath,'$$ORIGIN'; \
	else echo "omp-programs: skipped: no $(OMP_CC) with OpenMP (apt-get install clang libomp-dev)"; fi

# The stand-in libocca and the OCCA-like programs that test the OCCA
# adapter without OCCA (tests/occa-standin, tests/adapter): `make standin`.
include tests/occa-standin/standin.mk
test-programs: standin

# Benchmarks and sanitizer builds live in their own fragment.
include tests/bench/bench.mk

# ---- Installation and release ---------------------------------------------
# make install PREFIX=/opt/occa-tools [DESTDIR=/stage]  installs:
#   bin/        occa-tools, every other command in $(BUILD)/bin (occa-prof
#               once it is built), occa-tools-workload (the bundled workload)
#   lib/        every runtime library in $(BUILD)/lib (libocca_tools.so.1 and
#               its link-time name, libocca_tools_core.so; the preload shim
#               and the OCCA adapter once they are built), cmake/OccaTools/,
#               pkgconfig/occa-tools.pc
#   include/    occa_tools.h
#   share/      occa-tools/configs/*.toml, occa-tools/examples/occa/ (OCCA
#               programs to try occa-prof on), man/man1/occa-tools.1,
#               doc/occa-tools/
# The tree is relocatable: binaries find lib/ through $ORIGIN rpaths,
# libocca_tools.so.1 finds libocca_tools_core.so beside itself (dladdr), the
# pkg-config and CMake files compute the prefix from their own place.
# make dist  writes dist/occa-tools-<version>.tar.gz (+ .sha256) of HEAD with
#            vendored Go modules and a VERSION file: it builds offline.
# make test-install  the CI checks of both (tests/install/check.sh).
PREFIX  ?= /usr/local
DESTDIR ?=
# OCCA_DIR: an OCCA installation, for `make test-occa` only: the OCCA adapter
# builds without OCCA (it finds libocca's functions at run time).
OCCA_DIR ?=
INSTALL ?= install
ABI_VERSION = $(shell sed -n 's/^\#define OCCA_TOOLS_ABI_VERSION \([0-9]*\)u*$$/\1/p' runtime/include/occa_tools.h)
# X.Y.Z of a vX.Y.Z tag (CMake and pkg-config compare versions numerically);
# 0.0.0 untagged.
NUMERIC_VERSION = $(or $(shell echo '$(VERSION)' | sed -n 's/^v\{0,1\}\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p'),0.0.0)

# A release tarball has no .git: its VERSION file gives the version (unless
# VERSION is set on the command line or in the environment).
ifeq ($(origin VERSION),file)
ifneq ($(wildcard VERSION),)
VERSION := $(shell cat VERSION)
endif
endif

# The version is linked into the binaries (and written into every trace):
# relink them when it changes, not only when a source does. The stamp is
# rewritten only when the version differs, so nothing else rebuilds.
$(BUILD)/bin/occa-tools $(BUILD)/bin/occa-prof $(BUILD)/lib/libocca_tools_core.so: $(BUILD)/version-stamp
$(BUILD)/version-stamp: FORCE_VERSION
	@mkdir -p $(@D)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@

INSTALL_ROOT = $(DESTDIR)$(PREFIX)
PKG_BUILD    = $(BUILD)/packaging

.PHONY: install uninstall dist test-install print-version spack-version
print-version:
	@echo $(VERSION)

$(PKG_BUILD)/occa-tools.pc: runtime/packaging/occa-tools.pc.in FORCE_VERSION
$(PKG_BUILD)/OccaToolsConfig.cmake: runtime/packaging/OccaToolsConfig.cmake.in FORCE_VERSION
$(PKG_BUILD)/OccaToolsConfigVersion.cmake: runtime/packaging/OccaToolsConfigVersion.cmake.in FORCE_VERSION
$(PKG_BUILD)/occa-tools.pc $(PKG_BUILD)/OccaToolsConfig.cmake $(PKG_BUILD)/OccaToolsConfigVersion.cmake:
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@NUMERIC_VERSION@|$(NUMERIC_VERSION)|g' \
	  -e 's|@ABI_VERSION@|$(ABI_VERSION)|g' $< > $@
# The generated files carry the version, which changes without any file
# changing: always regenerate them (it is cheap).
.PHONY: FORCE_VERSION
FORCE_VERSION:

$(PKG_BUILD)/occa-tools.1: $(BUILD)/bin/occa-tools cmd/occa-tools/mkman.sh
	@mkdir -p $(@D)
	sh cmd/occa-tools/mkman.sh $(BUILD)/bin/occa-tools '$(VERSION)' > $@

# What install copies, and only that: not the test programs (the stand-in
# libocca, the OpenMP programs), which `make test-programs` builds. The
# Spack recipe builds `all workload`.
.PHONY: workload
workload: $(WORKLOAD)

install: all workload $(PKG_BUILD)/occa-tools.pc $(PKG_BUILD)/OccaToolsConfig.cmake \
	$(PKG_BUILD)/OccaToolsConfigVersion.cmake $(PKG_BUILD)/occa-tools.1
	$(INSTALL) -d $(INSTALL_ROOT)/bin $(INSTALL_ROOT)/lib/pkgconfig $(INSTALL_ROOT)/lib/cmake/OccaTools \
	  $(INSTALL_ROOT)/include $(INSTALL_ROOT)/share/occa-tools/configs \
	  $(INSTALL_ROOT)/share/man/man1 $(INSTALL_ROOT)/share/doc/occa-tools \
	  $(INSTALL_ROOT)/share/occa-tools/examples/occa
	$(INSTALL) -m 755 $(wildcard $(BUILD)/bin/*) $(INSTALL_ROOT)/bin/
	$(INSTALL) -m 755 $(WORKLOAD) $(INSTALL_ROOT)/bin/occa-tools-workload
	@# Real files, then symbolic links as links (libocca_tools.so -> .so.1).
	for f in $(BUILD)/lib/lib*.so*; do \
	  if [ -L "$$f" ]; then ln -sfn "$$(readlink "$$f")" $(INSTALL_ROOT)/lib/"$${f##*/}"; \
	  else $(INSTALL) -m 755 "$$f" $(INSTALL_ROOT)/lib/; fi; \
	done
	$(INSTALL) -m 644 runtime/include/occa_tools.h $(INSTALL_ROOT)/include/
	$(INSTALL) -m 644 $(PKG_BUILD)/occa-tools.pc $(INSTALL_ROOT)/lib/pkgconfig/
	$(INSTALL) -m 644 $(PKG_BUILD)/OccaToolsConfig.cmake $(PKG_BUILD)/OccaToolsConfigVersion.cmake \
	  $(INSTALL_ROOT)/lib/cmake/OccaTools/
	$(INSTALL) -m 644 configs/*.toml $(INSTALL_ROOT)/share/occa-tools/configs/
	$(INSTALL) -m 644 $(PKG_BUILD)/occa-tools.1 $(INSTALL_ROOT)/share/man/man1/
	$(INSTALL) -m 644 README.md formats/trace/FORMAT.md $(INSTALL_ROOT)/share/doc/occa-tools/
	$(INSTALL) -m 644 tests/occa/programs/* $(INSTALL_ROOT)/share/occa-tools/examples/occa/

uninstall:
	cd $(INSTALL_ROOT) && rm -f bin/occa-tools bin/occa-prof bin/occa-tools-workload \
	  lib/libocca_tools*.so* include/occa_tools.h lib/pkgconfig/occa-tools.pc \
	  share/man/man1/occa-tools.1
	rm -rf $(INSTALL_ROOT)/lib/cmake/OccaTools $(INSTALL_ROOT)/share/occa-tools \
	  $(INSTALL_ROOT)/share/doc/occa-tools

# The release tarball: HEAD (committed files only; a dirty tree is warned
# about, not packed), a VERSION file, and vendor/ so that it builds with
# GOFLAGS=-mod=vendor GOPROXY=off. Reproducible: sorted, owner 0, mtime of
# the commit, gzip -n.
DIST_VERSION = $(shell git describe --tags --always 2>/dev/null || cat VERSION)
DIST_NAME    = occa-tools-$(patsubst v%,%,$(DIST_VERSION))
DIST_STAGE   = $(BUILD)/dist-stage
dist:
	@git diff --quiet HEAD 2>/dev/null || echo "make dist: warning: uncommitted changes are not in the tarball (it packs HEAD)" >&2
	rm -rf $(DIST_STAGE) && mkdir -p $(DIST_STAGE) dist
	git archive --format=tar --prefix=$(DIST_NAME)/ HEAD | tar -x -C $(DIST_STAGE)
	echo '$(DIST_VERSION)' > $(DIST_STAGE)/$(DIST_NAME)/VERSION
	cd $(DIST_STAGE)/$(DIST_NAME) && $(GO) mod vendor
	tar --sort=name --mtime=@$$(git log -1 --format=%ct HEAD) --owner=0 --group=0 --numeric-owner \
	  -C $(DIST_STAGE) -cf - $(DIST_NAME) | gzip -n -9 > dist/$(DIST_NAME).tar.gz
	cd dist && sha256sum $(DIST_NAME).tar.gz > $(DIST_NAME).tar.gz.sha256
	rm -rf $(DIST_STAGE)
	@cat dist/$(DIST_NAME).tar.gz.sha256

test-install:
	bash tests/install/check.sh

# The version() line of the Spack recipe for the tarball in dist/ (after
# `make dist` on a release tag).
spack-version:
	@v='$(patsubst v%,%,$(DIST_VERSION))'; \
	  sum=$$(cut -d' ' -f1 dist/occa-tools-$$v.tar.gz.sha256) || exit 1; \
	  echo "    version(\"$$v\", sha256=\"$$sum\")"
