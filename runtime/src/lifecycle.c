/* lifecycle.c: start, exit, signals and fork.
 *
 * Start (library constructor): only when OCCA_TOOLS_CONFIG is set, load the
 * Go core next to this library, let it read the config, set up buffers, and
 * start the writer. The core is loaded with every asynchronous signal
 * blocked, so the threads of the Go runtime inherit that mask and the exit
 * signals below always land on application threads, never on the writer
 * they wait for.
 *
 * Exit: the library destructor makes the final flush (exit(), return from
 * main). SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGABRT flush first and then
 * run the application's handler or the default action. A forked child never
 * calls into Go: it stops recording, and the parent's trace is untouched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

_Atomic int ot_state;
ot_settings_t ot_cfg;
ot_core_api_t ot_core;

static const int exit_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT};
#define NEXIT (sizeof exit_signals / sizeof exit_signals[0])
static struct sigaction prev_action[NEXIT];
static _Atomic uint64_t final_requested; /* a dying signal wants the final flush */

/* ---- Logging ------------------------------------------------------------------ */

void ot_log(int level, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int st = atomic_load(&ot_state);
  if (ot_core.log && st != OT_STATE_FORKED) {
    ot_core.log(level, msg);
    return;
  }
  /* No Go core (not loaded, or a forked child): one plain line, warnings up. */
  if (level >= (ot_cfg.log_level > OT_LOG_WARN ? ot_cfg.log_level : OT_LOG_WARN))
    fprintf(stderr, "occa-tools: %s: %s\n", level >= OT_LOG_ERROR ? "error" : "warning", msg);
}

/* ---- Signals -------------------------------------------------------------------- */

static int signal_index(int sig) {
  for (size_t i = 0; i < NEXIT; i++)
    if (exit_signals[i] == sig)
      return (int)i;
  return -1;
}

static void on_exit_signal(int sig, siginfo_t *info, void *uc);

static int is_ours(const struct sigaction *sa) {
  return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_exit_signal;
}

static void on_exit_signal(int sig, siginfo_t *info, void *uc) {
  int saved_errno = errno;
  int i = signal_index(sig);
  if (i < 0)
    return;
  struct sigaction *prev = &prev_action[i];
  int dies = !(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_DFL;
  if (atomic_load(&ot_state) == OT_STATE_ACTIVE) {
    /* The default action ends the process: make the trace final. Otherwise
     * flush, and the application's handler decides (exit() ends it cleanly
     * through the destructor). */
    if (dies) /* before the request: the writer must see both together */
      atomic_store(&final_requested, 1);
    ot_flush_wait(ot_flush_request(), ot_cfg.flush_timeout_ms);
  }
  if (dies) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
  } else if (prev->sa_flags & SA_SIGINFO) {
    if (prev->sa_sigaction)
      prev->sa_sigaction(sig, info, uc);
  } else if (prev->sa_handler != SIG_IGN && prev->sa_handler != SIG_DFL) {
    prev->sa_handler(sig);
  }
  errno = saved_errno;
}

static void install(size_t i, const struct sigaction *current) {
  prev_action[i] = *current;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_exit_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigfillset(&sa.sa_mask); /* nothing interrupts the flush */
  sigaction(exit_signals[i], &sa, NULL);
}

