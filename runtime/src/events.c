/* events.c: the event entry points of occa_tools.h (the hot path).
 *
 * Every function starts with one relaxed load of ot_state, so a process that
 * loaded the library without a config pays a call and a compare. Recording
 * is then: the thread's state from an initial-exec TLS slot, cached per-object
 * decisions, a tick read, and a store into the thread's own buffer.
 *
 * An inactive tool returns before touching anything, the call included
 * (sources initialise it with OCCA_TOOLS_CALL_INIT).
 *
 * call->tool_data: bit 0 = the begin was recorded (so the end is, whatever
 * the gate says by then); for calls that create an object, the rest is the
 * pending ot_obj pointer; for launches, bits 1.. are windows to close at the
 * end. call->correlation_id is 0 when the begin was not recorded. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "rt.h"

#define REC 1u

static inline int inactive(void) {
  int st = atomic_load_explicit(&ot_state, memory_order_relaxed);
  if (OT_LIKELY(st == OT_STATE_ACTIVE))
    return 0;
  if (st == OT_STATE_SHUTDOWN)
    ot_count_drop(OT_DROP_SHUTDOWN, 1);
  return 1;
}

static inline void call_clear(occa_tools_call_t *call) {
  if (call) {
    call->correlation_id = 0;
    call->tool_data = 0;
  }
}

/* Should a begin or instant of kind be recorded now? Takes from the budget. */
static inline int want(ot_thread *t, unsigned kind, int selected) {
  return selected && ot_kind_on(kind) && ot_recording_event() && ot_budget_take(t);
}

/* Records a begin with its correlation id first; returns the id or 0. */
static inline uint64_t begin(ot_thread *t, unsigned kind, unsigned nargs, uint64_t *args) {
  uint64_t corr = ot_next_corr(t);
  args[0] = corr;
  return ot_emit(t, kind, nargs, args) ? corr : 0;
}

static inline void end(ot_thread *t, const occa_tools_call_t *call, unsigned kind,
                       uint64_t status, int with_status) {
  uint64_t args[2] = {call->correlation_id, status};
  ot_emit(t, kind, with_status ? 2 : 1, args);
}

static inline ot_obj *pending(const occa_tools_call_t *call) {
  return (ot_obj *)(uintptr_t)(call->tool_data & ~(uint64_t)7);
}

/* ---- Devices ------------------------------------------------------------------- */

void occa_tools_device_setup_begin(occa_tools_call_t *call, const char *mode,
                                   int64_t device_index, const char *properties) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = ot_self();
  ot_obj *d = ot_device_new(mode, device_index, properties);
  if (!t || !d)
    return;
  uint64_t rec = 0;
  if (want(t, OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN, atomic_load(&d->selected))) {
    uint64_t args[4] = {0, ot_str_id(d->name), (uint64_t)device_index, ot_str_id(d->props)};
    call->correlation_id = begin(t, OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN, 4, args);
    rec = call->correlation_id != 0;
  }
  call->tool_data = (uintptr_t)d | rec;
}

void occa_tools_device_setup_end(occa_tools_call_t *call, occa_tools_data_t *device,
                                 occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *d = pending(call);
  if (!d)
    return;
  ot_obj *won = (device && status == OCCA_TOOLS_OK) ? ot_publish(device, d) : d;
  if (call->tool_data & REC) {
    ot_thread *t = ot_self();
    uint64_t args[3] = {call->correlation_id, ot_obj_id(won), (uint64_t)status};
    if (t)
      ot_emit(t, OCCA_TOOLS_EVENT_DEVICE_SETUP_END, 3, args);
  }
  if (won == d && (!device || status != OCCA_TOOLS_OK))
    free(d); /* never published: nothing refers to it */
  call->tool_data = 0;
}

/* ---- Memory ---------------------------------------------------------------------- */

void occa_tools_memory_alloc_begin(occa_tools_call_t *call, occa_tools_data_t *device,
                                   uint64_t bytes, const char *tag) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = ot_self();
  ot_obj *d = ot_device_of(device);
  ot_obj *m = ot_memory_new(d, bytes, tag);
  if (!t || !m)
    return;
  uint64_t rec = 0;
  if (want(t, OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN, atomic_load(&m->selected))) {
    uint64_t args[4] = {0, ot_obj_id(d), bytes, ot_str_id(atomic_load(&m->tag))};
    call->correlation_id = begin(t, OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN, 4, args);
    rec = call->correlation_id != 0;
  }
  call->tool_data = (uintptr_t)m | rec;
}

