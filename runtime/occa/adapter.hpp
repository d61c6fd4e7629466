// adapter.hpp: what the OCCA adapter's files share.
//
// The adapter (libocca_tools_occa.so) is preloaded into an unmodified OCCA
// application. It defines functions with the mangled names of libocca's
// choke points (mirror.hpp), so the dynamic linker sends the application's
// calls, and libocca's own internal calls through its PLT, to the hooks
// first. Each hook reports the call to the occa-tools runtime through the
// ABI of occa_tools.h and forwards to libocca's function (real.cpp).
//
// Nothing happens at load time: a process that never calls OCCA (OCCA's JIT
// compiler, a shell started by the application) only maps the library. The
// first hook call resolves libocca's functions and connects to the runtime;
// with no runtime or no config, every hook just forwards.
#ifndef OCCA_TOOLS_OCCA_ADAPTER_HPP
#define OCCA_TOOLS_OCCA_ADAPTER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include "mirror.hpp"
#include "occa_tools.h"

#define OT_LIKELY(x) __builtin_expect(!!(x), 1)
#define OT_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace ot_occa {

// ---- libocca's own functions (real.cpp) ----------------------------------
// One member per function the adapter hooks or calls, typed as a plain
// function whose first parameter is `this` (the Itanium C++ ABI passes it
// so); null when libocca lacks the symbol. A handle OCCA takes by value is
// passed by the address of the caller's copy (handles are non-trivial), so
// those parameters are typed `const H &` here: the adapter forwards the
// caller's copy and never makes one of its own size.
// Throws (as an OCCA error would) when a hooked function's original is
// missing, which only a mismatched libocca can cause.
[[noreturn]] void missing(const char *what);

// The functions that take properties: occa::json, or occa::properties in
// OCCA 1.0-1.1.
template <class Props>
struct PropsFns {
  void (*device_setup)(occa::device *, const Props &);
  occa::stream (*device_create_stream)(occa::device *, const Props &);
  occa::kernel (*device_build_kernel)(const occa::device *, const std::string &,
                                      const std::string &, const Props &);
  occa::memory (*device_malloc)(occa::device *, occa::dim_t, const occa::dtype_t &, const void *,
                                const Props &);
  void (*memory_copy_from_ptr)(occa::memory *, const void *, occa::dim_t, occa::dim_t,
                               const Props &);
  void (*memory_copy_from_mem)(occa::memory *, const occa::memory &, occa::dim_t, occa::dim_t,
                               occa::dim_t, const Props &);
  void (*memory_copy_to_ptr)(const occa::memory *, void *, occa::dim_t, occa::dim_t,
                             const Props &);
  void (*memory_copy_to_mem)(const occa::memory *, const occa::memory &, occa::dim_t,
                             occa::dim_t, occa::dim_t, const Props &);
};

struct Real {
  // Hooked.
  PropsFns<occa::json> json;
  PropsFns<occa::properties> props;
  void (*device_setup_string)(occa::device *, const std::string &);
  void (*device_free)(occa::device *);
  void (*device_finish)(occa::device *);
  void (*device_finish_all)(occa::device *);
  void (*device_set_stream)(occa::device *, const occa::stream &);
  void (*kernel_run)(const occa::kernel *);
  void (*kernel_run_list)(const occa::kernel *, std::initializer_list<occa::kernelArg>);
  void (*memory_free)(occa::memory *);
  void (*stream_finish)(occa::stream *);
  occa::memory (*pool_reserve)(occa::memoryPool *, occa::dim_t, const occa::dtype_t &);
  occa::memory (*experimental_pool_reserve)(occa::experimental::memoryPool *, occa::dim_t,
                                            const occa::dtype_t &);
  void (*mode_memory_dtor)(void *);
  void (*mode_kernel_dtor)(void *);
  void (*mode_stream_dtor)(void *);
  void (*mode_device_free_resources)(void *);

