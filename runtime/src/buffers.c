/* buffers.c: the buffer pool, per-thread state and the writer's side of the
 * hand-over. Threads never lock: they take a FREE buffer with a CAS, fill it,
 * and push it on a lock-free stack when full. The writer (one Go goroutine)
 * pops the stack, reads committed prefixes of live buffers, and is the only
 * one that returns buffers to FREE. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

OT_TLS ot_thread *ot_self_tls;
uint32_t ot_buf_cap;

static ot_buf *pool;
static uint32_t pool_len;
static _Atomic uint32_t pool_free;
static _Atomic uint64_t buffers_allocated;
static ot_buf *_Atomic full_head;   /* pushed by threads, newest first */
static ot_buf *full_fifo;           /* writer only: popped batch, oldest first */
static _Atomic uint32_t next_thread_index = 1;
static _Atomic uint64_t dropped[8];
static int wake_fd = -1;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static _Atomic uint64_t flush_requested_seq;
static _Atomic uint64_t flush_done_seq;

void ot_count_drop(unsigned reason, uint64_t n) {
  if (reason < 8)
    atomic_fetch_add_explicit(&dropped[reason], n, memory_order_relaxed);
}

/* Part of the memory budget is kept for the writer (the Go core's code
 * pages, about 5 MiB resident, the Go runtime, the compressors and their
 * batches; runtime/core/start.go writerReserve): the buffers get the rest. */
#define WRITER_RESERVE (12ull << 20)

int ot_pool_init(uint64_t memory_bytes, uint64_t buffer_bytes) {
  if (buffer_bytes < 4096 || buffer_bytes > (1u << 30))
    return -1;
  uint64_t n = memory_bytes / buffer_bytes;
  if (memory_bytes >= 4 * WRITER_RESERVE)
    n = (memory_bytes - WRITER_RESERVE) / buffer_bytes;
  if (n < 2)
    n = 2;
  pool = calloc(n, sizeof *pool);
  if (!pool)
    return -1;
  for (uint64_t i = 0; i < n; i++)
    pool[i].slot = (uint32_t)i;
  pool_len = (uint32_t)n;
  ot_buf_cap = (uint32_t)buffer_bytes;
  atomic_store(&pool_free, pool_len);
  wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  return wake_fd < 0 ? -1 : 0;
}

void ot_wake_writer(void) {
  if (wake_fd >= 0) {
    uint64_t one = 1;
    ssize_t r = write(wake_fd, &one, sizeof one); /* async-signal-safe */
    (void)r;
  }
}

/* ---- Threads -------------------------------------------------------------- */

static void hand_over(ot_thread *t) {
  ot_buf *b = t->buf;
  if (!b)
    return;
  t->buf = NULL;
  t->last_slot = b->slot;
  atomic_store_explicit(&b->state, OT_BUF_FULL, memory_order_release);
  ot_buf *old = atomic_load_explicit(&full_head, memory_order_relaxed);
  do {
    atomic_store_explicit(&b->next, old, memory_order_relaxed);
  } while (!atomic_compare_exchange_weak_explicit(&full_head, &old, b, memory_order_release,
                                                  memory_order_relaxed));
  ot_wake_writer();
}

static ot_buf *acquire(ot_thread *t);

/* The DROPPED record for the events lost since the thread last had a
 * buffer, first in its new one. */
static void write_drops(ot_thread *t) {
  if (!t->dropped)
    return;
  uint64_t *r = (uint64_t *)(void *)(t->buf->data + t->pos);
  r[0] = ot_ticks();
  r[1] = (uint64_t)OCCA_TOOLS_EVENT_DROPPED | (3ull << 8);
  r[2] = t->dropped;
  r[3] = OT_DROP_BUFFER_FULL;
  r[4] = t->drop_since;
  ot_commit(t, 5);
  t->dropped = 0;
}

/* Drops the thread could not record yet (no buffer since) get their
 * DROPPED record now, if a buffer is free; the totals in the stats count
 * them either way. */
static void record_pending_drops(ot_thread *t) {
  if (!t->dropped || t->buf || atomic_load(&ot_state) != OT_STATE_ACTIVE)
    return;
  ot_buf *b = acquire(t);
  if (!b)
    return;
  t->buf = b;
  t->pos = 0;
  write_drops(t);
}

static void thread_exit(void *arg) {
  ot_thread *t = arg;
  if (atomic_load(&ot_state) == OT_STATE_FORKED)
    return; /* nobody writes for a forked child; its memory goes with it */
  record_pending_drops(t);
  hand_over(t);
  ot_self_tls = NULL;
  free(t);
}

