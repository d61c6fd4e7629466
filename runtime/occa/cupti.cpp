// cupti.cpp: CUDA kernel times from CUPTI, NVIDIA's profiling interface,
// where it loads; stream tags (timing.cpp) elsewhere.
//
// A stream tag passes when its stream gets to it, and on a stream with
// nothing queued that is when the host asks for it: tags around a launch on
// an idle stream time the host's launch overhead too (+7 us on a 5.4 us
// kernel on an H200). CUPTI's kernel records hold the start and end the GPU
// recorded, and cost less per launch than two CUDA events.
//
// The adapter loads libcupti itself, at the first CUDA device set up with
// device times on, so occa-tools needs no CUDA to build. It stays out of the
// way of any other CUPTI client: none is used when CUDA_INJECTION64_PATH is
// set (Nsight and other profilers are injected so) or OCCA_TOOLS_CUPTI is
// "off"; a CUPTI that refuses a call leaves stream tags in charge.
//
// A launch's correlation id is held in a thread-local while OCCA launches;
// CUPTI calls back on entry to each cuLaunchKernel with its own correlation
// id, which maps to ours; each kernel record then finds its launch. A launch
// that ran several CUDA kernels gets one device time, first start to last
// end. The records are read where the tags would be: after a finish or a
// blocking copy, when the kernels are done. That flush is not forced: a
// forced one hands out records CUPTI has not completed, with start and end
// 0, and no complete record follows. Seen on an H200 (CUDA 13.0): the
// forced flush right after a stream's finish gave that stream's last kernel
// so. Unforced, CUPTI holds back a buffer until each of its records is
// complete. A flush brings every stream's records, so each one resolves
// all the launches it completes; a launch whose record has not come waits
// for a later flush, or for exit, where the flush is forced (timing.cpp,
// report_cupti). A record incomplete even then leaves its launch untimed,
// and counted.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "adapter.hpp"
#include "cupti_abi.h"

