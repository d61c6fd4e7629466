/*
 * tsan_driver: the C hot path under ThreadSanitizer, without the Go core.
 *
 * Built together with the runtime/src sources (their functions are hidden, so they
 * are linked in directly) and -fsanitize=thread. It sets the runtime up the
 * way the library constructor does (strings, buffer pool, thread key, kinds,
 * triggers with no windows, state ACTIVE), with a fake core whose decisions
 * select everything. Then:
 *
 *   - T producer threads (default 32) make a deterministic mix of events:
 *     launches of kernels whose slots are shared by all threads (so slots race
 *     on first sight), devices and streams shared the same way, copies,
 *     allocations and frees, regions, markers (strings interned concurrently),
 *     stream and device finishes, builds, device setups, device times, kernel
 *     tags (decisions remade), and memory tags set from other threads;
 *   - one flusher thread calls occa_tools_flush() in a loop;
 *   - one consumer thread plays the Go writer with the ot_host_* functions:
 *     take_full, take_partial (with its return-2 rule), release, ot_take_defs,
 *     flush requested/done. It decodes every record and checks it.
 *
 * At the end it verifies exact counts:
 *   --mode wait  (on_full_wait = 1, a pool smaller than the thread count):
 *                every record the threads made is in the output, per thread
 *                and per kind, and nothing was dropped;
 *   --mode drop  (on_full_wait = 0, a 2-buffer pool, a slow consumer):
 *                per thread, records decoded + drops reported in DROPPED
 *                records + drops still pending at thread exit == records
 *                attempted; the sum of drops equals the runtime's counter;
 *                begins recorded == begins whose call returned an id.
 * In both: per thread, correlation ids strictly increase and ticks never go
 * back; each end carries its begin's id; string, device, kernel, stream and
 * thread ids are defined before use; the shared kernel and device slots end
 * up with one object each.
 *
 * Usage: tsan_driver [--mode wait|drop] [--threads T] [--ops N] [--seed S]
 *                    [--no-cross-tag] [--tolerate-known]
 * --tolerate-known counts, instead of failing on, the known bug that a copy
 * may reach the writer before its memory object's definition.
 * Exit status 0 when every check passes, 1 otherwise (TSan's own exit code
 * when it reports, with TSAN_OPTIONS=exitcode=66).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_core.h"

#define MAX_THREADS 256
#define NKERNELS 8
#define NDEVICES 2
#define NSTREAMS 4
#define NSHAREDMEM 4
#define NMEM 4
#define NNAMES 16

/* ---- Checks ------------------------------------------------------------------ */

static int failures;
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  if (failures++ < 40) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tsan_driver: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
  }
}

/* ---- Shared objects (slots race on first sight) ---------------------------- */

static occa_tools_data_t kernels[NKERNELS], devices[NDEVICES], streams[NSTREAMS];
static occa_tools_data_t shared_mem[NSHAREDMEM];
static const char *kernel_names[NKERNELS] = {"axpy", "dot",  "gemm",  "stencil",
                                             "fft",  "scan", "reduce", "transpose"};
static char names[NNAMES][24];

/* ---- Producer state -------------------------------------------------------------- */

enum { NKINDS = 32 };

typedef struct producer {
  pthread_t th;
  int index;
  uint32_t tindex;             /* the runtime's thread index (ot_self()->index) */
  uint64_t rng;
  uint64_t attempted[NKINDS];  /* records this thread asked for, by kind */
  uint64_t begins_ok[NKINDS];  /* begins whose call returned a correlation id */
  uint64_t pending_dropped;    /* drops not yet reported in a DROPPED record at exit */
} producer;

static producer prod[MAX_THREADS];
static int nthreads = 32, ops = 4000, drop_mode = 0, cross_tag = 1;
static uint64_t seed = 1;

static uint64_t rnd(producer *p) {
  p->rng ^= p->rng << 13;
  p->rng ^= p->rng >> 7;
  p->rng ^= p->rng << 17;
  return p->rng;
}

static uintptr_t mem_address(int thread, int slot) {
  return ((uintptr_t)(thread + 1) << 32) + (uintptr_t)slot * 0x1000;
}

