/* buffers.c: the buffer pool, per-thread state and the writer's side of the
 * hand-over. Threads never lock: they take a FREE buffer with a CAS, fill it,
 * and push it on a lock-free stack when full. The writer (one Go goroutine)
 * pops the stack, reads committed prefixes of live buffers, and is the only
 * one that returns buffers to FREE.
 *
 * Buffers have sizes from min_cap up to the configured buffer size: a
 * thread's first buffer is small, and each one it fills makes its next twice
 * as big, up to its fair share of the memory (budget / (4 x live threads)),
 * so many threads that record little do not pin the pool. A thread that has
 * recorded nothing for a whole flush interval gives its buffer back: the
 * writer revokes it (reclaim_idle), which needs no atomic read-modify-write
 * on the hot path (rt.h: ot_enter). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

OT_TLS ot_thread *ot_self_tls;
static OT_TLS int creating; /* inside ot_thread_create: a nested call is re-entry */

static ot_buf *pool;
static uint32_t pool_len;
static _Atomic uint32_t free_filled; /* FREE slots that have memory */
static uint64_t budget;              /* bytes of buffer memory */
static _Atomic uint64_t mem_used;     /* bytes of buffer memory allocated */
static uint32_t min_cap, max_cap;
static _Atomic uint64_t buffers_allocated;
static ot_buf *_Atomic full_head;   /* pushed by threads, newest first */
static ot_buf *full_fifo;           /* writer only: popped batch, oldest first */
static _Atomic uint32_t next_thread_index = 1;
static _Atomic uint32_t live_threads;
static ot_thread *_Atomic all_threads; /* every struct ever made; exited ones are reused */
static _Atomic uint64_t dropped[OT_DROP_COUNTERS];
_Atomic uint64_t ot_ticks_clamped;
/* The writer sleeps on this word; threads bump it and wake the writer. A
 * futex, not a descriptor: the application may close every descriptor it did
 * not open (fds.c), and waking a futex is async-signal-safe. */
static _Atomic uint32_t wake_word;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static uint32_t *revoking;          /* writer only: slots asked back this round */
static int fence_cmd;               /* membarrier command, 0: reclaim is off */
static _Atomic uint32_t reclaim_wanted; /* a thread waits for a buffer (on_full = "wait") */

static _Atomic uint64_t flush_requested_seq;
static _Atomic uint64_t flush_done_seq;

static uint32_t cap_of(const ot_buf *b) {
  return atomic_load_explicit(&((ot_buf *)b)->cap, memory_order_relaxed);
}

void ot_count_drop(unsigned reason, uint64_t n) {
  if (reason < OT_DROP_COUNTERS)
    atomic_fetch_add_explicit(&dropped[reason], n, memory_order_relaxed);
}

/* Records, where t has room, a DROPPED record at now: count events lost
 * for want of a buffer since then. */
static void put_dropped(ot_thread *t, uint64_t count, uint64_t since, uint64_t now) {
  uint64_t args[3] = {count, OT_DROP_BUFFER_FULL, since};
  ot_commit(t, ot_encode(&t->enc, t->buf->data + t->pos, OCCA_TOOLS_EVENT_DROPPED, args, now));
}

/* A drop while the thread has room (the end of a call whose begin was
 * dropped) gets its DROPPED record at once, in place of the missing event;
 * otherwise the thread's next buffer starts with one (write_drops). */
void ot_drop(ot_thread *t, unsigned reason) {
  ot_count_drop(reason, 1);
  if (reason != OT_DROP_BUFFER_FULL || !t)
    return;
  if (t->dropped == 0 && t->pos + OT_RAW_MAX <= atomic_load_explicit(&t->limit, memory_order_relaxed)) {
    uint64_t now = ot_ticks();
    put_dropped(t, 1, now, now);
    return;
  }
  if (t->dropped++ == 0)
    t->drop_since = ot_ticks();
}

#define MIN_CAP (64u << 10)
#define MAX_SLOTS (1u << 16)

/* The asymmetric fence reclaim needs: the expedited membarrier (a few
 * microseconds, IPIs to the CPUs running this process), else the global one
 * (slower, but the writer pays it, at most once per cycle), else none: then
 * idle threads keep their buffers, and a warning says so once. */
static void fence_init(void) {
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
  if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0)
    fence_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
  else if (cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL))
    fence_cmd = MEMBARRIER_CMD_GLOBAL;
  else
    ot_log(OT_LOG_WARN, "membarrier is unavailable: idle threads keep their trace buffers, so "
                        "many threads may exhaust output.memory; raise it if events are dropped");
}

