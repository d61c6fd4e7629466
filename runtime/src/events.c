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
 * Each entry point that touches the thread's state runs between ot_enter and
 * ot_leave (rt.h), which detect a call made from a signal handler inside
 * another one and count it as dropped instead.
 *
 * call->tool_data: bit 0 = the begin was recorded (so the end is, whatever
 * the gate says by then); bit 1 = the begin was dropped (no buffer), so the
 * end, missing too, is counted; for calls that create an object, the rest is
 * the pending ot_obj pointer; for launches, bits 2.. are windows to close at
 * the end. call->correlation_id is 0 when the begin was not recorded. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rt.h"

const ot_kind_codec_t ot_kind_codec[OCCA_TOOLS_EVENT_KIND_COUNT] = OT_KIND_CODEC;

#define REC 1u
#define LOST 2u /* the begin was dropped: its end will be missing too */
#define WIN_SHIFT 2

static inline int inactive(void) {
  int st = atomic_load_explicit(&ot_state, memory_order_relaxed);
  if (OT_LIKELY(st == OT_STATE_ACTIVE))
    return 0;
  if (st == OT_STATE_SHUTDOWN)
    ot_count_drop(OT_DROP_AFTER_SHUTDOWN, 1);
  return 1;
}

static inline void call_clear(occa_tools_call_t *call) {
  if (call) {
    call->correlation_id = 0;
    call->tool_data = 0;
  }
}

/* Enters the thread for a begin: NULL when it cannot (a call from inside
 * another, from a signal handler), with the call marked lost so that its
 * end is counted as dropped too. */
static inline ot_thread *enter_begin(occa_tools_call_t *call, uint64_t lost) {
  ot_thread *t = ot_enter();
  if (OT_UNLIKELY(!t))
    call->tool_data = lost;
  return t;
}

/* Should a begin or instant of kind be recorded now? Takes from the budget. */
static inline int want(ot_thread *t, unsigned kind, int selected) {
  return selected && ot_kind_on(kind) && ot_recording_event() && ot_budget_take(t);
}

/* Records a begin with its correlation id first; returns REC or LOST for
 * call->tool_data and sets the call's correlation id (0 when lost). */
static OT_INLINE uint64_t begin(ot_thread *t, occa_tools_call_t *call, unsigned kind,
                                unsigned nargs, uint64_t *args) {
  uint64_t corr = ot_next_corr(t) | (kind == OCCA_TOOLS_EVENT_RUN_BEGIN ? OT_CORR_LAUNCH : 0);
  args[0] = corr;
  int ok = ot_emit(t, kind, nargs, args);
  call->correlation_id = ok ? corr : 0;
  return ok ? REC : LOST;
}

/* The end of a call whose begin was dropped: one more event missing. */
static inline void end_lost(ot_thread *t, const occa_tools_call_t *call) {
  if (call->tool_data & LOST)
    ot_drop(t, OT_DROP_BUFFER_FULL);
}

/* The end of a call whose begin kept no object: counted when the begin was
 * lost (re-entered, or no thread state). */
static void end_without_object(occa_tools_call_t *call) {
  if (!(call->tool_data & LOST))
    return;
  call->tool_data = 0;
  ot_thread *t = ot_enter();
  if (t) {
    ot_drop(t, OT_DROP_BUFFER_FULL);
    ot_leave(t);
  }
}

static OT_INLINE void end(ot_thread *t, const occa_tools_call_t *call, unsigned kind,
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
  ot_thread *t = enter_begin(call, LOST);
  if (!t)
    return;
  ot_obj *d = ot_device_new(mode, device_index, properties);
  if (d) {
    uint64_t rec = 0;
    if (want(t, OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN, atomic_load(&d->selected))) {
      uint64_t args[4] = {0, ot_str_id(d->name), (uint64_t)device_index, ot_str_id(d->props)};
      rec = begin(t, call, OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN, 4, args);
    }
    call->tool_data = (uintptr_t)d | rec;
  }
  ot_leave(t);
}