static void *produce(void *arg) {
  producer *p = arg;
  occa_tools_data_t mem[NMEM];
  int allocated[NMEM] = {0};
  memset(mem, 0, sizeof mem);
  occa_tools_data_t own_device = OCCA_TOOLS_DATA_NONE;
  occa_tools_data_t own_kernels[2];
  memset(own_kernels, 0, sizeof own_kernels);
  int depth = 0, have_device = 0;
  uint64_t *att = p->attempted;

  for (int op = 0; op < ops; op++) {
    uint64_t r = rnd(p);
    unsigned what = (unsigned)(r % 1000);
    r >>= 10;
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
    if (what < 400) { /* kernel launch on shared slots */
      int k = (int)(r % NKERNELS);
      int s = (int)((r >> 3) % (NSTREAMS + 1));
      occa_tools_run_begin(&c, &kernels[k], kernel_names[k], &devices[k % NDEVICES],
                           s < NSTREAMS ? &streams[s] : NULL);
      att[OCCA_TOOLS_EVENT_RUN_BEGIN]++;
      att[OCCA_TOOLS_EVENT_RUN_END]++; /* recorded, or counted as dropped */
      uint64_t corr = c.correlation_id;
      if (corr) {
        p->begins_ok[OCCA_TOOLS_EVENT_RUN_BEGIN]++;
      }
      occa_tools_run_end(&c, OCCA_TOOLS_OK);
      if (corr && (r >> 6) % 4 == 0) {
        occa_tools_kernel_device_time(corr, 1000, 2000);
        att[OCCA_TOOLS_EVENT_DEVICE_TIME]++;
      }
    } else if (what < 500) { /* copy between own, shared (unreported) or host memory */
      occa_tools_data_t *src = NULL, *dst = NULL;
      int a = (int)(r % (NMEM + NSHAREDMEM + 1)), b = (int)((r >> 4) % (NMEM + NSHAREDMEM + 1));
      if (a < NMEM && allocated[a])
        src = &mem[a];
      else if (a >= NMEM && a < NMEM + NSHAREDMEM)
        src = &shared_mem[a - NMEM];
      if (b < NMEM && allocated[b])
        dst = &mem[b];
      else if (b >= NMEM && b < NMEM + NSHAREDMEM)
        dst = &shared_mem[b - NMEM];
      int async = (r >> 8) & 1;
      occa_tools_copy_begin(&c, OCCA_TOOLS_COPY_D2D, src, dst, 4096, async,
                            async ? &streams[(r >> 9) % NSTREAMS] : NULL);
      att[OCCA_TOOLS_EVENT_COPY_BEGIN]++;
      att[OCCA_TOOLS_EVENT_COPY_END]++; /* recorded, or counted as dropped */
      if (c.correlation_id) {
        p->begins_ok[OCCA_TOOLS_EVENT_COPY_BEGIN]++;
      }
      occa_tools_copy_end(&c, OCCA_TOOLS_OK);
    } else if (what < 640) { /* allocate or free one of the thread's memory slots */
      int m = (int)(r % NMEM);
      if (!allocated[m]) {
        occa_tools_memory_alloc_begin(&c, &devices[m % NDEVICES], 4096u << m,
                                      m == 0 ? "halo" : NULL);
        att[OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN]++;
        att[OCCA_TOOLS_EVENT_MEMORY_ALLOC_END]++; /* recorded, or counted as dropped */
        if (c.correlation_id) {
          p->begins_ok[OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN]++;
        }
        occa_tools_memory_alloc_end(&c, &mem[m], (void *)mem_address(p->index, m), OCCA_TOOLS_OK);
        allocated[m] = 1;
      } else {
        occa_tools_memory_free_begin(&c, &mem[m]);
        att[OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN]++;
        att[OCCA_TOOLS_EVENT_MEMORY_FREE_END]++; /* recorded, or counted as dropped */
        if (c.correlation_id) {
          p->begins_ok[OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN]++;
        }
        occa_tools_memory_free_end(&c, OCCA_TOOLS_OK);
        allocated[m] = 0;
      }
    } else if (what < 760) { /* regions */
      if (depth < 4 && (depth == 0 || (r & 1))) {
        occa_tools_region_push(names[r % NNAMES]);
        att[OCCA_TOOLS_EVENT_REGION_PUSH]++;
        depth++;
      } else {
        /* Its pop is recorded when its push was (white box: the frame). */
        ot_thread *t = ot_self_tls;
        if (t && t->region_depth > 0 && t->region_depth <= OT_REGION_DEPTH &&
            t->regions[t->region_depth - 1].recorded)
          att[OCCA_TOOLS_EVENT_REGION_POP]++;
        occa_tools_region_pop();
        depth--;
      }
    } else if (what < 840) { /* markers: names interned by many threads at once */
      occa_tools_marker(names[r % NNAMES]);
      att[OCCA_TOOLS_EVENT_MARKER]++;
    } else if (what < 900) {
      occa_tools_stream_set(&devices[r % NDEVICES], &streams[(r >> 2) % NSTREAMS]);
      att[OCCA_TOOLS_EVENT_STREAM_SET]++;
    } else if (what < 930) {
      occa_tools_stream_finish_begin(&c, &streams[r % NSTREAMS]);
      att[OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN]++;
      att[OCCA_TOOLS_EVENT_STREAM_FINISH_END]++; /* recorded, or counted as dropped */
      if (c.correlation_id) {
        p->begins_ok[OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN]++;
      }
      occa_tools_stream_finish_end(&c);
    } else if (what < 950) {
      occa_tools_device_finish_begin(&c, &devices[r % NDEVICES]);
      att[OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN]++;
      att[OCCA_TOOLS_EVENT_DEVICE_FINISH_END]++; /* recorded, or counted as dropped */
      if (c.correlation_id) {
        p->begins_ok[OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN]++;
      }
      occa_tools_device_finish_end(&c);
    } else if (what < 965) { /* a device of its own, then builds into its own slots */
      if (!have_device) {
        occa_tools_device_setup_begin(&c, "Serial", p->index, "{\"mode\": \"Serial\"}");
        att[OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN]++;
        att[OCCA_TOOLS_EVENT_DEVICE_SETUP_END]++; /* recorded, or counted as dropped */
        if (c.correlation_id) {
          p->begins_ok[OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN]++;
        }
        occa_tools_device_setup_end(&c, &own_device, OCCA_TOOLS_OK);
        have_device = 1;
      } else {
        /* The second build into a slot loses the publish and is freed. */
        occa_tools_build_begin(&c, &own_device, kernel_names[r % NKERNELS], "k.okl",
                               "{\"occa_tools_tag\": \"x\"}", r & 0xffff);
        att[OCCA_TOOLS_EVENT_BUILD_BEGIN]++;
        att[OCCA_TOOLS_EVENT_BUILD_END]++; /* recorded, or counted as dropped */
        if (c.correlation_id) {
          p->begins_ok[OCCA_TOOLS_EVENT_BUILD_BEGIN]++;
        }
        occa_tools_build_end(&c, &own_kernels[(r >> 4) & 1], OCCA_TOOLS_CACHE_HIT, OCCA_TOOLS_OK);
      }
    } else if (what < 970) { /* tags make every thread remake its kernel decisions */
      occa_tools_tag_kernel(kernel_names[r % NKERNELS], "hot");
    } else if (what < 985 && cross_tag) { /* tag memory that another thread may be using */
      int other = (int)((p->index + 1 + (int)(r % 3)) % nthreads);
      occa_tools_tag_memory((void *)mem_address(other, (int)((r >> 2) % NMEM)), "tagged");
    } else {
      occa_tools_marker("tick");
      att[OCCA_TOOLS_EVENT_MARKER]++;
    }
  }
  while (depth > 0) {
    ot_thread *t = ot_self_tls;
    if (t && t->region_depth > 0 && t->regions[t->region_depth - 1].recorded)
      att[OCCA_TOOLS_EVENT_REGION_POP]++;
    occa_tools_region_pop();
    depth--;
  }
  for (int m = 0; m < NMEM; m++) {
    if (!allocated[m])
      continue;
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
    occa_tools_memory_free_begin(&c, &mem[m]);
    att[OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN]++;
    att[OCCA_TOOLS_EVENT_MEMORY_FREE_END]++; /* recorded, or counted as dropped */
    if (c.correlation_id) {
      p->begins_ok[OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN]++;
    }
    occa_tools_memory_free_end(&c, OCCA_TOOLS_OK);
  }
  ot_thread *t = ot_self_tls;
  if (t) {
    p->tindex = t->index;
    p->pending_dropped = t->dropped; /* drops no DROPPED record reports, unless the exit does */
  }
  return NULL;
}

