# Benchmarks and the ThreadSanitizer test of the C hot path: see
# tests/bench/README.md. Included at the end of the main Makefile.
#
#   make bench        figures and ratios (about 1.5 minutes; BENCH_FLAGS passes
#                     flags to recordbench, e.g. BENCH_FLAGS='-duration 3s')
#   make tsan         the C runtime under -fsanitize=thread, 32 threads
BENCH_DIR    = $(BUILD)/tests/bench
BENCH_CFLAGS = -O2 -g -std=gnu11 -Wall -Wextra -Werror -Iruntime/include
BENCH_FLAGS ?=

.PHONY: bench bench-programs tsan
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