void occa_tools_memory_alloc_end(occa_tools_call_t *call, occa_tools_data_t *memory,
                                 const void *address, occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *m = pending(call);
  if (!m)
    return;
  int ok = status == OCCA_TOOLS_OK;
  if (ok)
    ot_memory_publish(m, memory, address);
  if (call->tool_data & REC) {
    ot_thread *t = ot_self();
    if (ok) /* readers learn its size and tag before any use, on any thread */
      ot_memory_define(m);
    uint64_t args[4] = {call->correlation_id, ok ? m->id : 0, (uint64_t)(uintptr_t)address,
                        (uint64_t)status};
    if (t)
      ot_emit(t, OCCA_TOOLS_EVENT_MEMORY_ALLOC_END, 4, args);
  }
  if (!ok)
    free(m);
  call->tool_data = 0;
}

void occa_tools_memory_free_begin(occa_tools_call_t *call, occa_tools_data_t *memory) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = ot_self();
  ot_obj *m = ot_memory_of(memory);
  if (!t || !m)
    return;
  /* The slot is the source's: after this call nothing may reach m through it. */
  __atomic_store_n(&memory->ptr, NULL, __ATOMIC_RELEASE);
  uint64_t rec = 0;
  if (want(t, OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN, atomic_load(&m->selected))) {
    ot_memory_define(m);
    uint64_t args[4] = {0, m->id, ot_obj_id(m->device), m->bytes};
    call->correlation_id = begin(t, OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN, 4, args);
    rec = call->correlation_id != 0;
  }
  call->tool_data = (uintptr_t)m | rec;
}

void occa_tools_memory_free_end(occa_tools_call_t *call, occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *m = pending(call);
  if (call->tool_data & REC) {
    ot_thread *t = ot_self();
    if (t)
      end(t, call, OCCA_TOOLS_EVENT_MEMORY_FREE_END, (uint64_t)status, 1);
  }
  ot_memory_retire(m);
  call->tool_data = 0;
}

void occa_tools_copy_begin(occa_tools_call_t *call, occa_tools_copy_direction_t direction,
                           occa_tools_data_t *src, occa_tools_data_t *dst, uint64_t bytes,
                           int is_async, occa_tools_data_t *stream) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = ot_self();
  if (!t)
    return;
  ot_obj *ms = ot_memory_of(src), *md = ot_memory_of(dst);
  int selected = (ms || md) ? ((ms && atomic_load(&ms->selected)) ||
                               (md && atomic_load(&md->selected)))
                            : 1;
  if (!want(t, OCCA_TOOLS_EVENT_COPY_BEGIN, selected))
    return;
  ot_obj *dev = md && md->device ? md->device : ms ? ms->device : NULL;
  ot_obj *s = stream ? ot_stream_of(stream, dev) : NULL;
  ot_memory_define(ms);
  ot_memory_define(md);
  uint64_t args[6] = {0, ((uint64_t)direction & 3u) | (is_async ? 4u : 0u), ot_obj_id(ms),
                      ot_obj_id(md), bytes, ot_obj_id(s)};
  call->correlation_id = begin(t, OCCA_TOOLS_EVENT_COPY_BEGIN, 6, args);
  call->tool_data = call->correlation_id != 0;
}

void occa_tools_copy_end(occa_tools_call_t *call, occa_tools_status_t status) {
  if (inactive() || !call || !(call->tool_data & REC))
    return;
  ot_thread *t = ot_self();
  if (t)
    end(t, call, OCCA_TOOLS_EVENT_COPY_END, (uint64_t)status, 1);
  call->tool_data = 0;
}

/* ---- Kernels ------------------------------------------------------------------------ */

void occa_tools_build_begin(occa_tools_call_t *call, occa_tools_data_t *device, const char *name,
                            const char *source_file, const char *properties,
                            uint64_t properties_hash) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = ot_self();
  ot_obj *d = ot_device_of(device);
  ot_obj *k = ot_kernel_new(name ? name : "<unknown kernel>", source_file, properties,
                            properties_hash, d);
  if (!t || !k)
    return;
  uint64_t rec = 0;
  if (want(t, OCCA_TOOLS_EVENT_BUILD_BEGIN, atomic_load(&k->selected))) {
    ot_str *src = ot_intern(source_file);
    uint64_t args[6] = {0, ot_obj_id(d), ot_str_id(k->name), ot_str_id(src),
                        ot_str_id(k->props), properties_hash};
    call->correlation_id = begin(t, OCCA_TOOLS_EVENT_BUILD_BEGIN, 6, args);
    rec = call->correlation_id != 0;
  }
  call->tool_data = (uintptr_t)k | rec;
}

