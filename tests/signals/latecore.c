/* latecore.c: a stand-in for the tracing core (OCCA_TOOLS_CORE) that makes
 * one thread as it starts running, as the Go runtime may then (a goroutine
 * that blocks in a call to C gets its P handed to a new thread), and leaves
 * SIGCHLD unblocked on it, as Go does on its threads. It records nothing:
 * every event kind is off, and the writer never runs.
 *
 * tests/signals_test.go: that thread must count as the core's, linked and
 * through the preload shim, or SIGCHLD's stand-in takes it for one of the
 * program's and drops the children's signals the kernel gives it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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
