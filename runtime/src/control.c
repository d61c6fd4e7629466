/* control.c: occa_tools_connect, the lookup table, and the control API an
 * application may call directly. */
#define _GNU_SOURCE
#include <string.h>

#include "rt.h"

_Atomic uint64_t ot_kinds;
volatile uint64_t ot_public_mask;
_Atomic uint32_t ot_epoch = 1;

static occa_tools_critical_fn critical_fn;
static void *critical_user;
static pthread_mutex_t critical_mu = PTHREAD_MUTEX_INITIALIZER;

#define KIND_BIT(k) (1ull << (k))

/* Sources see the enabled kinds, plus the ones trigger windows count even
 * when they are not recorded. */
void ot_update_public_mask(void) {
  uint64_t m = 0;
  if (atomic_load(&ot_state) == OT_STATE_ACTIVE) {
    m = atomic_load(&ot_kinds);
    for (uint32_t w = 0; w < ot_nwindows; w++) {
      if (ot_cfg.windows[w].kind == OT_WINDOW_LAUNCH)
        m |= KIND_BIT(OCCA_TOOLS_EVENT_RUN_BEGIN) | KIND_BIT(OCCA_TOOLS_EVENT_RUN_END);
      if (ot_cfg.windows[w].kind == OT_WINDOW_REGION)
        m |= KIND_BIT(OCCA_TOOLS_EVENT_REGION_PUSH) | KIND_BIT(OCCA_TOOLS_EVENT_REGION_POP);
    }
  }
  ot_public_mask = m;
}

static const struct {
  const char *name;
  void *fn;
} entry_points[] = {
#define E(f) {#f, (void *)f}
    E(occa_tools_connect),
    E(occa_tools_device_setup_begin),
    E(occa_tools_device_setup_end),
    E(occa_tools_memory_alloc_begin),
    E(occa_tools_memory_alloc_end),
    E(occa_tools_memory_free_begin),
    E(occa_tools_memory_free_end),
    E(occa_tools_copy_begin),
    E(occa_tools_copy_end),
    E(occa_tools_build_begin),
    E(occa_tools_build_end),
    E(occa_tools_run_begin),
    E(occa_tools_run_end),
    E(occa_tools_kernel_device_time),
    E(occa_tools_stream_create),
    E(occa_tools_stream_set),
    E(occa_tools_stream_finish_begin),
    E(occa_tools_stream_finish_end),
    E(occa_tools_device_finish_begin),
    E(occa_tools_device_finish_end),
    E(occa_tools_start),
    E(occa_tools_stop),
    E(occa_tools_flush),
    E(occa_tools_region_push),
    E(occa_tools_region_pop),
    E(occa_tools_marker),
    E(occa_tools_tag_kernel),
    E(occa_tools_tag_memory),
    E(occa_tools_enable_domain),
    E(occa_tools_enable_event),
    E(occa_tools_event_enabled),
    E(occa_tools_set_critical_callback),
    E(occa_tools_now_ns),
    E(occa_tools_log),
    E(occa_tools_mpi_begin),
    E(occa_tools_mpi_end),
    E(occa_tools_mpi_event),
#undef E
};

static void *lookup(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++)
    if (strcmp(entry_points[i].name, name) == 0)
      return entry_points[i].fn;
  return NULL;
}

int occa_tools_connect(uint32_t abi_version, const char *source_name, occa_tools_api_t *api) {
  if (!api || abi_version > OCCA_TOOLS_ABI_VERSION)
    return -1;
  size_t size = api->size;
  occa_tools_api_t mine = {sizeof mine, OCCA_TOOLS_ABI_VERSION,
                           atomic_load(&ot_state) == OT_STATE_ACTIVE, lookup, &ot_public_mask};
  memcpy(api, &mine, size && size < sizeof mine ? size : sizeof mine);
  if (mine.active)
    ot_log(OT_LOG_DEBUG, "source %s connected (ABI %u)", source_name ? source_name : "?",
           abi_version);
  return 0;
}