void occa_tools_build_end(occa_tools_call_t *call, occa_tools_data_t *kernel,
                          occa_tools_cache_t cache, occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *k = pending(call);
  if (!k)
    return;
  ot_obj *won = k;
  if (kernel && status == OCCA_TOOLS_OK) {
    won = ot_publish(kernel, k); /* frees k when the slot already had a kernel */
  } else if (!kernel && status == OCCA_TOOLS_OK && k->name) {
    void *expected = NULL; /* later slot-less launches of this name find it */
    if (!atomic_compare_exchange_strong(&k->name->kernel, &expected, k))
      won = NULL;
  } else {
    won = NULL;
  }
  if (call->tool_data & REC) {
    ot_thread *t = ot_self();
    uint64_t args[4] = {call->correlation_id, won ? won->id : k->id, (uint64_t)cache,
                        (uint64_t)status};
    if (t)
      ot_emit(t, OCCA_TOOLS_EVENT_BUILD_END, 4, args);
  }
  if (!won)
    free(k);
  call->tool_data = 0;
}

void occa_tools_run_begin(occa_tools_call_t *call, occa_tools_data_t *kernel, const char *name,
                          occa_tools_data_t *device, occa_tools_data_t *stream) {
  if (inactive() || !call)
    return;
  call_clear(call);
  /* A kernel filtered out that no launch window counts: nothing to do, so
   * return before finding the thread and the device. */
  ot_obj *known = ot_slot_obj(kernel);
  if (known && !atomic_load_explicit(&known->selected, memory_order_relaxed) &&
      !atomic_load_explicit(&known->windows, memory_order_relaxed) && ot_kernel_decided(known))
    return;
  ot_thread *t = ot_self();
  if (OT_UNLIKELY(!t))
    return;
  ot_obj *d = ot_device_of(device);
  ot_obj *k = ot_kernel_of(kernel, name, d);
  if (OT_UNLIKELY(!k))
    return;
  uint64_t td = 0;
  uint32_t w = atomic_load_explicit(&k->windows, memory_order_relaxed);
  if (OT_UNLIKELY(w != 0))
    td = (uint64_t)ot_count_launch(t, w) << 1;
  if (want(t, OCCA_TOOLS_EVENT_RUN_BEGIN,
           atomic_load_explicit(&k->selected, memory_order_relaxed) && ot_obj_selected(d))) {
    ot_obj *s = stream ? ot_stream_of(stream, d) : NULL;
    uint64_t args[4] = {0, k->id, ot_obj_id(d), ot_obj_id(s)};
    call->correlation_id = begin(t, OCCA_TOOLS_EVENT_RUN_BEGIN, 4, args);
    td |= call->correlation_id != 0;
    t->launch = call->correlation_id; /* OpenMP events inside carry it (ompt.c) */
  }
  call->tool_data = td;
}

void occa_tools_run_end(occa_tools_call_t *call, occa_tools_status_t status) {
  if (!call || call->tool_data == 0 || inactive())
    return;
  ot_thread *t = ot_self();
  if (OT_UNLIKELY(!t))
    return;
  if (call->tool_data & REC) {
    end(t, call, OCCA_TOOLS_EVENT_RUN_END, (uint64_t)status, 1);
    t->launch = 0;
  }
  uint32_t close = (uint32_t)(call->tool_data >> 1);
  if (close)
    ot_close_windows(t, close, OT_CAUSE_LAUNCH);
  call->tool_data = 0;
}

void occa_tools_kernel_device_time(uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns) {
  if (correlation_id == 0 || inactive() || !ot_kind_on(OCCA_TOOLS_EVENT_DEVICE_TIME))
    return;
  ot_thread *t = ot_self();
  uint64_t args[3] = {correlation_id, start_ns, end_ns};
  if (t)
    ot_emit(t, OCCA_TOOLS_EVENT_DEVICE_TIME, 3, args);
}

/* ---- Streams and synchronisation ------------------------------------------------------ */

static void stream_event(unsigned kind, occa_tools_data_t *device, occa_tools_data_t *stream) {
  if (inactive())
    return;
  ot_thread *t = ot_self();
  if (!t)
    return;
  ot_obj *d = ot_device_of(device);
  ot_obj *s = ot_stream_of(stream, d);
  if (want(t, kind, ot_obj_selected(d))) {
    uint64_t args[2] = {ot_obj_id(d), ot_obj_id(s)};
    ot_emit(t, kind, 2, args);
  }
}