int ot_pool_init(uint64_t memory_bytes, uint64_t buffer_bytes) {
  if (buffer_bytes < 4096 || buffer_bytes > (1u << 30))
    return -1;
  uint64_t n = memory_bytes / buffer_bytes;
  if (memory_bytes >= 4 * OT_WRITER_RESERVE)
    n = (memory_bytes - OT_WRITER_RESERVE) / buffer_bytes;
  if (n < 2)
    n = 2;
  budget = n * buffer_bytes;
  max_cap = (uint32_t)buffer_bytes;
  min_cap = max_cap < MIN_CAP ? max_cap : MIN_CAP;
  uint64_t slots = budget / min_cap;
  if (slots > MAX_SLOTS)
    slots = MAX_SLOTS;
  pool = calloc(slots, sizeof *pool);
  revoking = calloc(slots, sizeof *revoking);
  if (!pool || !revoking)
    return -1;
  for (uint64_t i = 0; i < slots; i++)
    pool[i].slot = (uint32_t)i;
  pool_len = (uint32_t)slots;
  fence_init();
  return 0;
}

void ot_wake_writer(void) {
  atomic_fetch_add_explicit(&wake_word, 1, memory_order_release);
  syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ---- Threads -------------------------------------------------------------- */

/* The owner's view of a buffer the writer may be revoking: 1 when it is
 * still the thread's (a revocation is cancelled, and the limit restored),
 * 0 when the writer took it (then t->buf is cleared). */
static int still_mine(ot_thread *t) {
  ot_buf *b = t->buf;
  for (;;) {
    uint32_t s = atomic_load_explicit(&b->state, memory_order_acquire);
    if (atomic_load_explicit(&t->buf_lost, memory_order_acquire)) {
      atomic_store_explicit(&t->buf_lost, 0, memory_order_relaxed);
      atomic_store_explicit(&t->limit, 0, memory_order_relaxed);
      t->buf = NULL;
      t->last_slot = b->slot;
      t->next_cap = min_cap; /* it had gone idle */
      return 0;
    }
    if (s == OT_BUF_OWNED ||
        (s == OT_BUF_REVOKING &&
         atomic_compare_exchange_strong_explicit(&b->state, &s, OT_BUF_OWNED,
                                                 memory_order_acq_rel, memory_order_acquire))) {
      atomic_store_explicit(&t->limit, cap_of(b), memory_order_relaxed);
      return 1;
    }
    sched_yield(); /* REVOKED: buf_lost follows at once */
  }
}

/* Hands the thread's buffer over to the writer. counts_exact: the thread
 * is between two records (not so on its way out, see ot_buf.counts_exact). */
static void hand_over(ot_thread *t, int counts_exact) {
  if (!t->buf || !still_mine(t))
    return;
  ot_buf *b = t->buf;
  b->last_ticks = t->enc.ticks;
  memcpy(b->counts, t->enc.count, sizeof b->counts);
  b->counts_exact = (uint32_t)counts_exact;
  uint32_t owned = OT_BUF_OWNED;
  while (!atomic_compare_exchange_weak_explicit(&b->state, &owned, OT_BUF_FULL,
                                                memory_order_release, memory_order_relaxed)) {
    if (!still_mine(t)) /* the writer asked for it meanwhile */
      return;
    owned = OT_BUF_OWNED;
  }
  t->buf = NULL;
  atomic_store_explicit(&t->limit, 0, memory_order_relaxed);
  t->last_slot = b->slot;
  ot_buf *old = atomic_load_explicit(&full_head, memory_order_relaxed);
  do {
    atomic_store_explicit(&b->next, old, memory_order_relaxed);
  } while (!atomic_compare_exchange_weak_explicit(&full_head, &old, b, memory_order_release,
                                                  memory_order_relaxed));
  ot_wake_writer();
}

static ot_buf *acquire(ot_thread *t);

/* b becomes the thread's buffer, its records starting afresh. */
static void use_buffer(ot_thread *t, ot_buf *b) {
  t->buf = b;
  t->pos = 0;
  memset(&t->enc, 0, sizeof t->enc);
  atomic_store_explicit(&t->limit, cap_of(b), memory_order_relaxed);
}

/* The DROPPED record for the events lost since the thread last had a
 * buffer, first in its new one. */
static void write_drops(ot_thread *t) {
  if (!t->dropped)
    return;
  put_dropped(t, t->dropped, t->drop_since, ot_ticks());
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
  use_buffer(t, b);
  write_drops(t);
}

static void thread_exit(void *arg) {
  ot_thread *t = arg;
  if (atomic_load(&ot_state) == OT_STATE_FORKED)
    return; /* nobody writes for a forked child; its memory goes with it */
  atomic_store(&t->in_call, 1); /* the writer keeps off while it hands over */
  record_pending_drops(t);
  hand_over(t, 0);
  ot_self_tls = NULL;
  if (t->regions != t->region_inline)
    free(t->regions);
  atomic_fetch_sub(&live_threads, 1);
  atomic_store(&t->in_call, 0);
  /* Never freed: the writer may still read in_call; a new thread reuses it. */
  atomic_store_explicit(&t->dead, 1, memory_order_release);
}

/* Thread structs by index, for the first BY_INDEX threads. */
enum { BY_INDEX = 4096 };
static ot_thread *_Atomic by_index[BY_INDEX];

int ot_corr_issued(uint64_t corr) {
  uint64_t index = corr >> 40;
  if (index == 0 || index >= atomic_load_explicit(&next_thread_index, memory_order_relaxed))
    return 0;
  if (index >= BY_INDEX)
    return 1;
  ot_thread *t = atomic_load_explicit(&by_index[index], memory_order_acquire);
  /* A struct a later thread reuses can no longer tell. */
  return !t || t->index != index ||
         (corr & ((1ull << 40) - 2)) <= atomic_load_explicit(&t->corr_seq, memory_order_relaxed);
}

static void make_key(void) { pthread_key_create(&thread_key, thread_exit); }
void ot_thread_key_init(void) { pthread_once(&thread_key_once, make_key); }

/* An exited thread's struct, or a new one linked into all_threads. */
static ot_thread *thread_struct(void) {
  for (ot_thread *t = atomic_load(&all_threads); t; t = t->all_next) {
    uint32_t one = 1;
    if (atomic_load_explicit(&t->dead, memory_order_relaxed) &&
        atomic_compare_exchange_strong(&t->dead, &one, 0)) {
      atomic_store(&t->in_call, 0);
      atomic_store(&t->limit, 0);
      atomic_store(&t->buf_lost, 0);
      memset(&t->buf, 0, sizeof *t - offsetof(ot_thread, buf));
      return t;
    }
  }
  ot_thread *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  ot_thread *head = atomic_load(&all_threads);
  do {
    t->all_next = head;
  } while (!atomic_compare_exchange_weak(&all_threads, &head, t));
  return t;
}

static ot_thread *thread_create(void) {
  if (creating) { /* a signal handler interrupted this very function */
    ot_count_drop(OT_DROP_REENTRANT, 1);
    return NULL;
  }
  creating = 1;
  ot_thread *t = thread_struct();
  if (!t) { /* no memory: the call is lost, and counted */
    creating = 0;
    ot_count_drop(OT_DROP_BUFFER_FULL, 1);
    return NULL;
  }
  t->index = atomic_fetch_add(&next_thread_index, 1);
  if (t->index < BY_INDEX)
    atomic_store_explicit(&by_index[t->index], t, memory_order_release);
  t->last_slot = UINT32_MAX;
  t->next_cap = min_cap;
  t->regions = t->region_inline;
  t->region_cap = OT_REGION_DEPTH;
  atomic_fetch_add(&live_threads, 1);
  ot_thread_key_init();
  pthread_setspecific(thread_key, t);
  char name[17] = {0};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  uint64_t args[3] = {t->index, (uint64_t)syscall(SYS_gettid), 0};
  ot_str *s = ot_intern(name);
  args[2] = ot_str_id(s);
  ot_def(OT_DEF_THREAD, 3, args, NULL, 0);
  ot_self_tls = t;
  creating = 0;
  return t;
}

ot_thread *ot_thread_create(void) {
  int c = ot_cancel_off();
  ot_thread *t = thread_create();
  ot_cancel_restore(c);
  return t;
}

/* The size of t's next buffer: twice its last full one, up to its share. */
static uint32_t share_cap(void) {
  uint64_t live = atomic_load_explicit(&live_threads, memory_order_relaxed);
  uint64_t share = budget / (4 * (live ? live : 1));
  uint32_t c = min_cap;
  while (c < max_cap && (uint64_t)c * 2 <= share)
    c = c * 2 < max_cap ? c * 2 : max_cap;
  return c;
}

static ot_buf *claim_where(int (*fits)(const ot_buf *, uint32_t), uint32_t want) {
  for (uint32_t i = 0; i < pool_len; i++) {
    ot_buf *b = &pool[i];
    uint32_t free_ = OT_BUF_FREE;
    if (atomic_load_explicit(&b->state, memory_order_relaxed) != OT_BUF_FREE || !fits(b, want) ||
        !atomic_compare_exchange_strong_explicit(&b->state, &free_, OT_BUF_CLAIMED,
                                                 memory_order_acquire, memory_order_relaxed))
      continue;
    if (fits(b, want)) { /* read again now that it is ours */
      if (cap_of(b))
        atomic_fetch_sub_explicit(&free_filled, 1, memory_order_relaxed);
      return b;
    }
    atomic_store_explicit(&b->state, OT_BUF_FREE, memory_order_release);
  }
  return NULL;
}

static int same_size(const ot_buf *b, uint32_t want) { return cap_of(b) == want; }
static int no_memory(const ot_buf *b, uint32_t want) { return (void)want, cap_of(b) == 0; }
static int any_memory(const ot_buf *b, uint32_t want) { return (void)want, cap_of(b) != 0; }

/* A free buffer of the thread's next size if one is there, else new memory
 * within the budget, else any free buffer. Lowest slots first, so a run
 * reuses the few buffers it needs at once instead of touching the whole
 * pool: memory in use follows the load, and the budget is a ceiling. */
static ot_buf *acquire(ot_thread *t) {
  uint32_t want = t->next_cap;
  int room = atomic_load_explicit(&mem_used, memory_order_relaxed) + want <= budget;
  if (!room && atomic_load_explicit(&free_filled, memory_order_relaxed) == 0)
    return NULL; /* the common case in overload: fail fast */
  ot_buf *b = claim_where(same_size, want);
  if (!b && room && atomic_fetch_add(&mem_used, want) + want <= budget) {
    b = claim_where(no_memory, want);
    if (b && !(b->data = malloc(want))) {
      atomic_store_explicit(&b->state, OT_BUF_FREE, memory_order_release);
      b = NULL;
    }
    if (b) {
      atomic_store_explicit(&b->cap, want, memory_order_relaxed);
      atomic_fetch_add(&buffers_allocated, 1);
    } else {
      atomic_fetch_sub(&mem_used, want);
    }
  } else if (!b && room) {
    atomic_fetch_sub(&mem_used, want);
  }
  if (!b)
    b = claim_where(any_memory, want);
  if (!b)
    return NULL;
  b->thread = t->index;
  b->owner = t;
  b->seq = ++t->buf_seq;
  b->pred_slot = t->last_slot;
  b->pred_seq = t->buf_seq - 1;
  b->idle = 0;
  atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
  atomic_store_explicit(&b->state, OT_BUF_OWNED, memory_order_release);
  return b;
}

/* The thread's buffer is full, missing or revoked: hand it over and take
 * another. On success, first records how many events were dropped while
 * there was none. */
static uint8_t *reserve_slow(ot_thread *t, unsigned bytes) {
  if (ot_forked_child()) /* no writer there: never wait for one */
    return NULL;
  if (!t || bytes + OT_RAW_MAX > min_cap) /* a DROPPED record may go first */
    return NULL;
  int st = atomic_load_explicit(&ot_state, memory_order_relaxed);
  if (st != OT_STATE_ACTIVE) {
    if (st == OT_STATE_SHUTDOWN)
      ot_count_drop(OT_DROP_AFTER_SHUTDOWN, 1);
    return NULL;
  }
  if (t->buf && still_mine(t)) {
    uint32_t cap = cap_of(t->buf);
    /* A revocation was cancelled. Drops counted while it zeroed the limit
     * (the pop of a region whose push was lost) get their DROPPED record
     * now, before the record that comes after them, not in the next
     * buffer: there it could land between a later begin and its end. */
    if (t->pos + bytes + (t->dropped ? OT_RAW_MAX : 0) <= cap) {
      write_drops(t);
      return t->buf->data + t->pos;
    }
    uint32_t grown = cap * 2 < max_cap ? cap * 2 : max_cap;
    uint32_t share = share_cap();
    t->next_cap = grown < share ? grown : share;
    hand_over(t, 1);
  }
  ot_buf *b = acquire(t);
  if (!b && ot_cfg.on_full_wait) {
    struct timespec nap = {0, 50000};
    for (unsigned i = 0; !b && atomic_load(&ot_state) == OT_STATE_ACTIVE; i++) {
      if (i % 200 == 0) { /* every 10 ms: the writer may take back idle buffers */
        atomic_store(&reclaim_wanted, 1);
        ot_wake_writer();
      }
      nanosleep(&nap, NULL);
      t->next_cap = min_cap;
      b = acquire(t);
    }
  }
  if (!b) {
    ot_drop(t, OT_DROP_BUFFER_FULL);
    return NULL;
  }
  use_buffer(t, b);
  write_drops(t);
  return b->data + t->pos;
}

uint8_t *ot_reserve_slow(ot_thread *t, unsigned bytes) {
  int c = ot_cancel_off();
  uint8_t *p = reserve_slow(t, bytes);
  ot_cancel_restore(c);
  return p;
}

/* ---- Writer side ------------------------------------------------------------ */

int ot_host_wait(int timeout_ms) {
  /* Read before the checks: a wake-up after them changes the word, and the
   * wait below then returns at once. */
  uint32_t seen = atomic_load_explicit(&wake_word, memory_order_acquire);
  if (atomic_load(&flush_requested_seq) > atomic_load(&flush_done_seq) ||
      atomic_load(&reclaim_wanted))
    return OT_WAKE_FLUSH;
  if (full_fifo || atomic_load(&full_head))
    return OT_WAKE_WORK;
  struct timespec limit = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
  syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &limit, NULL, 0);
  if (atomic_load(&flush_requested_seq) > atomic_load(&flush_done_seq) ||
      atomic_load(&reclaim_wanted))
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
  out->offset = b->flushed;
  out->len = end - b->flushed;
  b->flushed = end;
  out->thread = b->thread;
  out->slot = b->slot;
  out->full = 1;
  out->counts = out->offset == 0 && b->counts_exact ? b->counts : NULL;
  out->last_ticks = b->last_ticks;
  return 1;
}

