/*
 * rt.h: private declarations of the C runtime (libocca_tools.so).
 *
 * Threads record into buffers they own; the Go writer takes whole buffers
 * (full ones) and the committed prefix of live ones (periodic flush). A buffer
 * moves FREE -> OWNED (a thread takes it) -> FULL (the thread hands it over)
 * -> FREE (only the writer frees), so the writer never reads memory that a
 * thread is writing: it reads only below the buffer's committed offset.
 *
 * The writer also takes back the buffer of a thread that stopped recording
 * (OWNED -> REVOKING -> REVOKED -> FREE, buffers.c): a thread marks itself
 * "in a call" (ot_enter) with a plain store, and the writer, after zeroing
 * the thread's limit, runs an asymmetric fence (membarrier) before it reads
 * that mark, so the hot path has no atomic read-modify-write and no fence.
 */
#ifndef OT_RT_H
#define OT_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "occa_tools.h"
#include "ot_internal.h"

#define OT_LIKELY(x) __builtin_expect(!!(x), 1)

/* A program may let its threads be cancelled asynchronously
 * (PTHREAD_CANCEL_ASYNCHRONOUS), anywhere. A thread cancelled while it held
 * a lock of the runtime or was inside malloc left it held: the process hung
 * at its next malloc or new name. So the slow paths that lock or allocate
 * hold cancellation off, and a cancellation asked for meanwhile happens
 * once they are done. Both the type and the state: glibc (2.36) acts on a
 * cancellation signal already sent by the type alone, whatever the state,
 * and on a deferred one at a cancellation point (nanosleep) by the state.
 * Both calls are async-cancel-safe. The hot path takes no lock and
 * allocates nothing: a thread cancelled in it loses the record it was
 * writing, with the thread. */
static inline int ot_cancel_off(void) {
  int type, state;
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
  return type << 8 | state;
}

static inline void ot_cancel_restore(int old) {
  int ignored;
  pthread_setcancelstate(old & 0xff, &ignored);
  pthread_setcanceltype(old >> 8, &ignored);
}

/* free() of what a thread allocated and then did not publish. */
static inline void ot_free(void *p) {
  int c = ot_cancel_off();
  free(p);
  ot_cancel_restore(c);
}
#define OT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define OT_HIDDEN __attribute__((visibility("hidden")))
/* For the recording path, so that each call site's kind is a constant there
 * and its encoding (ot_encode) folds to that kind's few stores. */
#define OT_INLINE inline __attribute__((always_inline))
#define OT_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- Process state ------------------------------------------------------ */
enum ot_state {
  OT_STATE_INACTIVE = 0, /* no config, config error, or core failed to load */
  OT_STATE_ACTIVE = 1,
  OT_STATE_SHUTDOWN = 2, /* final flush done: later events are counted lost */
  OT_STATE_FORKED = 3    /* a forked child: never calls into Go */
};
OT_HIDDEN extern _Atomic int ot_state;

/* Why recording is off (bits of the low word of ot_gate). The high word counts
 * open trigger windows; with no windows configured it is held at 1. */
enum {
  OT_PAUSED_API = 1u << 0,
  OT_PAUSED_SIGNAL = 1u << 1,
  OT_PAUSED_BUDGET = 1u << 2,
  OT_PAUSED_STOPPED = 1u << 3, /* shutdown or fatal output error */
  /* Not a pause: time windows have edges ahead, so whether recording is on
   * depends on each event's own ticks (ot_recording_timed). */
  OT_GATE_TIMED = 1u << 4
};
OT_HIDDEN extern _Atomic uint64_t ot_gate;
OT_HIDDEN extern _Atomic uint64_t ot_kinds; /* enabled event kinds */
OT_HIDDEN extern volatile uint64_t ot_public_mask; /* what sources see */
OT_HIDDEN extern _Atomic uint32_t ot_epoch; /* bumped when kernel tags change */
OT_HIDDEN extern ot_settings_t ot_cfg;
OT_HIDDEN extern ot_core_api_t ot_core;

/* lastthread.c: the core's path as dlopen is given it ("" when it is not
 * loaded), and that it has started, so that the threads it makes are told
 * apart from the application's. */
