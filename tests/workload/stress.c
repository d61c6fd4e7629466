/*
 * stress: programs for the runtime's buffer and accounting limits, each
 * emitting an exact, known number of events (tests/stress_test.go).
 *
 *   stress once N [IDLE_MS]  N threads each record one marker "once", then
 *                            stay alive, recording nothing, until all N
 *                            have recorded theirs and IDLE_MS more passed.
 *   stress steady N E        N threads each record E markers "steady",
 *                            pausing 1 ms after every 100.
 *   stress deep D            the main thread pushes D nested regions "deep",
 *                            then pops them all.
 *   stress reentry K         a worker records markers "work" in a loop; the
 *                            main thread signals it K times (SIGUSR1), and
 *                            its handler records a marker "handler" and a
 *                            failed allocation (begin and end): 3 events
 *                            (occa_tools.h forbids that: the runtime must
 *                            count the calls that interrupt one of its own).
 *   stress devtime           one recorded launch and its device time, then
 *                            device times for ids that are no launch's.
 *   stress noslot N          N allocations ended without a slot (no free can
 *                            name them): prints how much the heap grew.
 *
 * Each prints one line "stress: ..." with what it did.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "occa_tools.h"

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- once -------------------------------------------------------------------- */

static atomic_int emitted, release_all;

static void *once_thread(void *arg) {
  (void)arg;
  occa_tools_marker("once");
  atomic_fetch_add(&emitted, 1);
  while (!atomic_load(&release_all))
    sleep_ms(1);
  return NULL;
}

static void once(int n, int idle_ms) {
  pthread_t *th = calloc((size_t)n, sizeof *th);
  for (int i = 0; i < n; i++)
    if (pthread_create(&th[i], NULL, once_thread, NULL) != 0) {
      fprintf(stderr, "stress: cannot create thread %d\n", i);
      exit(2);
    }
  while (atomic_load(&emitted) < n)
    sleep_ms(1);
  sleep_ms(idle_ms);
  atomic_store(&release_all, 1);
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  free(th);
  printf("stress: once threads=%d\n", n);
}

/* ---- steady ------------------------------------------------------------------ */

static int steady_events;

static void *steady_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < steady_events; i++) {
    occa_tools_marker("steady");
    if (i % 100 == 99)
      sleep_ms(1);
  }
  return NULL;
}

static void steady(int n, int e) {
  steady_events = e;
  pthread_t *th = calloc((size_t)n, sizeof *th);
  for (int i = 0; i < n; i++)
    if (pthread_create(&th[i], NULL, steady_thread, NULL) != 0) {
      fprintf(stderr, "stress: cannot create thread %d\n", i);
      exit(2);
    }
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  free(th);
  printf("stress: steady threads=%d events=%d\n", n, e);
}

/* ---- deep -------------------------------------------------------------------- */

static void deep(int d) {
  for (int i = 0; i < d; i++)
    occa_tools_region_push("deep");
  for (int i = 0; i < d; i++)
    occa_tools_region_pop();
  printf("stress: deep depth=%d\n", d);
}

/* ---- reentry ----------------------------------------------------------------- */

static atomic_int handler_calls, handler_refused, worker_ready, worker_stop;
/* The address of a memory object main allocates, which the handler tags. */
#define TAGGED ((const void *)0x1000)
static atomic_long worker_markers;

/* Three events: a marker, and a failed allocation's begin and end (a call
 * that creates an object, whose end must be counted with its begin); and a
 * control call, which a handler that interrupted a call is refused (it
 * would take the string table's lock). */
static void on_usr1(int sig) {
  (void)sig;
  occa_tools_marker("handler");
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_memory_alloc_begin(&c, NULL, 8, NULL);
  occa_tools_memory_alloc_end(&c, NULL, NULL, OCCA_TOOLS_FAILED);
  if (occa_tools_tag_memory(TAGGED, "handler") != 0)
    atomic_fetch_add(&handler_refused, 1);
  atomic_fetch_add(&handler_calls, 1);
}

/* The worker's markers are bounded, so the trace stays small however slowly
 * the signals go round on a loaded machine (the test reads every event). */
enum { WORKER_MAX = 2000000 };
static atomic_int worker_done;

static void *reentry_worker(void *arg) {
  (void)arg;
  occa_tools_marker("work"); /* the thread's state exists before any signal */
  long n = 1;
  atomic_store(&worker_ready, 1);
  while (!atomic_load(&worker_stop) && n < WORKER_MAX) {
    occa_tools_marker("work");
    n++;
  }
  atomic_store(&worker_markers, n);
  atomic_store(&worker_done, 1);
  return NULL;
}

