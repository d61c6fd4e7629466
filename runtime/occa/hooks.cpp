// hooks.cpp: OCCA's devices, memory, copies, builds, streams and syncs.
//
// Each hook forwards to libocca's function; when it is the outermost hook on
// its thread and the runtime records, it reports a begin before and an end
// after. An exception from OCCA passes through unchanged, after an end
// marked OCCA_TOOLS_FAILED.
#include <sys/stat.h>
#include <time.h>

#include <cstring>
#include <string>

#include "adapter.hpp"

using namespace ot_occa;

namespace {

// ---- Reading OCCA's property texts ----------------------------------------

// Finds the value of key in a JSON text as OCCA prints or accepts it
// ({"mode": "CUDA", "device_id": 0} or {mode: 'CUDA', device_id: 0}).
// Returns the raw value (quotes removed), or "" when absent.
std::string json_value(const std::string &text, const char *key) {
  size_t klen = strlen(key);
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    char before = at ? text[at - 1] : '{';
    if (before != '"' && before != '\'' && before != '{' && before != ',' && before != ' ')
      continue;
    size_t p = at + klen;
    if (p < text.size() && (text[p] == '"' || text[p] == '\''))
      p++;
    while (p < text.size() && text[p] == ' ')
      p++;
    if (p >= text.size() || text[p] != ':')
      continue;
    p++;
    while (p < text.size() && text[p] == ' ')
      p++;
    if (p < text.size() && (text[p] == '"' || text[p] == '\'')) {
      size_t end = text.find(text[p], p + 1);
      return end == std::string::npos ? std::string() : text.substr(p + 1, end - p - 1);
    }
    size_t end = text.find_first_of(",} \n", p);
    return text.substr(p, end == std::string::npos ? std::string::npos : end - p);
  }
  return std::string();
}

// Props is occa::json, or OCCA 1.0-1.1's occa::properties, a class derived
// from json alone (so a properties is a json at the same address).
template <class Props>
std::string dump(const Props &props) {
  return real.json_dump ? real.json_dump(reinterpret_cast<const occa::json *>(&props), 0)
                        : std::string();
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return s.empty() ? 0 : h;
}

int64_t realtime_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// ---- Devices ---------------------------------------------------------------

struct SetupScope {
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  std::string mode;

  explicit SetupScope(const std::string &props) {
    mode = json_value(props, "mode");
    std::string id = json_value(props, "device_id");
    int64_t index = id.empty() ? -1 : strtoll(id.c_str(), nullptr, 10);
    api.device_setup_begin(&call, mode.empty() ? "unknown" : mode.c_str(), index, props.c_str());
  }
  void failed() {
    occa_tools_data_t none = OCCA_TOOLS_DATA_NONE;
    api.device_setup_end(&call, &none, OCCA_TOOLS_FAILED);
  }
  void done(occa::device *d) {
    void *mode_device = real.device_mode_device ? real.device_mode_device(d) : nullptr;
    std::string actual = mode_device && real.device_mode ? real.device_mode(d) : mode;
    DeviceInfo *info = mode_device ? add_device(mode_device, actual) : nullptr;
    occa_tools_data_t none = OCCA_TOOLS_DATA_NONE;
    api.device_setup_end(&call, info ? &info->slot : &none, OCCA_TOOLS_OK);
  }
};

// props gives the setup properties' text; it is called only when the setup
// is reported (dumping a json is not free).
template <class Props, class Setup>
void report_setup(occa::device *d, Props &&props, Setup &&real_setup) {
  Outermost outer;
  if (!outer.reports() || !enabled(OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN)) {
    real_setup();
    if (outer.reports())  // setup events off: still know the device's mode
      device_info(d);
    return;
  }
  SetupScope scope(props());
  try {
    real_setup();
  } catch (...) {
    scope.failed();
    throw;
  }
  scope.done(d);
}

// ---- Memory ----------------------------------------------------------------

int64_t dtype_bytes(const occa::dtype_t &t) { return real.dtype_bytes ? real.dtype_bytes(&t) : 1; }

