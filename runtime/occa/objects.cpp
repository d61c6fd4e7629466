// objects.cpp: the info record (and runtime slot) of each OCCA object.
//
// Keyed by the address of OCCA's mode object, which every handle to the
// object shares. Records go when the object goes (the destructor hooks in
// hooks.cpp), so a reused address never inherits an old record.
#include <mutex>
#include <unordered_map>

#include "adapter.hpp"

namespace ot_occa {

std::atomic<uint64_t> kernel_epoch{1};
OT_TLS KernelCacheEntry kernel_cache[kernel_cache_size];

namespace {

// A map split into shards by key, so threads launching or copying at once
// rarely meet on one lock.
template <class Info>
class Table {
 public:
  Info *find(const void *key) {
    Shard &s = shard(key);
    std::lock_guard<std::mutex> g(s.mu);
    auto it = s.map.find(key);
    return it == s.map.end() ? nullptr : it->second;
  }
  // Adds info under key unless a record is there; returns the one kept.
  Info *add(const void *key, Info *info) {
    Shard &s = shard(key);
    std::lock_guard<std::mutex> g(s.mu);
    auto res = s.map.emplace(key, info);
    if (!res.second)
      delete info;
    return res.first->second;
  }
  Info *take(const void *key) {
    Shard &s = shard(key);
    std::lock_guard<std::mutex> g(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end())
      return nullptr;
    Info *info = it->second;
    s.map.erase(it);
    return info;
  }

 private:
  struct Shard {
    std::mutex mu;
    std::unordered_map<const void *, Info *> map;
  };
  static constexpr unsigned shards = 16;
  Shard &shard(const void *key) {
    uintptr_t k = reinterpret_cast<uintptr_t>(key);
    return shards_[(k >> 4 ^ k >> 12) % shards];
  }
  Shard shards_[shards];
};

// Leaked on purpose: hooks may run during static destruction at exit.
Table<DeviceInfo> &devices = *new Table<DeviceInfo>;
Table<KernelInfo> &kernels = *new Table<KernelInfo>;
Table<ObjectInfo> &memories = *new Table<ObjectInfo>;
Table<ObjectInfo> &streams = *new Table<ObjectInfo>;

bool synchronous_mode(const std::string &mode) {
  return mode == "Serial" || mode == "OpenMP";
}

}  // namespace

DeviceInfo *add_device(const void *mode_device, const std::string &mode) {
  DeviceInfo *info = new DeviceInfo;
  info->synchronous = synchronous_mode(mode);
  info->cupti = mode == "CUDA" && enabled(OCCA_TOOLS_EVENT_DEVICE_TIME) && cupti::start();
  return devices.add(mode_device, info);
}

DeviceInfo *device_info_of_mode(const void *mode_device) {
  return mode_device ? devices.find(mode_device) : nullptr;
}

DeviceInfo *device_info(const occa::device *d) {
  const void *mode_device = real.device_mode_device ? real.device_mode_device(d) : nullptr;
  if (!mode_device)
    return nullptr;
  if (DeviceInfo *info = devices.find(mode_device))
    return info;
  // A device set up before the adapter saw it.
  return add_device(mode_device, real.device_mode ? real.device_mode(d) : std::string());
}

void drop_device(const void *mode_device) { delete devices.take(mode_device); }

KernelInfo *add_kernel(const void *mode_kernel, DeviceInfo *device, const std::string &name) {
  KernelInfo *info = new KernelInfo;
  info->device = device;
  info->name = name;
  return kernels.add(mode_kernel, info);
}

std::atomic<bool> kernel_layout_ok{true};

KernelInfo *kernel_info_slow(const void *key, const occa::kernel *k, KernelCacheEntry &e,
                             uint64_t epoch) {
  static KernelInfo unknown;  // a kernel libocca cannot name
  const void *checked = real.kernel_mode_kernel ? real.kernel_mode_kernel(k) : nullptr;
  if (key != checked) {
    // A libocca whose handles are laid out otherwise: ask it every time.
    if (kernel_layout_ok.exchange(false))
      log(OCCA_TOOLS_LOG_DEBUG, "OCCA adapter: kernel handles differ from OCCA 2.x's layout; "
                                "using kernel::getModeKernel()");
    key = checked;
  }
  if (!key)
    return &unknown;
  KernelInfo *info = kernels.find(key);
  if (!info) {
    // Built before the adapter saw it, or by a path it does not hook.
    occa::kernel *mk = const_cast<occa::kernel *>(k);
    std::string name = real.kernel_name ? real.kernel_name(mk) : std::string();
    DeviceInfo *device = nullptr;
    if (real.kernel_get_device && libocca.holdable[occa::ot_mirror::DEVICE]) {
      Held<occa::device> d([&] { return real.kernel_get_device(mk); });
      device = device_info(d.get());
    }
    info = add_kernel(key, device, name);
  }
  e = KernelCacheEntry{key, info, epoch};
  return info;
}

void drop_kernel(const void *mode_kernel) {
  KernelInfo *info = kernels.take(mode_kernel);
  if (info) {
    kernel_epoch.fetch_add(1, std::memory_order_acq_rel);
    delete info;
  }
}

ObjectInfo *memory_info(const occa::memory *m) {
  const void *key = real.memory_mode_memory ? real.memory_mode_memory(m) : nullptr;
  return key ? memories.find(key) : nullptr;
}

ObjectInfo *add_memory(const void *mode_memory) {
  return memories.add(mode_memory, new ObjectInfo);
}

ObjectInfo *take_memory(const void *mode_memory) { return memories.take(mode_memory); }

ObjectInfo *stream_info(const occa::stream *s) {
  const void *key = real.stream_mode_stream ? real.stream_mode_stream(s) : nullptr;
  if (!key)
    return nullptr;
  if (ObjectInfo *info = streams.find(key))
    return info;
  return streams.add(key, new ObjectInfo);
}

void drop_stream(const void *mode_stream) { delete streams.take(mode_stream); }

}  // namespace ot_occa