/* ---- Consumer: the writer's side ------------------------------------------------- */

static int is_begin(unsigned k) {
  switch (k) {
  case OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN:
  case OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN:
  case OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN:
  case OCCA_TOOLS_EVENT_COPY_BEGIN:
  case OCCA_TOOLS_EVENT_BUILD_BEGIN:
  case OCCA_TOOLS_EVENT_RUN_BEGIN:
  case OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN:
  case OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN:
    return 1;
  }
  return 0;
}

static int is_end(unsigned k) {
  switch (k) {
  case OCCA_TOOLS_EVENT_DEVICE_SETUP_END:
  case OCCA_TOOLS_EVENT_MEMORY_ALLOC_END:
  case OCCA_TOOLS_EVENT_MEMORY_FREE_END:
  case OCCA_TOOLS_EVENT_COPY_END:
  case OCCA_TOOLS_EVENT_BUILD_END:
  case OCCA_TOOLS_EVENT_RUN_END:
  case OCCA_TOOLS_EVENT_STREAM_FINISH_END:
  case OCCA_TOOLS_EVENT_DEVICE_FINISH_END:
    return 1;
  }
  return 0;
}

/* What the consumer saw, per runtime thread index. */
typedef struct seen {
  uint64_t decoded[NKINDS];
  uint64_t dropped_reported; /* sum of DROPPED counts */
  uint64_t last_corr, last_ticks, open_corr;
  int defined; /* its DEF_THREAD arrived */
} seen;