// Bytes a copy moves: from OCCA 2.0 count and offsets are in elements of the
// memory's type, before in bytes; count -1 means the whole memory.
uint64_t copy_bytes(const occa::memory *m, occa::dim_t count) {
  if (libocca.copy_counts_bytes && count != -1)
    return count > 0 ? uint64_t(count) : 0;
  if (!real.memory_dtype)
    return 0;
  int64_t elem = dtype_bytes(real.memory_dtype(m));
  if (count == -1)
    return real.memory_length ? uint64_t(elem) * real.memory_length(m) : 0;
  return count > 0 ? uint64_t(elem) * uint64_t(count) : 0;
}

struct CopyScope {
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  CopyScope(occa_tools_copy_direction_t dir, ObjectInfo *src, ObjectInfo *dst, uint64_t bytes) {
    api.copy_begin(&call, dir, src ? &src->slot : nullptr, dst ? &dst->slot : nullptr, bytes, 0,
                   nullptr);
  }
  void end(occa_tools_status_t st) { api.copy_end(&call, st); }
};

template <class Copy>
void report_copy(occa_tools_copy_direction_t dir, const occa::memory *src, const occa::memory *dst,
          uint64_t bytes, Copy &&real_copy) {
  Outermost outer;
  if (!outer.reports() || !enabled(OCCA_TOOLS_EVENT_COPY_BEGIN)) {
    real_copy();
    return;
  }
  CopyScope scope(dir, src ? memory_info(src) : nullptr, dst ? memory_info(dst) : nullptr, bytes);
  try {
    real_copy();
  } catch (...) {
    scope.end(OCCA_TOOLS_FAILED);
    throw;
  }
  scope.end(OCCA_TOOLS_OK);
}

// An allocation: device::malloc and memoryPool::reserve. A malloc with a
// source copies the data inside libocca, without a copy call. That copy is
// reported right after the allocation, as a host-to-device copy into the
// new memory (so its device and bytes are right); its time is inside the
// allocation's.
template <class Alloc>
occa::memory allocate(DeviceInfo *device, uint64_t bytes, bool copies, const char *tag,
                      Alloc &&real_alloc) {
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  api.memory_alloc_begin(&call, device ? &device->slot : nullptr, bytes, tag);
  occa_tools_data_t none = OCCA_TOOLS_DATA_NONE;
  try {
    Held<occa::memory> held(real_alloc);
    occa::memory *m = held.get();
    void *mode_memory = real.memory_mode_memory ? real.memory_mode_memory(m) : nullptr;
    ObjectInfo *info = mode_memory ? add_memory(mode_memory) : nullptr;
    void *address = mode_memory && real.memory_ptr ? real.memory_ptr(m) : nullptr;
    api.memory_alloc_end(&call, info ? &info->slot : &none, address, OCCA_TOOLS_OK);
    if (copies && info && enabled(OCCA_TOOLS_EVENT_COPY_BEGIN)) {
      occa_tools_call_t copy = OCCA_TOOLS_CALL_INIT;
      api.copy_begin(&copy, OCCA_TOOLS_COPY_H2D, nullptr, &info->slot, bytes, 0, nullptr);
      api.copy_end(&copy, OCCA_TOOLS_OK);
    }
    return occa::memory(*m);  // libocca's copy, made in the caller's slot
  } catch (...) {
    api.memory_alloc_end(&call, &none, nullptr, OCCA_TOOLS_FAILED);
    throw;
  }
}

// Reports the free of a tracked allocation around free_it.
template <class Free>
void release(ObjectInfo *info, Free &&free_it) {
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  api.memory_free_begin(&call, &info->slot);
  try {
    free_it();
  } catch (...) {
    api.memory_free_end(&call, OCCA_TOOLS_FAILED);
    delete info;
    throw;
  }
  api.memory_free_end(&call, OCCA_TOOLS_OK);
  delete info;
}

// ---- Builds ----------------------------------------------------------------