OT_HIDDEN void ot_lastthread_core_path(const char *path);
OT_HIDDEN void ot_lastthread_core_started(void);
/* Whether the calling thread is one of the core's (as far as known): the
 * Go runtime's, where the writer runs; not the reaper (lastthread.c).
 * Async-signal-safe. */
OT_HIDDEN int ot_on_core_thread(void);
/* Whether the calling thread, one the Go runtime did not make, is inside a
 * call into the core: running Go code, which the Go runtime may preempt
 * with a SIGURG (corecall.c). Async-signal-safe. */
OT_HIDDEN int ot_in_core_call(void);
/* fn(tid) for each thread of the core recorded so far that it has not been
 * called for before, and returns how many (lastthread.c). */
OT_HIDDEN int ot_core_threads_once(void (*fn)(pid_t tid));
/* Called on each thread of the core as it starts (lifecycle.c). */
OT_HIDDEN void ot_core_thread_begins(void);

/* Flushes what was recorded so far in the traced process (not in a vfork
 * child), waiting up to the flush timeout: before an exec (exec.c), and
 * when exit() is called (lifecycle.c). */
OT_HIDDEN void ot_flush_recorded(void);

OT_HIDDEN int ot_recording_timed(uint64_t gate, int for_event);
/* The ticks an event decided on by ot_recording_timed is stamped with
 * (ot_emit takes them), so that its time window membership is decided by
 * its own timestamp; 0 when none. */
OT_HIDDEN extern OT_TLS uint64_t ot_decided_ticks;

static inline int ot_recording(void) {
  uint64_t g = atomic_load_explicit(&ot_gate, memory_order_relaxed);
  if (OT_LIKELY((uint32_t)g == 0))
    return (g >> 32) != 0;
  return OT_UNLIKELY((uint32_t)g == OT_GATE_TIMED) && ot_recording_timed(g, 0);
}

/* ot_recording for an event that is recorded next on this thread when it
 * says yes (and its kind is on): a time window's decision then fixes the
 * event's ticks. */
static inline int ot_recording_event(void) {
  uint64_t g = atomic_load_explicit(&ot_gate, memory_order_relaxed);
  if (OT_LIKELY((uint32_t)g == 0))
    return (g >> 32) != 0;
  return OT_UNLIKELY((uint32_t)g == OT_GATE_TIMED) && ot_recording_timed(g, 1);
}

static inline int ot_kind_on(unsigned kind) {
  return (atomic_load_explicit(&ot_kinds, memory_order_relaxed) >> kind) & 1u;
}

/* ---- Clock -------------------------------------------------------------- */
OT_HIDDEN extern int ot_use_tsc;
OT_HIDDEN int ot_tsc_usable(void);
OT_HIDDEN uint64_t ot_mono_ns(void);
OT_HIDDEN void ot_sync_point(uint64_t *ticks, int64_t *mono_ns);

static inline uint64_t ot_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
  if (OT_LIKELY(ot_use_tsc)) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
  }
#elif defined(__aarch64__)
  if (OT_LIKELY(ot_use_tsc)) {
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
  }
#endif
  return ot_mono_ns();
}

/* ---- Buffers and threads ------------------------------------------------- */
/* CLAIMED is a thread filling in the fields of a buffer it just took; it
 * publishes them with the release store of OWNED, so the writer, which
 * acts only on OWNED and FULL, reads them complete. */
enum {
  OT_BUF_FREE = 0,
  OT_BUF_OWNED = 1,
  OT_BUF_FULL = 2,
  OT_BUF_CLAIMED = 3,
  OT_BUF_REVOKING = 4, /* the writer asks for it back; the owner may still cancel */
  OT_BUF_REVOKED = 5   /* the writer took it back: the owner must not touch it */
};

struct ot_thread;