static seen by_thread[MAX_THREADS + 2];
static uint64_t defs_seen[8];
static uint64_t run_kernel_ids[64], run_device_ids[64];
static int n_run_kernel_ids, n_run_device_ids;
static uint64_t spans_full, spans_whole, spans_partial, partial_rule2, records_total, flushes_done;

/* Ids defined so far, per definition kind (kind - 64); memory objects are
 * also defined by their recorded allocation (MEMORY_ALLOC_END). */
enum { ID_BITS = 1 << 20 };
static uint8_t defined_ids[8][ID_BITS / 8];

static void define_id(unsigned def_kind, uint64_t id) {
  if (id >= ID_BITS) {
    fail("definition kind %u: id %llu beyond this test's table", def_kind, (unsigned long long)id);
    return;
  }
  defined_ids[def_kind - 64][id / 8] |= (uint8_t)(1u << (id % 8));
}

static void note_id(uint64_t *set, int *n, int cap, uint64_t id) {
  for (int i = 0; i < *n; i++)
    if (set[i] == id)
      return;
  if (*n < cap)
    set[(*n)++] = id;
  else
    fail("more than %d distinct ids where %d slots were shared", cap, cap);
}

static int tolerate_known;
static uint64_t known_late_memory_defs;

static int is_defined(unsigned def_kind, uint64_t id) {
  return id < ID_BITS && (defined_ids[def_kind - 64][id / 8] & (1u << (id % 8)));
}

static void need_def(unsigned def_kind, uint64_t id, const char *what, unsigned kind) {
  if (id == 0 || is_defined(def_kind, id))
    return;
  fail("%s id %llu used by a kind-%u record before its definition", what, (unsigned long long)id,
       kind);
}

/* A memory object that a copy refers to. ot_memory_define used to set
 * m->defined before it queued the definition, so another thread's copy could
 * reach the writer first (README, "Bugs found", 5; fixed in 2614350).
 * --tolerate-known counts such cases instead of failing. */
static void need_memory_def(uint64_t id, unsigned kind) {
  if (id == 0 || is_defined(OT_DEF_MEMORY, id))
    return;
  if (tolerate_known) {
    known_late_memory_defs++;
    return;
  }
  need_def(OT_DEF_MEMORY, id, "memory", kind);
}

static uint8_t defbuf[1 << 20];

static void take_defs(void) {
  for (;;) {
    uint64_t n = ot_take_defs(defbuf, sizeof defbuf, 0);
    if (n == 0)
      return;
    for (uint64_t off = 0; off < n;) {
      unsigned kind = defbuf[off], nargs = defbuf[off + 1];
      uint32_t text_len;
      memcpy(&text_len, defbuf + off + 4, 4);
      uint64_t args[8] = {0};
      if (kind < 64 || kind > 70 || nargs > 6) {
        fail("bad definition entry kind %u nargs %u", kind, nargs);
        return;
      }
      memcpy(args, defbuf + off + 8, 8ull * nargs);
      defs_seen[kind - 64]++;
      if (kind == OT_DEF_THREAD) {
        if (args[0] <= MAX_THREADS + 1)
          by_thread[args[0]].defined = 1;
        need_def(OT_DEF_STRING, args[2], "thread name string", kind);
      } else if (kind != OT_DEF_KERNEL_TAG) {
        define_id(kind, args[0]);
      }
      if (kind == OT_DEF_KERNEL) {
        need_def(OT_DEF_DEVICE, args[1], "device", kind);
        need_def(OT_DEF_STRING, args[2], "kernel name string", kind);
      } else if (kind == OT_DEF_DEVICE) {
        need_def(OT_DEF_STRING, args[1], "device mode string", kind);
      }
      off += 8 + 8ull * nargs + ((text_len + 7u) & ~7u);
    }
  }
}

/* Where the consumer stands in each pool slot's buffer: the state its raw
 * records so far leave (formats/trace/raw.go's RawState, written by rt.h's
 * ot_encode) and the offset the next span must start at. */
typedef struct slot_state {
  uint64_t ticks, corr, next;
  uint64_t prev[64][OT_MAX_ARGS];
} slot_state;
static slot_state *slot_states;
static uint32_t n_slot_states;

static int get_uvarint(const uint8_t *p, uint64_t len, uint64_t *off, uint64_t *v) {
  *v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*off >= len)
      return 0;
    uint8_t c = p[(*off)++];
    *v |= (uint64_t)(c & 0x7f) << shift;
    if (c < 0x80)
      return 1;
  }
  return 0;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Decodes the record at p[*off] after the records st has seen, into kind,
 * ticks and its arguments; 0 when it is malformed. */
