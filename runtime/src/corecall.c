/* corecall.c: calls into the core's Go runtime from threads Go did not make.
 *
 * Such a call (a cgo callback) gives the thread, for the call, a signal
 * stack of Go's when it has none, and takes it away as the call ends,
 * before Go lets go of the thread. A preemption signal (SIGURG, which Go
 * leaves unblocked) that lands in between finds Go's state on a thread
 * without a signal stack, and the Go runtime aborts the process: "signal
 * 23 received on thread with no signal stack", "fatal error: non-Go code
 * disabled sigaltstack" (CI, once: a signal handler's call into the
 * runtime on a loaded machine). A thread that has a signal stack keeps it:
 * Go uses it and leaves it alone. So every call into the core runs with
 * one: the thread's own when it has one, else one of the tool's, mapped
 * once per thread, in place only for the call (the program's SA_ONSTACK
 * handlers see it only then) and unmapped when the thread exits. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include "rt.h"

enum { CORE_SIGSTACK = 64 * 1024 };

static __thread void *thread_sigstack; /* the tool's signal stack for this thread */
static OT_TLS int in_core_calls;       /* this thread runs the core's Go code */
static pthread_key_t sigstack_key;
static pthread_once_t sigstack_once = PTHREAD_ONCE_INIT;

static void unmap_sigstack(void *mem) { munmap(mem, CORE_SIGSTACK); }
static void make_key(void) { pthread_key_create(&sigstack_key, unmap_sigstack); }

int ot_in_core_call(void) { return in_core_calls > 0; }

/* Gives the thread a signal stack when it has none, and returns whether it
 * did. Async-signal-safe (mmap, sigaltstack; the key exists by then). */
static int begin(void) {
  in_core_calls++;
  stack_t cur;
  if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
    return 0;
  if (!thread_sigstack) {
    void *mem = mmap(NULL, CORE_SIGSTACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
      return 0;
    thread_sigstack = mem;
    pthread_setspecific(sigstack_key, mem);
  }
  stack_t mine = {.ss_sp = thread_sigstack, .ss_size = CORE_SIGSTACK, .ss_flags = 0};
  return sigaltstack(&mine, NULL) == 0;
}

static void end(int installed) {
  in_core_calls--;
  if (!installed)
    return;
  stack_t off = {.ss_flags = SS_DISABLE};
  sigaltstack(&off, NULL);
}

static ot_core_api_t direct; /* the core's own functions */

static int start(const ot_host_t *host, ot_settings_t *settings) {
  int s = begin(), rc = direct.start(host, settings);
  end(s);
  return rc;
}

static void run(void) {
  int s = begin();
  direct.run();
  end(s);
}

static void decide_device(const char *mode, int64_t index, const char *props, ot_decision_t *out) {
  int s = begin();
  direct.decide_device(mode, index, props, out);
  end(s);
}

static void decide_kernel(const char *name, const char *props, ot_decision_t *out, const char **tags_out) {
  int s = begin();
  direct.decide_kernel(name, props, out, tags_out);
  end(s);
}

static uint32_t decide_region(const char *name) {
  int s = begin();
  uint32_t w = direct.decide_region(name);
  end(s);
  return w;
}

static int memory_tag_selected(const char *tag) {
  int s = begin(), sel = direct.memory_tag_selected(tag);
  end(s);
  return sel;
}

static void tag_kernel(const char *name, const char *tag) {
  int s = begin();
  direct.tag_kernel(name, tag);
  end(s);
}

static void shutdown(void) {
  int s = begin();
  direct.shutdown();
  end(s);
}

static void log_line(int level, const char *msg) {
  int s = begin();
  direct.log(level, msg);
  end(s);
}

void ot_core_calls_guard(ot_core_api_t *api) {
  pthread_once(&sigstack_once, make_key);
  direct = *api;
  *api = (ot_core_api_t){start, run, decide_device, decide_kernel, decide_region, memory_tag_selected,
                         tag_kernel, shutdown, log_line};
}
