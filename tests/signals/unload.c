/*
 * unload: loads libocca_tools.so.1 with dlopen (as the public header
 * allows), records from threads, dlcloses it, lets the threads exit (their
 * TSD destructors run), then ends as asked:
 *   unload LIBRARY exit    exit(0)
 *   unload LIBRARY signal  raise(SIGTERM) with the default disposition: the
 *                          tool's handler (still mapped) flushes, and the
 *                          process dies of SIGTERM
 *   unload LIBRARY adopt   as signal, but first sets SIGTERM's disposition to
 *                          a handler and back to the default with libc's
 *                          sigaction (the dlopen'ed runtime interposes
 *                          nothing), and waits until the writer's periodic
 *                          check has installed the tool's handler again
 * Prints "unload: threads done" once the threads have exited.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "occa_tools.h"

#define THREADS 4

static int (*marker)(const char *);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int closed;

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++)
    marker("from-thread");
  pthread_mutex_lock(&mu);
  while (!closed)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return NULL; /* the TSD destructor runs now, after dlclose */
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "exit") && strcmp(argv[2], "signal") && strcmp(argv[2], "adopt"))) {
    fprintf(stderr, "usage: unload LIBRARY exit|signal|adopt\n");
    return 2;
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGTERM, &dfl, NULL);

  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "unload: %s\n", dlerror());
    return 2;
  }
  int (*connect)(uint32_t, const char *, occa_tools_api_t *) =
      (int (*)(uint32_t, const char *, occa_tools_api_t *))dlsym(h, "occa_tools_connect");
  marker = (int (*)(const char *))dlsym(h, "occa_tools_marker");
  occa_tools_api_t api = {.size = sizeof api};
  if (!connect || !marker || connect(OCCA_TOOLS_ABI_VERSION, "unload", &api) != 0 || !api.active) {
    fprintf(stderr, "unload: the tool did not start\n");
    return 2;
  }
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, worker, NULL);
  marker("before-dlclose");
  if (dlclose(h) != 0) {
    fprintf(stderr, "unload: dlclose: %s\n", dlerror());
    return 2;
  }
  pthread_mutex_lock(&mu);
  closed = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  printf("unload: threads done\n");
  fflush(stdout);
  if (!strcmp(argv[2], "adopt")) {
    struct sigaction ign, cur;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGTERM, &ign, NULL);
    struct timespec nap = {0, 5000000};
    nanosleep(&nap, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    for (int i = 0; i < 4000; i++) { /* 20 s */
      sigaction(SIGTERM, NULL, &cur);
      if (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)
        break;
      nanosleep(&nap, NULL);
    }
    if (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN) {
      fprintf(stderr, "unload: the tool did not adopt the default disposition\n");
      return 1;
    }
  }
  if (strcmp(argv[2], "exit"))
    raise(SIGTERM);
  exit(0);
}
