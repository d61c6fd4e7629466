/* endings: a program that ends, or replaces itself, without exit() or
 * with exit() from several threads at once (tests/endings_test.go).
 *
 *   endings K exec        K regions "before", then execl of itself "second"
 *   endings K second      K regions "after", then exit 0
 *   endings K execfail    K regions "before", an execv that fails (no such
 *                         file), K regions "after", then exit 0
 *   endings K _exit       K regions, then _exit(3)
 *   endings K _Exit       K regions, then _Exit(4)
 *   endings K quick_exit  K regions, then quick_exit(5)
 *   endings K threads     K regions "before", then 4 threads that each
 *                         record K regions "worker", meet, and call exit(6)
 *
 * The region calls go through dlsym, so that the -plain build runs without
 * the runtime (untraced, or under the preload shim). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int (*push)(const char *);
static int (*pop)(void);

static void regions(const char *name, long k) {
  for (long i = 0; i < k && push && pop; i++) {
    push(name);
    pop();
  }
}

enum { THREADS = 4 };
static pthread_barrier_t met;
static long worker_regions;

static void *worker(void *arg) {
  (void)arg;
  regions("worker", worker_regions);
  pthread_barrier_wait(&met);
  exit(6);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: endings K exec|second|execfail|_exit|_Exit|quick_exit|threads\n");
    return 2;
  }
  long k = atol(argv[1]);
  const char *how = argv[2];
  *(void **)&push = dlsym(RTLD_DEFAULT, "occa_tools_region_push");
  *(void **)&pop = dlsym(RTLD_DEFAULT, "occa_tools_region_pop");
  if (strcmp(how, "second") == 0) {
    regions("after", k);
    printf("endings: second\n");
    return 0;
  }
  regions("before", k);
  printf("endings: %s\n", how);
  fflush(stdout);
  if (strcmp(how, "exec") == 0) {
    execl("/proc/self/exe", argv[0], argv[1], "second", (char *)NULL);
    perror("execl");
    return 1;
  }
  if (strcmp(how, "execfail") == 0) {
    char *none[] = {"none", NULL};
    if (execv("/nonexistent/endings", none) == 0)
      return 1;
    regions("after", k);
    printf("endings: went on\n");
    return 0;
  }
  if (strcmp(how, "_exit") == 0)
    _exit(3);
  if (strcmp(how, "_Exit") == 0)
    _Exit(4);
  if (strcmp(how, "quick_exit") == 0)
    quick_exit(5);
  if (strcmp(how, "threads") == 0) {
    worker_regions = k;
    pthread_barrier_init(&met, NULL, THREADS);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
      pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
      pthread_join(t[i], NULL);
    return 1; /* not reached: a worker's exit() ends the process */
  }
  fprintf(stderr, "endings: unknown ending %s\n", how);
  return 2;
}