static void reentry(int k) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  occa_tools_data_t slot = OCCA_TOOLS_DATA_NONE;
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_memory_alloc_begin(&c, NULL, 64, NULL);
  occa_tools_memory_alloc_end(&c, &slot, TAGGED, OCCA_TOOLS_OK);
  pthread_t w;
  pthread_create(&w, NULL, reentry_worker, NULL);
  while (!atomic_load(&worker_ready))
    sleep_ms(1);
  for (int i = 0; i < k && !atomic_load(&worker_done); i++) {
    int before = atomic_load(&handler_calls);
    pthread_kill(w, SIGUSR1);
    /* One at a time, so none is merged; a signal that reached the worker
     * as it ended may never run. */
    while (atomic_load(&handler_calls) == before && !atomic_load(&worker_done))
      sched_yield();
  }
  atomic_store(&worker_stop, 1);
  pthread_join(w, NULL);
  printf("stress: reentry handler_calls=%d worker_markers=%ld refused=%d\n",
         atomic_load(&handler_calls), atomic_load(&worker_markers), atomic_load(&handler_refused));
}

/* ---- devtime ----------------------------------------------------------------- */

static void devtime(void) {
  occa_tools_data_t dev = OCCA_TOOLS_DATA_NONE, kern = OCCA_TOOLS_DATA_NONE;
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_device_setup_begin(&c, "CUDA", 0, "{}");
  occa_tools_device_setup_end(&c, &dev, OCCA_TOOLS_OK);
  c = (occa_tools_call_t)OCCA_TOOLS_CALL_INIT;
  occa_tools_build_begin(&c, &dev, "k", "k.okl", "{}", 1);
  occa_tools_build_end(&c, &kern, OCCA_TOOLS_CACHE_MISS, OCCA_TOOLS_OK);
  c = (occa_tools_call_t)OCCA_TOOLS_CALL_INIT;
  occa_tools_run_begin(&c, &kern, "k", &dev, NULL);
  uint64_t launch = c.correlation_id;
  occa_tools_run_end(&c, OCCA_TOOLS_OK);
  occa_tools_kernel_device_time(launch, 1000, 2000); /* the last id handed out */
  c = (occa_tools_call_t)OCCA_TOOLS_CALL_INIT;
  occa_tools_device_finish_begin(&c, &dev);
  uint64_t finish = c.correlation_id;
  occa_tools_device_finish_end(&c);
  occa_tools_kernel_device_time(finish, 1000, 2000);        /* a call, not a launch */
  occa_tools_kernel_device_time(launch + 1000, 1000, 2000); /* its thread is not there yet */
  occa_tools_kernel_device_time((99ull << 40) | 1, 1000, 2000); /* no such thread */
  occa_tools_kernel_device_time(12345, 1000, 2000);         /* made up */
  printf("stress: devtime launch=%d\n", launch != 0);
}

/* ---- noslot ------------------------------------------------------------------ */

static void noslot(int n) {
  struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < n; i++) {
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
    occa_tools_memory_alloc_begin(&c, NULL, 64, NULL);
    occa_tools_memory_alloc_end(&c, NULL, (const void *)(uintptr_t)(0x10000 + 64u * (unsigned)i),
                                OCCA_TOOLS_OK);
  }
  struct mallinfo2 after = mallinfo2();
  printf("stress: noslot n=%d heap_growth=%zu\n", n, after.uordblks - before.uordblks);
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "once"))
    once(atoi(argv[2]), argc >= 4 ? atoi(argv[3]) : 0);
  else if (argc >= 4 && !strcmp(argv[1], "steady"))
    steady(atoi(argv[2]), atoi(argv[3]));
  else if (argc >= 3 && !strcmp(argv[1], "deep"))
    deep(atoi(argv[2]));
  else if (argc >= 3 && !strcmp(argv[1], "reentry"))
    reentry(atoi(argv[2]));
  else if (argc >= 2 && !strcmp(argv[1], "devtime"))
    devtime();
  else if (argc >= 3 && !strcmp(argv[1], "noslot"))
    noslot(atoi(argv[2]));
  else {
    fprintf(stderr, "usage: stress once N [IDLE_MS] | steady N E | deep D | reentry K | devtime | noslot N\n");
    return 2;
  }
  return 0;
}
