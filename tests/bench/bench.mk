# Benchmarks and the ThreadSanitizer test of the C hot path: see
# tests/bench/README.md. Included at the end of the main Makefile.
#
#   make bench        figures and ratios (about 1.5 minutes; BENCH_FLAGS passes
#                     flags to recordbench, e.g. BENCH_FLAGS='-duration 3s')
#   make tsan         the C runtime under -fsanitize=thread: 32 threads, the
#                     writer's side played by a C consumer, exact counts; exit
#                     status != 0 on a race (TSan exit code 66) or a wrong count.
#                     TSAN_KNOWN=1 suppresses the races listed in
#                     tests/bench/tsan-known-races.supp and passes
#                     --tolerate-known (for bugs found, not yet fixed; none now)
#   make bench-repro  reproduces the take_partial livelock / duplicate records
#                     of the writer hand-over (exit status 1 while present)
BENCH_DIR    = $(BUILD)/tests/bench
BENCH_CFLAGS = -O2 -g -std=gnu11 -Wall -Wextra -Werror -Iruntime/include
BENCH_FLAGS ?=

.PHONY: bench bench-programs tsan bench-repro
bench: bench-programs
	$(BENCH_DIR)/recordbench -build $(BUILD) $(BENCH_FLAGS)

bench-programs: runtime test-programs $(BENCH_DIR)/eventcost $(BENCH_DIR)/throughput \
	$(BENCH_DIR)/recordbench
	@# The LTTng-UST case is built only where <lttng/tracepoint.h> is
	@# (liblttng-ust-dev); recordbench prints "lttng: skipped" otherwise.
	@if printf '#include <lttng/tracepoint.h>\n' | $(CC) -E -x c - >/dev/null 2>&1; then \
	  echo "$(CC) ... -DBENCH_LTTNG -o $(BENCH_DIR)/eventcost-lttng ... -llttng-ust"; \
	  $(CC) $(BENCH_CFLAGS) -Wno-error -Itests/bench -DBENCH_LTTNG -o $(BENCH_DIR)/eventcost-lttng \
	    tests/bench/eventcost.c tests/bench/lttng_tp.c -llttng-ust -ldl -lpthread; \
	else \
	  echo "bench: no <lttng/tracepoint.h> (apt-get install liblttng-ust-dev lttng-tools): LTTng case skipped"; \
	  rm -f $(BENCH_DIR)/eventcost-lttng; \
	fi

# Built without the library: eventcost dlopens it by path in the cases that
# use it, so its "absent" case is a program that never had the library.
$(BENCH_DIR)/eventcost: tests/bench/eventcost.c runtime/include/occa_tools.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -ldl -lpthread

$(BENCH_DIR)/throughput: tests/bench/throughput.c runtime/include/occa_tools.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -ldl -lpthread

$(BENCH_DIR)/recordbench: $(GO_SRC)
	@mkdir -p $(@D)
	$(GO) build -o $@ ./tests/bench/cmd/recordbench

# ---- ThreadSanitizer test of the C hot path ---------------------------------
# The runtime's functions are hidden, so its sources are compiled into the
# test binary. gcc needs libtsan2 (Debian: apt-get install libtsan2, pulled in
# by gcc-12 on Debian 12); clang works too: make tsan TSAN_CC=clang.
TSAN_CC    ?= $(CC)
TSAN_OPS   ?= 20000
TSAN_SEEDS ?= 1 2
TSAN_KNOWN ?=
TSAN_SUPP   = $(if $(TSAN_KNOWN), suppressions=$(CURDIR)/tests/bench/tsan-known-races.supp)
TSAN_FLAGS  = $(if $(TSAN_KNOWN), --tolerate-known)

$(BENCH_DIR)/tsan_driver: tests/bench/tsan_driver.c tests/bench/fake_core.h $(RT_SRC) $(RT_HDR)
	@mkdir -p $(@D)
	$(TSAN_CC) -O1 -g -fsanitize=thread -std=gnu11 -Wall -Wextra -Werror -Iruntime/include \
	  -Iruntime/src -o $@ tests/bench/tsan_driver.c $(RT_SRC) -ldl -lpthread

# Without a ThreadSanitizer runtime the check is skipped with the package to
# install, except under CI, where it must run.
TSAN_PROBE = printf 'int main(void){return 0;}\n' | $(TSAN_CC) -fsanitize=thread -x c -o /dev/null - >/dev/null 2>&1
tsan:
	@if $(TSAN_PROBE); then $(MAKE) --no-print-directory tsan-run; \
	elif [ -n "$$CI" ]; then echo "tsan: $(TSAN_CC) -fsanitize=thread does not link (Debian: apt-get install libtsan2)"; exit 1; \
	else echo "tsan: skipped: $(TSAN_CC) -fsanitize=thread does not link (Debian: apt-get install libtsan2)"; fi

.PHONY: tsan-run
tsan-run: $(BENCH_DIR)/tsan_driver
	@set -e; for mode in wait drop; do for seed in $(TSAN_SEEDS); do \
	  echo "tsan: --mode $$mode --threads 32 --ops $(TSAN_OPS) --seed $$seed"; \
	  env -u OCCA_TOOLS_CONFIG TSAN_OPTIONS="halt_on_error=1 exitcode=66$(TSAN_SUPP)" \
	    $(BENCH_DIR)/tsan_driver --mode $$mode --threads 32 --ops $(TSAN_OPS) --seed $$seed $(TSAN_FLAGS); \
	done; done