typedef struct ot_buf {
  uint8_t *data;
  _Atomic uint32_t cap;       /* bytes of data, 0 none yet (read by threads looking for one) */
  _Atomic uint32_t committed; /* bytes of complete records (owner stores) */
  uint32_t flushed;           /* bytes the writer has taken (writer only) */
  uint32_t taken;             /* 1 once take_full popped it (writer only) */
  _Atomic uint32_t state;
  uint32_t thread;            /* owner's thread index */
  uint32_t seq;               /* owner's buffer number, 1-based */
  uint32_t slot;              /* index in the pool */
  uint32_t pred_slot;         /* the owner's previous buffer, or UINT32_MAX */
  uint32_t pred_seq;
  uint32_t idle;              /* writer only: nothing new at its last partial take */
  uint32_t spans_out;         /* writer only: partial spans taken, not yet released */
  /* Set by the owner as it hands the buffer over (FULL): its records' ticks
   * at the end and events by kind, for the writer to write it whole (a raw
   * events chunk) without reading them. */
  uint64_t last_ticks;
  uint32_t counts[64];
  /* 0 when the buffer was handed over by its thread's exit, where counts
   * may hold one event more than the records: a thread cancelled
   * asynchronously between counting an event and committing its record.
   * The writer then counts the records itself. */
  uint32_t counts_exact;
  struct ot_thread *owner;    /* set before OWNED; thread structs are never freed */
  struct ot_buf *_Atomic next; /* link in the full stack */
} ot_buf;

/* Region frames: OT_REGION_DEPTH in the thread, more on the heap up to
 * OT_REGION_MAX; pushes beyond that (and their pops) are counted as
 * dropped (reason too_deep). */
enum { OT_REGION_DEPTH = 128, OT_REGION_MAX = 1 << 16 };

typedef struct ot_region_frame {
  uint32_t name_id;
  uint16_t inside;   /* windows this instance is inside of */
  uint16_t recorded; /* 1: its push was recorded, so its pop is; 2: its push was
                      * dropped, so its pop is counted as dropped too */
} ot_region_frame;

/* The OMPT tool's per-thread state (ompt.c). */
enum { OT_OMP_DEPTH = 16 };

typedef struct ot_omp_parallel { /* a parallel region this thread began */
  uint64_t id;
  uint64_t launch;   /* OCCA launch it is inside of */
  uint32_t recorded; /* its begin was recorded, so its end is */
} ot_omp_parallel;

typedef struct ot_omp_frame { /* an implicit task, work or sync region open on this thread */
  uint64_t id;
  uint64_t region;   /* the parallel region it belongs to, 0 unknown */
  uint64_t launch;   /* implicit tasks: the OCCA launch their region is inside of */
  uint32_t kind;     /* the begin kind */
  uint32_t sub;      /* work type or sync kind, so an end finds its begin */
  uint32_t recorded;
} ot_omp_frame;

/* What a thread's raw records so far leave for the next ones (ot_encode):
 * formats/trace/raw.go's RawState. Zeroed with each new buffer. */
typedef struct ot_enc {
  uint64_t ticks; /* of the previous event: never decreases */
  uint64_t corr;  /* the previous correlation id */
  uint64_t prev[64][OT_MAX_ARGS]; /* per kind: the arguments the S flag covers */
  uint32_t count[64]; /* records by kind */
} ot_enc;

/* Event times a thread raised to its previous event's (a clock that went
 * back): counted, as the writer counts those it clamps (trace stats). */
OT_HIDDEN extern _Atomic uint64_t ot_ticks_clamped;

typedef struct ot_thread {
  /* Kept when a new thread reuses the struct (buffers.c: thread_struct). */
  struct ot_thread *all_next; /* every thread struct, for reuse */
  _Atomic uint32_t dead;      /* exited: the struct waits for a new thread */
  _Atomic uint32_t in_call;   /* inside an entry point (ot_enter); the writer reads it */
  _Atomic uint32_t limit;     /* buf's size; 0 (no buffer, or the writer asks it back)
                               * sends the owner to the slow path */
  _Atomic uint32_t buf_lost;  /* the writer took buf back (REVOKED) */
  /* Cleared for a new thread from here on. */
  ot_buf *buf;
  uint32_t pos;   /* write offset in buf */
  ot_enc enc;     /* the records of buf so far */
  uint32_t index; /* thread index in the trace (1-based) */
  uint32_t buf_seq;
  uint32_t last_slot;
  uint32_t next_cap;  /* size of the next buffer it takes (buffers.c) */
  _Atomic uint64_t corr_seq; /* owner writes; device times read (ot_corr_issued) */
  uint64_t dropped;       /* dropped since the last DROPPED record */
  uint64_t drop_since;    /* ticks of the first of them */
  uint32_t region_depth;
  uint32_t region_cap;      /* frames in regions */
  ot_region_frame *regions; /* region_inline, or a heap array when deeper */
  ot_region_frame region_inline[OT_REGION_DEPTH];
  uint64_t launch; /* correlation id of the recorded OCCA launch running here, 0 none */
  uint32_t omp_par_depth, omp_depth;
  ot_omp_parallel omp_par[OT_OMP_DEPTH];
  ot_omp_frame omp[OT_OMP_DEPTH];
} ot_thread;

