/*
 * eventcost: cost of one event on the application thread.
 *
 * An event is one call of occa_tools_run_begin or occa_tools_run_end; the
 * loop makes begin+end pairs on one kernel slot and one device slot and
 * divides the time by 2. One process measures one case (the environment
 * differs between cases); tests/bench/cmd/recordbench runs them all.
 *
 *   eventcost absent             the program as built without the library: each
 *                                event site is OCCA_TOOLS_ENABLED(&api, kind) on an
 *                                api that was never connected
 *   eventcost lib LIBPATH        dlopen LIBPATH, occa_tools_connect, entry points
 *                                from the lookup; calls made unconditionally. The
 *                                environment decides what the library does
 *                                (OCCA_TOOLS_CONFIG unset: no-config; set: recorded
 *                                or filtered). With --floor, also measures the
 *                                floor (rdtsc + 16-byte store into a thread-local
 *                                buffer) in the same process, rep by rep.
 *   eventcost lttng              (built with -DBENCH_LTTNG) an LTTng-UST tracepoint
 *                                with 3 integers and a 20-byte string per event
 *
 * Options: --events N (per repetition, default 1000000), --reps R (default 15),
 * --warmup W (untimed repetitions first, default 2), --cpu C (pin the thread;
 * default: the last CPU; -1: no pinning), --floor.
 *
 * Output, one line per measured series, ns per event of each repetition:
 *   series <name> <ns> <ns> ...
 * "case" and "floor" are the thread's CPU time per event (what the events
 * cost the application thread), "case_wall" and "floor_wall" wall time;
 * "floor_pool" is the floor writing into a 64 MiB ring (the pool's size).
 * plus "info key=value" lines.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "occa_tools.h"

#ifdef BENCH_LTTNG
#define TRACEPOINT_DEFINE
#include "lttng_tp.h"
#endif

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static long events = 1000000, reps = 15, warmup = 2;
static int cpu = -2, with_floor = 0;

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int pinned_reported;

static void pin(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpu == -1)
    return;
  int c = cpu >= 0 ? cpu : (int)(n - 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    perror("eventcost: sched_setaffinity");
  else if (!pinned_reported++)
    printf("info pinned_cpu=%d\n", c);
}

/* ---- Case "absent": the guard a source compiles in, with no tool ---------- */

/* What a source keeps: its api, never connected (occa_tools_connect was not
 * linked in, so enabled_mask stays NULL). Each event site is the guard; the
 * barrier stands for the surrounding code, which a compiler cannot see
 * through, so the guard is re-evaluated at each event as it would be there. */
static occa_tools_api_t absent_api;
static occa_tools_data_t kernel_slot = OCCA_TOOLS_DATA_NONE, device_slot = OCCA_TOOLS_DATA_NONE;
static void (*run_begin)(occa_tools_call_t *, occa_tools_data_t *, const char *,
                         occa_tools_data_t *, occa_tools_data_t *);
static void (*run_end)(occa_tools_call_t *, occa_tools_status_t);
static int (*flush_fn)(void);

static void __attribute__((noinline)) loop_absent(long pairs) {
  for (long i = 0; i < pairs; i++) {
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
    BARRIER();
    if (OCCA_TOOLS_ENABLED(&absent_api, OCCA_TOOLS_EVENT_RUN_BEGIN))
      run_begin(&c, &kernel_slot, "bench_kernel", &device_slot, NULL);
    BARRIER();
    if (OCCA_TOOLS_ENABLED(&absent_api, OCCA_TOOLS_EVENT_RUN_END))
      run_end(&c, OCCA_TOOLS_OK);
  }
}

/* ---- Library cases: unconditional calls through the looked-up pointers ---- */

static void __attribute__((noinline)) loop_lib(long pairs) {
  for (long i = 0; i < pairs; i++) {
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
    run_begin(&c, &kernel_slot, "bench_kernel", &device_slot, NULL);
    run_end(&c, OCCA_TOOLS_OK);
  }
}

/* ---- Floor: the same clock as rt.h (rdtsc) + a 16-byte store -------------- */

typedef struct floor_buf {
  uint8_t *data;
  uint32_t pos, mask;
} floor_buf;
/* Two buffers: the default buffer_size (1 MiB, stays in cache), and the
 * default output.memory (64 MiB, the pool's footprint: its lines are mostly
 * not in cache when written again, as the pool's buffers may not be). */