void occa_tools_device_setup_end(occa_tools_call_t *call, occa_tools_data_t *device,
                                 occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *d = pending(call);
  if (!d) {
    end_without_object(call);
    return;
  }
  ot_thread *t = ot_enter();
  if (!t)
    return;
  ot_obj *won = (device && status == OCCA_TOOLS_OK) ? ot_publish(device, d) : d;
  if (call->tool_data & REC) {
    uint64_t args[3] = {call->correlation_id, ot_obj_id(won), (uint64_t)status};
    ot_emit(t, OCCA_TOOLS_EVENT_DEVICE_SETUP_END, 3, args);
  }
  end_lost(t, call);
  if (won == d && (!device || status != OCCA_TOOLS_OK))
    ot_free(d); /* never published: nothing refers to it */
  call->tool_data = 0;
  ot_leave(t);
}

/* ---- Memory ---------------------------------------------------------------------- */

void occa_tools_memory_alloc_begin(occa_tools_call_t *call, occa_tools_data_t *device,
                                   uint64_t bytes, const char *tag) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = enter_begin(call, LOST);
  if (!t)
    return;
  ot_obj *d = ot_device_of(device);
  ot_obj *m = ot_memory_new(d, bytes, tag);
  if (m) {
    uint64_t rec = 0;
    if (want(t, OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN, atomic_load(&m->selected))) {
      uint64_t args[4] = {0, ot_obj_id(d), bytes, ot_str_id(atomic_load(&m->tag))};
      rec = begin(t, call, OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN, 4, args);
    }
    call->tool_data = (uintptr_t)m | rec;
  }
  ot_leave(t);
}

void occa_tools_memory_alloc_end(occa_tools_call_t *call, occa_tools_data_t *memory,
                                 const void *address, occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *m = pending(call);
  if (!m) {
    end_without_object(call);
    return;
  }
  ot_thread *t = ot_enter();
  if (!t)
    return;
  int ok = status == OCCA_TOOLS_OK;
  /* Without a slot nothing can free the object or name it again (a free
   * names the slot): it is recorded, not kept, so a source that passes no
   * slot cannot make the runtime's memory grow. */
  int keep = ok && memory;
  if (keep)
    ot_memory_publish(m, memory, address);
  else
    m->address = (uintptr_t)address; /* for its definition */
  if (call->tool_data & REC) {
    if (ok) /* readers learn its size and tag before any use, on any thread */
      ot_memory_define(m);
    uint64_t args[4] = {call->correlation_id, ok ? m->id : 0, (uint64_t)(uintptr_t)address,
                        (uint64_t)status};
    ot_emit(t, OCCA_TOOLS_EVENT_MEMORY_ALLOC_END, 4, args);
  }
  end_lost(t, call);
  if (!keep)
    ot_free(m);
  call->tool_data = 0;
  ot_leave(t);
}

void occa_tools_memory_free_begin(occa_tools_call_t *call, occa_tools_data_t *memory) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = enter_begin(call, LOST);
  if (!t)
    return;
  ot_obj *m = ot_memory_of(memory);
  if (m) {
    /* The slot is the source's: after this call nothing may reach m through it. */
    __atomic_store_n(&memory->ptr, NULL, __ATOMIC_RELEASE);
    uint64_t rec = 0;
    if (want(t, OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN, atomic_load(&m->selected))) {
      ot_memory_define(m);
      uint64_t args[4] = {0, m->id, ot_obj_id(m->device), m->bytes};
      rec = begin(t, call, OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN, 4, args);
    }
    call->tool_data = (uintptr_t)m | rec;
  }
  ot_leave(t);
}

void occa_tools_memory_free_end(occa_tools_call_t *call, occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  ot_obj *m = pending(call);
  if (call->tool_data & REC)
    end(t, call, OCCA_TOOLS_EVENT_MEMORY_FREE_END, (uint64_t)status, 1);
  end_lost(t, call);
  ot_memory_retire(m);
  call->tool_data = 0;
  ot_leave(t);
}