static void make_key(void) { pthread_key_create(&thread_key, thread_exit); }
void ot_thread_key_init(void) { pthread_once(&thread_key_once, make_key); }

ot_thread *ot_thread_create(void) {
  ot_thread *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->index = atomic_fetch_add(&next_thread_index, 1);
  t->last_slot = UINT32_MAX;
  ot_thread_key_init();
  pthread_setspecific(thread_key, t);
  ot_self_tls = t;
  char name[17] = {0};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  uint64_t args[3] = {t->index, (uint64_t)syscall(SYS_gettid), 0};
  ot_str *s = ot_intern(name);
  args[2] = ot_str_id(s);
  ot_def(OT_DEF_THREAD, 3, args, NULL, 0);
  return t;
}

/* Takes the lowest free slot, so a run reuses the few buffers it needs at
 * once instead of touching the whole pool: memory in use follows the load,
 * and the budget is a ceiling. */
static ot_buf *acquire(ot_thread *t) {
  if (atomic_load_explicit(&pool_free, memory_order_relaxed) == 0)
    return NULL;
  for (uint32_t i = 0; i < pool_len; i++) {
    ot_buf *b = &pool[i];
    uint32_t want = OT_BUF_FREE;
    if (atomic_load_explicit(&b->state, memory_order_relaxed) != OT_BUF_FREE ||
        !atomic_compare_exchange_strong_explicit(&b->state, &want, OT_BUF_CLAIMED,
                                                 memory_order_acquire, memory_order_relaxed))
      continue;
    if (!b->data) {
      b->data = malloc(ot_buf_cap);
      if (!b->data) {
        atomic_store_explicit(&b->state, OT_BUF_FREE, memory_order_release);
        return NULL;
      }
      atomic_fetch_add(&buffers_allocated, 1);
    }
    atomic_fetch_sub_explicit(&pool_free, 1, memory_order_relaxed);
    b->thread = t->index;
    b->seq = ++t->buf_seq;
    b->pred_slot = t->last_slot;
    b->pred_seq = t->buf_seq - 1;
    atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
    atomic_store_explicit(&b->state, OT_BUF_OWNED, memory_order_release);
    return b;
  }
  return NULL;
}

/* The thread's buffer is full or missing: hand it over and take another. On
 * success, first records how many events were dropped while there was none. */
uint64_t *ot_reserve_slow(ot_thread *t, unsigned words) {
  if (!t || (words + 5) * 8u > ot_buf_cap) /* a DROPPED record may go first */
    return NULL;
  int st = atomic_load_explicit(&ot_state, memory_order_relaxed);
  if (st != OT_STATE_ACTIVE) {
    if (st == OT_STATE_SHUTDOWN)
      ot_count_drop(OT_DROP_SHUTDOWN, 1);
    return NULL;
  }
  hand_over(t);
  ot_buf *b = acquire(t);
  if (!b && ot_cfg.on_full_wait) {
    struct timespec nap = {0, 50000};
    while (!b && atomic_load(&ot_state) == OT_STATE_ACTIVE) {
      ot_wake_writer();
      nanosleep(&nap, NULL);
      b = acquire(t);
    }
  }
  if (!b) {
    if (t->dropped++ == 0)
      t->drop_since = ot_ticks();
    ot_count_drop(OT_DROP_BUFFER_FULL, 1);
    return NULL;
  }
  t->buf = b;
  t->pos = 0;
  write_drops(t);
  return (uint64_t *)(void *)(b->data + t->pos);
}

/* ---- Writer side ------------------------------------------------------------ */

int ot_host_wait(int timeout_ms) {
  if (atomic_load(&flush_requested_seq) > atomic_load(&flush_done_seq))
    return OT_WAKE_FLUSH;
  if (full_fifo || atomic_load(&full_head))
    return OT_WAKE_WORK;
  struct pollfd p = {.fd = wake_fd, .events = POLLIN};
  int r = poll(&p, 1, timeout_ms);
  if (r > 0) {
    uint64_t v;
    ssize_t n = read(wake_fd, &v, sizeof v);
    (void)n;
  }
  if (atomic_load(&flush_requested_seq) > atomic_load(&flush_done_seq))
    return OT_WAKE_FLUSH;
  return (full_fifo || atomic_load(&full_head)) ? OT_WAKE_WORK : OT_WAKE_TIMEOUT;
}