// A build that wrote its binary after it began ran the compiler; one that
// found the binary older came from OCCA's kernel cache.
occa_tools_cache_t cache_outcome(occa::kernel *k, int64_t began_ns) {
  if (!real.kernel_binary_filename)
    return OCCA_TOOLS_CACHE_UNKNOWN;
  const std::string &binary = real.kernel_binary_filename(k);
  struct stat st;
  if (binary.empty() || stat(binary.c_str(), &st) != 0)
    return OCCA_TOOLS_CACHE_UNKNOWN;
  int64_t written = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  // File systems stamp times coarsely (a tick of up to ~10 ms): allow for it.
  return written + 10000000 >= began_ns ? OCCA_TOOLS_CACHE_MISS : OCCA_TOOLS_CACHE_HIT;
}

// nekRS builds each kernel twice: with {build: {compile_only: true,
// load_only: false}} on one rank (an empty kernel name compiles every kernel
// of the file and returns an empty kernel), then with the flags swapped
// everywhere. The compile is named after its file, and both builds get the
// same properties hash (both flags hashed as one key with no value), so the
// pair can be matched.
bool compile_only(const std::string &props) { return json_value(props, "compile_only") == "true"; }

uint64_t build_props_hash(std::string props) {
  for (const char *key : {"\"compile_only\"", "\"load_only\""}) {
    size_t klen = strlen(key);
    for (size_t at = props.find(key); at != std::string::npos; at = props.find(key, at + 1)) {
      size_t value = props.find_first_not_of(": ", at + klen);
      size_t end = value == std::string::npos ? value : props.find_first_of(",}", value);
      props.replace(at, end == std::string::npos ? std::string::npos : end - at, "\"build_split\"");
    }
  }
  return fnv1a(props);
}

