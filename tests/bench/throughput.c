/*
 * throughput: sustained recording. T threads each emit R events/s (run
 * begin/end pairs, paced: a burst of B events, then a sleep until the burst's
 * deadline on CLOCK_MONOTONIC) for D seconds, through libocca_tools.so loaded
 * with dlopen. The environment decides whether it traces (OCCA_TOOLS_CONFIG).
 *
 *   throughput LIBPATH [--threads T] [--rate R] [--duration D] [--burst B]
 *
 * Prints "key=value" lines: events emitted (what the threads called; with
 * everything recorded each call is one event), elapsed time, time spent inside
 * bursts (the recording calls themselves), bursts that started late, the
 * application's own CPU time (its threads', app_cpu_s), and the
 * process's peak memory (VmHWM of /proc/self/status) at the end of main and
 * again from a destructor that runs after the library's (after the final
 * flush).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "occa_tools.h"

static long nthreads = 2, burst = 1000;
static double rate = 5e6, duration = 10;

static void (*run_begin)(occa_tools_call_t *, occa_tools_data_t *, const char *,
                         occa_tools_data_t *, occa_tools_data_t *);
static void (*run_end)(occa_tools_call_t *, occa_tools_status_t);
static occa_tools_data_t device_slot = OCCA_TOOLS_DATA_NONE;
static occa_tools_data_t stream_slot = OCCA_TOOLS_DATA_NONE;

typedef struct worker {
  pthread_t th;
  int index;
  occa_tools_data_t kernel;
  uint64_t emitted, late, busy_ns, elapsed_ns, cpu_ns;
} worker;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long vmhwm_kb(void) {
  FILE *f = fopen("/proc/self/status", "re");
  if (!f)
    return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
      break;
  fclose(f);
  return kb;
}

static void *work(void *p) {
  worker *w = p;
  static const char *names[] = {"axpy", "dot", "gemm", "stencil"};
  const char *name = names[w->index % 4];
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* wake on the deadline, not 50 us later */
  long bursts = (long)(rate * duration / (double)burst + 0.5);
  double period_ns = (double)burst / rate * 1e9;
  uint64_t start = mono_ns();
  for (long k = 0; k < bursts; k++) {
    uint64_t t0 = mono_ns();
    for (long i = 0; i < burst / 2; i++) {
      occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
      run_begin(&c, &w->kernel, name, &device_slot, &stream_slot);
      run_end(&c, OCCA_TOOLS_OK);
    }
    uint64_t t1 = mono_ns();
    w->busy_ns += t1 - t0;
    w->emitted += (uint64_t)(burst / 2) * 2;
    uint64_t deadline = start + (uint64_t)((double)(k + 1) * period_ns);
    if (t1 < deadline) {
      struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
      }
    } else {
      w->late++;
    }
  }
  w->elapsed_ns = mono_ns() - start;
  w->cpu_ns = thread_cpu_ns();
  return NULL;
}

__attribute__((destructor)) static void at_exit_hwm(void) {
  /* Runs after libocca_tools.so's destructor (it was loaded after this
   * program started), so this includes the final flush. */
  printf("vmhwm_kb_final=%ld\n", vmhwm_kb());
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: throughput LIBPATH [--threads T] [--rate R] [--duration D] [--burst B]\n");
    return 2;
  }
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      nthreads = atol(argv[++i]);
    else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
      rate = atof(argv[++i]);
    else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
      duration = atof(argv[++i]);
    else if (!strcmp(argv[i], "--burst") && i + 1 < argc)
      burst = atol(argv[++i]);
    else {
      fprintf(stderr, "throughput: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (nthreads < 1 || burst < 2 || rate <= 0 || duration <= 0) {
    fprintf(stderr, "throughput: bad arguments\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "throughput: dlopen %s: %s\n", argv[1], dlerror());
    return 2;
  }
  int (*connect)(uint32_t, const char *, occa_tools_api_t *);
  *(void **)&connect = dlsym(h, "occa_tools_connect");
  occa_tools_api_t api;
  memset(&api, 0, sizeof api);
  api.size = sizeof api;
  if (!connect || connect(OCCA_TOOLS_ABI_VERSION, "throughput", &api) != 0) {
    fprintf(stderr, "throughput: occa_tools_connect failed\n");
    return 2;
  }
  *(void **)&run_begin = api.lookup("occa_tools_run_begin");
  *(void **)&run_end = api.lookup("occa_tools_run_end");
  void (*setup_begin)(occa_tools_call_t *, const char *, int64_t, const char *);
  void (*setup_end)(occa_tools_call_t *, occa_tools_data_t *, occa_tools_status_t);
  void (*stream_create)(occa_tools_data_t *, occa_tools_data_t *);
  *(void **)&setup_begin = api.lookup("occa_tools_device_setup_begin");
  *(void **)&setup_end = api.lookup("occa_tools_device_setup_end");
  *(void **)&stream_create = api.lookup("occa_tools_stream_create");
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  setup_begin(&c, "CUDA", 0, NULL);
  setup_end(&c, &device_slot, OCCA_TOOLS_OK);
  stream_create(&device_slot, &stream_slot);
  printf("active=%d\n", api.active);

  worker *ws = calloc((size_t)nthreads, sizeof *ws);
  uint64_t t0 = mono_ns();
  for (long i = 0; i < nthreads; i++) {
    ws[i].index = (int)i;
    if (pthread_create(&ws[i].th, NULL, work, &ws[i]) != 0) {
      fprintf(stderr, "throughput: pthread_create failed\n");
      return 2;
    }
  }
  uint64_t emitted = 0, late = 0, busy = 0, bursts = 0, app_cpu = 0;
  for (long i = 0; i < nthreads; i++) {
    pthread_join(ws[i].th, NULL);
    emitted += ws[i].emitted;
    late += ws[i].late;
    busy += ws[i].busy_ns;
    app_cpu += ws[i].cpu_ns;
    bursts += ws[i].emitted / (uint64_t)(burst / 2 * 2);
    printf("thread%ld_emitted=%llu thread%ld_elapsed_s=%.3f thread%ld_rate=%.0f\n", i,
           (unsigned long long)ws[i].emitted, i, (double)ws[i].elapsed_ns / 1e9, i,
           (double)ws[i].emitted / ((double)ws[i].elapsed_ns / 1e9));
  }
  uint64_t wall = mono_ns() - t0;
  printf("events_emitted=%llu\n", (unsigned long long)emitted);
  /* The application's CPU (the emitting threads and main): the rest of the
   * process's CPU time is the tool's writer and the Go runtime. */
  printf("app_cpu_s=%.3f\n", (double)(app_cpu + thread_cpu_ns()) / 1e9);
  printf("elapsed_s=%.3f\n", (double)wall / 1e9);
  printf("bursts=%llu late_bursts=%llu\n", (unsigned long long)bursts, (unsigned long long)late);
  printf("busy_ns_per_event=%.2f\n", (double)busy / (double)emitted);
  printf("vmhwm_kb_main=%ld\n", vmhwm_kb());
  fflush(stdout);
  return 0;
}