/* Is a full buffer of b's thread still queued (not yet popped)? Only
 * take_full clears that. A FULL buffer's fields were written before its
 * hand-over (release). */
static int pred_queued(const ot_buf *b) {
  if (b->pred_slot == UINT32_MAX)
    return 0;
  ot_buf *p = &pool[b->pred_slot];
  return atomic_load_explicit(&p->state, memory_order_acquire) == OT_BUF_FULL && !p->taken &&
         p->thread == b->thread && p->seq == b->pred_seq;
}

static void to_free(ot_buf *b) {
  b->flushed = 0;
  b->spans_out = 0;
  b->taken = 0;
  b->pred_slot = UINT32_MAX;
  atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
  atomic_store_explicit(&b->state, OT_BUF_FREE, memory_order_release);
  atomic_fetch_add_explicit(&free_filled, 1, memory_order_release);
}

/* Takes back the buffers whose owner recorded nothing since the last
 * partial take (all of it taken in spans the writer has released): each is
 * marked REVOKING and its owner's limit zeroed, then one membarrier makes
 * every thread that enters a call from now on see the zero limit, so a
 * thread found outside a call cannot write into its buffer any more. Its
 * owner learns at its next record (buf_lost) and takes a new, small one. */
static void reclaim_idle(void) {
  atomic_store(&reclaim_wanted, 0);
  if (!fence_cmd)
    return;
  uint32_t n = 0;
  for (uint32_t i = 0; i < pool_len; i++) {
    ot_buf *b = &pool[i];
    uint32_t owned = OT_BUF_OWNED;
    if (atomic_load_explicit(&b->state, memory_order_acquire) != OT_BUF_OWNED || !b->idle ||
        b->spans_out || atomic_load_explicit(&b->committed, memory_order_acquire) != b->flushed ||
        pred_queued(b))
      continue;
    /* Before the CAS, so an owner that cancels the revocation (its CAS reads
     * this one's) restores its limit after this store. When the CAS fails
     * the owner handed the buffer over meanwhile and restores its limit at
     * its next record. */
    atomic_store_explicit(&b->owner->limit, 0, memory_order_relaxed);
    if (!atomic_compare_exchange_strong(&b->state, &owned, OT_BUF_REVOKING))
      continue;
    revoking[n++] = i;
  }
  if (n == 0 || syscall(SYS_membarrier, fence_cmd, 0) != 0) {
    for (uint32_t j = 0; j < n; j++) { /* the owner restores the limit */
      uint32_t r = OT_BUF_REVOKING;
      atomic_compare_exchange_strong(&pool[revoking[j]].state, &r, OT_BUF_OWNED);
    }
    return;
  }
  for (uint32_t j = 0; j < n; j++) {
    ot_buf *b = &pool[revoking[j]];
    ot_thread *t = b->owner;
    uint32_t r = OT_BUF_REVOKING;
    int out = !atomic_load_explicit(&t->in_call, memory_order_acquire) &&
              atomic_load_explicit(&b->committed, memory_order_acquire) == b->flushed;
    if (!atomic_compare_exchange_strong(&b->state, &r, out ? OT_BUF_REVOKED : OT_BUF_OWNED) ||
        !out)
      continue; /* the owner cancelled it, or is recording: it keeps the buffer */
    atomic_store_explicit(&t->buf_lost, 1, memory_order_release);
    to_free(b);
  }
}