void occa_tools_copy_begin(occa_tools_call_t *call, occa_tools_copy_direction_t direction,
                           occa_tools_data_t *src, occa_tools_data_t *dst, uint64_t bytes,
                           int is_async, occa_tools_data_t *stream) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = enter_begin(call, LOST);
  if (!t)
    return;
  ot_obj *ms = ot_memory_of(src), *md = ot_memory_of(dst);
  int selected = (ms || md) ? ((ms && atomic_load(&ms->selected)) ||
                               (md && atomic_load(&md->selected)))
                            : 1;
  if (want(t, OCCA_TOOLS_EVENT_COPY_BEGIN, selected)) {
    ot_obj *dev = md && md->device ? md->device : ms ? ms->device : NULL;
    ot_obj *s = stream ? ot_stream_of(stream, dev) : NULL;
    ot_memory_define(ms);
    ot_memory_define(md);
    uint64_t args[6] = {0, ((uint64_t)direction & 3u) | (is_async ? 4u : 0u), ot_obj_id(ms),
                        ot_obj_id(md), bytes, ot_obj_id(s)};
    call->tool_data = begin(t, call, OCCA_TOOLS_EVENT_COPY_BEGIN, 6, args);
  }
  ot_leave(t);
}

void occa_tools_copy_end(occa_tools_call_t *call, occa_tools_status_t status) {
  if (inactive() || !call || !call->tool_data)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (call->tool_data & REC)
    end(t, call, OCCA_TOOLS_EVENT_COPY_END, (uint64_t)status, 1);
  end_lost(t, call);
  call->tool_data = 0;
  ot_leave(t);
}

/* ---- Kernels ------------------------------------------------------------------------ */

void occa_tools_build_begin(occa_tools_call_t *call, occa_tools_data_t *device, const char *name,
                            const char *source_file, const char *properties,
                            uint64_t properties_hash) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = enter_begin(call, LOST);
  if (!t)
    return;
  ot_obj *d = ot_device_of(device);
  ot_obj *k = ot_kernel_new(name ? name : "<unknown kernel>", source_file, properties,
                            properties_hash, d);
  if (k) {
    uint64_t rec = 0;
    if (want(t, OCCA_TOOLS_EVENT_BUILD_BEGIN, atomic_load(&k->selected))) {
      ot_str *src = ot_intern(source_file);
      uint64_t args[6] = {0, ot_obj_id(d), ot_str_id(k->name), ot_str_id(src),
                          ot_str_id(k->props), properties_hash};
      rec = begin(t, call, OCCA_TOOLS_EVENT_BUILD_BEGIN, 6, args);
    }
    call->tool_data = (uintptr_t)k | rec;
  }
  ot_leave(t);
}

void occa_tools_build_end(occa_tools_call_t *call, occa_tools_data_t *kernel,
                          occa_tools_cache_t cache, occa_tools_status_t status) {
  if (inactive() || !call)
    return;
  ot_obj *k = pending(call);
  if (!k) {
    end_without_object(call);
    return;
  }
  ot_thread *t = ot_enter();
  if (!t)
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
    uint64_t args[4] = {call->correlation_id, won ? won->id : k->id, (uint64_t)cache,
                        (uint64_t)status};
    ot_emit(t, OCCA_TOOLS_EVENT_BUILD_END, 4, args);
  }
  end_lost(t, call);
  if (!won)
    ot_free(k);
  call->tool_data = 0;
  ot_leave(t);
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
  ot_thread *t = enter_begin(call, LOST);
  if (OT_UNLIKELY(!t))
    return;
  ot_obj *d = ot_device_of(device);
  ot_obj *k = ot_kernel_of(kernel, name, d);
  if (OT_UNLIKELY(!k)) {
    ot_leave(t);
    return;
  }
  uint64_t td = 0;
  uint32_t w = atomic_load_explicit(&k->windows, memory_order_relaxed);
  if (OT_UNLIKELY(w != 0))
    td = (uint64_t)ot_count_launch(t, w) << WIN_SHIFT;
  if (want(t, OCCA_TOOLS_EVENT_RUN_BEGIN,
           atomic_load_explicit(&k->selected, memory_order_relaxed) && ot_obj_selected(d))) {
    ot_obj *s = stream ? ot_stream_of(stream, d) : NULL;
    uint64_t args[4] = {0, k->id, ot_obj_id(d), ot_obj_id(s)};
    td |= begin(t, call, OCCA_TOOLS_EVENT_RUN_BEGIN, 4, args);
    t->launch = call->correlation_id; /* OpenMP events inside carry it (ompt.c) */
  }
  call->tool_data = td;
  ot_leave(t);
}