namespace ot_occa {
namespace cupti {

namespace {

using Result = int;  // CUptiResult
using CallbackData = ot_cupti_callback_data;
using KernelRecord = ot_cupti_kernel_record;
constexpr Result success = OT_CUPTI_SUCCESS;
constexpr uint32_t launch_callbacks[] = OT_CUPTI_LAUNCH_CBIDS;
static_assert(offsetof(KernelRecord, start) == 16 && offsetof(KernelRecord, correlation_id) == 92,
              "CUPTI's kernel record layout");

using CallbackFunc = void (*)(void *, int, uint32_t, const void *);
using BufferRequested = void (*)(uint8_t **, size_t *, size_t *);
using BufferCompleted = void (*)(void *, uint32_t, uint8_t *, size_t, size_t);
using TimestampFunc = uint64_t (*)();

struct Library {
  Result (*get_version)(uint32_t *);
  Result (*subscribe)(void **, CallbackFunc, void *);
  Result (*enable_callback)(uint32_t, void *, int, uint32_t);
  Result (*register_callbacks)(BufferRequested, BufferCompleted);
  Result (*register_timestamp)(TimestampFunc);  // newer CUPTIs only (CUDA 12.8's has it)
  Result (*get_timestamp)(uint64_t *);
  Result (*enable)(int);
  Result (*next_record)(uint8_t *, size_t, void **);
  Result (*flush_all)(uint32_t);
} lib;

// The time from a launch's first kernel start to its last kernel end, on
// the host clock; incomplete when CUPTI gave a record without timestamps.
struct Span {
  uint64_t start, end;
  bool incomplete;
};

constexpr size_t buffer_bytes = 1 << 20;
// At most this many launches wait for their kernels (as many as may wait
// for tags); beyond, a launch's kernels are not mapped and it gets no time.
constexpr size_t max_mapped = 1 << 16;

std::mutex mu;  // guards what follows
std::unordered_map<uint32_t, uint64_t> &launch_of = *new std::unordered_map<uint32_t, uint64_t>;  // CUPTI's id -> ours
std::unordered_map<uint64_t, Span> &spans = *new std::unordered_map<uint64_t, Span>;  // ours -> its kernels
int64_t clock_offset = 0;  // host clock - CUPTI's, without the timestamp callback
bool on_ = false;

OT_TLS uint64_t current_launch;  // the launch OCCA is running on this thread

uint64_t host_now() { return api.now_ns(); }

void CUPTI_callback(void *, int domain, uint32_t, const void *data) {
  const CallbackData *cb = static_cast<const CallbackData *>(data);
  if (domain != OT_CUPTI_DOMAIN_DRIVER_API || !cb)
    return;
  if (cb->site == OT_CUPTI_API_ENTER) {
    if (uint64_t ours = current_launch) {
      std::lock_guard<std::mutex> g(mu);
      if (launch_of.size() < max_mapped) {
        try {
          launch_of[cb->correlation_id] = ours;
        } catch (...) {  // no memory: this launch goes untimed
        }
      }
    }
  } else if (cb->site == OT_CUPTI_API_EXIT && current_launch && cb->function_return_value &&
             *static_cast<const int *>(cb->function_return_value) != 0) {
    std::lock_guard<std::mutex> g(mu);  // the launch failed: no kernel will come
    launch_of.erase(cb->correlation_id);
  }
}

void buffer_requested(uint8_t **buffer, size_t *bytes, size_t *max_records) {
  *buffer = static_cast<uint8_t *>(aligned_alloc(8, buffer_bytes));
  *bytes = *buffer ? buffer_bytes : 0;  // none: CUPTI counts what it drops
  *max_records = 0;
}

void buffer_completed(void *, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  void *record = nullptr;
  std::lock_guard<std::mutex> g(mu);
  while (buffer && lib.next_record(buffer, valid, &record) == success) {
    const KernelRecord *k = static_cast<const KernelRecord *>(record);
    if (k->kind != OT_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      continue;
    auto it = launch_of.find(k->correlation_id);
    if (it == launch_of.end())
      continue;  // not launched through OCCA with device times on
    // CUPTI's "no timestamps" is 0 and 0; an end before the start is no time either.
    bool incomplete = k->start == 0 || k->end < k->start;
    uint64_t start = uint64_t(int64_t(k->start) + clock_offset), end = uint64_t(int64_t(k->end) + clock_offset);
    try {
      if (spans.size() >= max_mapped && !spans.count(it->second))
        throw std::bad_alloc();  // launches never resolved: bound what they hold
      auto s = spans.try_emplace(it->second, Span{start, end, incomplete});
      if (!s.second) {
        s.first->second.start = std::min(s.first->second.start, start);
        s.first->second.end = std::max(s.first->second.end, end);
        s.first->second.incomplete |= incomplete;
      }
    } catch (...) {  // no memory: this launch goes untimed
    }
    launch_of.erase(it);
  }
  free(buffer);
}

template <class F>
bool find(void *handle, const char *name, F *f) {
  *f = reinterpret_cast<F>(dlsym(handle, name));
  return *f != nullptr;
}

// open_library loads named (OCCA_TOOLS_CUPTI), or else the first libcupti
// found.
void *open_library(const char *named) {
  if (named)
    return dlopen(named, RTLD_NOW | RTLD_LOCAL);
  const char *names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
  for (const char *n : names)
    if (void *h = dlopen(n, RTLD_NOW | RTLD_LOCAL))
      return h;
  std::string roots[] = {getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "", "/usr/local/cuda"};
  for (const std::string &root : roots) {
    if (root.empty())
      continue;
    for (const char *dir : {"/lib64/", "/extras/CUPTI/lib64/", "/targets/x86_64-linux/lib/"})
      if (void *h = dlopen((root + dir + "libcupti.so").c_str(), RTLD_NOW | RTLD_LOCAL))
        return h;
  }
  return nullptr;
}

// Why CUPTI is not used, or nullptr when it is. named is the library
// OCCA_TOOLS_CUPTI names, if any.
const char *start_CUPTI(const char *named) {
  if (getenv("CUDA_INJECTION64_PATH"))
    return "another CUPTI client is injected (CUDA_INJECTION64_PATH)";
  void *h = open_library(named);
  if (!h)
    return "no libcupti that loads (set OCCA_TOOLS_CUPTI to its path)";
  bool found = find(h, "cuptiGetVersion", &lib.get_version) && find(h, "cuptiSubscribe", &lib.subscribe) &&
               find(h, "cuptiEnableCallback", &lib.enable_callback) &&
               find(h, "cuptiActivityRegisterCallbacks", &lib.register_callbacks) &&
               find(h, "cuptiGetTimestamp", &lib.get_timestamp) && find(h, "cuptiActivityEnable", &lib.enable) &&
               find(h, "cuptiActivityGetNextRecord", &lib.next_record) &&
               find(h, "cuptiActivityFlushAll", &lib.flush_all);
  find(h, "cuptiActivityRegisterTimestampCallback", &lib.register_timestamp);
  uint32_t version = 0;
  if (!found || lib.get_version(&version) != success)
    return "libcupti lacks a function the adapter calls, or gives no version";
  void *subscriber = nullptr;
  if (lib.subscribe(&subscriber, CUPTI_callback, nullptr) != success)
    return "CUPTI refused a subscriber (another tool has it)";
  for (uint32_t cbid : launch_callbacks)
    if (lib.enable_callback(1, subscriber, OT_CUPTI_DOMAIN_DRIVER_API, cbid) != success)
      return "CUPTI refused the launch callbacks";
  if (lib.register_callbacks(buffer_requested, buffer_completed) != success)
    return "CUPTI refused the record buffers";
  if (!lib.register_timestamp || lib.register_timestamp(host_now) != success) {
    uint64_t theirs = 0;
    uint64_t ours = api.now_ns();
    if (lib.get_timestamp(&theirs) != success)
      return "CUPTI gave no timestamp";
    clock_offset = int64_t(ours) - int64_t(theirs);
  }
  if (lib.enable(OT_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != success)
    return "CUPTI refused kernel records";
  return nullptr;
}

void start_once() {
  const char *choice = getenv("OCCA_TOOLS_CUPTI");
  if (choice && std::string(choice) == "off") {
    log(OCCA_TOOLS_LOG_INFO, "OCCA adapter: CUDA device times from stream tags: OCCA_TOOLS_CUPTI=off");
    return;
  }
  const char *named = choice && *choice ? choice : nullptr;
  const char *why = start_CUPTI(named);
  if (!why) {
    on_ = true;
    return;
  }
  // A library the user named and cannot be used is worth a warning; no
  // CUPTI where none was asked for is the ordinary case.
  log(named ? OCCA_TOOLS_LOG_WARN : OCCA_TOOLS_LOG_INFO, "OCCA adapter: CUDA device times from stream tags: %s%s%s",
      why, named ? "; OCCA_TOOLS_CUPTI=" : "", named ? named : "");
}

}  // namespace

bool start() {
  static std::once_flag once;
  try {
    std::call_once(once, start_once);
  } catch (...) {
  }
  return on_;
}

bool on() { return on_; }

void launch_begin(uint64_t correlation_id) { current_launch = correlation_id; }
void launch_end() { current_launch = 0; }

void flush(bool forced) { lib.flush_all(forced ? OT_CUPTI_FLUSH_FORCED : 0); }

bool delivered(uint64_t correlation_id) {
  std::lock_guard<std::mutex> g(mu);
  return spans.count(correlation_id) != 0;
}

Record take(uint64_t correlation_id, uint64_t *start, uint64_t *end) {
  std::lock_guard<std::mutex> g(mu);
  auto it = spans.find(correlation_id);
  if (it == spans.end())
    return Record::missing;
  *start = it->second.start;
  *end = it->second.end;
  bool incomplete = it->second.incomplete;
  spans.erase(it);
  return incomplete ? Record::incomplete : Record::complete;
}

}  // namespace cupti
}  // namespace ot_occa