void occa_tools_stream_create(occa_tools_data_t *device, occa_tools_data_t *stream) {
  stream_event(OCCA_TOOLS_EVENT_STREAM_CREATE, device, stream);
}

void occa_tools_stream_set(occa_tools_data_t *device, occa_tools_data_t *stream) {
  stream_event(OCCA_TOOLS_EVENT_STREAM_SET, device, stream);
}

static void sync_begin(occa_tools_call_t *call, unsigned kind, ot_obj *o, int selected) {
  ot_thread *t = ot_self();
  if (!t || !want(t, kind, selected))
    return;
  uint64_t args[2] = {0, ot_obj_id(o)};
  call->correlation_id = begin(t, kind, 2, args);
  call->tool_data = call->correlation_id != 0;
}

static void sync_end(occa_tools_call_t *call, unsigned kind) {
  if (inactive() || !call || !(call->tool_data & REC))
    return;
  ot_thread *t = ot_self();
  if (t)
    end(t, call, kind, 0, 0);
  call->tool_data = 0;
}

void occa_tools_stream_finish_begin(occa_tools_call_t *call, occa_tools_data_t *stream) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_obj *s = ot_stream_of(stream, NULL);
  sync_begin(call, OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN, s, ot_obj_selected(s));
}

void occa_tools_stream_finish_end(occa_tools_call_t *call) {
  sync_end(call, OCCA_TOOLS_EVENT_STREAM_FINISH_END);
}

void occa_tools_device_finish_begin(occa_tools_call_t *call, occa_tools_data_t *device) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_obj *d = ot_device_of(device);
  sync_begin(call, OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN, d, ot_obj_selected(d));
}

void occa_tools_device_finish_end(occa_tools_call_t *call) {
  sync_end(call, OCCA_TOOLS_EVENT_DEVICE_FINISH_END);
}

/* ---- User regions and markers ------------------------------------------------------------ */

static uint32_t region_windows(ot_str *s) {
  if (!s || ot_nwindows == 0)
    return 0;
  int32_t w = atomic_load_explicit(&s->region_windows, memory_order_relaxed);
  if (OT_UNLIKELY(w < 0)) {
    w = ot_core.decide_region ? (int32_t)ot_core.decide_region(s->text) : 0;
    atomic_store(&s->region_windows, w);
  }
  return (uint32_t)w;
}

int occa_tools_region_push(const char *name) {
  if (inactive() || !name)
    return -1;
  ot_thread *t = ot_self();
  if (!t)
    return -1;
  ot_str *s = ot_intern(name);
  uint32_t mask = region_windows(s);
  uint16_t inside = mask ? ot_region_enter(t, mask) : 0;
  int rec = 0;
  if (t->region_depth < OT_REGION_DEPTH && want(t, OCCA_TOOLS_EVENT_REGION_PUSH, 1)) {
    uint64_t id = ot_str_id(s);
    rec = ot_emit(t, OCCA_TOOLS_EVENT_REGION_PUSH, 1, &id);
  }
  if (t->region_depth < OT_REGION_DEPTH) {
    ot_region_frame *f = &t->regions[t->region_depth];
    f->name_id = (uint32_t)ot_str_id(s);
    f->inside = inside;
    f->recorded = (uint16_t)rec;
  }
  t->region_depth++;
  return 0;
}

int occa_tools_region_pop(void) {
  if (inactive())
    return -1;
  ot_thread *t = ot_self();
  if (!t || t->region_depth == 0)
    return -1;
  t->region_depth--;
  if (t->region_depth >= OT_REGION_DEPTH)
    return 0;
  ot_region_frame *f = &t->regions[t->region_depth];
  if (f->recorded) {
    uint64_t id = f->name_id;
    ot_emit(t, OCCA_TOOLS_EVENT_REGION_POP, 1, &id);
  }
  if (f->inside)
    ot_close_windows(t, f->inside, OT_CAUSE_REGION);
  return 0;
}

int occa_tools_marker(const char *name) {
  if (inactive() || !name)
    return -1;
  ot_thread *t = ot_self();
  if (!t)
    return -1;
  if (want(t, OCCA_TOOLS_EVENT_MARKER, 1)) {
    uint64_t id = ot_str_id(ot_intern(name));
    ot_emit(t, OCCA_TOOLS_EVENT_MARKER, 1, &id);
  }
  return 0;
}
