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
 *     program's SA_RESETHAND.
 *
 * As the Go runtime does, it sets a SIGURG handler of its own as it loads
 * (go_urg), and the preemptions must reach it: one sent to the thread in
 * the start (the program's, in a call into the core), preempt's, and one
 * sent to preempt at the shutdown, after the program's handler reset
 * itself. With LATECORE_PREEMPTS=FILE set, the shutdown writes there how
 * many it took ("preempts N"). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ot_internal.h"

#define EXPORT __attribute__((visibility("default")))

/* Blocks or unblocks (how) sig in the calling thread. */
static void mask_one(int how, int sig) {
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(how, &one, NULL);
}

static void *idle(void *arg) {
  mask_one(SIG_UNBLOCK, SIGCHLD);
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
  mask_one(SIG_BLOCK, SIGCHLD);
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
  mask_one(SIG_UNBLOCK, SIGCHLD);
  for (;;)
    pause();
  return arg;
}

static _Atomic int preempts;
static void go_urg(int sig, siginfo_t *info, void *ctx) { (void)sig, (void)info, (void)ctx, preempts++; }

__attribute__((constructor)) static void as_go_loads(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = go_urg;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigfillset(&sa.sa_mask);
  sigaction(SIGURG, &sa, NULL);
}

/* Sends thread tid a SIGURG, as the Go runtime preempts it, and waits up
 * to 1 s for go_urg to take it. */
static void preempt_thread(pid_t tid) {
  int n = atomic_load(&preempts) + 1;
  syscall(SYS_tgkill, (long)getpid(), (long)tid, (long)SIGURG);
  const struct timespec ms = {0, 1000 * 1000};
  for (int i = 0; i < 1000 && atomic_load(&preempts) < n; i++)
    nanosleep(&ms, NULL);
}

/* Whether the program's SIGURG action, as sigaction() reads it back, is a
 * handler. */
static int program_handles_urg(void) {
  struct sigaction sa;
  return sigaction(SIGURG, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

static _Atomic pid_t preempt_tid;

/* Once the program has a SIGURG handler, a SIGURG to this thread, as the
 * Go runtime preempts a goroutine. */
static void *preempt(void *arg) {
  mask_one(SIG_UNBLOCK, SIGURG);
  const struct timespec ms = {0, 1000 * 1000};
  while (!program_handles_urg())
    nanosleep(&ms, NULL);
  preempt_thread((pid_t)syscall(SYS_gettid));
  atomic_store(&preempt_tid, (pid_t)syscall(SYS_gettid));
  for (;;)
    pause();
  return arg;
}

EXPORT int OccaToolsCoreStart(const ot_host_t *host, ot_settings_t *settings) {
  (void)host;
  preempt_thread((pid_t)syscall(SYS_gettid));
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

EXPORT void OccaToolsCoreShutdown(void) {
  pid_t tid = atomic_load(&preempt_tid);
  if (tid)
    preempt_thread(tid);
  const char *report = getenv("LATECORE_PREEMPTS");
  FILE *f = report ? fopen(report, "w") : NULL;
  if (f) {
    fprintf(f, "preempts %d\n", atomic_load(&preempts));
    fclose(f);
  }
}

EXPORT void OccaToolsCoreLog(int level, const char *msg) {
  if (level >= 2) /* warn, error */
    fprintf(stderr, "occa-tools: %s\n", msg);
}