void occa_tools_run_end(occa_tools_call_t *call, occa_tools_status_t status) {
  if (!call || call->tool_data == 0 || inactive())
    return;
  ot_thread *t = ot_enter();
  if (OT_UNLIKELY(!t))
    return;
  if (call->tool_data & REC) {
    end(t, call, OCCA_TOOLS_EVENT_RUN_END, (uint64_t)status, 1);
    t->launch = 0;
  }
  end_lost(t, call);
  uint32_t close = (uint32_t)(call->tool_data >> WIN_SHIFT);
  if (close)
    ot_close_windows(t, close, OT_CAUSE_LAUNCH);
  call->tool_data = 0;
  ot_leave(t);
}

/* Only ids of recorded launches (ot_next_corr) are taken: a launch that was
 * not recorded returned 0, any other call's id lacks OT_CORR_LAUNCH, and an
 * id its thread has not reached is made up. */
void occa_tools_kernel_device_time(uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns) {
  if (!(correlation_id & OT_CORR_LAUNCH) || inactive() ||
      !ot_kind_on(OCCA_TOOLS_EVENT_DEVICE_TIME) || !ot_corr_issued(correlation_id))
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  uint64_t args[3] = {correlation_id, start_ns, end_ns};
  ot_emit(t, OCCA_TOOLS_EVENT_DEVICE_TIME, 3, args);
  ot_leave(t);
}

/* ---- Streams and synchronisation ------------------------------------------------------ */

static void stream_event(unsigned kind, occa_tools_data_t *device, occa_tools_data_t *stream) {
  if (inactive())
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  ot_obj *d = ot_device_of(device);
  ot_obj *s = ot_stream_of(stream, d);
  if (want(t, kind, ot_obj_selected(d))) {
    uint64_t args[2] = {ot_obj_id(d), ot_obj_id(s)};
    ot_emit(t, kind, 2, args);
  }
  ot_leave(t);
}

void occa_tools_stream_create(occa_tools_data_t *device, occa_tools_data_t *stream) {
  stream_event(OCCA_TOOLS_EVENT_STREAM_CREATE, device, stream);
}

void occa_tools_stream_set(occa_tools_data_t *device, occa_tools_data_t *stream) {
  stream_event(OCCA_TOOLS_EVENT_STREAM_SET, device, stream);
}

/* The object is looked up inside the call: it may take the string lock. */
static void sync_begin(occa_tools_call_t *call, unsigned kind, occa_tools_data_t *slot) {
  if (inactive() || !call)
    return;
  call_clear(call);
  ot_thread *t = enter_begin(call, LOST);
  if (!t)
    return;
  ot_obj *o = kind == OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN ? ot_stream_of(slot, NULL)
                                                           : ot_device_of(slot);
  if (want(t, kind, ot_obj_selected(o))) {
    uint64_t args[2] = {0, ot_obj_id(o)};
    call->tool_data = begin(t, call, kind, 2, args);
  }
  ot_leave(t);
}

static void sync_end(occa_tools_call_t *call, unsigned kind) {
  if (inactive() || !call || !call->tool_data)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (call->tool_data & REC)
    end(t, call, kind, 0, 0);
  end_lost(t, call);
  call->tool_data = 0;
  ot_leave(t);
}

