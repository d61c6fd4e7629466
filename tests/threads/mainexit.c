/* mainexit: a program whose main thread leaves with pthread_exit while its
 * workers still run; the process ends (exit status 0) when the last worker
 * returns (tests/threads_test.go).
 *
 *   mainexit N K   N workers, each waits 50 ms, then enters and leaves a
 *                  region K times; main does the same, without waiting,
 *                  before it leaves.
 *
 * The region calls go through dlsym, so that the -plain build runs without
 * the runtime (untraced, or under the preload shim). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int (*push)(const char *);
static int (*pop)(void);
static long pairs;

static void regions(const char *name) {
  for (long i = 0; i < pairs && push && pop; i++) {
    push(name);
    pop();
  }
}

static void *worker(void *arg) {
  (void)arg;
  const struct timespec wait = {0, 50 * 1000 * 1000};
  nanosleep(&wait, NULL);
  regions("worker");
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: mainexit N K\n");
    return 2;
  }
  int n = atoi(argv[1]);
  pairs = atol(argv[2]);
  *(void **)&push = dlsym(RTLD_DEFAULT, "occa_tools_region_push");
  *(void **)&pop = dlsym(RTLD_DEFAULT, "occa_tools_region_pop");
  for (int i = 0; i < n; i++) {
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0) {
      perror("pthread_create");
      return 1;
    }
    pthread_detach(th);
  }
  regions("main");
  printf("mainexit: threads=%d pairs=%ld\n", n, pairs);
  fflush(stdout);
  pthread_exit(NULL);
}