static int decode_record(slot_state *st, const uint8_t *p, uint64_t len, uint64_t *off,
                         unsigned *kind, uint64_t *ticks, uint64_t a[OT_MAX_ARGS]) {
  unsigned head = p[(*off)++], k = head & 0x3f;
  if (k == 0 || k >= NKINDS || (k != OCCA_TOOLS_EVENT_FORK && ot_kind_codec[k].nargs == 0))
    return 0;
  const ot_kind_codec_t *c = &ot_kind_codec[k];
  uint64_t v;
  if (!get_uvarint(p, len, off, &v))
    return 0;
  st->ticks += v;
  for (unsigned j = 0; j < c->nargs; j++) {
    unsigned bit = 1u << j;
    if (j + 1 == c->corr) {
      if (head & OT_RAW_C) {
        v = st->corr + ((OT_BEGIN_KINDS >> k) & 1);
      } else {
        if (!get_uvarint(p, len, off, &v))
          return 0;
        v = st->corr + (uint64_t)unzigzag(v);
      }
      st->corr = v;
    } else if (c->times & bit) {
      if (!get_uvarint(p, len, off, &v))
        return 0;
    } else if (head & OT_RAW_S) {
      v = st->prev[k][j];
    } else {
      if (!get_uvarint(p, len, off, &v))
        return 0;
      if (c->ints & bit)
        v = (uint64_t)unzigzag(v);
      st->prev[k][j] = v;
    }
    a[j] = v;
  }
  *kind = k;
  *ticks = st->ticks;
  return 1;
}