enum { FLOOR_CAP = 1u << 20, FLOOR_POOL_CAP = 1u << 26 };
static floor_buf floor_small, floor_pool;
static __thread __attribute__((tls_model("initial-exec"))) floor_buf *floor_tls;

static inline uint64_t ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* One event: a call (the library's events are calls too), the clock, a
 * 16-byte record in the thread's buffer, wrapping at its end. */
static void floor_alloc(floor_buf *b, uint32_t cap) {
  b->data = malloc(cap);
  if (!b->data) {
    perror("eventcost: malloc");
    exit(2);
  }
  memset(b->data, 0, cap); /* touched: no page faults when timed */
  b->mask = cap - 1u;
}

static void __attribute__((noinline)) floor_event(unsigned kind) {
  floor_buf *b = floor_tls;
  uint64_t *r = (uint64_t *)(void *)(b->data + b->pos);
  r[0] = ticks();
  r[1] = kind;
  b->pos = (b->pos + 16u) & b->mask;
}

static void __attribute__((noinline)) loop_floor(long pairs) {
  for (long i = 0; i < pairs; i++) {
    floor_event(OCCA_TOOLS_EVENT_RUN_BEGIN);
    floor_event(OCCA_TOOLS_EVENT_RUN_END);
  }
}

#ifdef BENCH_LTTNG
/* ---- LTTng-UST: one tracepoint per event, 3 integers and a 20-byte string -- */
static void __attribute__((noinline)) loop_lttng(long pairs) {
  static const char name[] = "bench_kernel_name_20"; /* 20 bytes */
  for (long i = 0; i < pairs; i++) {
    tracepoint(occa_bench, event, (uint64_t)i, 11, 42, name);
    tracepoint(occa_bench, event, (uint64_t)i, 12, 0, name);
  }
}
#endif

/* ---- Harness ------------------------------------------------------------- */

typedef void (*loop_fn)(long pairs);

/* Each repetition runs on a fresh thread, pinned, that exits at its end: a
 * thread's exit hands its buffer to the writer, so the flush between
 * repetitions never has to take a partial buffer whose predecessor is still
 * queued (see tests/bench/README.md, "take_partial livelock"). */
typedef struct timing {
  double cpu, wall; /* ns per event: the thread's CPU time, and wall time */
} timing;

typedef struct rep_arg {
  loop_fn f;
  timing t, floor_t, floor_pool_t;
} rep_arg;

static timing timed(loop_fn f);
static void loop_floor(long pairs);

static void *rep_thread(void *p) {
  rep_arg *a = p;
  pin();
  if (with_floor) { /* first, while the writer is idle */
    floor_tls = &floor_small;
    a->floor_t = timed(loop_floor);
    floor_tls = &floor_pool;
    a->floor_pool_t = timed(loop_floor);
  }
  a->t = timed(a->f);
  return NULL;
}

/* Both clocks around one repetition. The thread's CPU time is what the
 * events cost the application thread; wall time also counts time the CPU
 * spent on other threads (on a shared 2-CPU machine, often half of it). */
static timing timed(loop_fn f) {
  long pairs = events / 2;
  double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  f(pairs);
  double c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
  timing t = {(c1 - c0) / (double)(pairs * 2), (w1 - w0) / (double)(pairs * 2)};
  return t;
}

static void series(const char *name, const double *v, long n) {
  printf("series %s", name);
  for (long i = 0; i < n; i++)
    printf(" %.3f", v[i]);
  printf("\n");
}

static void *connect_lib(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "eventcost: dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  int (*connect)(uint32_t, const char *, occa_tools_api_t *) =
      (int (*)(uint32_t, const char *, occa_tools_api_t *))dlsym(h, "occa_tools_connect");
  if (!connect) {
    fprintf(stderr, "eventcost: no occa_tools_connect in %s\n", path);
    exit(2);
  }
  occa_tools_api_t api;
  memset(&api, 0, sizeof api);
  api.size = sizeof api;
  if (connect(OCCA_TOOLS_ABI_VERSION, "eventcost", &api) != 0) {
    fprintf(stderr, "eventcost: occa_tools_connect failed\n");
    exit(2);
  }
  *(void **)&run_begin = api.lookup("occa_tools_run_begin");
  *(void **)&run_end = api.lookup("occa_tools_run_end");
  *(void **)&flush_fn = api.lookup("occa_tools_flush");
  if (!run_begin || !run_end || !flush_fn) {
    fprintf(stderr, "eventcost: lookup failed\n");
    exit(2);
  }
  printf("info active=%d\n", api.active);
  /* A device set up and a kernel built, as a source would report them. */
  void (*setup_begin)(occa_tools_call_t *, const char *, int64_t, const char *);
  void (*setup_end)(occa_tools_call_t *, occa_tools_data_t *, occa_tools_status_t);
  void (*build_begin)(occa_tools_call_t *, occa_tools_data_t *, const char *, const char *,
                      const char *, uint64_t);
  void (*build_end)(occa_tools_call_t *, occa_tools_data_t *, occa_tools_cache_t,
                    occa_tools_status_t);
  *(void **)&setup_begin = api.lookup("occa_tools_device_setup_begin");
  *(void **)&setup_end = api.lookup("occa_tools_device_setup_end");
  *(void **)&build_begin = api.lookup("occa_tools_build_begin");
  *(void **)&build_end = api.lookup("occa_tools_build_end");
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  setup_begin(&c, "CUDA", 0, NULL);
  setup_end(&c, &device_slot, OCCA_TOOLS_OK);
  build_begin(&c, &device_slot, "bench_kernel", "bench.okl", NULL, 0);
  build_end(&c, &kernel_slot, OCCA_TOOLS_CACHE_HIT, OCCA_TOOLS_OK);
  return h;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  const char *lib = NULL;
  int i = 2;
  if (strcmp(mode, "lib") == 0) {
    if (argc < 3) {
      fprintf(stderr, "eventcost: lib needs the library's path\n");
      return 2;
    }
    lib = argv[2];
    i = 3;
  }
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--events") && i + 1 < argc)
      events = atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atol(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
      warmup = atol(argv[++i]);
    else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
      cpu = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--floor"))
      with_floor = 1;
    else {
      fprintf(stderr, "eventcost: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (events < 2 || reps < 1 || warmup < 0) {
    fprintf(stderr, "eventcost: bad --events/--reps/--warmup\n");
    return 2;
  }
  events &= ~1L;

  loop_fn f;
  if (!strcmp(mode, "absent")) {
    f = loop_absent;
  } else if (lib) {
    connect_lib(lib);
    f = loop_lib;
#ifdef BENCH_LTTNG
  } else if (!strcmp(mode, "lttng")) {
    f = loop_lttng;
#endif
  } else {
    fprintf(stderr, "usage: eventcost absent|lib LIBPATH"
#ifdef BENCH_LTTNG
                    "|lttng"
#endif
                    " [--events N] [--reps R] [--warmup W] [--cpu C] [--floor]\n");
    return 2;
  }
  double *v = calloc((size_t)reps, sizeof *v), *fv = calloc((size_t)reps, sizeof *fv);
  double *vw = calloc((size_t)reps, sizeof *vw), *fvw = calloc((size_t)reps, sizeof *fvw);
  double *pv = calloc((size_t)reps, sizeof *pv);
  if (with_floor) {
    floor_alloc(&floor_small, FLOOR_CAP);
    floor_alloc(&floor_pool, FLOOR_POOL_CAP);
  }
  for (long r = 0; r < warmup + reps; r++) {
    rep_arg a = {.f = f};
    pthread_t th;
    if (pthread_create(&th, NULL, rep_thread, &a) != 0 || pthread_join(th, NULL) != 0) {
      fprintf(stderr, "eventcost: cannot run a repetition thread\n");
      return 2;
    }
    /* Untimed: the repetition's thread has exited, so its last buffer is
     * handed over; let the writer take everything, so each repetition starts
     * with the buffer pool free (a no-op when the tool is inactive). */
    if (flush_fn && flush_fn() != 0)
      printf("info flush_failed_after_rep=%ld\n", r);
    if (r >= warmup) {
      v[r - warmup] = a.t.cpu;
      vw[r - warmup] = a.t.wall;
      fv[r - warmup] = a.floor_t.cpu;
      fvw[r - warmup] = a.floor_t.wall;
      pv[r - warmup] = a.floor_pool_t.cpu;
    }
  }
  printf("info events_per_rep=%ld reps=%ld warmup=%ld\n", events, reps, warmup);
  printf("info events_total=%ld\n", events * (warmup + reps));
  series("case", v, reps);
  series("case_wall", vw, reps);
  if (with_floor) {
    series("floor", fv, reps);
    series("floor_wall", fvw, reps);
    series("floor_pool", pv, reps);
  }
  fflush(stdout);
  return 0;
}
