# occa-tools build. `make` builds the runtime libraries and the commands into
# build/; `make test` runs every test; `make demo` traces the bundled workload.
GO      ?= go
CC      ?= cc
CXX     ?= c++
BUILD   ?= build
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
CFLAGS  ?= -O2 -g
RT_CFLAGS = -std=c11 -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Iruntime/include -Iruntime/src
GOFLAGS_BUILD = -trimpath -ldflags "-X main.Version=$(VERSION)"

RT_SRC  = $(wildcard runtime/src/*.c)
RT_HDR  = $(wildcard runtime/src/*.h) runtime/include/occa_tools.h
GO_SRC  = $(shell find . -name '*.go' -not -path './build/*') go.mod go.sum

.PHONY: all runtime commands clean test check-header demo
all: runtime commands

# The C library carries SONAME libocca_tools.so.1 (the ABI's major version);
# libocca_tools.so is the link-time name.
runtime: $(BUILD)/lib/libocca_tools.so $(BUILD)/lib/libocca_tools_core.so

$(BUILD)/lib/libocca_tools.so.1: $(RT_SRC) $(RT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(RT_CFLAGS) -shared -Wl,-soname,libocca_tools.so.1 -o $@ $(RT_SRC) -ldl -lpthread

$(BUILD)/lib/libocca_tools.so: $(BUILD)/lib/libocca_tools.so.1
	ln -sf libocca_tools.so.1 $@

$(BUILD)/lib/libocca_tools_core.so: $(GO_SRC) runtime/src/ot_internal.h
	@mkdir -p $(@D)
	$(GO) build $(GOFLAGS_BUILD) -buildmode=c-shared -o $@ ./runtime/core
	@rm -f $(BUILD)/lib/libocca_tools_core.h

commands: $(BUILD)/bin/occa-tools

$(BUILD)/bin/occa-tools: $(GO_SRC)
	@mkdir -p $(@D)
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $@ ./cmd/occa-tools

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

# Every test: Go (with the race detector), the end-to-end tests on the real
# libraries, the C header as C99 and C++, and the C hot path under
# ThreadSanitizer.
test: all test-programs check-header
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) test -race -count=1 ./...
	$(MAKE) tsan bench-repro

# The public header must compile as strict C99 and as C++.
check-header:
	@mkdir -p $(BUILD)/tests
	printf '#include "occa_tools.h"\nint main(void){occa_tools_call_t c = OCCA_TOOLS_CALL_INIT; occa_tools_data_t d = OCCA_TOOLS_DATA_NONE; (void)c; (void)d; return 0;}\n' > $(BUILD)/tests/header.c
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iruntime/include -c -o $(BUILD)/tests/header_c.o $(BUILD)/tests/header.c
	$(CXX) -std=c++11 -pedantic -Wall -Wextra -Werror -Iruntime/include -x c++ -c -o $(BUILD)/tests/header_cxx.o $(BUILD)/tests/header.c

# ---- Test programs --------------------------------------------------------
TEST_BIN = $(BUILD)/tests
WORKLOAD = $(TEST_BIN)/workload
.PHONY: test-programs
test-programs: $(WORKLOAD)

$(WORKLOAD): tests/workload/workload.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	  -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib' -lpthread

# Benchmarks and sanitizer builds live in their own fragment.
include tests/bench/bench.mk
