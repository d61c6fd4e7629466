/* programs.c: OpenMP programs whose OMPT events tests/openmp checks exactly.
 * Built with clang -fopenmp (LLVM's libomp, which has OMPT) and linked
 * against libocca_tools, so its ompt_start_tool is found.
 *
 *   omp-programs parallel-for T N   a parallel for over N iterations on T
 *                                   threads, then an explicit barrier in a
 *                                   parallel region of T threads
 *   omp-programs nested T U         a parallel region of T threads, each
 *                                   thread opening one of U threads
 *                                   (needs OMP_MAX_ACTIVE_LEVELS >= 2)
 *   omp-programs diamond            4 tasks: a; b and c after a; d after b, c
 *   omp-programs chain N            N tasks, each after the previous (inout)
 *   omp-programs kernel T           a parallel region of T threads outside any
 *                                   launch, then one inside a launch reported
 *                                   through the occa-tools ABI ("spmv")
 *   omp-programs loops T R N        R parallel fors of N iterations on T
 *                                   threads, timed (the benchmark)
 * A last argument -no-pause skips the OpenMP pause at exit (see finish).
 * Built with -DPLAIN it does not link libocca_tools (no kernel mode): the
 * tool is then loaded through OMP_TOOL_LIBRARIES.
 *
 * Each prints one line of results ("ok ..."); the tests count the events. */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PLAIN
#include "occa_tools.h"
#endif

static double work(int i) { return (double)(i % 7) * 0.5; }

static int parallel_for(int threads, int n) {
  double sum = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : sum) schedule(static)
  for (int i = 0; i < n; i++)
    sum += work(i);
  int arrived = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp atomic
    arrived++;
#pragma omp barrier
  }
  printf("ok sum=%g arrived=%d\n", sum, arrived);
  return 0;
}

static int nested(int outer, int inner) {
  int count = 0;
#pragma omp parallel num_threads(outer)
  {
#pragma omp parallel num_threads(inner)
    {
#pragma omp atomic
      count++;
    }
  }
  printf("ok count=%d\n", count);
  return count == outer * inner ? 0 : 1;
}

static int diamond(void) {
  int a = 0, b = 0, c = 0, d = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(out : a) shared(a)
    a = 1;
#pragma omp task depend(in : a) depend(out : b) shared(a, b)
    b = a + 1;
#pragma omp task depend(in : a) depend(out : c) shared(a, c)
    c = a + 2;
#pragma omp task depend(in : b, c) depend(out : d) shared(b, c, d)
    d = b + c;
  }
  printf("ok d=%d\n", d);
  return d == 5 ? 0 : 1;
}

static int chain(int n) {
  int x = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < n; i++) {
#pragma omp task depend(inout : x) shared(x)
      x = x * 2 + 1;
    }
  }
  printf("ok x=%d\n", x);
  return 0;
}

#ifndef PLAIN
static int kernel(int threads) {
  occa_tools_api_t api = {sizeof api, 0, 0, NULL, NULL};
  occa_tools_connect(OCCA_TOOLS_ABI_VERSION, "omp-programs", &api);
  double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  sum += 1;
  static occa_tools_data_t device = OCCA_TOOLS_DATA_NONE, k = OCCA_TOOLS_DATA_NONE;
  occa_tools_call_t setup = OCCA_TOOLS_CALL_INIT, run = OCCA_TOOLS_CALL_INIT;
  occa_tools_device_setup_begin(&setup, "OpenMP", -1, NULL);
  occa_tools_device_setup_end(&setup, &device, OCCA_TOOLS_OK);
  occa_tools_run_begin(&run, &k, "spmv", &device, NULL);
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  sum += 1;
  occa_tools_run_end(&run, OCCA_TOOLS_OK);
  printf("ok sum=%g launch=%llu\n", sum, (unsigned long long)run.correlation_id);
  return 0;
}
#endif

static int loops(int threads, int rounds, int n) {
  double *x = calloc((size_t)n, sizeof *x);
  if (!x)
    return 1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < rounds; r++) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < n; i++)
      x[i] = x[i] * 0.5 + work(i + r);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
  printf("ok ns=%.0f check=%g\n", ns, x[n / 2]);
  free(x);
  return 0;
}

/* LLVM's libomp reports a worker's implicit-barrier end and implicit task
 * end when the worker is next woken; a hard pause shuts the team down, so
 * they (and thread ends) are reported before exit. Without it they are
 * pending when the program ends, which converters must cope with: the
 * -no-pause flag (last argument) leaves them so. */
static int finish(int status, int pause) {
  if (pause)
    omp_pause_resource_all(omp_pause_hard);
  return status;
}

static int run(int argc, char **argv);

int main(int argc, char **argv) {
  int pause = !(argc > 1 && !strcmp(argv[argc - 1], "-no-pause"));
  return finish(run(argc - !pause, argv), pause);
}

static int run(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0,
      c = argc > 4 ? atoi(argv[4]) : 0;
  if (!strcmp(mode, "parallel-for") && a > 0 && b > 0)
    return parallel_for(a, b);
  if (!strcmp(mode, "nested") && a > 0 && b > 0)
    return nested(a, b);
  if (!strcmp(mode, "diamond"))
    return diamond();
  if (!strcmp(mode, "chain") && a > 0)
    return chain(a);
#ifndef PLAIN
  if (!strcmp(mode, "kernel") && a > 0)
    return kernel(a);
#endif
  if (!strcmp(mode, "loops") && a > 0 && b > 0 && c > 0)
    return loops(a, b, c);
  fprintf(stderr, "usage: omp-programs parallel-for T N | nested T U | diamond | chain N | kernel T | loops T R N\n");
  return 2;
}