void ot_signals_install(void) {
  for (size_t i = 0; i < NEXIT; i++) {
    struct sigaction cur;
    if (sigaction(exit_signals[i], NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
      install(i, &cur); /* an ignored signal stays ignored */
  }
}

/* The application installed its own handler after us: wrap it again, so
 * its handler still runs, after our flush. Called by the writer each cycle. */
void ot_signals_rearm(void) {
  for (size_t i = 0; i < NEXIT; i++) {
    struct sigaction cur;
    if (sigaction(exit_signals[i], NULL, &cur) != 0 || is_ours(&cur))
      continue;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
      continue;
    install(i, &cur);
  }
}

static void on_toggle_signal(int sig) {
  (void)sig;
  ot_signal_toggle();
}

/* ---- Fork ---------------------------------------------------------------------------- */

static void before_fork(void) {
  if (atomic_load(&ot_state) != OT_STATE_ACTIVE)
    return;
  ot_thread *t = ot_self();
  if (t && ot_kind_on(OCCA_TOOLS_EVENT_FORK))
    ot_emit(t, OCCA_TOOLS_EVENT_FORK, 0, NULL);
}

static void in_child(void) {
  if (atomic_load(&ot_state) != OT_STATE_ACTIVE)
    return;
  atomic_store(&ot_state, OT_STATE_FORKED);
  ot_public_mask = 0;
  ot_log(OT_LOG_INFO, "forked child %d is not traced (only a new exec is)", (int)getpid());
}

/* ---- Host table for the Go core ---------------------------------------------------------- */

static void host_stop_for_good(void) {
  ot_pause(OT_PAUSED_STOPPED, 1);
  int want = OT_STATE_ACTIVE;
  atomic_compare_exchange_strong(&ot_state, &want, OT_STATE_SHUTDOWN);
  ot_update_public_mask();
}

static void host_set_clock(int use_tsc) { ot_use_tsc = use_tsc && ot_tsc_usable(); }

static void host_budget_exhausted(void) { ot_pause(OT_PAUSED_BUDGET, 1); }

static uint64_t host_final_requested(void) { return atomic_load(&final_requested); }

static const ot_host_t host = {
    .wait = ot_host_wait,
    .take_full = ot_host_take_full,
    .take_partial = ot_host_take_partial,
    .release = ot_host_release,
    .take_defs = ot_take_defs,
    .set_clock = host_set_clock,
    .sync_point = ot_sync_point,
    .counters = ot_host_counters,
    .window_set = ot_window_set,
    .window_time = ot_window_time,
    .budget_exhausted = host_budget_exhausted,
    .request_flush = ot_flush_request,
    .flush_requested = ot_host_flush_requested,
    .final_requested = host_final_requested,
    .flush_done = ot_host_flush_done,
    .rearm_signals = ot_signals_rearm,
    .stop_for_good = host_stop_for_good,
    .critical = ot_critical,
    .signal_toggle_at = ot_signal_toggle_at,
};


/* ---- Start and exit ------------------------------------------------------------------------ */

static void *core_handle;

static int load_core(void) {
  char path[PATH_MAX];
  const char *env = getenv("OCCA_TOOLS_CORE");
  if (env && *env) {
    snprintf(path, sizeof path, "%s", env);
  } else {
    Dl_info info;
    if (!dladdr((void *)load_core, &info) || !info.dli_fname) {
      ot_log(OT_LOG_ERROR, "cannot find where libocca_tools.so is; set OCCA_TOOLS_CORE");
      return -1;
    }
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    snprintf(path + dir, sizeof path - dir, "libocca_tools_core.so");
  }
  core_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!core_handle) {
    ot_log(OT_LOG_ERROR, "cannot load the tracing core %s: %s; running untraced", path,
           dlerror());
    return -1;
  }
#define SYM(field, name) *(void **)(&ot_core.field) = dlsym(core_handle, name)
  SYM(start, OT_CORE_START);
  SYM(run, OT_CORE_RUN);
  SYM(decide_device, OT_CORE_DECIDE_DEVICE);
  SYM(decide_kernel, OT_CORE_DECIDE_KERNEL);
  SYM(decide_region, OT_CORE_DECIDE_REGION);
  SYM(memory_tag_selected, OT_CORE_MEMORY_TAG);
  SYM(tag_kernel, OT_CORE_TAG_KERNEL);
  SYM(shutdown, OT_CORE_SHUTDOWN);
  SYM(log, OT_CORE_LOG);
#undef SYM
  if (!ot_core.start || !ot_core.run || !ot_core.decide_device || !ot_core.decide_kernel ||
      !ot_core.decide_region || !ot_core.memory_tag_selected || !ot_core.tag_kernel ||
      !ot_core.shutdown || !ot_core.log) {
    memset(&ot_core, 0, sizeof ot_core);
    ot_log(OT_LOG_ERROR, "%s is not a matching occa-tools core (missing exports); running untraced",
           path);
    return -1;
  }
  return 0;
}

__attribute__((constructor)) static void ot_init(void) {
  const char *config = getenv("OCCA_TOOLS_CONFIG");
  if (!config || !*config)
    return;
  ot_cfg.log_level = OT_LOG_WARN;

  sigset_t all, saved;
  sigfillset(&all);
  static const int sync_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};
  for (size_t i = 0; i < sizeof sync_signals / sizeof sync_signals[0]; i++)
    sigdelset(&all, sync_signals[i]);
  pthread_sigmask(SIG_BLOCK, &all, &saved);

  if (ot_strings_init() != 0 || load_core() != 0)
    goto out;
  ot_cfg.tsc_usable = ot_tsc_usable();
  int rc = ot_core.start(&host, &ot_cfg);
  if (rc == -2) {
    fprintf(stderr, "occa-tools: stopping the program: the config says on_error = \"abort\"\n");
    _exit(2);
  }
  if (rc != 0)
    goto out;
  if (ot_pool_init(ot_cfg.memory_bytes, ot_cfg.buffer_bytes) != 0) {
    ot_log(OT_LOG_ERROR, "cannot set up %llu bytes of trace buffers; running untraced",
           (unsigned long long)ot_cfg.memory_bytes);
    goto out;
  }
  ot_thread_key_init();
  atomic_store(&ot_kinds, ot_cfg.enabled_mask);
  ot_triggers_init();
  atomic_store(&ot_state, OT_STATE_ACTIVE);
  ot_update_public_mask();
  ot_signals_install();
  if (ot_cfg.toggle_signal > 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_toggle_signal;
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    sigaction(ot_cfg.toggle_signal, &sa, NULL);
  }
  pthread_atfork(before_fork, NULL, in_child);
  ot_core.run();
out:
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

__attribute__((destructor)) static void ot_fini(void) {
  if (atomic_load(&ot_state) != OT_STATE_ACTIVE)
    return;
  ot_core.shutdown();
}