std::string file_name(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

template <class Props, class Build>
occa::kernel build_kernel(const occa::device *d, const std::string &filename,
                          const std::string &kernelName, const Props &props, Build real_build) {
  Outermost outer;
  if (!outer.reports() || !libocca.holdable[occa::ot_mirror::KERNEL])
    return real_build(d, filename, kernelName, props);  // built in the caller's slot
  occa::device *self = const_cast<occa::device *>(d);
  if (!enabled(OCCA_TOOLS_EVENT_BUILD_BEGIN)) {  // build events off: still name the kernel
    Held<occa::kernel> k([&] { return real_build(d, filename, kernelName, props); });
    if (void *mk = real.kernel_mode_kernel ? real.kernel_mode_kernel(k.get()) : nullptr)
      add_kernel(mk, device_info(self), kernelName);
    return occa::kernel(*k.get());
  }
  DeviceInfo *device = device_info(self);
  std::string text = dump(props);
  std::string name =
      kernelName.empty() && compile_only(text) ? file_name(filename) : kernelName;
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  api.build_begin(&call, device ? &device->slot : nullptr, name.c_str(), filename.c_str(),
                  text.empty() ? nullptr : text.c_str(), build_props_hash(text));
  int64_t began = realtime_ns();
  try {
    Held<occa::kernel> k([&] { return real_build(d, filename, kernelName, props); });
    void *mk = real.kernel_mode_kernel ? real.kernel_mode_kernel(k.get()) : nullptr;
    KernelInfo *info = mk ? add_kernel(mk, device, kernelName) : nullptr;
    // An empty kernel (a compile-only build) has no binary to look at.
    api.build_end(&call, info ? &info->slot : nullptr,
                  mk ? cache_outcome(k.get(), began) : OCCA_TOOLS_CACHE_UNKNOWN, OCCA_TOOLS_OK);
    return occa::kernel(*k.get());  // libocca's copy, made in the caller's slot
  } catch (...) {
    api.build_end(&call, nullptr, OCCA_TOOLS_CACHE_UNKNOWN, OCCA_TOOLS_FAILED);
    throw;
  }
}

template <class Props, class Create>
occa::stream create_stream(occa::device *d, const Props &props, Create real_create) {
  Outermost outer;
  if (!outer.reports() || !enabled(OCCA_TOOLS_EVENT_STREAM_CREATE) ||
      !libocca.holdable[occa::ot_mirror::STREAM])
    return real_create(d, props);
  Held<occa::stream> s([&] { return real_create(d, props); });
  DeviceInfo *device = device_info(d);
  ObjectInfo *si = stream_info(s.get());
  if (device && si)
    api.stream_create(&device->slot, &si->slot);
  return occa::stream(*s.get());
}

template <class Props, class Malloc>
occa::memory device_malloc(occa::device *d, occa::dim_t entries, const occa::dtype_t &dtype,
                           const void *src, const Props &props, Malloc real_malloc) {
  Outermost outer;
  if (!outer.reports() || entries <= 0 || !enabled(OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN) ||
      !libocca.holdable[occa::ot_mirror::MEMORY])
    return real_malloc(d, entries, dtype, src, props);
  uint64_t bytes = uint64_t(entries) * uint64_t(dtype_bytes(dtype));
  return allocate(device_info(d), bytes, src != nullptr, nullptr,
                  [&] { return real_malloc(d, entries, dtype, src, props); });
}

template <class Pool, class Reserve>
occa::memory pool_reserve(Pool *pool, occa::dim_t entries, const occa::dtype_t &dtype,
                          Reserve real_reserve, void *(*mode_device)(const Pool *)) {
  Outermost outer;
  if (!outer.reports() || entries <= 0 || !enabled(OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN) ||
      !libocca.holdable[occa::ot_mirror::MEMORY])
    return real_reserve(pool, entries, dtype);
  uint64_t bytes = uint64_t(entries) * uint64_t(dtype_bytes(dtype));
  DeviceInfo *device = device_info_of_mode(mode_device ? mode_device(pool) : nullptr);
  return allocate(device, bytes, false, "occa-memory-pool",
                  [&] { return real_reserve(pool, entries, dtype); });
}

template <class Props, class Copy>
void copy_from_ptr(occa::memory *m, const void *src, occa::dim_t count, occa::dim_t offset,
                   const Props &props, Copy real_copy) {
  if (depth || !active()) {
    real_copy(m, src, count, offset, props);
    return;
  }
  report_copy(OCCA_TOOLS_COPY_H2D, nullptr, m, copy_bytes(m, count),
              [&] { real_copy(m, src, count, offset, props); });
}

template <class Props, class Copy>
void copy_from_mem(occa::memory *m, const occa::memory &src, occa::dim_t count,
                   occa::dim_t dest_offset, occa::dim_t src_offset, const Props &props,
                   Copy real_copy) {
  if (depth || !active()) {
    real_copy(m, src, count, dest_offset, src_offset, props);
    return;
  }
  report_copy(OCCA_TOOLS_COPY_D2D, &src, m, copy_bytes(m, count),
              [&] { real_copy(m, src, count, dest_offset, src_offset, props); });
}

template <class Props, class Copy>
void copy_to_ptr(const occa::memory *m, void *dest, occa::dim_t count, occa::dim_t offset,
                 const Props &props, Copy real_copy) {
  if (depth || !active()) {
    real_copy(m, dest, count, offset, props);
    return;
  }
  report_copy(OCCA_TOOLS_COPY_D2H, m, nullptr, copy_bytes(m, count),
              [&] { real_copy(m, dest, count, offset, props); });
  // A blocking copy to the host waits for the current stream's work.
  if (pending_times.load(std::memory_order_relaxed))
    resolve_current_stream(m);
}

template <class Props, class Copy>
void copy_to_mem(const occa::memory *m, const occa::memory &dest, occa::dim_t count,
                 occa::dim_t dest_offset, occa::dim_t src_offset, const Props &props,
                 Copy real_copy) {
  if (depth || !active()) {
    real_copy(m, dest, count, dest_offset, src_offset, props);
    return;
  }
  report_copy(OCCA_TOOLS_COPY_D2D, m, &dest, copy_bytes(m, count),
              [&] { real_copy(m, dest, count, dest_offset, src_offset, props); });
}

}  // namespace

// ---- The hooks -------------------------------------------------------------

void occa::device::setup(const std::string &props) {
  report_setup(this, [&] { return props; }, [&] { OT_REAL(device_setup_string)(this, props); });
}

void occa::device::setup(const occa::json &props) {
  report_setup(this, [&] { return dump(props); }, [&] { OT_REAL(json.device_setup)(this, props); });
}

