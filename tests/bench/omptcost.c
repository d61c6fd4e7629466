/*
 * omptcost: cost of one OMPT event recorded by the runtime's OMPT tool, on
 * the calling thread, without an OpenMP runtime: it plays libomp's part.
 *
 *   OCCA_TOOLS_CONFIG=scope-all.toml omptcost LIBPATH [EVENTS]
 *
 * dlopens LIBPATH (libocca_tools.so.1), calls its ompt_start_tool and
 * initialize with a lookup whose ompt_set_callback keeps the callbacks, opens
 * a parallel region and an implicit task as libomp would, then times loops
 * of callback pairs in the same process, rep by rep (thread CPU time, median
 * of 15 reps):
 *   floor       an empty function called through a pointer, twice per pair
 *   work        work begin/end (2 events)
 *   sync        sync region wait begin/end (2 events)
 *   task        task create + task schedule (2 events)
 * and prints "series NAME ns-per-event" lines. tests/bench/cmd/ompbench
 * runs it and compares with the 30 ns target.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../runtime/src/ompt_abi.h"

static ompt_interface_fn_t callbacks[64];

static int set_callback(int event, ompt_interface_fn_t fn) {
  if (event <= 0 || event >= 64)
    return ompt_set_error;
  callbacks[event] = fn;
  return 5; /* ompt_set_always */
}

static ompt_interface_fn_t lookup(const char *name) {
  return strcmp(name, "ompt_set_callback") == 0 ? (ompt_interface_fn_t)set_callback : NULL;
}

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void empty(int a, int b, ompt_data_t *c, ompt_data_t *d, uint64_t e, const void *f) {
  (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
  __asm__ __volatile__("" ::: "memory");
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { REPS = 15 };

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: omptcost LIBPATH [EVENTS]\n");
    return 2;
  }
  long pairs = (argc > 2 ? atol(argv[2]) : 2000000) / 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "omptcost: %s\n", dlerror());
    return 1;
  }
  ompt_start_tool_result_t *(*start)(unsigned, const char *) =
      (ompt_start_tool_result_t * (*)(unsigned, const char *)) dlsym(lib, "ompt_start_tool");
  ompt_start_tool_result_t *tool = start ? start(201611, "omptcost") : NULL;
  if (!tool || !tool->initialize(lookup, 0, &tool->tool_data)) {
    fprintf(stderr, "omptcost: the tool declined (is OCCA_TOOLS_CONFIG set, with scope = \"all\"?)\n");
    return 1;
  }
  ompt_callback_parallel_begin_t parallel_begin = (ompt_callback_parallel_begin_t)callbacks[ompt_callback_parallel_begin];
  ompt_callback_implicit_task_t implicit_task = (ompt_callback_implicit_task_t)callbacks[ompt_callback_implicit_task];
  ompt_callback_work_t work = (ompt_callback_work_t)callbacks[ompt_callback_work];
  ompt_callback_sync_region_t wait = (ompt_callback_sync_region_t)callbacks[ompt_callback_sync_region_wait];
  ompt_callback_task_create_t create = (ompt_callback_task_create_t)callbacks[ompt_callback_task_create];
  ompt_callback_task_schedule_t schedule = (ompt_callback_task_schedule_t)callbacks[ompt_callback_task_schedule];
  if (!parallel_begin || !implicit_task || !work || !wait || !create || !schedule) {
    fprintf(stderr, "omptcost: a callback was not registered\n");
    return 1;
  }
  /* A region and its implicit task, as libomp opens them. */
  ompt_data_t initial = {0}, par = {0}, task = {0};
  implicit_task(ompt_scope_begin, NULL, &initial, 1, 1, ompt_task_initial);
  parallel_begin(&initial, NULL, &par, 1, 0, NULL);
  implicit_task(ompt_scope_begin, &par, &task, 1, 0, ompt_task_implicit);

  void (*volatile floor_fn)(int, int, ompt_data_t *, ompt_data_t *, uint64_t, const void *) = empty;
  double t[4][REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = cpu_ns();
    for (long i = 0; i < pairs; i++) {
      floor_fn(1, ompt_scope_begin, &par, &task, 8, NULL);
      floor_fn(1, ompt_scope_end, &par, &task, 8, NULL);
    }
    double t1 = cpu_ns();
    for (long i = 0; i < pairs; i++) {
      work(1, ompt_scope_begin, &par, &task, 8, NULL);
      work(1, ompt_scope_end, &par, &task, 8, NULL);
    }
    double t2 = cpu_ns();
    for (long i = 0; i < pairs; i++) {
      wait(3, ompt_scope_begin, &par, &task, NULL);
      wait(3, ompt_scope_end, &par, &task, NULL);
    }
    double t3 = cpu_ns();
    for (long i = 0; i < pairs; i++) {
      ompt_data_t child = {0};
      create(&task, NULL, &child, ompt_task_explicit, 0, NULL);
      schedule(&child, 1, &task);
    }
    double t4 = cpu_ns();
    t[0][r] = (t1 - t0) / (2.0 * pairs);
    t[1][r] = (t2 - t1) / (2.0 * pairs);
    t[2][r] = (t3 - t2) / (2.0 * pairs);
    t[3][r] = (t4 - t3) / (2.0 * pairs);
  }
  implicit_task(ompt_scope_end, NULL, &task, 1, 0, ompt_task_implicit);
  const char *names[4] = {"floor", "work", "sync", "task"};
  for (int s = 0; s < 4; s++) {
    qsort(t[s], REPS, sizeof t[s][0], cmp);
    printf("series %s %.2f\n", names[s], t[s][REPS / 2]);
  }
  return 0;
}
