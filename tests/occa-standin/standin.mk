# standin.mk: builds the OCCA stand-in (tests/occa-standin) and its two
# driver programs. Meant to be included from the top-level Makefile (which
# defines BUILD, CXX and CC); also usable alone from the repository root:
#   make -f tests/occa-standin/standin.mk BUILD=build CXX=g++ CC=cc standin
#
# $(STANDIN_DIR)/lib/libocca.so        the stand-in (SONAME libocca.so)
# $(STANDIN_DIR)/occa-standin-driver   C++ driver (driver.cpp)
# $(STANDIN_DIR)/occa-standin-driver-c C driver (driver_c.c)
# $(STANDIN_DIR)/addVectors.okl        read by the drivers from their own dir
# $(STANDIN_DIR)/occa-standin-versions driver_versions.cpp (OCCA 2.0)
# $(STANDIN_DIR)/libfake_cupti.so      a CUPTI for the stand-in's queued CUDA
#                                      mode (fake_cupti.c)
# $(STANDIN_DIR)/<variant>/...         the same for each variant below: its
#                                      lib/libocca.so, occa-standin-versions
#                                      and addVectors.okl
# The drivers find the library through their RUNPATH ($ORIGIN/lib), so they
# run without LD_LIBRARY_PATH. (Their sources also build against a real OCCA
# 2.0's headers and library; the binaries built here need the stand-in, whose
# json, dtype_t and kernelArg are laid out differently.)

BUILD ?= build
CXX ?= c++
CC ?= cc

STANDIN_DIR ?= $(BUILD)/standin
STANDIN_SRC := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
# Included: leave the including Makefile's default goal alone.
STANDIN_INCLUDED := $(filter-out 1,$(words $(MAKEFILE_LIST)))
STANDIN_SAVED_GOAL := $(.DEFAULT_GOAL)

# Like a g++-built libocca: -fPIC, default visibility, no -Bsymbolic, and
# semantic interposition (GCC's default; spelled out for compilers whose
# default differs), so the library's calls to its own exported functions go
# through the PLT.
STANDIN_CXXFLAGS ?= -std=c++17 -O2 -g -Wall -Wextra -Werror
STANDIN_CFLAGS ?= -std=c99 -pedantic -O2 -g -Wall -Wextra -Werror

STANDIN_LIB = $(STANDIN_DIR)/lib/libocca.so
STANDIN_DRIVER = $(STANDIN_DIR)/occa-standin-driver
STANDIN_DRIVER_C = $(STANDIN_DIR)/occa-standin-driver-c
STANDIN_OKL = $(STANDIN_DIR)/addVectors.okl
STANDIN_LINK = -L$(STANDIN_DIR)/lib -locca -Wl,-rpath,'$$ORIGIN/lib'

# The OCCA versions users have, each a build of standin.cpp (include/occa.hpp
# lists the flags): nekRS v24's bundled OCCA, OCCA 1.5 (1.4-1.6, nekRS v23),
# 1.3 (1.2-1.3: nekRS v21/v22, libParanumal), 1.1 (MFEM), and an OCCA the
# adapter does not know (version 3.0, a kernel handle too large to hold).
STANDIN_VARIANTS = nekrs occa-1.5 occa-1.3 occa-1.1 unknown
STANDIN_FLAGS_nekrs = -DOCCA_STANDIN_NEKRS
STANDIN_FLAGS_occa-1.5 = -DOCCA_STANDIN_VERSION=10500
STANDIN_FLAGS_occa-1.3 = -DOCCA_STANDIN_VERSION=10300
STANDIN_FLAGS_occa-1.1 = -DOCCA_STANDIN_VERSION=10100
STANDIN_FLAGS_unknown = -DOCCA_STANDIN_VERSION=30000 -DOCCA_STANDIN_KERNEL_PAD=400
STANDIN_VERSIONS = $(STANDIN_DIR)/occa-standin-versions \
  $(foreach v,$(STANDIN_VARIANTS),$(STANDIN_DIR)/$(v)/lib/libocca.so $(STANDIN_DIR)/$(v)/occa-standin-versions \
    $(STANDIN_DIR)/$(v)/addVectors.okl)

