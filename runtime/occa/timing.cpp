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
// the host time right after the first tag. Asynchronous backends (CUDA, HIP,
// OpenCL) place a start on the host clock without waiting for the device:
// see DeviceClock. On CUDA, CUPTI's kernel records replace the tags where
// CUPTI loads (cupti.cpp); such launches wait in the same queue.
#include <algorithm>
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
  uint64_t host_before_ns = 0;  // before the start tag was asked for
  uint64_t host_start_ns = 0;   // after it
  bool synchronous = false;
  bool cupti = false;  // timed by CUPTI's kernel records, not tags
  bool have_start = false, have_end = false;
  // At the mirror's size: libocca.can_time requires OCCA 2.0's tag layout.
  alignas(occa::streamTag) unsigned char start[sizeof(occa::streamTag)];
  alignas(occa::streamTag) unsigned char end[sizeof(occa::streamTag)];

  occa::streamTag *start_tag() { return reinterpret_cast<occa::streamTag *>(start); }
  occa::streamTag *end_tag() { return reinterpret_cast<occa::streamTag *>(end); }
  ~Pending() {
    if (have_start)
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

// Takes the pending launches that match out of the queue. Without memory
// for the answer it takes none: they wait for a later resolution.
template <class Match>
std::vector<Pending *> take(Match &&match) {
  std::vector<Pending *> out;
  std::lock_guard<std::mutex> g(mu);
  try {
    out.reserve(queue.size());  // then push_back cannot throw
  } catch (...) {
    return out;
  }
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

// The seconds between two tags of device d, or NaN where OCCA cannot say. A
// tag whose device went away reads as uninitialised: never time it. Beyond a
// year either way the answer is nonsense, and in ns it would not fit.
double time_between(occa::device *d, occa::streamTag *from, occa::streamTag *to) {
  constexpr double year = 365.0 * 24 * 3600;
  if (!real.stream_tag_mode(from) || !real.stream_tag_mode(to))
    return NAN;
  try {
    double seconds = real.device_time_between(d, *from, *to);
    return std::isfinite(seconds) && std::fabs(seconds) < year ? seconds : NAN;
  } catch (...) {
    return NAN;
  }
}

// DeviceClock puts an asynchronous device's launches on the host clock
// without waiting for the device. Its reference is the start tag of the
// first launch read on that device, and timeBetween(reference, start) puts
// every later start on one device timeline. The device cannot pass a tag
// before the host has asked for it, so (host time before the tag - the tag's
// place on the timeline) is a lower bound of the offset between the two
// clocks; the largest bound seen is the estimate. It is as close as the
// quickest tag was to its request: a launch on an idle stream, a few us on
// CUDA. CUDA gives timeBetween in float milliseconds (60 ns steps at 1 s,
// 60 us at 1000 s), so once a start is more than a second past the
// reference, that launch's start tag becomes the reference.
struct DeviceClock {
  const void *mode_device = nullptr;
  Pending *reference = nullptr;  // kept for its start tag
  int64_t reference_ns = 0;      // the reference tag's place on the timeline
  int64_t offset_ns = 0;         // host clock - timeline, once there is a reference
};

constexpr int64_t move_reference_after_ns = 1000000000;

std::mutex clock_mu;  // guards clocks and what they hold
std::vector<DeviceClock> &clocks = *new std::vector<DeviceClock>;  // leaked: used at exit

DeviceClock &device_clock(const void *mode_device) {
  for (DeviceClock &c : clocks)
    if (c.mode_device == mode_device)
      return c;
  clocks.emplace_back();
  clocks.back().mode_device = mode_device;
  return clocks.back();
}

// place puts p's start on c's timeline (*start, ns) and tightens c's
// offset. It keeps p (*keep) when p's start tag becomes the reference.
bool place(occa::device *d, DeviceClock &c, Pending *p, int64_t *start, bool *keep) {
  bool first = !c.reference;
  if (first) {
    c.reference = p;
    *start = 0;
    *keep = true;
  } else {
    double seconds = time_between(d, c.reference->start_tag(), p->start_tag());
    if (std::isnan(seconds))
      return false;
    *start = c.reference_ns + std::llround(seconds * 1e9);
    if (*start - c.reference_ns > move_reference_after_ns) {
      delete c.reference;
      c.reference = p;
      c.reference_ns = *start;
      *keep = true;
    }
  }
  int64_t bound = int64_t(p->host_before_ns) - *start;
  if (first || bound > c.offset_ns)
    c.offset_ns = bound;
  return true;
}

// report_cupti hands p's kernel time to the runtime and deletes p, or
// returns false when CUPTI has not delivered the record yet (when last is
// false). CUPTI holds back a buffer until all its records are complete
// (cupti.cpp), so a launch can wait past its stream's finish, its device
// going away or not, until exit.
bool report_cupti(Pending *p, bool last) {
  uint64_t start = 0, end = 0;
  cupti::Record r = cupti::take(p->correlation_id, &start, &end);
  if (r == cupti::Record::missing && !last)
    return false;
  if (r == cupti::Record::complete)
    api.kernel_device_time(p->correlation_id, start, end);
  else
    untimed.fetch_add(1, std::memory_order_relaxed);
  delete p;
  pending_times.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

// report hands the device times of the completed launches done to the
// runtime. Asynchronous ones are placed on the host clock after the whole
// batch has tightened the offset: then no start is before its own request.
void report(occa::device *d, std::vector<Pending *> &done) {
  struct Placed {
    uint64_t correlation_id;
    int64_t start_ns;  // on the timeline
    uint64_t ns;
  };
  std::vector<Placed> placed;
  std::vector<Pending *> requeue;
  // Before the clocks' lock: a flush can take a while, and CUPTI-timed
  // launches need no clock. A flush brings the records of every stream's
  // kernels, so the launches it completes leave the queue now, whichever
  // stream they ran on: else a stream never finished would hold them until
  // exit, and fill the queue.
  if (std::any_of(done.begin(), done.end(), [](const Pending *p) { return p->cupti; })) {
    cupti::flush(false);
    for (Pending *p : take([](Pending *p) { return p->cupti && cupti::delivered(p->correlation_id); }))
      report_cupti(p, true);
  }
  std::unique_lock<std::mutex> g(clock_mu);
  DeviceClock *clock = nullptr;
  for (Pending *p : done) {
    bool keep = false;
    if (p->cupti) {
      if (!report_cupti(p, false)) {
        try {
          requeue.push_back(p);
        } catch (...) {  // no memory: untimed
          report_cupti(p, true);
        }
      }
      continue;
    }
    double seconds = time_between(d, p->start_tag(), p->end_tag());
    if (std::isnan(seconds) || seconds < 0) {
      untimed.fetch_add(1, std::memory_order_relaxed);
    } else if (uint64_t ns = uint64_t(std::llround(seconds * 1e9)); p->synchronous) {
      api.kernel_device_time(p->correlation_id, p->host_start_ns, p->host_start_ns + ns);
    } else {
      int64_t start = 0;
      bool ok = false;
      try {
        if (!clock) {
          placed.reserve(done.size());  // then push_back cannot throw
          clock = &device_clock(p->mode_device);
        }
        // A batch is one device's (see take): another would need its own clock.
        ok = clock->mode_device == p->mode_device && place(d, *clock, p, &start, &keep);
      } catch (...) {  // no memory: the duration alone
      }
      if (ok)
        placed.push_back({p->correlation_id, start, ns});
      else
        api.kernel_device_time(p->correlation_id, 0, ns);
    }
    if (!keep)
      delete p;
    pending_times.fetch_sub(1, std::memory_order_relaxed);
  }
  for (const Placed &t : placed) {
    uint64_t start = uint64_t(t.start_ns + clock->offset_ns);
    api.kernel_device_time(t.correlation_id, start, start + t.ns);
  }
  g.unlock();
  if (!requeue.empty()) {
    std::lock_guard<std::mutex> q(mu);
    try {
      queue.insert(queue.end(), requeue.begin(), requeue.end());
    } catch (...) {  // no memory: untimed
      for (Pending *p : requeue)
        report_cupti(p, true);
    }
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
    pending_ = p;
    p->correlation_id = correlation_id;
    p->mode_device = real.device_mode_device(device_);
    p->mode_stream = current_stream(device_);
    p->synchronous = info && info->synchronous;
    p->cupti = info && info->cupti;
    if (p->cupti) {
      cupti::launch_begin(correlation_id);
      return;
    }
    p->host_before_ns = api.now_ns();
    new (p->start) occa::streamTag(real.device_tag_stream(device_));
    p->have_start = true;
    p->host_start_ns = api.now_ns();
  } catch (...) {
    // Timing must never change what the launch does.
    delete pending_;
    pending_ = nullptr;
    untimed.fetch_add(1, std::memory_order_relaxed);
  }
}

LaunchTiming::~LaunchTiming() {
  if (pending_) {
    Pending *p = pending_;
    bool ok = std::uncaught_exceptions() == exceptions_;  // the launch did not throw
    if (p->cupti) {
      cupti::launch_end();
    } else if (ok) {
      try {
        new (p->end) occa::streamTag(real.device_tag_stream(device_));
        p->have_end = true;
      } catch (...) {
        ok = false;
      }
    }
    if (ok) {
      try {
        std::lock_guard<std::mutex> g(mu);
        queue.push_back(p);
        pending_times.fetch_add(1, std::memory_order_relaxed);
      } catch (...) {  // no memory for the queue
        ok = false;
      }
    }
    if (!ok) {
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
  // A CUPTI-timed launch needs nothing of its device (see report_cupti).
  std::vector<Pending *> gone = take([&](Pending *p) { return p->mode_device == mode_device && !p->cupti; });
  for (Pending *p : gone) {
    delete p;
    pending_times.fetch_sub(1, std::memory_order_relaxed);
    untimed.fetch_add(1, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> g(clock_mu);
  for (size_t i = 0; i < clocks.size(); i++) {
    if (clocks[i].mode_device == mode_device) {
      delete clocks[i].reference;
      clocks.erase(clocks.begin() + i);
      break;
    }
  }
}

void resolve_at_exit() {
  if (!cupti::on())
    return;
  // At exit, as NVIDIA's CUPTI samples do: CUDA and CUPTI end in their
  // library destructors, after the exit handlers.
  cupti::flush(true);
  for (Pending *p : take([](Pending *p) { return p->cupti; }))
    report_cupti(p, true);
}

uint64_t untimed_launches() { return untimed.load(std::memory_order_relaxed); }

}  // namespace ot_occa