void occa_tools_stream_finish_begin(occa_tools_call_t *call, occa_tools_data_t *stream) {
  sync_begin(call, OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN, stream);
}

void occa_tools_stream_finish_end(occa_tools_call_t *call) {
  sync_end(call, OCCA_TOOLS_EVENT_STREAM_FINISH_END);
}

void occa_tools_device_finish_begin(occa_tools_call_t *call, occa_tools_data_t *device) {
  sync_begin(call, OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN, device);
}

void occa_tools_device_finish_end(occa_tools_call_t *call) {
  sync_end(call, OCCA_TOOLS_EVENT_DEVICE_FINISH_END);
}

/* ---- MPI ------------------------------------------------------------------------------ */

/* The call's tool_data keeps REC/LOST in bits 0-1 and the begin's kind from
 * bit 2, so the end needs no kind of its own and always matches its begin. */
#define KIND_SHIFT 2

static const uint64_t domain_kinds[OCCA_TOOLS_DOMAIN_COUNT] = OT_DOMAIN_KINDS;
#define MPI_KINDS domain_kinds[OCCA_TOOLS_DOMAIN_MPI]
#define MPI_BEGINS (MPI_KINDS & OT_BEGIN_KINDS)
#define MPI_INSTANTS (MPI_KINDS & ~OT_BEGIN_KINDS & ~(OT_BEGIN_KINDS << 1))

static _Atomic int mpi_warned;

/* Checks a source's kind and arguments: in the kinds of mask, with nargs
 * arguments besides the correlation id (skip: 1 for begins, 0 for instants). */
static int mpi_valid(unsigned kind, uint64_t mask, const uint64_t *args, unsigned nargs,
                     unsigned skip) {
  if (kind < OCCA_TOOLS_EVENT_KIND_COUNT && ((mask >> kind) & 1) &&
      nargs + skip == ot_kind_codec[kind].nargs && (args || nargs == 0))
    return 1;
  if (!atomic_exchange(&mpi_warned, 1))
    ot_log(OT_LOG_WARN, "an MPI source sent kind %u with %u arguments, which is not an MPI kind "
           "of that shape (formats/trace/kinds.go): not recorded (said once)",
           kind, nargs);
  return 0;
}

void occa_tools_mpi_begin(occa_tools_call_t *call, occa_tools_event_kind_t kind,
                          const uint64_t *args, unsigned nargs) {
  if (inactive() || !call)
    return;
  call_clear(call);
  if (!mpi_valid((unsigned)kind, MPI_BEGINS, args, nargs, 1))
    return;
  ot_thread *t = enter_begin(call, LOST | (uint64_t)kind << KIND_SHIFT);
  if (!t)
    return;
  if (want(t, (unsigned)kind, 1)) {
    uint64_t a[OT_MAX_ARGS] = {0};
    memcpy(a + 1, args, nargs * sizeof *args);
    call->tool_data = begin(t, call, (unsigned)kind, nargs + 1, a) | (uint64_t)kind << KIND_SHIFT;
  }
  ot_leave(t);
}

void occa_tools_mpi_end(occa_tools_call_t *call, const uint64_t *args, unsigned nargs) {
  if (inactive() || !call || !call->tool_data)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  uint64_t begun = call->tool_data >> KIND_SHIFT; /* checked by the begin, unless overwritten */
  if ((call->tool_data & REC) && begun < 64 && ((MPI_BEGINS >> begun) & 1)) {
    unsigned kind = (unsigned)begun + 1, n = ot_kind_codec[kind].nargs;
    uint64_t a[OT_MAX_ARGS] = {call->correlation_id};
    if (args)
      memcpy(a + 1, args, (nargs < n - 1 ? nargs : n - 1) * sizeof *args);
    ot_emit(t, kind, n, a);
  }
  end_lost(t, call);
  call->tool_data = 0;
  ot_leave(t);
}

