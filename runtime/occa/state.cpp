// state.cpp: connecting to the occa-tools runtime, once, at the first hook.
#include <dlfcn.h>
#include <pthread.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "adapter.hpp"

namespace ot_occa {

Api api;
std::atomic<int> state{UNREADY};
OT_TLS int depth = 0;

int resolve_real();

namespace {

const char runtime_soname[] = "libocca_tools.so.1";
const uint64_t no_kinds = 0;

void anchor() {}

// The runtime, when occa-prof's shim or the application has not loaded it:
// from this library's own directory first (an installed tree), then by the
// ordinary search.
void *load_runtime() {
  Dl_info self;
  if (dladdr(reinterpret_cast<void *>(anchor), &self) && self.dli_fname) {
    std::string path = self.dli_fname;
    size_t slash = path.rfind('/');
    if (slash != std::string::npos) {
      path.replace(slash + 1, std::string::npos, runtime_soname);
      if (void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL))
        return h;
    }
  }
  return dlopen(runtime_soname, RTLD_NOW | RTLD_GLOBAL);
}

template <class F>
bool look_up(occa_tools_lookup_fn lookup, const char *name, F *fn) {
  *fn = reinterpret_cast<F>(lookup(name));
  return *fn != nullptr;
}

bool connect() {
  auto connect_fn = reinterpret_cast<decltype(&occa_tools_connect)>(
      dlsym(RTLD_DEFAULT, "occa_tools_connect"));
  if (!connect_fn) {
    const char *config = getenv("OCCA_TOOLS_CONFIG");
    if (!config || !*config)
      return false;  // not asked to trace
    void *h = load_runtime();
    if (!h) {
      const char *err = dlerror();
      log(OCCA_TOOLS_LOG_WARN, "OCCA adapter: cannot load %s (%s); running untraced",
          runtime_soname, err ? err : "not found");
      return false;
    }
    connect_fn = reinterpret_cast<decltype(&occa_tools_connect)>(dlsym(h, "occa_tools_connect"));
  }
  occa_tools_api_t a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  if (!connect_fn || connect_fn(OCCA_TOOLS_ABI_VERSION, "occa-adapter", &a) != 0) {
    log(OCCA_TOOLS_LOG_WARN,
        "OCCA adapter: the occa-tools runtime is older than the adapter (ABI %u); install "
        "matching versions; running untraced",
        OCCA_TOOLS_ABI_VERSION);
    return false;
  }
  look_up(a.lookup, "occa_tools_log", &api.log);  // optional
  if (!a.active)
    return false;
  bool ok = look_up(a.lookup, "occa_tools_device_setup_begin", &api.device_setup_begin) &&
            look_up(a.lookup, "occa_tools_device_setup_end", &api.device_setup_end) &&
            look_up(a.lookup, "occa_tools_memory_alloc_begin", &api.memory_alloc_begin) &&
            look_up(a.lookup, "occa_tools_memory_alloc_end", &api.memory_alloc_end) &&
            look_up(a.lookup, "occa_tools_memory_free_begin", &api.memory_free_begin) &&
            look_up(a.lookup, "occa_tools_memory_free_end", &api.memory_free_end) &&
            look_up(a.lookup, "occa_tools_copy_begin", &api.copy_begin) &&
            look_up(a.lookup, "occa_tools_copy_end", &api.copy_end) &&
            look_up(a.lookup, "occa_tools_build_begin", &api.build_begin) &&
            look_up(a.lookup, "occa_tools_build_end", &api.build_end) &&
            look_up(a.lookup, "occa_tools_run_begin", &api.run_begin) &&
            look_up(a.lookup, "occa_tools_run_end", &api.run_end) &&
            look_up(a.lookup, "occa_tools_kernel_device_time", &api.kernel_device_time) &&
            look_up(a.lookup, "occa_tools_stream_create", &api.stream_create) &&
            look_up(a.lookup, "occa_tools_stream_set", &api.stream_set) &&
            look_up(a.lookup, "occa_tools_stream_finish_begin", &api.stream_finish_begin) &&
            look_up(a.lookup, "occa_tools_stream_finish_end", &api.stream_finish_end) &&
            look_up(a.lookup, "occa_tools_device_finish_begin", &api.device_finish_begin) &&
            look_up(a.lookup, "occa_tools_device_finish_end", &api.device_finish_end) &&
            look_up(a.lookup, "occa_tools_now_ns", &api.now_ns) && a.enabled_mask;
  if (!ok) {
    log(OCCA_TOOLS_LOG_WARN, "OCCA adapter: the occa-tools runtime lacks an entry point; "
                             "install matching versions; running untraced");
    return false;
  }
  api.enabled = a.enabled_mask;
  return true;
}

void report_at_exit() {
  resolve_at_exit();
  uint64_t n = pending_times.load();
  if (n && state.load() == ACTIVE)
    log(OCCA_TOOLS_LOG_WARN,
        "OCCA adapter: %llu kernel device times were never resolved (no device or stream "
        "finish, or blocking copy to the host, after those launches); their launches have "
        "host times only",
        static_cast<unsigned long long>(n));
  if (uint64_t untimed = untimed_launches(); untimed && state.load() == ACTIVE)
    log(OCCA_TOOLS_LOG_WARN,
        "OCCA adapter: %llu kernel launches got no device time (a stream tag failed, CUPTI "
        "gave a record without timestamps, the device was freed first, or too many launches "
        "were waiting for theirs); their launches have host times only",
        static_cast<unsigned long long>(untimed));
}

pthread_once_t once = PTHREAD_ONCE_INIT;

void start_once() {
  api.enabled = &no_kinds;
  bool on = connect();
  int missing = resolve_real();
  if (on) {
    log(OCCA_TOOLS_LOG_DEBUG, "OCCA adapter active (%d libocca symbols missing)", missing);
    probe();
    atexit(report_at_exit);
  }
  state.store(on ? ACTIVE : INACTIVE, std::memory_order_release);
}

}  // namespace

void start() { pthread_once(&once, start_once); }

void log(occa_tools_log_level_t level, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (api.log) {
    api.log(level, msg);
    return;
  }
  if (level >= OCCA_TOOLS_LOG_WARN)
    fprintf(stderr, "occa-tools: %s: %s\n", level >= OCCA_TOOLS_LOG_ERROR ? "error" : "warning",
            msg);
}

}  // namespace ot_occa