STANDIN_FAKE_CUPTI = $(STANDIN_DIR)/libfake_cupti.so

.PHONY: standin
standin: $(STANDIN_LIB) $(STANDIN_DRIVER) $(STANDIN_DRIVER_C) $(STANDIN_OKL) $(STANDIN_VERSIONS) $(STANDIN_FAKE_CUPTI)
	$(STANDIN_SRC)/check-symbols.sh $(STANDIN_LIB)

$(STANDIN_DIR)/occa-standin-versions: $(STANDIN_SRC)/driver_versions.cpp $(STANDIN_SRC)/include/occa.hpp $(STANDIN_LIB) $(STANDIN_OKL)
	$(CXX) $(STANDIN_CXXFLAGS) -I$(STANDIN_SRC)/include -o $@ $< $(STANDIN_LINK)

$(STANDIN_DIR)/%/lib/libocca.so: $(STANDIN_SRC)/standin.cpp $(STANDIN_SRC)/include/occa.hpp $(STANDIN_SRC)/include/occa.h
	@mkdir -p $(@D)
	$(CXX) $(STANDIN_CXXFLAGS) $(STANDIN_FLAGS_$*) -fPIC -fsemantic-interposition -shared -Wl,-soname,libocca.so -I$(STANDIN_SRC)/include -o $@ $<

$(STANDIN_DIR)/%/occa-standin-versions: $(STANDIN_SRC)/driver_versions.cpp $(STANDIN_SRC)/include/occa.hpp $(STANDIN_DIR)/%/lib/libocca.so
	$(CXX) $(STANDIN_CXXFLAGS) $(STANDIN_FLAGS_$*) -I$(STANDIN_SRC)/include -o $@ $< -L$(STANDIN_DIR)/$*/lib -locca -Wl,-rpath,'$$ORIGIN/lib'

$(STANDIN_DIR)/%/addVectors.okl: $(STANDIN_SRC)/addVectors.okl
	@mkdir -p $(@D)
	cp $< $@

$(STANDIN_LIB): $(STANDIN_SRC)/standin.cpp $(STANDIN_SRC)/include/occa.hpp $(STANDIN_SRC)/include/occa.h
	@mkdir -p $(@D)
	$(CXX) $(STANDIN_CXXFLAGS) -fPIC -fsemantic-interposition -shared -Wl,-soname,libocca.so -I$(STANDIN_SRC)/include -o $@ $<

$(STANDIN_FAKE_CUPTI): $(STANDIN_SRC)/fake_cupti.c runtime/occa/cupti_abi.h
	@mkdir -p $(@D)
	$(CC) $(STANDIN_CFLAGS) -D_POSIX_C_SOURCE=200809L -Iruntime/occa -fPIC -shared -o $@ $< -lpthread

$(STANDIN_DRIVER): $(STANDIN_SRC)/driver.cpp $(STANDIN_SRC)/include/occa.hpp $(STANDIN_LIB) $(STANDIN_OKL)
	$(CXX) $(STANDIN_CXXFLAGS) -I$(STANDIN_SRC)/include -o $@ $< $(STANDIN_LINK)

$(STANDIN_DRIVER_C): $(STANDIN_SRC)/driver_c.c $(STANDIN_SRC)/include/occa.h $(STANDIN_LIB) $(STANDIN_OKL)
	$(CC) $(STANDIN_CFLAGS) -I$(STANDIN_SRC)/include -o $@ $< $(STANDIN_LINK)

$(STANDIN_OKL): $(STANDIN_SRC)/addVectors.okl
	@mkdir -p $(@D)
	cp $< $@

ifneq ($(STANDIN_INCLUDED),)
.DEFAULT_GOAL := $(STANDIN_SAVED_GOAL)
endif