/* 2 means: a full buffer of this thread is still queued; drain take_full
 * first and call again with the same cursor, so a thread's events stay in
 * order. A span's bytes count as taken at once (flushed moves here, not at
 * release), so a buffer taken partly and then full in one writer cycle
 * yields each record once. A scan from cursor 0 first takes back idle
 * buffers. */
int ot_host_take_partial(uint32_t *cursor, ot_span_t *out) {
  if (*cursor == 0)
    reclaim_idle();
  for (; *cursor < pool_len; (*cursor)++) {
    ot_buf *b = &pool[*cursor];
    if (atomic_load_explicit(&b->state, memory_order_acquire) != OT_BUF_OWNED)
      continue;
    if (pred_queued(b))
      return 2;
    uint32_t end = atomic_load_explicit(&b->committed, memory_order_acquire);
    b->idle = end <= b->flushed;
    if (end <= b->flushed)
      continue;
    out->data = b->data + b->flushed;
    out->offset = b->flushed;
    out->len = end - b->flushed;
    b->flushed = end;
    b->spans_out++;
    out->thread = b->thread;
    out->slot = b->slot;
    out->full = 0;
    out->counts = NULL;
    out->last_ticks = 0;
    (*cursor)++;
    return 1;
  }
  return 0;
}

void ot_host_release(const ot_span_t *span) {
  ot_buf *b = &pool[span->slot];
  if (span->full)
    to_free(b);
  else if (b->spans_out)
    b->spans_out--;
}