static void decode(const ot_span_t *s) {
  if (s->thread == 0 || s->thread > MAX_THREADS + 1) {
    fail("span of thread index %u", s->thread);
    return;
  }
  seen *th = &by_thread[s->thread];
  if (!th->defined)
    fail("records of thread %u before its DEF_THREAD", s->thread);
  if (s->slot >= n_slot_states) {
    uint32_t n = s->slot + 64;
    slot_states = realloc(slot_states, n * sizeof *slot_states);
    if (!slot_states) {
      fail("out of memory");
      return;
    }
    memset(slot_states + n_slot_states, 0, (n - n_slot_states) * sizeof *slot_states);
    n_slot_states = n;
  }
  slot_state *st = &slot_states[s->slot];
  if (s->offset == 0)
    memset(st, 0, sizeof *st);
  else if (s->offset != st->next)
    fail("thread %u: a span of slot %u starts at byte %u, its previous one ended at %llu",
         s->thread, s->slot, s->offset, (unsigned long long)st->next);
  st->next = s->offset + s->len;
  uint32_t counts[64] = {0};
  if (s->counts && (!s->full || s->offset != 0))
    fail("thread %u: span of slot %u at byte %u (full %d) has counts: only whole buffers do",
         s->thread, s->slot, s->offset, s->full);
  for (uint64_t off = 0; off < s->len;) {
    uint64_t at = off, ticks, a[OT_MAX_ARGS] = {0};
    unsigned kind;
    if (!decode_record(st, s->data, s->len, &off, &kind, &ticks, a)) {
      fail("thread %u: malformed record (kind %u) at byte %llu of its span", s->thread,
           s->data[at] & 0x3fu, (unsigned long long)at);
      return;
    }
    records_total++;
    counts[kind]++;
    th->decoded[kind]++;
    if (ticks < th->last_ticks)
      fail("thread %u: ticks went back (%llu after %llu, kind %u)", s->thread,
           (unsigned long long)ticks, (unsigned long long)th->last_ticks, kind);
    th->last_ticks = ticks;
    if (is_begin(kind)) {
      if (a[0] >> 40 != s->thread)
        fail("thread %u: correlation id %#llx carries thread %llu", s->thread,
             (unsigned long long)a[0], (unsigned long long)(a[0] >> 40));
      if (a[0] <= th->last_corr)
        fail("thread %u: correlation id %#llx after %#llx", s->thread, (unsigned long long)a[0],
             (unsigned long long)th->last_corr);
      th->last_corr = a[0];
      th->open_corr = a[0];
    } else if (is_end(kind)) {
      if (a[0] != th->open_corr)
        fail("thread %u: end kind %u carries id %#llx, the open begin has %#llx", s->thread, kind,
             (unsigned long long)a[0], (unsigned long long)th->open_corr);
      th->open_corr = 0;
    }
    switch (kind) {
    case OCCA_TOOLS_EVENT_RUN_BEGIN:
      need_def(OT_DEF_KERNEL, a[1], "kernel", kind);
      need_def(OT_DEF_DEVICE, a[2], "device", kind);
      need_def(OT_DEF_STREAM, a[3], "stream", kind);
      note_id(run_kernel_ids, &n_run_kernel_ids, NKERNELS, a[1]);
      note_id(run_device_ids, &n_run_device_ids, NDEVICES, a[2]);
      break;
    case OCCA_TOOLS_EVENT_REGION_PUSH:
    case OCCA_TOOLS_EVENT_REGION_POP:
    case OCCA_TOOLS_EVENT_MARKER:
      need_def(OT_DEF_STRING, a[0], "string", kind);
      if (a[0] == 0)
        fail("thread %u: kind %u with string id 0", s->thread, kind);
      break;
    case OCCA_TOOLS_EVENT_STREAM_SET:
      need_def(OT_DEF_DEVICE, a[0], "device", kind);
      need_def(OT_DEF_STREAM, a[1], "stream", kind);
      break;
    case OCCA_TOOLS_EVENT_COPY_BEGIN:
      need_memory_def(a[2], kind);
      need_memory_def(a[3], kind);
      need_def(OT_DEF_STREAM, a[5], "stream", kind);
      break;
    case OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN:
      need_def(OT_DEF_DEVICE, a[1], "device", kind);
      need_def(OT_DEF_STRING, a[3], "memory tag string", kind);
      break;
    case OCCA_TOOLS_EVENT_MEMORY_ALLOC_END:
      define_id(OT_DEF_MEMORY, a[1]); /* a recorded allocation defines its object */
      break;
    case OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN:
      need_def(OT_DEF_MEMORY, a[1], "memory", kind);
      break;
    case OCCA_TOOLS_EVENT_BUILD_BEGIN:
      need_def(OT_DEF_DEVICE, a[1], "device", kind);
      need_def(OT_DEF_STRING, a[2], "kernel name string", kind);
      need_def(OT_DEF_STRING, a[3], "source string", kind);
      need_def(OT_DEF_STRING, a[4], "properties string", kind);
      break;
    case OCCA_TOOLS_EVENT_BUILD_END:
      need_def(OT_DEF_KERNEL, a[1], "kernel", kind);
      break;
    case OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN:
      need_def(OT_DEF_STRING, a[1], "device mode string", kind);
      break;
    case OCCA_TOOLS_EVENT_DEVICE_SETUP_END:
      need_def(OT_DEF_DEVICE, a[1], "device", kind);
      break;
    case OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN:
      need_def(OT_DEF_STREAM, a[1], "stream", kind);
      break;
    case OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN:
      need_def(OT_DEF_DEVICE, a[1], "device", kind);
      break;
    case OCCA_TOOLS_EVENT_DEVICE_TIME:
      if (a[0] >> 40 != s->thread || a[0] > th->last_corr)
        fail("thread %u: device time for id %#llx", s->thread, (unsigned long long)a[0]);
      break;
    case OCCA_TOOLS_EVENT_DROPPED:
      if (a[1] != OT_DROP_BUFFER_FULL || a[0] == 0)
        fail("thread %u: DROPPED count %llu reason %llu", s->thread, (unsigned long long)a[0],
             (unsigned long long)a[1]);
      th->dropped_reported += a[0];
      th->open_corr = 0; /* the end of an open begin may be among the dropped */
      break;
    }
  }
  /* What the owner said of a whole buffer at its hand-over is what the
   * writer writes it by (a raw events chunk, not decoded). */
  if (s->counts) {
    spans_whole++;
    for (unsigned k = 0; k < 64; k++)
      if (s->counts[k] != counts[k])
        fail("thread %u: whole buffer of slot %u says %u records of kind %u, holds %u", s->thread,
             s->slot, s->counts[k], k, counts[k]);
    if (s->last_ticks != st->ticks)
      fail("thread %u: whole buffer of slot %u says its last ticks are %llu, its last record's are %llu",
           s->thread, s->slot, (unsigned long long)s->last_ticks, (unsigned long long)st->ticks);
  }
}

/* Spans taken and not yet released: released in order once the definitions
 * they use were taken. */
static ot_span_t pending[4096];
static int npending;

static void process(void) {
  take_defs();
  for (int i = 0; i < npending; i++) {
    decode(&pending[i]);
    ot_host_release(&pending[i]);
  }
  npending = 0;
}

static void add_span(const ot_span_t *s) {
  if (npending == (int)(sizeof pending / sizeof pending[0]))
    process();
  pending[npending++] = *s;
  if (s->full)
    spans_full++;
  else
    spans_partial++;
}

static void take_full_all(void) {
  ot_span_t s;
  while (ot_host_take_full(&s))
    add_span(&s);
}

/* One writer cycle: full buffers, then (periodic) the committed part of live
 * ones. On take_partial's 2 ("a full buffer of this thread is still queued")
 * everything taken so far is written and released first, then the queued full
 * buffers, and take_partial is asked again with the same cursor. Releasing
 * before asking again matters: see tests/bench/README.md. */