  // Called.
  void *(*device_mode_device)(const occa::device *);
  const std::string &(*device_mode)(const occa::device *);
  occa::stream (*device_get_stream)(occa::device *);
  occa::streamTag (*device_tag_stream)(occa::device *);
  double (*device_time_between)(occa::device *, const occa::streamTag &,
                                const occa::streamTag &);
  void *(*kernel_mode_kernel)(const occa::kernel *);
  const std::string &(*kernel_name)(occa::kernel *);
  const std::string &(*kernel_binary_filename)(occa::kernel *);
  occa::device (*kernel_get_device)(occa::kernel *);
  void *(*memory_mode_memory)(const occa::memory *);
  const occa::dtype_t &(*memory_dtype)(const occa::memory *);
  occa::udim_t (*memory_length)(const occa::memory *);
  occa::udim_t (*memory_byte_size)(const occa::memory *);
  occa::device (*memory_get_device)(const occa::memory *);
  void *(*memory_ptr)(occa::memory *);
  void *(*stream_mode_stream)(const occa::stream *);
  occa::device (*stream_get_device)(const occa::stream *);
  void *(*stream_tag_mode)(const occa::streamTag *);
  int (*dtype_bytes)(const occa::dtype_t *);
  std::string (*json_dump)(const occa::json *, int);
  const occa::json &(*json_get)(const occa::json *, const char *);  // const operator[]
  occa::json &(*settings)();
  void *(*pool_mode_device)(const occa::memoryPool *);
  void *(*experimental_pool_mode_device)(const occa::experimental::memoryPool *);
  void (*handle_default[occa::ot_mirror::HANDLE_CLASSES])(void *);
  void (*handle_copy[occa::ot_mirror::HANDLE_CLASSES])(void *, const void *);
  void (*handle_destroy[occa::ot_mirror::HANDLE_CLASSES])(void *);
};
extern Real real;

// ---- What the adapter found out about libocca at start (probe.cpp) --------
struct Libocca {
  // Whether a handle of each class fits the adapter's storage (Held): its
  // libocca constructor wrote at most handle_limit bytes. Hooks that would
  // hold one of a class that does not fit only forward.
  bool holdable[occa::ot_mirror::HANDLE_CLASSES];
  // Bytes libocca's default constructor wrote, per class (0: no constructor).
  size_t extent[occa::ot_mirror::HANDLE_CLASSES];
  // copyFrom/copyTo counts are bytes (OCCA before 2.0), not elements.
  bool copy_counts_bytes;
  // Device times: tags are held in the pending queue at the mirror's size,
  // so they need OCCA 2.0's streamTag layout, and devices and streams Held.
  bool can_time;
};
extern Libocca libocca;
void probe();  // fills libocca and reports, once, at start

// Storage for one handle libocca returns, of any layout up to handle_limit
// bytes: the value is built in place by the call that returns it (C++17
// guaranteed copy elision passes this storage as the return slot), so a
// libocca whose handles are larger than the mirror's cannot write past it.
constexpr size_t handle_room = 512;
// The largest constructor extent accepted: room is left for members a
// default constructor leaves unwritten.
constexpr size_t handle_limit = 256;
template <class H>
class Held {
 public:
  template <class Make>
  explicit Held(Make &&make) {
    ::new (static_cast<void *>(room_)) H(make());
  }
  ~Held() { get()->~H(); }
  Held(const Held &) = delete;
  Held &operator=(const Held &) = delete;
  H *get() { return std::launder(reinterpret_cast<H *>(room_)); }

 private:
  alignas(16) unsigned char room_[handle_room];
};

void start();  // resolves libocca and connects, once (state.cpp)

// The original of a hooked function. A hook may be the first the process
// calls, or run while another thread resolves: the originals are resolved
// here then. Throws (missing) when libocca lacks it.
template <class F>
inline F real_fn(F fn_ptr, F &fn, const char *what) {
  if (OT_LIKELY(fn_ptr != nullptr))
    return fn_ptr;
  start();
  if (!fn)
    missing(what);
  return fn;
}
#define OT_REAL(name) (::ot_occa::real_fn(::ot_occa::real.name, ::ot_occa::real.name, #name))

// libocca's kernel::operator() with n arguments.
extern void *kernel_op[];
inline void *real_kernel_op(int n) {
  return real_fn(kernel_op[n], kernel_op[n], "kernel::operator()");  // n: the hook's constant
}

// ---- The runtime (state.cpp) -----------------------------------------------
// The runtime's entry points, looked up by name once.
struct Api {
  decltype(&occa_tools_device_setup_begin) device_setup_begin;
  decltype(&occa_tools_device_setup_end) device_setup_end;
  decltype(&occa_tools_memory_alloc_begin) memory_alloc_begin;
  decltype(&occa_tools_memory_alloc_end) memory_alloc_end;
  decltype(&occa_tools_memory_free_begin) memory_free_begin;
  decltype(&occa_tools_memory_free_end) memory_free_end;
  decltype(&occa_tools_copy_begin) copy_begin;
  decltype(&occa_tools_copy_end) copy_end;
  decltype(&occa_tools_build_begin) build_begin;
  decltype(&occa_tools_build_end) build_end;
  decltype(&occa_tools_run_begin) run_begin;
  decltype(&occa_tools_run_end) run_end;
  decltype(&occa_tools_kernel_device_time) kernel_device_time;
  decltype(&occa_tools_stream_create) stream_create;
  decltype(&occa_tools_stream_set) stream_set;
  decltype(&occa_tools_stream_finish_begin) stream_finish_begin;
  decltype(&occa_tools_stream_finish_end) stream_finish_end;
  decltype(&occa_tools_device_finish_begin) device_finish_begin;
  decltype(&occa_tools_device_finish_end) device_finish_end;
  decltype(&occa_tools_now_ns) now_ns;
  decltype(&occa_tools_log) log;
  const volatile uint64_t *enabled;
};
extern Api api;