OT_HIDDEN extern OT_TLS ot_thread *ot_self_tls;
OT_HIDDEN ot_thread *ot_thread_create(void);
OT_HIDDEN uint8_t *ot_reserve_slow(ot_thread *t, unsigned bytes);
OT_HIDDEN int ot_pool_init(uint64_t memory_bytes, uint64_t buffer_bytes);
OT_HIDDEN void ot_wake_writer(void);
OT_HIDDEN void ot_count_drop(unsigned reason, uint64_t n);
/* One event of t not recorded for reason, counted; for buffer_full also
 * reported in a DROPPED record, at once when t's buffer has room, else first
 * in its next buffer. */
OT_HIDDEN void ot_drop(ot_thread *t, unsigned reason);
OT_HIDDEN void ot_thread_key_init(void);

static inline ot_thread *ot_self(void) {
  ot_thread *t = ot_self_tls;
  return OT_LIKELY(t != NULL) ? t : ot_thread_create();
}

/* The calling thread, marked as inside a call until ot_leave; NULL when it
 * has no state or is already inside one: a signal handler interrupted the
 * runtime (occa_tools.h forbids that), and the call is counted as one
 * dropped event (reason reentrant) instead of corrupting the buffer or
 * waiting on a lock the interrupted code holds. The store needs no fence:
 * the writer's membarrier orders it before this thread's reads of its limit
 * (buffers.c: reclaim_idle). */