# ---- Reproduction of the writer hand-over bugs (README, "Bugs found") --------
$(BENCH_DIR)/repro_writer: tests/bench/repro_writer.c tests/bench/fake_core.h $(RT_SRC) $(RT_HDR)
	@mkdir -p $(@D)
	$(CC) -O1 -g -std=gnu11 -Wall -Wextra -Werror -Iruntime/include -Iruntime/src \
	  -o $@ tests/bench/repro_writer.c $(RT_SRC) -ldl -lpthread

bench-repro: $(BENCH_DIR)/repro_writer
	env -u OCCA_TOOLS_CONFIG $(BENCH_DIR)/repro_writer

# ---- The OCCA adapter's cost per kernel launch -----------------------------
#   make bench-launch   an empty kernel launched in a loop, without occa-tools,
#                       with the adapter idle, traced and filtered out, against
#                       the stand-in libocca; with OCCA_DIR=/path/to/occa also
#                       against that OCCA, in Serial mode or LAUNCH_MODE (a mode
#                       or device properties: "{mode: 'CUDA', device_id: 0}")
#                       (tests/bench/README.md)
.PHONY: bench-launch
LAUNCHCOST_STANDIN = $(BENCH_DIR)/launchcost-standin
LAUNCHCOST_OCCA    = $(BENCH_DIR)/launchcost-occa

$(LAUNCHCOST_STANDIN): tests/bench/launchcost.cpp $(STANDIN_LIB)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -I$(STANDIN_SRC)/include -o $@ $< \
	  -L$(STANDIN_DIR)/lib -locca -Wl,-rpath,$(abspath $(STANDIN_DIR)/lib)

$(BENCH_DIR)/launchbench: $(GO_SRC)
	@mkdir -p $(@D)
	$(GO) build -o $@ ./tests/bench/cmd/launchbench

bench-launch: runtime commands $(LAUNCHCOST_STANDIN) $(BENCH_DIR)/launchbench
	$(BENCH_DIR)/launchbench -program $(LAUNCHCOST_STANDIN) -build $(BUILD) -label "stand-in libocca" $(LAUNCH_FLAGS)
	@if [ -n "$(OCCA_DIR)" ]; then \
	  echo "$(CXX) ... -o $(LAUNCHCOST_OCCA) tests/bench/launchcost.cpp -locca ($(OCCA_DIR))"; \
	  $(CXX) -std=c++17 -O2 -I$(OCCA_DIR)/include -o $(LAUNCHCOST_OCCA) tests/bench/launchcost.cpp \
	    -L$(OCCA_DIR)/lib -locca -Wl,-rpath,$(abspath $(OCCA_DIR))/lib && \
	  cache=$$(mktemp -d) && \
	  OCCA_DIR=$(abspath $(OCCA_DIR)) OCCA_CACHE_DIR=$$cache $(BENCH_DIR)/launchbench \
	    -program $(LAUNCHCOST_OCCA) -build $(BUILD) -label "OCCA at $(OCCA_DIR)" -relative \
	    $(if $(LAUNCH_MODE),-mode "$(LAUNCH_MODE)") $(LAUNCH_FLAGS); \
	  status=$$?; rm -rf $$cache; exit $$status; \
	else echo "bench-launch: set OCCA_DIR=/path/to/occa to measure against a real OCCA too"; fi

# ---- The OMPT tool's costs --------------------------------------------------
#   make bench-omp   cost per recorded OMPT event (omptcost: the callbacks
#                    called directly) and the slowdown of a loop-heavy OpenMP
#                    program with the tool loaded and recording
#                    (tests/bench/README.md); needs clang and libomp-dev
.PHONY: bench-omp
$(BENCH_DIR)/omptcost: tests/bench/omptcost.c runtime/src/ompt_abi.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -ldl

$(BENCH_DIR)/ompbench: $(GO_SRC)
	@mkdir -p $(@D)
	$(GO) build -o $@ ./tests/bench/cmd/ompbench

bench-omp: runtime omp-programs $(BENCH_DIR)/omptcost $(BENCH_DIR)/ompbench
	@test -x $(OMP_PROGRAMS) || { echo "bench-omp: needs clang and libomp-dev (omp-programs was not built)"; exit 2; }
	$(BENCH_DIR)/ompbench -program $(OMP_PROGRAMS) -omptcost $(BENCH_DIR)/omptcost -lib $(BUILD)/lib $(OMP_BENCH_FLAGS)

# ---- The offline tools on hostile traces -------------------------------------
#   make bench-hostile   wall and CPU seconds and peak RSS of summary and the
#                        four converters on traces shaped to make them grow:
#                        a million device ids, 200,000 threads, 200,000
#                        kernel ids, a million allocations never freed, a
#                        million begins never ended, a million regions never
#                        ended on one thread, half a million regions begun
#                        at one tick, 250,000 OpenMP tasks in a chain,
#                        500,000 OpenMP tasks created and never run,
#                        166,666 launches each running a parallel region
#                        (tests/bench/README.md)
.PHONY: bench-hostile
$(BENCH_DIR)/hostilebench: $(GO_SRC)
	@mkdir -p $(@D)
	$(GO) build -o $@ ./tests/bench/cmd/hostilebench

bench-hostile: commands $(BENCH_DIR)/hostilebench
	$(BENCH_DIR)/hostilebench -tools $(BUILD)/bin/occa-tools -dir $(BUILD)/bench-hostile $(HOSTILE_FLAGS)