void occa::device::setup(const occa::properties &props) {
  report_setup(this, [&] { return dump(props); },
               [&] { OT_REAL(props.device_setup)(this, props); });
}

void occa::device::free() {
  if (active() && pending_times.load(std::memory_order_relaxed))
    resolve_device(this, true);  // the last moment the tags can be read
  OT_REAL(device_free)(this);
}

// device::finish waits for the current stream, finishAll for every stream.
template <class Finish>
void report_finish(occa::device *d, bool all, Finish &&real_finish) {
  Outermost outer;
  if (!outer.reports()) {
    real_finish();
    return;
  }
  DeviceInfo *info = device_info(d);
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  api.device_finish_begin(&call, info ? &info->slot : nullptr);
  try {
    real_finish();
  } catch (...) {
    api.device_finish_end(&call);
    throw;
  }
  api.device_finish_end(&call);
  if (pending_times.load(std::memory_order_relaxed))
    resolve_device(d, all);
}

void occa::device::finish() {
  report_finish(this, false, [&] { OT_REAL(device_finish)(this); });
}

void occa::device::finishAll() {
  report_finish(this, true, [&] { OT_REAL(device_finish_all)(this); });
}

occa::stream occa::device::createStream(const occa::json &props) {
  return create_stream(this, props, OT_REAL(json.device_create_stream));
}

occa::stream occa::device::createStream(const occa::properties &props) {
  return create_stream(this, props, OT_REAL(props.device_create_stream));
}

void occa::device::setStream(occa::stream s) {
  Outermost outer;
  OT_REAL(device_set_stream)(this, s);  // the caller's copy, by address
  if (!outer.reports())
    return;
  DeviceInfo *d = device_info(this);
  ObjectInfo *si = stream_info(&s);
  if (!d || !si)
    return;
  d->current_stream.store(si, std::memory_order_relaxed);  // launches name it
  if (enabled(OCCA_TOOLS_EVENT_STREAM_SET))
    api.stream_set(&d->slot, &si->slot);
}

void occa::stream::finish() {
  Outermost outer;
  if (!outer.reports()) {
    OT_REAL(stream_finish)(this);
    return;
  }
  ObjectInfo *info = stream_info(this);
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  api.stream_finish_begin(&call, info ? &info->slot : nullptr);
  try {
    OT_REAL(stream_finish)(this);
  } catch (...) {
    api.stream_finish_end(&call);
    throw;
  }
  api.stream_finish_end(&call);
  if (pending_times.load(std::memory_order_relaxed))
    resolve_stream(this);
}

occa::kernel occa::device::buildKernel(const std::string &filename, const std::string &kernelName,
                                       const occa::json &props) const {
  return build_kernel(this, filename, kernelName, props, OT_REAL(json.device_build_kernel));
}

occa::kernel occa::device::buildKernel(const std::string &filename, const std::string &kernelName,
                                       const occa::properties &props) const {
  return build_kernel(this, filename, kernelName, props, OT_REAL(props.device_build_kernel));
}

occa::memory occa::device::malloc(const dim_t entries, const dtype_t &dtype, const void *src,
                                  const occa::json &props) {
  return device_malloc(this, entries, dtype, src, props, OT_REAL(json.device_malloc));
}

occa::memory occa::device::malloc(const dim_t entries, const dtype_t &dtype, const void *src,
                                  const occa::properties &props) {
  return device_malloc(this, entries, dtype, src, props, OT_REAL(props.device_malloc));
}

occa::memory occa::memoryPool::reserve(const dim_t entries, const dtype_t &dtype) {
  return pool_reserve(this, entries, dtype, OT_REAL(pool_reserve), real.pool_mode_device);
}

occa::memory occa::experimental::memoryPool::reserve(const dim_t entries, const dtype_t &dtype) {
  return pool_reserve(this, entries, dtype, OT_REAL(experimental_pool_reserve),
                      real.experimental_pool_mode_device);
}