static inline ot_thread *ot_enter(void) {
  ot_thread *t = ot_self();
  if (OT_UNLIKELY(t == NULL))
    return NULL;
  if (OT_UNLIKELY(atomic_load_explicit(&t->in_call, memory_order_relaxed))) {
    ot_count_drop(OT_DROP_REENTRANT, 1);
    return NULL;
  }
  atomic_store_explicit(&t->in_call, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  return t;
}

/* ot_enter for the control calls that record nothing but take the string
 * table's lock or call into Go (occa_tools_tag_kernel, _tag_memory):
 * re-entered from a signal handler they refuse, with nothing to count. */
static inline ot_thread *ot_enter_control(void) {
  ot_thread *t = ot_self();
  if (OT_UNLIKELY(t == NULL || atomic_load_explicit(&t->in_call, memory_order_relaxed)))
    return NULL;
  atomic_store_explicit(&t->in_call, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  return t;
}

/* Release: the writer that reads 0 also sees the records written before. */
static inline void ot_leave(ot_thread *t) {
  atomic_store_explicit(&t->in_call, 0, memory_order_release);
}

/* ot_kind_codec[kind] says how kind's records are encoded (events.c). */
OT_HIDDEN extern const ot_kind_codec_t ot_kind_codec[OCCA_TOOLS_EVENT_KIND_COUNT];

/* Room for a record of up to `bytes` bytes; NULL when it was dropped.
 * Only between ot_enter and ot_leave. */
static inline uint8_t *ot_reserve(ot_thread *t, unsigned bytes) {
  if (OT_LIKELY(t->pos + bytes <= atomic_load_explicit(&t->limit, memory_order_relaxed)))
    return t->buf->data + t->pos;
  return ot_reserve_slow(t, bytes);
}

static inline void ot_commit(ot_thread *t, const uint8_t *end) {
  t->pos = (uint32_t)(end - t->buf->data);
  atomic_store_explicit(&t->buf->committed, t->pos, memory_order_release);
}

static inline uint8_t *ot_put_uvarint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline uint64_t ot_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* Writes the record of kind at ticks at p, which has OT_RAW_MAX bytes of
 * room, after the records e has seen; returns its end. The common event (a
 * launch on the kernel, device and stream of the one before) is a head, a
 * one- or two-byte delta and a one-byte correlation delta. */
static OT_INLINE uint8_t *ot_encode(ot_enc *e, uint8_t *p, unsigned kind, const uint64_t *args,
                                    uint64_t ticks) {
  const ot_kind_codec_t *c = &ot_kind_codec[kind];
  unsigned n = c->nargs, head = kind, differ = 0;
  if (OT_UNLIKELY(ticks < e->ticks)) {
    /* A buffer's times never go back: its last record's ticks are its
     * latest (ot_buf.last_ticks), and a delta is never negative. */
    ticks = e->ticks;
    atomic_fetch_add_explicit(&ot_ticks_clamped, 1, memory_order_relaxed);
  }
  e->count[kind]++;
  /* The delta below 2^14 (a few microseconds) without a branch on its
   * length: deltas near 128 ticks would mispredict every other event. */
  uint64_t dz = ticks - e->ticks;
  uint8_t *q;
  if (OT_LIKELY(dz < (1u << 14))) {
    unsigned two = dz >= 0x80;
    p[1] = (uint8_t)(dz | two << 7);
    p[2] = (uint8_t)(dz >> 7);
    q = p + 2 + two;
  } else {
    q = ot_put_uvarint(p + 1, dz);
  }
  e->ticks = ticks;
  uint64_t *prev = e->prev[kind];
  /* Unrolled, so that with a constant kind every test of the codec below
   * folds away. */
#pragma GCC unroll 8
  for (unsigned j = 0; j < n; j++)
    differ |= (unsigned)(args[j] != prev[j]) << j;
  int same = c->same && !(differ & c->same);
  if (same)
    head |= OT_RAW_S;
#pragma GCC unroll 8
  for (unsigned j = 0; j < n; j++) {
    uint64_t v = args[j];
    unsigned bit = 1u << j;
    if (j + 1 == c->corr) {
      if (v == e->corr + ((OT_BEGIN_KINDS >> kind) & 1))
        head |= OT_RAW_C;
      else
        q = ot_put_uvarint(q, ot_zigzag((int64_t)(v - e->corr)));
      e->corr = v;
    } else if (c->times & bit) {
      q = ot_put_uvarint(q, v);
    } else if (!same) {
      prev[j] = v;
      q = ot_put_uvarint(q, (c->ints & bit) ? ot_zigzag((int64_t)v) : v);
    }
  }
  *p = (uint8_t)head;
  return q;
}

/* Records kind at ticks, which may be earlier than the thread's previous
 * event (the writer raises it); 0 when dropped. nargs is the kind's
 * (ot_kind_codec), which internal callers always pass: another count
 * records nothing. */
static OT_INLINE int ot_emit_at(ot_thread *t, unsigned kind, unsigned nargs, const uint64_t *args,
                             uint64_t ticks) {
  if (OT_UNLIKELY(kind >= OCCA_TOOLS_EVENT_KIND_COUNT || nargs != ot_kind_codec[kind].nargs))
    return 0;
  uint8_t *r = ot_reserve(t, OT_RAW_MAX);
  if (OT_UNLIKELY(r == NULL))
    return 0;
  ot_commit(t, ot_encode(&t->enc, r, kind, args, ticks));
  return 1;
}

static inline uint64_t ot_event_ticks(void) {
  uint64_t t = ot_decided_ticks;
  if (OT_LIKELY(t == 0))
    return ot_ticks();
  ot_decided_ticks = 0;
  return t;
}

/* Records kind now (or at the ticks a time window decided it by); 0 when
 * dropped. */
static OT_INLINE int ot_emit(ot_thread *t, unsigned kind, unsigned nargs, const uint64_t *args) {
  if (OT_UNLIKELY(kind >= OCCA_TOOLS_EVENT_KIND_COUNT || nargs != ot_kind_codec[kind].nargs)) {
    ot_decided_ticks = 0;
    return 0;
  }
  uint8_t *r = ot_reserve(t, OT_RAW_MAX);
  if (OT_UNLIKELY(r == NULL)) {
    ot_decided_ticks = 0; /* dropped: not for the next event */
    return 0;
  }
  ot_commit(t, ot_encode(&t->enc, r, kind, args, ot_event_ticks()));
  return 1;
}

/* Correlation ids: the thread index above bit 40, a sequence below it that
 * steps by 2; bit 0 (OT_CORR_LAUNCH) marks a recorded launch's, so a device
 * time is taken only for one of those (events.c). */
#define OT_CORR_LAUNCH 1u
static inline uint64_t ot_next_corr(ot_thread *t) {
  uint64_t seq = atomic_load_explicit(&t->corr_seq, memory_order_relaxed) + 2;
  atomic_store_explicit(&t->corr_seq, seq, memory_order_relaxed);
  return ((uint64_t)t->index << 40) | seq;
}
/* Could corr have been handed out already? (Its thread exists and had come
 * that far, as far as can still be told.) */
OT_HIDDEN int ot_corr_issued(uint64_t corr);

/* ---- Strings and definitions ---------------------------------------------- */
typedef struct ot_str {
  uint64_t hash;
  uint32_t id;
  uint32_t len;
  _Atomic int32_t region_windows; /* -1 until asked */
  _Atomic int32_t memtag_selected; /* -1 until asked */
  void *_Atomic kernel; /* the kernel of this name launched without a slot */
  char text[];
} ot_str;

OT_HIDDEN int ot_strings_init(void);
/* The interned copy of s (NULL for NULL/empty or when the table is full). */
OT_HIDDEN ot_str *ot_intern(const char *s);
static inline uint64_t ot_str_id(const ot_str *s) { return s ? s->id : 0; }
OT_HIDDEN void ot_def(unsigned kind, unsigned nargs, const uint64_t *args, const char *text,
                      uint32_t text_len);
OT_HIDDEN uint64_t ot_take_defs(uint8_t *dst, uint64_t cap, int try_only);

/* ---- Objects -------------------------------------------------------------- */
enum { OT_OBJ_DEVICE = 1, OT_OBJ_KERNEL = 2, OT_OBJ_MEMORY = 3, OT_OBJ_STREAM = 4 };

typedef struct ot_obj {
  uint32_t id;
  uint8_t type;
  _Atomic uint8_t selected;
  _Atomic uint8_t memory_selected; /* devices */
  _Atomic uint8_t defined;         /* memory: its definition is queued */
  _Atomic uint32_t epoch;          /* kernels: ot_epoch at decision */
  _Atomic uint32_t windows;        /* kernels: launch windows counted */
  struct ot_obj *device;
  ot_str *name;  /* device mode, kernel name */
  ot_str *props; /* device or build properties */
  ot_str *_Atomic tag; /* memory; occa_tools_tag_memory may change it */
  int64_t index; /* device index */
  uint64_t bytes;
  uintptr_t address;
  struct ot_obj *hnext; /* address map chain */
} ot_obj;

OT_HIDDEN ot_obj *ot_device_of(occa_tools_data_t *slot);
OT_HIDDEN ot_obj *ot_device_new(const char *mode, int64_t index, const char *props);
OT_HIDDEN ot_obj *ot_kernel_of(occa_tools_data_t *slot, const char *name, ot_obj *device);
OT_HIDDEN ot_obj *ot_kernel_new(const char *name, const char *source, const char *props,
                                uint64_t hash, ot_obj *device);
OT_HIDDEN void ot_kernel_redecide(ot_obj *k);
OT_HIDDEN ot_obj *ot_stream_of(occa_tools_data_t *slot, ot_obj *device);
OT_HIDDEN ot_obj *ot_memory_of(occa_tools_data_t *slot);
OT_HIDDEN ot_obj *ot_memory_new(ot_obj *device, uint64_t bytes, const char *tag);
OT_HIDDEN void ot_memory_publish(ot_obj *m, occa_tools_data_t *slot, const void *address);
OT_HIDDEN void ot_memory_retire(ot_obj *m);
OT_HIDDEN int ot_memory_tag(const void *address, const char *tag);
OT_HIDDEN void ot_memory_define(ot_obj *m);
/* Publishes o in slot unless another thread did first; returns the winner. */
OT_HIDDEN ot_obj *ot_publish(occa_tools_data_t *slot, ot_obj *o);

static inline uint64_t ot_obj_id(const ot_obj *o) { return o ? o->id : 0; }
/* Is kernel k's decision current (made since the last tag change)? */
static inline int ot_kernel_decided(ot_obj *k) {
  return atomic_load_explicit(&k->epoch, memory_order_relaxed) ==
         atomic_load_explicit(&ot_epoch, memory_order_relaxed);
}

static inline int ot_obj_selected(const ot_obj *o) {
  return o == NULL || atomic_load_explicit(&((ot_obj *)o)->selected, memory_order_relaxed);
}
static inline ot_obj *ot_slot_obj(occa_tools_data_t *slot) {
  return slot ? (ot_obj *)__atomic_load_n(&slot->ptr, __ATOMIC_ACQUIRE) : NULL;
}

/* ---- Triggers ------------------------------------------------------------- */
OT_HIDDEN extern uint32_t ot_nwindows;
OT_HIDDEN extern int ot_budget_on;
OT_HIDDEN void ot_triggers_init(void);
/* Counts a launch for the windows in mask; returns the windows to close at
 * the launch's end. */
OT_HIDDEN uint32_t ot_count_launch(ot_thread *t, uint32_t mask);
OT_HIDDEN void ot_close_windows(ot_thread *t, uint32_t mask, unsigned cause);
OT_HIDDEN uint16_t ot_region_enter(ot_thread *t, uint32_t mask);
OT_HIDDEN void ot_window_set(uint32_t w, int open);
OT_HIDDEN void ot_window_time(uint32_t w, uint64_t from_ticks, uint64_t to_ticks);
/* Takes one event from the budget; 0 when it is spent. */
OT_HIDDEN int ot_budget_take_slow(ot_thread *t);
static inline int ot_budget_take(ot_thread *t) {
  return OT_LIKELY(!ot_budget_on) || ot_budget_take_slow(t);
}
OT_HIDDEN void ot_pause(uint32_t reason, int paused);
OT_HIDDEN void ot_signal_toggle(void);
OT_HIDDEN uint64_t ot_signal_toggle_count(void);
OT_HIDDEN int ot_signal_toggle_at(uint64_t i, uint64_t *ticks, uint32_t *recording);
#define OT_NO_WINDOW 0xFFFFu /* window argument of triggers that are not a window's */
OT_HIDDEN void ot_trigger_event(ot_thread *t, uint32_t window, uint32_t action, uint32_t cause);

/* ---- Writer-side functions (ot_host_t) ------------------------------------ */
OT_HIDDEN int ot_host_wait(int timeout_ms);
OT_HIDDEN int ot_host_take_full(ot_span_t *out);
OT_HIDDEN int ot_host_take_partial(uint32_t *cursor, ot_span_t *out);
OT_HIDDEN void ot_host_release(const ot_span_t *span);
OT_HIDDEN void ot_host_counters(ot_counters_t *out);
OT_HIDDEN uint64_t ot_flush_request(void);
OT_HIDDEN int ot_flush_wait(uint64_t seq, uint64_t timeout_ms);
OT_HIDDEN uint64_t ot_host_flush_requested(void);
OT_HIDDEN void ot_host_flush_done(uint64_t seq);
OT_HIDDEN void ot_signals_snapshot(void);
OT_HIDDEN void ot_signals_settle(void);
OT_HIDDEN void ot_signals_rearm(void);
/* 1 in a forked child (fork() or the raw system call): never call into Go,
 * never wait for the writer. Costs a getpid(). */
OT_HIDDEN int ot_forked_child(void);
/* The descriptors the tool owns (fds.c): those open before the core loads
 * are the application's; those the core's start opened are the tool's. */
/* corecall.c: makes every function of api run with a signal stack on the
 * calling thread, which a call into Go from a thread it did not make needs. */
OT_HIDDEN void ot_core_calls_guard(ot_core_api_t *api);
OT_HIDDEN void ot_fds_mark(void);
OT_HIDDEN void ot_fds_hold_low(void);
OT_HIDDEN void ot_fds_release_low(void);
OT_HIDDEN void ot_fds_claim(int trace_fd);
OT_HIDDEN void ot_update_public_mask(void);
OT_HIDDEN void ot_critical(uint32_t kind, uint64_t count, const char *message);

/* ---- Logging before or without the Go core -------------------------------- */
OT_HIDDEN void ot_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum { OT_LOG_DEBUG = 0, OT_LOG_INFO = 1, OT_LOG_WARN = 2, OT_LOG_ERROR = 3 };

#endif /* OT_RT_H */
