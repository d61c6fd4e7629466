// probe.cpp: what the adapter checks about libocca before it records.
//
// OCCA as its users have it differs from the OCCA 2.0 the mirror is written
// from: 1.0-1.1 take occa::properties, 1.x count copies in bytes and lack
// some functions, 1.5-1.6 have occa::experimental::memoryPool, and nekRS's
// bundled OCCA has a 128-byte kernel handle. At start the adapter measures
// what it depends on: libocca's version (occa::settings()["version"]), the
// size of each handle (libocca's own default constructor run on
// canary-filled memory), and which hooks found their original. What does not
// match is reported in one warn-level line, naming what the trace will lack;
// hooks that cannot work safely only forward.
#include <cstdio>
#include <cstring>
#include <string>

#include "adapter.hpp"

namespace ot_occa {

Libocca libocca;

namespace {

const char *const class_names[occa::ot_mirror::HANDLE_CLASSES] = {
    "device", "kernel", "memory", "stream", "streamTag"};

// OCCA versions as major * 10000 + minor * 100 + patch; 0: unknown.
constexpr int v(int major, int minor, int patch) { return major * 10000 + minor * 100 + patch; }
// OCCA 1.1.0 calls itself 1.0.9 (its OCCA_VERSION_STR was not bumped).
constexpr int oldest_supported = v(1, 0, 9);
constexpr int newest_supported = v(2, 99, 99);

// A hooked function: the originals that may implement it (any one is
// enough), the versions that have it, and what the trace lacks without it.
struct Hook {
  const char *name;
  void *const *fns[3];
  int since;
  const char *absent;
};

#define F(field) reinterpret_cast<void *const *>(&real.field)
const Hook hooks[] = {
    {"device::setup", {F(json.device_setup), F(props.device_setup), F(device_setup_string)}, 0,
     "device setups"},
    {"device::malloc", {F(json.device_malloc), F(props.device_malloc)}, 0, "allocations"},
    {"device::buildKernel", {F(json.device_build_kernel), F(props.device_build_kernel)}, 0,
     "kernel builds"},
    {"memory::copyFrom(ptr)", {F(json.memory_copy_from_ptr), F(props.memory_copy_from_ptr)}, 0,
     "host-to-device copies"},
    {"memory::copyTo(ptr)", {F(json.memory_copy_to_ptr), F(props.memory_copy_to_ptr)}, 0,
     "device-to-host copies"},
    {"memory::copyFrom(memory)", {F(json.memory_copy_from_mem), F(props.memory_copy_from_mem)}, 0,
     "device-to-device copies"},
    {"memory::copyTo(memory)", {F(json.memory_copy_to_mem), F(props.memory_copy_to_mem)}, 0,
     "device-to-device copies"},
    {"kernel::run", {F(kernel_run)}, 0, "launches"},
    {"device::createStream", {F(json.device_create_stream), F(props.device_create_stream)}, 0,
     "stream creations"},
    {"device::setStream", {F(device_set_stream)}, 0, "stream switches"},
    {"device::finish", {F(device_finish)}, 0, "device finishes"},
    {"device::finishAll", {F(device_finish_all)}, v(1, 4, 0), "device finishAll calls"},
    {"stream::finish", {F(stream_finish)}, v(1, 4, 0), "stream finishes"},
    {"memoryPool::reserve", {F(pool_reserve), F(experimental_pool_reserve)}, v(1, 5, 0),
     "pool allocations"},
    {"memory::free", {F(memory_free)}, 0, "explicit frees"},
    {"modeMemory_t::~modeMemory_t", {F(mode_memory_dtor)}, 0, "frees"},
};
#undef F

bool bound(const Hook &h) {
  for (void *const *fn : h.fns)
    if (fn && *fn)
      return true;
  return false;
}

// libocca's occa::settings()["version"], without quotes; "" when it has none.
std::string version_string() {
  if (!real.settings || !real.json_get || !real.json_dump)
    return std::string();
  try {
    occa::json &settings = real.settings();
    const occa::json &version = real.json_get(&settings, "version");
    std::string text = real.json_dump(&version, 0);
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
      return text.substr(1, text.size() - 2);
    return std::string();  // not a string: no version recorded
  } catch (...) {
    return std::string();
  }
}

int parse_version(const std::string &s) {
  int major, minor, patch;
  if (sscanf(s.c_str(), "%d.%d.%d", &major, &minor, &patch) != 3 || major < 0 || minor < 0 ||
      minor > 99 || patch < 0 || patch > 99)
    return 0;
  return v(major, minor, patch);
}

// Bytes libocca's default constructor of a handle writes: the last byte that
// changed in storage filled with either of two canaries. 0 without one.
size_t extent(int cls) {
  void (*construct)(void *) = real.handle_default[cls];
  void (*destroy)(void *) = real.handle_destroy[cls];
  if (!construct || !destroy)
    return 0;
  alignas(16) unsigned char room[handle_room];
  size_t end = 0;
  for (unsigned char canary : {0xa5, 0x5a}) {
    memset(room, canary, sizeof room);
    try {
      construct(room);
    } catch (...) {
      return 0;
    }
    size_t last = sizeof room;
    while (last > 0 && room[last - 1] == canary)
      last--;
    if (last > end)
      end = last;
    destroy(room);
  }
  return end;
}

// Appends "; " and text to a report line.
void add(std::string &line, const std::string &text) {
  if (!line.empty())
    line += "; ";
  line += text;
}

void add_absent(std::string &absent, const char *what) {
  if (absent.find(what) != std::string::npos)
    return;
  if (!absent.empty())
    absent += ", ";
  absent += what;
}

}  // namespace

void probe() {
  using namespace occa::ot_mirror;
  std::string vs = version_string();
  int version = parse_version(vs);
  bool known = version >= oldest_supported && version <= newest_supported;

  std::string problems, absent, sizes;
  if (vs.empty())
    add(problems, "libocca records no version (occa::settings()[\"version\"])");
  else if (!known)
    add(problems, "libocca " + vs + " is not a version the adapter knows (1.1.0 to 2.x)");

  std::string unbound;
  for (const Hook &h : hooks) {
    if (bound(h) || (version && version < h.since))
      continue;  // this OCCA has no such function: nothing to miss
    unbound += unbound.empty() ? h.name : std::string(", ") + h.name;
    add_absent(absent, h.absent);
  }
  if (!unbound.empty())
    add(problems, "no original found for " + unbound);

  for (int cls = 0; cls < HANDLE_CLASSES; cls++) {
    libocca.extent[cls] = extent(cls);
    libocca.holdable[cls] = libocca.extent[cls] > 0 && libocca.extent[cls] <= handle_limit;
    char buf[64];
    snprintf(buf, sizeof buf, "%s%s %zu B", sizes.empty() ? "" : ", ", class_names[cls],
             libocca.extent[cls]);
    sizes += buf;
    if (!libocca.holdable[cls] && cls != STREAM_TAG) {
      snprintf(buf, sizeof buf, "occa::%s handles of %zu bytes", class_names[cls],
               libocca.extent[cls]);
      add(problems, std::string(buf) + (libocca.extent[cls] ? " (at most 256 handled)"
                                                          : " (no default constructor)"));
    }
  }
  if (!libocca.holdable[KERNEL])
    add_absent(absent, "kernel builds");
  if (!libocca.holdable[MEMORY])
    add_absent(absent, "allocations");
  if (!libocca.holdable[STREAM])
    add_absent(absent, "stream creations");
  // Pending launches keep their tags at the mirror's size.
  libocca.can_time = libocca.holdable[DEVICE] && libocca.holdable[STREAM] &&
                     libocca.extent[STREAM_TAG] == sizeof(occa::streamTag);
  if (!libocca.can_time && enabled(OCCA_TOOLS_EVENT_DEVICE_TIME)) {
    add(problems, "stream tags or devices laid out unlike OCCA 2.0's");
    add_absent(absent, "kernel device times");
  }

  // OCCA 2.0 made copy counts elements (and added memory::byte_size).
  libocca.copy_counts_bytes = version ? version < v(2, 0, 0) : !real.memory_byte_size;
  const char *units = libocca.copy_counts_bytes ? "bytes" : "elements";
  if (!problems.empty()) {
    if (!version)
      problems += std::string("; copy counts read as ") + units;
    log(OCCA_TOOLS_LOG_WARN, "OCCA adapter: %s; absent from the trace: %s (handles: %s)",
        problems.c_str(), absent.empty() ? "nothing" : absent.c_str(), sizes.c_str());
  } else {
    log(OCCA_TOOLS_LOG_DEBUG, "OCCA adapter: libocca %s; handles: %s; copy counts in %s",
        vs.c_str(), sizes.c_str(), units);
  }
}

}  // namespace ot_occa
