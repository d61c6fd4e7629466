// timing.cpp: device-side kernel times through OCCA's own stream tags.
//
// With events.device_time on, a launch is bracketed by device::tagStream()
// before and after. The pair waits in a queue; it is read with
// device::timeBetween() only where the work is known to be complete, so the
// adapter adds no synchronisation (on CUDA or HIP, timeBetween waits for its
// end tag): after device::finish (the current stream) or finishAll, after
// stream::finish (that stream), after a blocking copy to the host (the
// current stream), and before device::free. A device torn down otherwise
// takes its pending tags with it: those launches keep host times only, and
// the adapter says how many at exit.
//
// Serial and OpenMP run the kernel inside the launch, so the device start is
// the host time right after the first tag and the launch gets a full device
// interval; other backends get the duration alone (start 0, see
// occa_tools_kernel_device_time).
#include <cmath>
#include <exception>
#include <mutex>
#include <new>
#include <vector>

#include "adapter.hpp"

namespace ot_occa {

std::atomic<uint64_t> pending_times{0};

struct Pending {
  uint64_t correlation_id = 0;
  const void *mode_device = nullptr;
  const void *mode_stream = nullptr;
  uint64_t host_start_ns = 0;
  bool synchronous = false;
  bool have_end = false;
  // At the mirror's size: libocca.can_time requires OCCA 2.0's tag layout.
  alignas(occa::streamTag) unsigned char start[sizeof(occa::streamTag)];
  alignas(occa::streamTag) unsigned char end[sizeof(occa::streamTag)];

  occa::streamTag *start_tag() { return reinterpret_cast<occa::streamTag *>(start); }
  occa::streamTag *end_tag() { return reinterpret_cast<occa::streamTag *>(end); }
  ~Pending() {
    start_tag()->~streamTag();
    if (have_end)
      end_tag()->~streamTag();
  }
};

namespace {

// At most this many launches wait; beyond, launches are not timed (and
// counted) rather than let the queue grow without bound.
constexpr size_t max_pending = 1 << 16;

std::mutex mu;
std::vector<Pending *> &queue = *new std::vector<Pending *>;  // leaked: used at exit
std::atomic<uint64_t> untimed{0};

bool can_time() {
  return libocca.can_time && real.kernel_get_device && real.device_tag_stream &&
         real.device_time_between && real.stream_tag_mode && real.device_mode_device &&
         real.device_get_stream && real.stream_mode_stream;
}

const void *current_stream(occa::device *d) {
  Held<occa::stream> s([&] { return real.device_get_stream(d); });
  return real.stream_mode_stream(s.get());
}

// Takes the pending launches that match out of the queue.
template <class Match>
std::vector<Pending *> take(Match &&match) {
  std::vector<Pending *> out;
  std::lock_guard<std::mutex> g(mu);
  size_t keep = 0;
  for (Pending *p : queue) {
    if (match(p))
      out.push_back(p);
    else
      queue[keep++] = p;
  }
  queue.resize(keep);
  return out;
}

void report(occa::device *d, std::vector<Pending *> &done) {
  for (Pending *p : done) {
    double seconds = -1;
    // A tag whose device went away reads as uninitialised: never time it.
    if (real.stream_tag_mode(p->start_tag()) && real.stream_tag_mode(p->end_tag())) {
      try {
        seconds = real.device_time_between(d, *p->start_tag(), *p->end_tag());
      } catch (...) {
        seconds = -1;
      }
    }
    if (seconds >= 0 && std::isfinite(seconds)) {
      uint64_t ns = uint64_t(std::llround(seconds * 1e9));
      if (p->synchronous)
        api.kernel_device_time(p->correlation_id, p->host_start_ns, p->host_start_ns + ns);
      else
        api.kernel_device_time(p->correlation_id, 0, ns);
    } else {
      untimed.fetch_add(1, std::memory_order_relaxed);
    }
    delete p;
    pending_times.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace

LaunchTiming::LaunchTiming(const occa::kernel *k, uint64_t correlation_id)
    : pending_(nullptr), device_(nullptr), exceptions_(std::uncaught_exceptions()) {
  if (!can_time())
    return;
  if (pending_times.load(std::memory_order_relaxed) >= max_pending) {
    untimed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    device_ = new (device_storage_) occa::device(real.kernel_get_device(const_cast<occa::kernel *>(k)));
    DeviceInfo *info = device_info(device_);
    Pending *p = new Pending;
    p->correlation_id = correlation_id;
    p->mode_device = real.device_mode_device(device_);
    p->mode_stream = current_stream(device_);
    p->synchronous = info && info->synchronous;
    try {
      new (p->start) occa::streamTag(real.device_tag_stream(device_));
    } catch (...) {
      operator delete(static_cast<void *>(p));  // no tag to destroy
      throw;
    }
    p->host_start_ns = api.now_ns();
    pending_ = p;
  } catch (...) {
    // Timing must never change what the launch does.
    untimed.fetch_add(1, std::memory_order_relaxed);
  }
}

LaunchTiming::~LaunchTiming() {
  if (pending_) {
    Pending *p = pending_;
    bool ok = std::uncaught_exceptions() == exceptions_;  // the launch did not throw
    if (ok) {
      try {
        new (p->end) occa::streamTag(real.device_tag_stream(device_));
        p->have_end = true;
      } catch (...) {
        ok = false;
      }
    }
    if (ok) {
      std::lock_guard<std::mutex> g(mu);
      queue.push_back(p);
      pending_times.fetch_add(1, std::memory_order_relaxed);
    } else {
      delete p;
      untimed.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (device_)
    device_->~device();
}

void resolve_device(occa::device *d, bool all_streams) {
  if (!can_time())
    return;
  const void *md = real.device_mode_device(d);
  if (!md)
    return;  // an uninitialised handle (device::finish on it is a no-op)
  const void *ms = nullptr;
  if (!all_streams) {
    try {
      ms = current_stream(d);
    } catch (...) {
      return;  // resolving must never change what the call does
    }
  }
  std::vector<Pending *> done = take([&](Pending *p) {
    return p->mode_device == md && (all_streams || p->mode_stream == ms);
  });
  report(d, done);
}

void resolve_stream(const occa::stream *s) {
  if (!can_time() || !real.stream_get_device)
    return;
  const void *ms = real.stream_mode_stream(s);
  if (!ms)
    return;
  Held<occa::device> d([&] { return real.stream_get_device(s); });
  std::vector<Pending *> done = take([&](Pending *p) { return p->mode_stream == ms; });
  report(d.get(), done);
}

void resolve_current_stream(const occa::memory *m) {
  if (!can_time() || !real.memory_get_device)
    return;
  Held<occa::device> d([&] { return real.memory_get_device(m); });
  if (!real.device_mode_device(d.get()))
    return;
  resolve_device(d.get(), false);
}

void forget_device(const void *mode_device) {
  std::vector<Pending *> gone = take([&](Pending *p) { return p->mode_device == mode_device; });
  for (Pending *p : gone) {
    delete p;
    pending_times.fetch_sub(1, std::memory_order_relaxed);
    untimed.fetch_add(1, std::memory_order_relaxed);
  }
}

uint64_t untimed_launches() { return untimed.load(std::memory_order_relaxed); }

}  // namespace ot_occa