int ot_host_take_full(ot_span_t *out) {
  if (!full_fifo) {
    ot_buf *b = atomic_exchange_explicit(&full_head, NULL, memory_order_acquire);
    while (b) { /* reverse into oldest-first order */
      ot_buf *next = atomic_load_explicit(&b->next, memory_order_relaxed);
      atomic_store_explicit(&b->next, full_fifo, memory_order_relaxed);
      full_fifo = b;
      b = next;
    }
  }
  ot_buf *b = full_fifo;
  if (!b)
    return 0;
  full_fifo = atomic_load_explicit(&b->next, memory_order_relaxed);
  uint32_t end = atomic_load_explicit(&b->committed, memory_order_acquire);
  b->taken = 1;
  out->data = b->data + b->flushed;
  out->len = end - b->flushed;
  b->flushed = end;
  out->thread = b->thread;
  out->slot = b->slot;
  out->full = 1;
  return 1;
}

/* 2 means: a full buffer of this thread is still queued; drain take_full
 * first and call again with the same cursor, so a thread's events stay in
 * order. A span's bytes count as taken at once (flushed moves here, not at
 * release), so a buffer taken partly and then full in one writer cycle
 * yields each record once. */
int ot_host_take_partial(uint32_t *cursor, ot_span_t *out) {
  for (; *cursor < pool_len; (*cursor)++) {
    ot_buf *b = &pool[*cursor];
    if (atomic_load_explicit(&b->state, memory_order_acquire) != OT_BUF_OWNED)
      continue;
    if (b->pred_slot != UINT32_MAX) {
      /* Queued and not yet popped: only take_full clears that. A FULL
       * buffer's fields were written before its hand-over (release). */
      ot_buf *p = &pool[b->pred_slot];
      if (atomic_load_explicit(&p->state, memory_order_acquire) == OT_BUF_FULL && !p->taken &&
          p->thread == b->thread && p->seq == b->pred_seq)
        return 2;
    }
    uint32_t end = atomic_load_explicit(&b->committed, memory_order_acquire);
    if (end <= b->flushed)
      continue;
    out->data = b->data + b->flushed;
    out->len = end - b->flushed;
    b->flushed = end;
    out->thread = b->thread;
    out->slot = b->slot;
    out->full = 0;
    (*cursor)++;
    return 1;
  }
  return 0;
}

void ot_host_release(const ot_span_t *span) {
  ot_buf *b = &pool[span->slot];
  if (!span->full)
    return;
  b->flushed = 0;
  b->taken = 0;
  b->pred_slot = UINT32_MAX;
  atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
  atomic_store_explicit(&b->state, OT_BUF_FREE, memory_order_release);
  atomic_fetch_add_explicit(&pool_free, 1, memory_order_release);
}

void ot_host_counters(ot_counters_t *out) {
  memset(out, 0, sizeof *out);
  for (int i = 0; i < 8; i++)
    out->dropped[i] = atomic_load_explicit(&dropped[i], memory_order_relaxed);
  out->threads = atomic_load(&next_thread_index) - 1;
  out->buffers_used = atomic_load(&buffers_allocated);
  out->signal_toggles = ot_signal_toggle_count();
}

/* ---- Flush requests (occa_tools_flush, signals) ------------------------------- */

uint64_t ot_flush_request(void) {
  uint64_t seq = atomic_fetch_add(&flush_requested_seq, 1) + 1;
  ot_wake_writer();
  return seq;
}

/* Async-signal-safe: polls with nanosleep. Returns 0 when flushed in time. */
int ot_flush_wait(uint64_t seq, uint64_t timeout_ms) {
  struct timespec nap = {0, 1000000};
  for (uint64_t waited = 0; waited <= timeout_ms; waited++) {
    if (atomic_load(&flush_done_seq) >= seq)
      return 0;
    if (atomic_load(&ot_state) != OT_STATE_ACTIVE && atomic_load(&flush_done_seq) < seq &&
        atomic_load(&ot_state) != OT_STATE_SHUTDOWN)
      return -1;
    nanosleep(&nap, NULL);
  }
  return -1;
}

uint64_t ot_host_flush_requested(void) { return atomic_load(&flush_requested_seq); }

void ot_host_flush_done(uint64_t seq) {
  uint64_t cur = atomic_load(&flush_done_seq);
  while (cur < seq && !atomic_compare_exchange_weak(&flush_done_seq, &cur, seq)) {
  }
}