static void cycle(int periodic) {
  take_full_all();
  if (periodic) {
    uint32_t cursor = 0;
    for (;;) {
      ot_span_t s;
      int r = ot_host_take_partial(&cursor, &s);
      if (r == 1) {
        add_span(&s);
      } else if (r == 2) {
        partial_rule2++;
        process();
        take_full_all();
        process();
      } else {
        break;
      }
    }
  }
  process();
}

static _Atomic int producers_done, flusher_stop;
static int slow_consumer;

static void *consume(void *arg) {
  (void)arg;
  unsigned n = 0;
  uint64_t done_seq = 0;
  for (;;) {
    int done = atomic_load(&producers_done);
    int wake = ot_host_wait(2);
    uint64_t req = ot_host_flush_requested(); /* what this cycle will have flushed */
    cycle(done || req > done_seq || wake == OT_WAKE_TIMEOUT || (++n % 8) == 0);
    if (req > done_seq) {
      done_seq = req;
      ot_host_flush_done(req);
      flushes_done++;
    }
    if (done)
      break; /* one full cycle after every producer exited */
    if (slow_consumer) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

static void *flusher(void *arg) {
  (void)arg;
  while (!atomic_load(&flusher_stop)) {
    if (occa_tools_flush() != 0)
      fail("occa_tools_flush failed");
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
      i++;
      if (!strcmp(argv[i], "drop"))
        drop_mode = 1;
      else if (strcmp(argv[i], "wait") != 0) {
        fprintf(stderr, "tsan_driver: --mode wait|drop\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      nthreads = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
      ops = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 0);
    } else if (!strcmp(argv[i], "--no-cross-tag")) {
      cross_tag = 0;
    } else if (!strcmp(argv[i], "--tolerate-known")) {
      tolerate_known = 1;
    } else {
      fprintf(stderr, "usage: tsan_driver [--mode wait|drop] [--threads T] [--ops N] [--seed S] [--no-cross-tag] [--tolerate-known]\n");
      return 2;
    }
  }
  if (nthreads < 1 || nthreads > MAX_THREADS || ops < 1) {
    fprintf(stderr, "tsan_driver: bad --threads or --ops\n");
    return 2;
  }
  if (getenv("OCCA_TOOLS_CONFIG")) {
    fprintf(stderr, "tsan_driver: unset OCCA_TOOLS_CONFIG: this test runs without the Go core\n");
    return 2;
  }
  for (int i = 0; i < NNAMES; i++)
    snprintf(names[i], sizeof names[i], "region-%d", i);

  /* What the constructor does (lifecycle.c ot_init), with a fake core. */
  memset(&ot_cfg, 0, sizeof ot_cfg);
  ot_cfg.log_level = OT_LOG_WARN;
  ot_cfg.on_full_wait = drop_mode ? 0 : 1;
  ot_cfg.flush_timeout_ms = 60000;
  /* wait: fewer buffers than threads, so threads wait for the writer; drop:
   * two buffers and a slow writer, so most events are dropped. */
  uint64_t buf = 4096, nbufs = drop_mode ? 2 : (uint64_t)(nthreads * 3 / 4 + 1);
  slow_consumer = drop_mode;
  if (fake_runtime_start(nbufs * buf, buf) != 0) {
    fprintf(stderr, "tsan_driver: runtime set-up failed\n");
    return 2;
  }

  pthread_t consumer, fl;
  pthread_create(&consumer, NULL, consume, NULL);
  pthread_create(&fl, NULL, flusher, NULL);
  for (int i = 0; i < nthreads; i++) {
    prod[i].index = i;
    prod[i].rng = (seed * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(i + 1) * 0xbf58476d1ce4e5b9ull;
    if (!prod[i].rng)
      prod[i].rng = 1;
    if (pthread_create(&prod[i].th, NULL, produce, &prod[i]) != 0) {
      fprintf(stderr, "tsan_driver: pthread_create failed\n");
      return 2;
    }
  }
  for (int i = 0; i < nthreads; i++)
    pthread_join(prod[i].th, NULL); /* each exit hands its last buffer over */
  atomic_store(&flusher_stop, 1);
  pthread_join(fl, NULL);
  atomic_store(&producers_done, 1);
  ot_wake_writer();
  pthread_join(consumer, NULL);

  /* ---- Verification ---- */
  ot_counters_t ctr;
  ot_host_counters(&ctr);
  uint64_t attempted_total = 0, decoded_total = 0, reported_total = 0, pending_total = 0;
  for (int i = 0; i < nthreads; i++) {
    producer *p = &prod[i];
    if (p->tindex == 0 || p->tindex > MAX_THREADS + 1) {
      fail("producer %d has no runtime thread", i);
      continue;
    }
    seen *th = &by_thread[p->tindex];
    uint64_t att = 0, dec = 0;
    for (int k = 1; k < NKINDS; k++) {
      if (k == OCCA_TOOLS_EVENT_DROPPED)
        continue;
      att += p->attempted[k];
      dec += th->decoded[k];
      if (!drop_mode && th->decoded[k] != p->attempted[k])
        fail("thread %u kind %d: %llu records decoded, %llu made", p->tindex, k,
             (unsigned long long)th->decoded[k], (unsigned long long)p->attempted[k]);
      if (drop_mode && th->decoded[k] > p->attempted[k])
        fail("thread %u kind %d: %llu records decoded, only %llu attempted", p->tindex, k,
             (unsigned long long)th->decoded[k], (unsigned long long)p->attempted[k]);
      if (is_begin((unsigned)k) && th->decoded[k] != p->begins_ok[k])
        fail("thread %u kind %d: %llu begins decoded, %llu calls returned an id", p->tindex, k,
             (unsigned long long)th->decoded[k], (unsigned long long)p->begins_ok[k]);
    }
    /* The thread's exit reports its pending drops when a buffer is free
     * (idle threads' buffers are taken back, so one often is). */
    if (p->pending_dropped && dec + th->dropped_reported == att)
      p->pending_dropped = 0;
    if (dec + th->dropped_reported + p->pending_dropped != att)
      fail("thread %u: decoded %llu + dropped %llu (reported) + %llu (pending) != attempted %llu",
           p->tindex, (unsigned long long)dec, (unsigned long long)th->dropped_reported,
           (unsigned long long)p->pending_dropped, (unsigned long long)att);
    attempted_total += att;
    decoded_total += dec;
    reported_total += th->dropped_reported;
    pending_total += p->pending_dropped;
  }
  uint64_t counted = ctr.dropped[OT_DROP_BUFFER_FULL];
  if (reported_total + pending_total != counted)
    fail("drops: %llu reported + %llu pending != %llu counted by the runtime",
         (unsigned long long)reported_total, (unsigned long long)pending_total,
         (unsigned long long)counted);
  for (int r = 0; r < (int)OT_DROP_COUNTERS; r++)
    if (r != OT_DROP_BUFFER_FULL && ctr.dropped[r])
      fail("runtime counted %llu drops of reason %d", (unsigned long long)ctr.dropped[r], r);
  if (!drop_mode && counted != 0)
    fail("wait mode dropped %llu events", (unsigned long long)counted);
  if (drop_mode && counted == 0)
    fail("drop mode dropped nothing: the pool was not small enough to test drops");
  if (spans_whole == 0)
    fail("no whole buffer was handed over: their counts were not tested");
  if (n_run_kernel_ids != NKERNELS)
    fail("launches on %d shared kernel slots carried %d kernel ids", NKERNELS, n_run_kernel_ids);
  if (n_run_device_ids != NDEVICES)
    fail("launches on %d shared device slots carried %d device ids", NDEVICES, n_run_device_ids);
  if (ctr.threads != (uint64_t)nthreads)
    fail("runtime saw %llu threads, %d produced", (unsigned long long)ctr.threads, nthreads);

  printf("tsan_driver: mode=%s threads=%d ops=%d: attempted %llu records, decoded %llu, dropped "
         "%llu (%llu in DROPPED records, %llu pending at thread exit); spans %llu full (%llu whole) "
         "+ %llu partial, take_partial returned 2 %llu times, %llu flushes; defs: %llu strings, %llu "
         "devices, %llu kernels, %llu streams, %llu memory, %llu threads\n",
         drop_mode ? "drop" : "wait", nthreads, ops, (unsigned long long)attempted_total,
         (unsigned long long)decoded_total, (unsigned long long)counted,
         (unsigned long long)reported_total, (unsigned long long)pending_total,
         (unsigned long long)spans_full, (unsigned long long)spans_whole,
         (unsigned long long)spans_partial,
         (unsigned long long)partial_rule2, (unsigned long long)flushes_done,
         (unsigned long long)defs_seen[0], (unsigned long long)defs_seen[1],
         (unsigned long long)defs_seen[2], (unsigned long long)defs_seen[4],
         (unsigned long long)defs_seen[5], (unsigned long long)defs_seen[6]);
  if (known_late_memory_defs)
    printf("tsan_driver: known bug tolerated: %llu copy records used a memory id before its "
           "definition (ot_memory_define)\n",
           (unsigned long long)known_late_memory_defs);
  /* No final flush through a core: stop before the library destructor runs. */
  atomic_store(&ot_state, OT_STATE_INACTIVE);
  if (failures) {
    printf("tsan_driver: %d check(s) FAILED\n", failures);
    return 1;
  }
  printf("tsan_driver: all checks passed\n");
  return 0;
}
