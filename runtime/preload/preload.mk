# runtime/preload/preload.mk: the LD_PRELOAD shim of occa-prof
# (libocca_tools_preload.so). Included from the main Makefile, which defines
# CC, CFLAGS, RT_CFLAGS and BUILD; add $(PRELOAD_LIB) to `all` (or `runtime`).
# `make install` copies it with every other lib*.so* of $(BUILD)/lib.
PRELOAD_LIB = $(BUILD)/lib/libocca_tools_preload.so

$(PRELOAD_LIB): runtime/preload/preload.c runtime/src/exec_list.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(RT_CFLAGS) -shared -Wl,-soname,libocca_tools_preload.so -o $@ $< -ldl
