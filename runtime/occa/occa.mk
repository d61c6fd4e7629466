# The OCCA adapter, libocca_tools_occa.so: C++ hooks on libocca's exported
# functions, preloaded by occa-prof (runtime/occa/adapter.hpp). Built
# without OCCA: it declares what it calls (mirror.hpp) and finds libocca's
# functions at run time.
OCCA_ADAPTER = $(BUILD)/lib/libocca_tools_occa.so
OCCA_ADAPTER_SRC = $(wildcard runtime/occa/*.cpp)
OCCA_ADAPTER_HDR = $(wildcard runtime/occa/*.hpp runtime/occa/*.h runtime/occa/*.inc) runtime/occa/exports.map \
                   runtime/include/occa_tools.h
CXXFLAGS ?= -O2 -g
OCCA_ADAPTER_FLAGS = -std=c++17 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden \
  -Wall -Wextra -Werror -Iruntime/include -Iruntime/occa

$(OCCA_ADAPTER): $(OCCA_ADAPTER_SRC) $(OCCA_ADAPTER_HDR)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(OCCA_ADAPTER_FLAGS) -shared -Wl,-soname,libocca_tools_occa.so \
	  -Wl,--version-script=runtime/occa/exports.map -o $@ $(OCCA_ADAPTER_SRC) -ldl -lpthread
