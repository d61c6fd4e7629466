/* latecore.c: a stand-in for the tracing core (OCCA_TOOLS_CORE) that makes
 * three threads as it starts running, as the Go runtime may then (a goroutine
 * that blocks in a call to C gets its P handed to a new thread). It records
 * nothing: every event kind is off, and the writer never runs.
 *
 * tests/signals_test.go:
 *   - idle leaves SIGCHLD unblocked, as Go does on its threads. It must
 *     count as the core's, linked and through the preload shim, or
 *     SIGCHLD's stand-in takes it for one of the program's and drops the
 *     children's signals the kernel gives it.
 *   - late keeps SIGCHLD blocked until the program has installed a handler
 *     of its own, after the stand-in, as a thread starved past the
 *     stand-in's wait would: the mark the stand-in sent it must not reach
 *     that handler.
 *   - preempt sends itself a SIGURG once the program has a SIGURG handler,
 *     as the Go runtime preempts a goroutine: it must not spend the
 *     program's SA_RESETHAND. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ot_internal.h"

#define EXPORT __attribute__((visibility("default")))

static void *idle(void *arg) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
  for (;;)
    pause();
  return arg;
}

/* sig's handler as the kernel holds it, whatever sigaction() says. */
static void *kernel_handler(int sig) {
  void *k[8] = {0}; /* the kernel's struct sigaction starts with the handler */
  syscall(SYS_rt_sigaction, (long)sig, NULL, k, 8L);
  return k[0];
}

static _Atomic int late_started; /* late has read SIG_DFL, before the stand-in goes in */

static void *late(void *arg) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, NULL);
  /* The stand-in goes in, then the program's handler. */
  const struct timespec ms = {0, 1000 * 1000};
  void *seen = kernel_handler(SIGCHLD);
  atomic_store(&late_started, 1);
  for (int changes = 0; changes < 2;) {
    nanosleep(&ms, NULL);
    void *now = kernel_handler(SIGCHLD);
    if (now != seen)
      seen = now, changes++;
  }
  pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
  for (;;)
    pause();
  return arg;
}

/* Once the program has a SIGURG handler, a SIGURG to this thread, as the
 * Go runtime preempts a goroutine. */
static void *preempt(void *arg) {
  sigset_t urg;
  sigemptyset(&urg);
  sigaddset(&urg, SIGURG);
  pthread_sigmask(SIG_UNBLOCK, &urg, NULL);
  const struct timespec ms = {0, 1000 * 1000};
  for (void *h = kernel_handler(SIGURG); h == (void *)SIG_DFL || h == (void *)SIG_IGN; h = kernel_handler(SIGURG))
    nanosleep(&ms, NULL);
  syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)SIGURG);
  for (;;)
    pause();
  return arg;
}

EXPORT int OccaToolsCoreStart(const ot_host_t *host, ot_settings_t *settings) {
  (void)host;
  settings->enabled_mask = 0;
  settings->memory_bytes = 1 << 20;
  settings->buffer_bytes = 64 << 10;
  settings->flush_timeout_ms = 10;
  settings->log_level = 2; /* zerolog's warn: warnings and up, as below */
  settings->trace_fd = -1;
  return 0;
}

EXPORT void OccaToolsCoreRun(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, idle, NULL) == 0)
    pthread_detach(t);
  if (pthread_create(&t, NULL, late, NULL) == 0) {
    pthread_detach(t);
    const struct timespec ms = {0, 1000 * 1000};
    while (!atomic_load(&late_started))
      nanosleep(&ms, NULL);
  }
  if (pthread_create(&t, NULL, preempt, NULL) == 0)
    pthread_detach(t);
}

EXPORT void OccaToolsCoreDecideDevice(const char *mode, int64_t index, const char *props, ot_decision_t *out) {
  (void)mode, (void)index, (void)props;
  memset(out, 0, sizeof *out);
}

EXPORT void OccaToolsCoreDecideKernel(const char *name, const char *props, ot_decision_t *out,
                                      const char **tags_out) {
  (void)name, (void)props;
  memset(out, 0, sizeof *out);
  *tags_out = NULL;
}

EXPORT uint32_t OccaToolsCoreDecideRegion(const char *name) {
  (void)name;
  return 0;
}

EXPORT int OccaToolsCoreMemoryTagSelected(const char *tag) {
  (void)tag;
  return 0;
}

EXPORT void OccaToolsCoreTagKernel(const char *name, const char *tag) { (void)name, (void)tag; }

EXPORT void OccaToolsCoreShutdown(void) {}

EXPORT void OccaToolsCoreLog(int level, const char *msg) {
  if (level >= 2) /* warn, error */
    fprintf(stderr, "occa-tools: %s\n", msg);
}
