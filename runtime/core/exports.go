// Command core is libocca_tools_core.so, the Go half of the runtime: config,
// filters, encoding, compression and the trace file. libocca_tools.so (C)
// loads it with dlopen only when OCCA_TOOLS_CONFIG is set and calls the
// exports below through ot_core_api_t (runtime/src/ot_internal.h).
package main

/*
#include <stdlib.h>
#include <string.h>
#include "ot_internal.h"

// kept_string is a string C keeps for the process, chained from kept_strings:
// memory reachable from a C global, which a leak checker (LeakSanitizer)
// sees, where a pointer held only in Go's heap is invisible to it and was
// reported as a leak that changed an ASan build's exit status.
typedef struct kept_string {
  struct kept_string *next;
  char s[];
} kept_string;
static kept_string *kept_strings;

static char *keep_string(const char *s, size_t n) {
  kept_string *k = malloc(sizeof *k + n + 1);
  if (!k)
    return NULL;
  memcpy(k->s, s, n);
  k->s[n] = 0;
  k->next = kept_strings;
  kept_strings = k;
  return k->s;
}
*/
import "C"

import (
	"strings"
	"sync"
	"unsafe"
)

func main() {} // required by -buildmode=c-shared

//export OccaToolsCoreStart
func OccaToolsCoreStart(h *C.ot_host_t, s *C.ot_settings_t) C.int {
	return C.int(start(cHost{h}, s))
}

//export OccaToolsCoreRun
func OccaToolsCoreRun() { core.loop.Start() }

//export OccaToolsCoreShutdown
func OccaToolsCoreShutdown() { core.loop.Shutdown() }

//export OccaToolsCoreLog
func OccaToolsCoreLog(level C.int, msg *C.char) { logAt(int(level), C.GoString(msg)) }

//export OccaToolsCoreDecideDevice
func OccaToolsCoreDecideDevice(mode *C.char, index C.int64_t, props *C.char, out *C.ot_decision_t) {
	d := core.prog.Device(C.GoString(mode), int64(index), C.GoString(props))
	out.selected = cbool(d.Selected)
	out.memory_selected = cbool(d.MemorySelected)
	out.windows = 0
}

//export OccaToolsCoreDecideKernel
func OccaToolsCoreDecideKernel(name, props *C.char, out *C.ot_decision_t, tags **C.char) {
	d := core.prog.Kernel(C.GoString(name), C.GoString(props))
	out.selected = cbool(d.Selected)
	out.memory_selected = 0
	out.windows = C.uint32_t(d.Windows)
	*tags = tagList(d.Tags)
}

//export OccaToolsCoreDecideRegion
func OccaToolsCoreDecideRegion(name *C.char) C.uint32_t {
	return C.uint32_t(core.prog.Region(C.GoString(name)))
}

//export OccaToolsCoreMemoryTagSelected
func OccaToolsCoreMemoryTagSelected(tag *C.char) C.int {
	return C.int(cbool(core.prog.MemoryTagSelected(C.GoString(tag))))
}

//export OccaToolsCoreTagKernel
func OccaToolsCoreTagKernel(name, tag *C.char) {
	core.prog.TagKernel(C.GoString(name), C.GoString(tag))
}

func cbool(b bool) C.uint32_t {
	if b {
		return 1
	}
	return 0
}

// Tag lists handed to C live for the process: there are few distinct ones,
// and C may read them after the call returns. Their memory is kept from a C
// global (keep_string), under tagListsMu.
var (
	tagListsMu sync.Mutex
	tagLists   = map[string]*C.char{}
)

func tagList(tags []string) *C.char {
	if len(tags) == 0 {
		return nil
	}
	key := strings.Join(tags, "\n")
	tagListsMu.Lock()
	defer tagListsMu.Unlock()
	if p, ok := tagLists[key]; ok {
		return p
	}
	p := C.keep_string((*C.char)(unsafe.Pointer(unsafe.StringData(key))), C.size_t(len(key)))
	if p != nil {
		tagLists[key] = p
	}
	return p
}