void occa_tools_log(occa_tools_log_level_t level, const char *message) {
  if (message && level >= OCCA_TOOLS_LOG_DEBUG && level <= OCCA_TOOLS_LOG_ERROR)
    ot_log((int)level, "%s", message);
}

static int active(void) { return atomic_load(&ot_state) == OT_STATE_ACTIVE; }

static int pause_api(int paused) {
  if (!active())
    return -1;
  uint64_t before = atomic_load(&ot_gate);
  ot_pause(OT_PAUSED_API, paused);
  ot_thread *t;
  if (((before & OT_PAUSED_API) != 0) != paused && (t = ot_enter())) { /* real changes only */
    ot_trigger_event(t, OT_NO_WINDOW, paused ? OT_TRIGGER_PAUSE : OT_TRIGGER_RESUME, OT_CAUSE_API);
    ot_leave(t);
  }
  return 0;
}

int occa_tools_start(void) { return pause_api(0); }
int occa_tools_stop(void) { return pause_api(1); }

int occa_tools_flush(void) {
  if (!active())
    return -1;
  return ot_flush_wait(ot_flush_request(), ot_cfg.flush_timeout_ms);
}

int occa_tools_tag_kernel(const char *kernel_name, const char *tag) {
  if (!active() || !kernel_name || !tag || !*tag || !ot_core.tag_kernel)
    return -1;
  ot_thread *t = ot_enter_control();
  if (!t)
    return -1;
  ot_core.tag_kernel(kernel_name, tag);
  atomic_fetch_add(&ot_epoch, 1); /* kernels remake their decision on next use */
  ot_leave(t);
  return 0;
}

int occa_tools_tag_memory(const void *address, const char *tag) {
  if (!active())
    return -1;
  ot_thread *t = ot_enter_control();
  if (!t)
    return -1;
  int rc = ot_memory_tag(address, tag);
  ot_leave(t);
  return rc;
}

static const uint64_t domain_kinds[OCCA_TOOLS_DOMAIN_COUNT] = OT_DOMAIN_KINDS;

static int set_kinds(uint64_t bits, int enable) {
  if (!active())
    return -1;
  if (enable)
    atomic_fetch_or(&ot_kinds, bits);
  else
    atomic_fetch_and(&ot_kinds, ~bits);
  ot_update_public_mask();
  return 0;
}

int occa_tools_enable_domain(occa_tools_domain_t domain, int enable) {
  if ((unsigned)domain >= OCCA_TOOLS_DOMAIN_COUNT || domain == OCCA_TOOLS_DOMAIN_TOOL)
    return -1; /* the tool's own events (drops, triggers) cannot be hidden */
  return set_kinds(domain_kinds[domain], enable);
}

int occa_tools_enable_event(occa_tools_event_kind_t kind, int enable) {
  if (kind < OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN || kind >= OCCA_TOOLS_EVENT_KIND_COUNT ||
      (domain_kinds[OCCA_TOOLS_DOMAIN_TOOL] & KIND_BIT(kind)))
    return -1;
  return set_kinds(KIND_BIT(kind), enable);
}

int occa_tools_event_enabled(occa_tools_event_kind_t kind) {
  if ((unsigned)kind >= 64)
    return 0;
  return active() && ot_recording() && ot_kind_on((unsigned)kind);
}

int occa_tools_set_critical_callback(occa_tools_critical_fn fn, void *user_data) {
  int c = ot_cancel_off();
  pthread_mutex_lock(&critical_mu);
  critical_fn = fn;
  critical_user = user_data;
  pthread_mutex_unlock(&critical_mu);
  ot_cancel_restore(c);
  return active() ? 0 : -1;
}

/* Called by the writer (ot_host_t.critical). */
void ot_critical(uint32_t kind, uint64_t count, const char *message) {
  pthread_mutex_lock(&critical_mu);
  occa_tools_critical_fn fn = critical_fn;
  void *user = critical_user;
  pthread_mutex_unlock(&critical_mu);
  if (fn)
    fn(user, (occa_tools_event_kind_t)kind, count, message);
}

uint64_t occa_tools_now_ns(void) { return ot_mono_ns(); }