enum State { UNREADY = 0, INACTIVE = 1, ACTIVE = 2 };
extern std::atomic<int> state;

// Is the runtime recording? Resolves everything on the first call.
inline bool active() {
  int s = state.load(std::memory_order_acquire);
  if (OT_UNLIKELY(s == UNREADY)) {
    start();
    s = state.load(std::memory_order_acquire);
  }
  return s == ACTIVE;
}

inline bool enabled(occa_tools_event_kind_t kind) { return (*api.enabled >> kind) & 1u; }

void log(occa_tools_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Hooks that call other hooked functions (malloc<void> -> malloc, memcpy ->
// copyFrom, buildKernelFromString -> buildKernel, operator() -> run) must
// report one event: only the outermost hook on a thread reports.
// Initial-exec TLS: one load, no __tls_get_addr call per hook. The adapter
// is preloaded, so its few bytes come from the static TLS block.
// (__thread, not thread_local: no dynamic initialiser, so no TLS wrapper
// call either.)
#define OT_TLS __attribute__((tls_model("initial-exec"))) __thread
extern OT_TLS int depth;
class Outermost {
 public:
  Outermost() : outer_(depth++ == 0) {}
  ~Outermost() { depth--; }
  Outermost(const Outermost &) = delete;
  Outermost &operator=(const Outermost &) = delete;
  // True when the runtime records and no hook is running below on this thread.
  bool reports() const { return outer_ && active(); }

 private:
  bool outer_;
};

// ---- Objects (objects.cpp) --------------------------------------------------
// OCCA's handles are copied freely; the object behind them (modeDevice_t
// and friends) is what has an identity. Each gets an info record, holding
// the slot the runtime fills, in a table keyed by that pointer.
struct ObjectInfo {  // memory and streams
  occa_tools_data_t slot = OCCA_TOOLS_DATA_NONE;
};
struct DeviceInfo {
  occa_tools_data_t slot = OCCA_TOOLS_DATA_NONE;
  bool synchronous = false;  // Serial and OpenMP run kernels inside the launch
  bool cupti = false;        // CUDA, with CUPTI giving its kernel times
  // The stream set by device::setStream, null for the device's first
  // stream. The device holds a handle to its current stream, so the record
  // outlives its time here.
  std::atomic<ObjectInfo *> current_stream{nullptr};
};
struct KernelInfo {
  occa_tools_data_t slot = OCCA_TOOLS_DATA_NONE;
  DeviceInfo *device = nullptr;
  std::string name;
};

DeviceInfo *device_info(const occa::device *d);  // adds one if new
DeviceInfo *device_info_of_mode(const void *mode_device);  // null if unknown
DeviceInfo *add_device(const void *mode_device, const std::string &mode);
void drop_device(const void *mode_device);

// Launches look their kernel up in a small per-thread cache first; every
// kernel record dropped bumps the epoch, which empties all caches.
struct KernelCacheEntry {
  const void *key;
  KernelInfo *info;
  uint64_t epoch;
};
constexpr unsigned kernel_cache_size = 16;  // 384 bytes of static TLS
extern OT_TLS KernelCacheEntry kernel_cache[kernel_cache_size];
extern std::atomic<uint64_t> kernel_epoch;
KernelInfo *kernel_info_slow(const void *mode_kernel, const occa::kernel *k, KernelCacheEntry &e,
                             uint64_t epoch);

// Whether a kernel handle's mode pointer may be read from its layout rather
// than through kernel::getModeKernel(): checked on each kernel's first
// launch, and off for good at the first disagreement.
extern std::atomic<bool> kernel_layout_ok;

inline KernelInfo *kernel_info(const occa::kernel *k) {  // adds one if new
  const void *key = OT_LIKELY(kernel_layout_ok.load(std::memory_order_relaxed))
                        ? k->mode_in_layout()
                    : real.kernel_mode_kernel ? real.kernel_mode_kernel(k)
                                              : nullptr;
  uint64_t epoch = kernel_epoch.load(std::memory_order_acquire);
  KernelCacheEntry &e = kernel_cache[(reinterpret_cast<uintptr_t>(key) >> 4) % kernel_cache_size];
  if (OT_LIKELY(key && e.key == key && e.epoch == epoch))
    return e.info;
  return kernel_info_slow(key, k, e, epoch);
}
KernelInfo *add_kernel(const void *mode_kernel, DeviceInfo *device, const std::string &name);
void drop_kernel(const void *mode_kernel);

ObjectInfo *memory_info(const occa::memory *m);  // null if not an allocation
ObjectInfo *add_memory(const void *mode_memory);
ObjectInfo *take_memory(const void *mode_memory);  // the caller deletes it

ObjectInfo *stream_info(const occa::stream *s);  // adds one if new
void drop_stream(const void *mode_stream);

// ---- Device timing (timing.cpp) ---------------------------------------------
// Brackets a launch with stream tags when events.device_time asks for it and
// resolves the tags later, at a point where the work is known to be done.
class LaunchTiming {
 public:
  LaunchTiming(const occa::kernel *k, uint64_t correlation_id);
  ~LaunchTiming();  // tags the end and queues the pair
  LaunchTiming(const LaunchTiming &) = delete;
  LaunchTiming &operator=(const LaunchTiming &) = delete;

 private:
  struct Pending *pending_;
  occa::device *device_;  // held for the launch only: the queue holds no device
  int exceptions_;
  alignas(16) unsigned char device_storage_[handle_room];
};
// Resolves the launches of d's current stream, or of all its streams.
void resolve_device(occa::device *d, bool all_streams);  // after a finish, before a free
void resolve_stream(const occa::stream *s);
void resolve_current_stream(const occa::memory *m);  // after a blocking copy to the host
void forget_device(const void *mode_device);  // the device is going away
void resolve_at_exit();  // what CUPTI delivered by then
extern std::atomic<uint64_t> pending_times;

// CUDA kernel times from CUPTI (cupti.cpp), where it loads.
namespace cupti {
bool start();  // at a CUDA device's setup with device times on; true when in use
bool on();
void launch_begin(uint64_t correlation_id);  // around OCCA's launch, on its thread
void launch_end();
void flush(bool forced);  // reads the completed kernels' records; forced at exit
enum class Record { missing, complete, incomplete };
Record take(uint64_t correlation_id, uint64_t *start, uint64_t *end);  // after flush
bool delivered(uint64_t correlation_id);  // take would find its record
}  // namespace cupti
uint64_t untimed_launches();  // launches that asked for device time and got none

// ---- Launches (launch.cpp) --------------------------------------------------
// Out of line: LaunchTiming holds a device in handle_room bytes, and a frame
// that size would keep the compiler from inlining launch() into each hook.
template <class Run>
__attribute__((noinline)) void run_timed(const occa::kernel *k, uint64_t correlation_id, Run &run) {
  LaunchTiming timing(k, correlation_id);
  run();
}

template <class Run>
inline void launch(const occa::kernel *k, Run &&run) {
  if (state.load(std::memory_order_relaxed) == INACTIVE) {  // the untraced fast path
    run();
    return;
  }
  Outermost outer;
  if (OT_LIKELY(!outer.reports()) || !enabled(OCCA_TOOLS_EVENT_RUN_BEGIN)) {
    run();
    return;
  }
  KernelInfo *info = kernel_info(k);
  occa_tools_call_t call = OCCA_TOOLS_CALL_INIT;
  occa_tools_data_t *device = nullptr, *stream = nullptr;
  if (DeviceInfo *d = info->device) {
    device = &d->slot;
    if (ObjectInfo *s = d->current_stream.load(std::memory_order_relaxed))
      stream = &s->slot;
  }
  api.run_begin(&call, &info->slot, info->name.c_str(), device, stream);
  if (call.correlation_id == 0 && call.tool_data == 0) {
    run();  // not recorded (filtered out, paused): the end would be a no-op
    return;
  }
  try {
    if (call.correlation_id && enabled(OCCA_TOOLS_EVENT_DEVICE_TIME)) {
      run_timed(k, call.correlation_id, run);
    } else {
      run();
    }
  } catch (...) {
    api.run_end(&call, OCCA_TOOLS_FAILED);
    throw;
  }
  api.run_end(&call, OCCA_TOOLS_OK);
}

}  // namespace ot_occa

#endif