void ot_host_counters(ot_counters_t *out) {
  memset(out, 0, sizeof *out);
  for (unsigned i = 0; i < OT_DROP_COUNTERS; i++)
    out->dropped[i] = atomic_load_explicit(&dropped[i], memory_order_relaxed);
  out->threads = atomic_load(&next_thread_index) - 1;
  out->buffers_used = atomic_load(&buffers_allocated);
  out->signal_toggles = ot_signal_toggle_count();
  out->ticks_clamped = atomic_load_explicit(&ot_ticks_clamped, memory_order_relaxed);
}

/* ---- Flush requests (occa_tools_flush, signals) ------------------------------- */

uint64_t ot_flush_request(void) {
  uint64_t seq = atomic_fetch_add(&flush_requested_seq, 1) + 1;
  ot_wake_writer();
  return seq;
}

/* Async-signal-safe: polls with nanosleep. Returns 0 when flushed in time.
 * Not a cancellation point, as nanosleep is: untraced, the calls that wait
 * here return at once. */
int ot_flush_wait(uint64_t seq, uint64_t timeout_ms) {
  int c = ot_cancel_off(), r = -1;
  struct timespec nap = {0, 1000000};
  for (uint64_t waited = 0; waited <= timeout_ms; waited++) {
    if (atomic_load(&flush_done_seq) >= seq) {
      r = 0;
      break;
    }
    if (atomic_load(&ot_state) != OT_STATE_ACTIVE && atomic_load(&flush_done_seq) < seq &&
        atomic_load(&ot_state) != OT_STATE_SHUTDOWN)
      break;
    nanosleep(&nap, NULL);
  }
  ot_cancel_restore(c);
  return r;
}

uint64_t ot_host_flush_requested(void) { return atomic_load(&flush_requested_seq); }

void ot_host_flush_done(uint64_t seq) {
  uint64_t cur = atomic_load(&flush_done_seq);
  while (cur < seq && !atomic_compare_exchange_weak(&flush_done_seq, &cur, seq)) {
  }
}
