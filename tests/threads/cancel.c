/* cancel: threads cancelled asynchronously while they record
 * (tests/threads_test.go).
 *
 *   cancel R   R rounds of 4 threads that allow asynchronous cancellation
 *              (PTHREAD_CANCEL_ASYNCHRONOUS), record up to 300 regions
 *              and markers under many names and wait, cancelled by main
 *              as soon as they are made, and joined; then main records
 *              one region and prints what it did.
 *
 * Untraced the calls do nothing, so the program is fine; traced, a thread
 * cancelled inside a runtime lock or inside malloc hung the process. The
 * region calls go through dlsym, so that the -plain build runs without the
 * runtime (untraced, or under the preload shim). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { THREADS = 4, NAMES = 512, CALLS = 100 };
static int (*push)(const char *);
static int (*pop)(void);
static int (*marker)(const char *);
static char names[NAMES][16];

static void *worker(void *arg) {
  unsigned first = (unsigned)(size_t)arg;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  for (unsigned i = first; i < first + CALLS && push && pop && marker; i++) {
    push(names[i % NAMES]);
    marker(names[(i * 7) % NAMES]);
    pop();
  }
  for (;;)
    pause();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cancel R\n");
    return 2;
  }
  long rounds = atol(argv[1]);
  *(void **)&push = dlsym(RTLD_DEFAULT, "occa_tools_region_push");
  *(void **)&pop = dlsym(RTLD_DEFAULT, "occa_tools_region_pop");
  *(void **)&marker = dlsym(RTLD_DEFAULT, "occa_tools_marker");
  for (int i = 0; i < NAMES; i++)
    snprintf(names[i], sizeof names[i], "name-%d", i);
  for (long r = 0; r < rounds; r++) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
      pthread_create(&t[i], NULL, worker, (void *)(size_t)(r * THREADS + i));
    for (int i = 0; i < THREADS; i++)
      pthread_cancel(t[i]);
    for (int i = 0; i < THREADS; i++)
      pthread_join(t[i], NULL);
  }
  if (push && pop) {
    push("after");
    pop();
  }
  printf("cancel: rounds=%ld\n", rounds);
  return 0;
}