void occa::memory::copyFrom(const void *src, const dim_t count, const dim_t offset,
                            const occa::json &props) {
  copy_from_ptr(this, src, count, offset, props, OT_REAL(json.memory_copy_from_ptr));
}

void occa::memory::copyFrom(const void *src, const dim_t count, const dim_t offset,
                            const occa::properties &props) {
  copy_from_ptr(this, src, count, offset, props, OT_REAL(props.memory_copy_from_ptr));
}

void occa::memory::copyFrom(const memory src, const dim_t count, const dim_t destOffset,
                            const dim_t srcOffset, const occa::json &props) {
  copy_from_mem(this, src, count, destOffset, srcOffset, props, OT_REAL(json.memory_copy_from_mem));
}

void occa::memory::copyFrom(const memory src, const dim_t count, const dim_t destOffset,
                            const dim_t srcOffset, const occa::properties &props) {
  copy_from_mem(this, src, count, destOffset, srcOffset, props,
                OT_REAL(props.memory_copy_from_mem));
}

void occa::memory::copyTo(void *dest, const dim_t count, const dim_t offset,
                          const occa::json &props) const {
  copy_to_ptr(this, dest, count, offset, props, OT_REAL(json.memory_copy_to_ptr));
}

void occa::memory::copyTo(void *dest, const dim_t count, const dim_t offset,
                          const occa::properties &props) const {
  copy_to_ptr(this, dest, count, offset, props, OT_REAL(props.memory_copy_to_ptr));
}

void occa::memory::copyTo(const memory dest, const dim_t count, const dim_t destOffset,
                          const dim_t srcOffset, const occa::json &props) const {
  copy_to_mem(this, dest, count, destOffset, srcOffset, props, OT_REAL(json.memory_copy_to_mem));
}

void occa::memory::copyTo(const memory dest, const dim_t count, const dim_t destOffset,
                          const dim_t srcOffset, const occa::properties &props) const {
  copy_to_mem(this, dest, count, destOffset, srcOffset, props, OT_REAL(props.memory_copy_to_mem));
}

void occa::memory::free() {
  // Taken out first, so the destructor hook below does not report it again.
  ObjectInfo *info = depth == 0 && active() && real.memory_mode_memory
                         ? take_memory(real.memory_mode_memory(this))
                         : nullptr;
  if (!info) {
    OT_REAL(memory_free)(this);
    return;
  }
  Outermost outer;
  release(info, [&] { OT_REAL(memory_free)(this); });
}

// Destructors of OCCA's internal objects: the way every object ends, freed
// explicitly or when its last handle went. Named by their mangled symbols:
// a C++ definition of a destructor would export its complete-object variant
// too. They report whatever the depth: tearing down a device frees its
// memory for real.
extern "C" OT_HOOK void ot_occa_mode_memory_dtor(void *self) __asm__("_ZN4occa12modeMemory_tD2Ev");
extern "C" OT_HOOK void ot_occa_mode_kernel_dtor(void *self) __asm__("_ZN4occa12modeKernel_tD2Ev");
extern "C" OT_HOOK void ot_occa_mode_stream_dtor(void *self) __asm__("_ZN4occa12modeStream_tD2Ev");
extern "C" OT_HOOK void ot_occa_device_free_resources(void *self) __asm__(
    "_ZN4occa12modeDevice_t13freeResourcesEv");

void ot_occa_mode_memory_dtor(void *self) {
  ObjectInfo *info = active() ? take_memory(self) : nullptr;
  if (!info) {
    OT_REAL(mode_memory_dtor)(self);
    return;
  }
  release(info, [&] { OT_REAL(mode_memory_dtor)(self); });
}

void ot_occa_mode_kernel_dtor(void *self) {
  if (active())
    drop_kernel(self);
  OT_REAL(mode_kernel_dtor)(self);
}

void ot_occa_mode_stream_dtor(void *self) {
  if (active())
    drop_stream(self);
  OT_REAL(mode_stream_dtor)(self);
}

void ot_occa_device_free_resources(void *self) {
  bool on = active();
  if (on)
    forget_device(self);  // its tags are about to go
  OT_REAL(mode_device_free_resources)(self);
  if (on)
    drop_device(self);
}