void occa_tools_mpi_event(occa_tools_event_kind_t kind, const uint64_t *args, unsigned nargs) {
  if (inactive() || !mpi_valid((unsigned)kind, MPI_INSTANTS, args, nargs, 0))
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (want(t, (unsigned)kind, 1))
    ot_emit(t, (unsigned)kind, nargs, args);
  ot_leave(t);
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

/* The frame for depth t->region_depth, growing the stack onto the heap past
 * OT_REGION_DEPTH; NULL beyond OT_REGION_MAX or without memory. */
static ot_region_frame *region_frame(ot_thread *t) {
  if (OT_LIKELY(t->region_depth < t->region_cap))
    return &t->regions[t->region_depth];
  if (t->region_cap >= OT_REGION_MAX)
    return NULL;
  uint32_t cap = t->region_cap * 2;
  int c = ot_cancel_off();
  ot_region_frame *f = malloc(cap * sizeof *f);
  if (f) {
    memcpy(f, t->regions, t->region_cap * sizeof *f);
    if (t->regions != t->region_inline)
      free(t->regions);
    t->regions = f;
    t->region_cap = cap;
  }
  ot_cancel_restore(c);
  return f ? &f[t->region_depth] : NULL;
}

static int region_push(ot_thread *t, const char *name) {
  ot_str *s = ot_intern(name);
  uint32_t mask = region_windows(s);
  uint16_t inside = mask ? ot_region_enter(t, mask) : 0;
  ot_region_frame *f = region_frame(t);
  int rec = 0;
  if (want(t, OCCA_TOOLS_EVENT_REGION_PUSH, 1)) {
    if (f) {
      uint64_t id = ot_str_id(s);
      rec = ot_emit(t, OCCA_TOOLS_EVENT_REGION_PUSH, 1, &id) ? REC : LOST;
    } else {
      ot_drop(t, OT_DROP_TOO_DEEP); /* its pop is counted too */
    }
  }
  if (f) {
    f->name_id = (uint32_t)ot_str_id(s);
    f->inside = inside;
    f->recorded = (uint16_t)rec;
  }
  t->region_depth++;
  return 0;
}

/* Frames beyond the stack are not kept: their pops are counted as dropped
 * (too_deep) while recording, as their pushes were. */
static int region_pop(ot_thread *t) {
  if (t->region_depth == 0)
    return -1;
  t->region_depth--;
  if (t->region_depth >= t->region_cap) {
    if (ot_recording() && ot_kind_on(OCCA_TOOLS_EVENT_REGION_POP))
      ot_drop(t, OT_DROP_TOO_DEEP);
    return 0;
  }
  ot_region_frame *f = &t->regions[t->region_depth];
  if (f->recorded == REC) {
    uint64_t id = f->name_id;
    ot_emit(t, OCCA_TOOLS_EVENT_REGION_POP, 1, &id);
  } else if (f->recorded == LOST) {
    ot_drop(t, OT_DROP_BUFFER_FULL);
  }
  if (f->inside)
    ot_close_windows(t, f->inside, OT_CAUSE_REGION);
  return 0;
}

int occa_tools_region_push(const char *name) {
  if (inactive() || !name)
    return -1;
  ot_thread *t = ot_enter();
  if (!t)
    return -1;
  int r = region_push(t, name);
  ot_leave(t);
  return r;
}

int occa_tools_region_pop(void) {
  if (inactive())
    return -1;
  ot_thread *t = ot_enter();
  if (!t)
    return -1;
  int r = region_pop(t);
  ot_leave(t);
  return r;
}

int occa_tools_marker(const char *name) {
  if (inactive() || !name)
    return -1;
  ot_thread *t = ot_enter();
  if (!t)
    return -1;
  if (want(t, OCCA_TOOLS_EVENT_MARKER, 1)) {
    uint64_t id = ot_str_id(ot_intern(name));
    ot_emit(t, OCCA_TOOLS_EVENT_MARKER, 1, &id);
  }
  ot_leave(t);
  return 0;
}
