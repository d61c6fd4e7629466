/* lifecycle.c: start, exit, signals and fork.
 *
 * Start (library constructor, or the preload shim once it has loaded this
 * library): only when OCCA_TOOLS_CONFIG is set, load the
 * Go core next to this library, let it read the config, set up buffers, and
 * start the writer. The core is loaded with every asynchronous signal
 * blocked, so the threads of the Go runtime inherit that mask and the exit
 * signals below always land on application threads, never on the writer
 * they wait for.
 *
 * Exit: the library destructor makes the final flush (exit(), return from
 * main, exit() from a signal handler). The exit signals (exit_signals:
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGPIPE, SIGALRM, SIGXCPU,
 * SIGXFSZ, SIGUSR1 and SIGUSR2, but the toggle signal) flush only when
 * their default action is about to end the process (see Signals below);
 * the application's own handlers run untouched. So do
 * abort() after a handler of the application returned (Crashes below) and
 * SIGSEGV, SIGBUS and SIGFPE when nothing else handles them.
 *
 * Fork: a forked child never calls into Go: it stops recording, and the
 * parent's trace is untouched. pthread_atfork catches fork(); a child of the
 * raw system call is known by its pid, in the destructor, the dying-signal
 * handler and the buffer slow path (ot_forked_child). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt.h"

_Atomic int ot_state;
ot_settings_t ot_cfg;
ot_core_api_t ot_core;

/* The signals whose default action ends the process and that may land on
 * the program's threads only (the core's threads block them): SIGPIPE
 * (`prog | head`), SIGALRM (watchdogs), SIGXCPU and SIGXFSZ (resource
 * limits, which batch systems set), SIGUSR1 and SIGUSR2 (Slurm's --signal
 * before the time limit) killed a traced program without the final flush
 * too. The config's toggle signal, SIGUSR1 or SIGUSR2 among others, is the
 * tool's own: not managed (toggle_index). */
static const int exit_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGABRT,
                                   SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2};
#define NEXIT (sizeof exit_signals / sizeof exit_signals[0])
static _Atomic uint64_t final_requested; /* a dying signal wants the final flush */

/* ---- Logging ------------------------------------------------------------------ */

void ot_log(int level, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ot_core.log && !ot_forked_child()) {
    ot_core.log(level, msg);
    return;
  }
  /* No Go core (not loaded, or a forked child): one plain line, warnings up. */
  if (level >= (ot_cfg.log_level > OT_LOG_WARN ? ot_cfg.log_level : OT_LOG_WARN))
    fprintf(stderr, "occa-tools: %s: %s\n", level >= OT_LOG_ERROR ? "error" : "warning", msg);
}

/* ---- Signals -------------------------------------------------------------------- *
 *
 * The application's disposition of each exit signal (app[]) is what the
 * program asked for; the kernel holds exactly that, except in two cases:
 *   - default (SIG_DFL): the kernel holds on_dying_signal, which makes the
 *     trace final and then dies of the signal with the default action;
 *   - a handler with SA_RESETHAND: the kernel holds on_oneshot, with the same
 *     flags and mask minus SA_RESETHAND, which resets the disposition to
 *     default (on_dying_signal) as the kernel would and calls the handler.
 * Ignored signals stay ignored, and a handler runs with its own flags and
 * mask, unwrapped: EINTR, restarts, nesting and cost are those of an
 * untraced run, and only a signal that ends the process flushes.
 *
 * sigaction(), signal(), bsd_signal() and sysv_signal() are exported here
 * (and by the preload shim, which forwards to them) so that a program that
 * sets or reads an exit signal's disposition sees its own; a change that
 * goes around them (the raw system call, a runtime that was dlopen'ed, libc's
 * own sigset(), siginterrupt() and system()) is adopted by the writer's
 * periodic ot_signals_rearm. abort() resets SIGABRT to the default inside
 * libc after the application's handler returned: see Crashes below. */

#define OT_EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction; /* the next definition: libc's */
typedef void (*abort_fn)(void);
static abort_fn next_abort;         /* libc's abort() (Crashes below) */
typedef void (*end_fn)(int);
/* libc's _exit, _Exit and quick_exit, and its exit (Endings below) */
static const char *const end_names[] = {"_exit", "_Exit", "quick_exit"};
#define NEND (sizeof end_names / sizeof end_names[0])
static end_fn next_end[NEND];
static end_fn next_exit;
static _Atomic int managing;        /* the exit signals are managed (ot_signals_settle) */
static _Atomic int sig_lock;        /* guards app[], set[], oneshot_armed[] */
static struct sigaction app[NEXIT]; /* what the application asked for */
static struct sigaction set[NEXIT]; /* what the kernel was given, as it reads back */
static _Atomic int oneshot_armed[NEXIT];
static int kernel_flags;            /* flags the kernel adds on its own (SA_RESTORER) */
static pid_t traced_pid;            /* the process the trace belongs to */
static int snapshot_taken;

static int toggle_index = -1; /* the toggle signal's index, set as the exit signals are settled */

static int signal_index(int sig) {
  for (size_t i = 0; i < NEXIT; i++)
    if (exit_signals[i] == sig)
      return (int)i == toggle_index ? -1 : (int)i;
  return -1;
}

/* A child of the traced process (fork, vfork, a raw clone): untraced, with
 * none of the Go runtime's threads, and perhaps sharing the traced
 * process's memory (vfork, CLONE_VM), whose records it must not write. */
static int is_child(void) { return getpid() != traced_pid; }

static sigaction_fn next_sigaction(void) {
  if (!real_sigaction)
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  return real_sigaction;
}

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14 */
#endif

/* A page the kernel zeroes in a forked child (MADV_WIPEONFORK), which a
 * child sharing the traced process's memory (vfork, CLONE_VM) sees as the
 * traced process left it: how a child tells whose memory it writes. NULL
 * where the kernel does not know the advice. */
static volatile unsigned char *fork_wiped;

static void mark_fork_wiped(void) {
  long size = sysconf(_SC_PAGESIZE);
  void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return;
  if (madvise(p, (size_t)size, MADV_WIPEONFORK) != 0) {
    munmap(p, (size_t)size);
    return;
  }
  *(volatile unsigned char *)p = 1;
  fork_wiped = p;
}

int ot_forked_child(void) {
  if (atomic_load(&ot_state) == OT_STATE_FORKED)
    return 1;
  if (getpid() == traced_pid)
    return 0;
  /* A child that shares the traced process's memory (vfork) set the
   * parent's state below, and the parent's trace was lost
   * (tests/signals/vfork.c record): it takes no more buffers, and leaves
   * the state to the parent. */
  if (fork_wiped && *fork_wiped)
    return 1;
  /* A child made without fork() (the raw system call): no atfork handler
   * ran. Stop recording; its memory goes with it. */
  int want = OT_STATE_ACTIVE;
  if (atomic_compare_exchange_strong(&ot_state, &want, OT_STATE_FORKED))
    ot_public_mask = 0;
  return atomic_load(&ot_state) == OT_STATE_FORKED;
}

/* The holder blocks every signal, so a handler that calls sigaction() never
 * spins on a lock that its own thread holds. */
static void lock_signals(sigset_t *saved) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, saved);
  while (atomic_exchange_explicit(&sig_lock, 1, memory_order_acquire))
    sched_yield();
}

static void unlock_signals(const sigset_t *saved) {
  atomic_store_explicit(&sig_lock, 0, memory_order_release);
  pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The final flush before the process dies, waited for up to the flush
 * timeout. Async-signal-safe. */
static void final_flush(void) {
  if (atomic_load(&ot_state) == OT_STATE_ACTIVE && getpid() == traced_pid) {
    atomic_store(&final_requested, 1); /* before the request: the writer sees both */
    ot_flush_wait(ot_flush_request(), ot_cfg.flush_timeout_ms);
  }
}

void ot_flush_recorded(void) {
  if (atomic_load(&ot_state) == OT_STATE_ACTIVE && getpid() == traced_pid)
    ot_flush_wait(ot_flush_request(), ot_cfg.flush_timeout_ms);
}

/* The final flush, then sig's default action back in place. */
static void flush_then_default(int sig) {
  final_flush();
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  real_sigaction(sig, &dfl, NULL);
}

/* Sends sig again, unblocked: with the default action it ends the process. */
static void raise_again(int sig) {
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
}

static void on_dying_signal(int sig, siginfo_t *info, void *uc) {
  (void)info;
  (void)uc;
  int saved_errno = errno;
  /* The disposition is default: the signal ends the process. */
  flush_then_default(sig);
  raise_again(sig);
  errno = saved_errno;
}

static void apply(size_t i);

static void call_action(const struct sigaction *a, int sig, siginfo_t *info, void *ctx);

/* a as SA_RESETHAND leaves it: SIG_DFL, its flags and mask kept, as the
 * kernel resets it. */
static struct sigaction reset_of(const struct sigaction *a) {
  struct sigaction dfl = *a;
  dfl.sa_handler = SIG_DFL;
  return dfl;
}

/* The handler of an SA_RESETHAND disposition, run with its flags and mask. */
static void on_oneshot(int sig, siginfo_t *info, void *uc) {
  int i = signal_index(sig);
  if (i < 0)
    return;
  if (is_child()) { /* the reset is the child's kernel's alone */
    struct sigaction a = app[i], dfl = reset_of(&a);
    real_sigaction(sig, &dfl, NULL);
    call_action(&a, sig, info, uc);
    return;
  }
  if (!atomic_exchange(&oneshot_armed[i], 0)) {
    /* A second delivery before the reset below (SA_NODEFER): the kernel
     * would have found the default action. */
    on_dying_signal(sig, info, uc);
    return;
  }
  sigset_t saved;
  lock_signals(&saved);
  struct sigaction a = app[i];
  app[i] = reset_of(&a);
  apply((size_t)i);
  unlock_signals(&saved);
  call_action(&a, sig, info, uc);
}

static int is_ours(const struct sigaction *sa) {
  return sa->sa_sigaction == on_dying_signal || sa->sa_sigaction == on_oneshot;
}

/* Same handler, flags and mask (the signals the kernel knows). */
static int same_action(const struct sigaction *a, const struct sigaction *b) {
  if (a->sa_sigaction != b->sa_sigaction || a->sa_flags != b->sa_flags)
    return 0;
  for (int s = 1; s < NSIG; s++)
    if (sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, s))
      return 0;
  return 1;
}

/* Gives the kernel what app[i] needs (lock held). */
static void apply(size_t i) {
  int sig = exit_signals[i];
  struct sigaction want = app[i];
  if (app[i].sa_handler == SIG_DFL) {
    memset(&want, 0, sizeof want);
    want.sa_sigaction = on_dying_signal;
    want.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&want.sa_mask); /* nothing interrupts the final flush */
  } else if (app[i].sa_handler != SIG_IGN && (app[i].sa_flags & SA_RESETHAND)) {
    want.sa_sigaction = on_oneshot;
    want.sa_flags = (app[i].sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    atomic_store(&oneshot_armed[i], 1);
  }
  real_sigaction(sig, &want, NULL);
  memset(&set[i], 0, sizeof set[i]);
  real_sigaction(sig, NULL, &set[i]);
  kernel_flags |= set[i].sa_flags & ~want.sa_flags;
  if (!is_ours(&set[i]))
    app[i] = set[i]; /* exactly what an untraced run reads back */
}

/* What the kernel would read back after being given *act. */
static struct sigaction as_kernel_keeps(const struct sigaction *act) {
  struct sigaction k = *act;
  k.sa_flags |= kernel_flags;
  sigdelset(&k.sa_mask, SIGKILL);
  sigdelset(&k.sa_mask, SIGSTOP);
  return k;
}

/* Before the Go core loads: in a shared library, the Go runtime adds
 * SA_ONSTACK to the handlers it finds. The dispositions found here are the
 * application's, and ot_signals_settle puts them back. */
void ot_signals_snapshot(void) {
  if (!next_sigaction())
    return;
  for (size_t i = 0; i < NEXIT; i++) {
    memset(&app[i], 0, sizeof app[i]);
    real_sigaction(exit_signals[i], NULL, &app[i]);
  }
  snapshot_taken = 1;
}

/* At the end of the start: tracing, the exit signals are managed from now
 * on; otherwise the snapshot goes back to the kernel as it was. */
void ot_signals_settle(void) {
  int tracing = atomic_load(&ot_state) == OT_STATE_ACTIVE;
  if (!snapshot_taken) {
    if (tracing)
      ot_log(OT_LOG_WARN, "cannot find sigaction(); exit signals do not flush the trace");
    return;
  }
  sigset_t saved;
  lock_signals(&saved);
  for (size_t i = 0; i < NEXIT; i++) {
    if (tracing && exit_signals[i] == ot_cfg.toggle_signal) {
      toggle_index = (int)i; /* its handler, the tool's, is in place */
      continue;
    }
    if (tracing)
      apply(i);
    else
      real_sigaction(exit_signals[i], &app[i], NULL);
  }
  atomic_store(&managing, tracing);
  unlock_signals(&saved);
}

/* A disposition changed behind the tool's back (raw system call, a program
 * whose sigaction() is not this library's) is the application's: adopt it.
 * Called by the writer each flush interval. */
void ot_signals_rearm(void) {
  if (!atomic_load(&managing))
    return;
  sigset_t saved;
  lock_signals(&saved);
  for (size_t i = 0; i < NEXIT; i++) {
    struct sigaction cur;
    memset(&cur, 0, sizeof cur);
    if ((int)i == toggle_index || real_sigaction(exit_signals[i], NULL, &cur) != 0 || same_action(&cur, &set[i]))
      continue;
    if (is_ours(&cur)) {
      /* A saved copy of ours put back around sigaction() (system() does
       * that for SIGINT and SIGQUIT): the flush handler stands for the
       * default disposition. */
      if (cur.sa_sigaction == on_dying_signal && app[i].sa_handler != SIG_DFL) {
        memset(&app[i], 0, sizeof app[i]);
        app[i].sa_handler = SIG_DFL;
        app[i].sa_flags = kernel_flags;
      }
      set[i] = cur;
      continue;
    }
    app[i] = cur;
    apply(i);
  }
  unlock_signals(&saved);
}

/* ---- Handlers on the Go runtime's threads ---------------------------------------------- *
 *
 * The Go runtime unblocks SIGPROF (and the synchronous signals) on the
 * threads it makes, so a process-directed SIGPROF (setitimer(ITIMER_PROF),
 * as gprof and sampling profilers use) may land on one of them, where the
 * program's handler then ran on a goroutine's small stack and broke it:
 * "fatal error: fault" within a second. Go asks non-Go code for SA_ONSTACK,
 * which runs a handler on the thread's signal stack (Go gives each of its
 * threads one). So while the core is loaded, the program's handlers of the
 * asynchronous signals that Go leaves unblocked on its threads (its
 * sigtable's _SigUnblock ones: SIGPROF, SIGCHLD, SIGSTKFLT; SIGURG below)
 * are installed with SA_ONSTACK, those installed before the core loaded
 * included, and sigaction() reads back the flags the program gave. The
 * others land on the program's threads only (the core loads with them
 * blocked) and keep the stack the program chose: with SA_ONSTACK on every
 * handler, a SIGALRM handler using 64 KiB of stack ran on the 16 KiB signal
 * stack its program had set up for SIGSEGV, and crashed it. */

static _Atomic int core_loaded;
static _Atomic pid_t core_loader; /* the thread in the core's dlopen(), where Go starts */

/* Whether the caller is the Go runtime starting, inside the core's dlopen():
 * the actions it sets are the tool's, not the program's. */
static int go_starting(void) { return atomic_load(&core_loader) == (pid_t)syscall(SYS_gettid); }
static _Atomic unsigned char onstack_added[NSIG]; /* by the tool, not the program */

static int is_function(const struct sigaction *a) {
  return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

static int on_go_threads(int sig) { return sig == SIGPROF || sig == SIGCHLD || sig == SIGSTKFLT; }

/* Whether the process sent this signal to the thread it landed on, with
 * tgkill. */
static int tgkilled_by_process(const siginfo_t *info) {
  return info && info->si_code == SI_TKILL && info->si_pid == getpid();
}

/* Whether the process sent this signal to one of the core's threads with
 * tgkill: SIGCHLD's mark. */
static int sent_to_core_thread(const siginfo_t *info) { return tgkilled_by_process(info) && ot_on_core_thread(); }

/* Whether the process sent this SIGURG with tgkill to a thread running Go
 * code: the Go runtime's preemption. A thread of the program's runs Go code
 * inside a call into the core (the start in the runtime's constructor, a
 * decision), where the program's handler took it (in 9 runs of 30 of
 * tests/signals/early.c, linked). */
static int sent_to_go(const siginfo_t *info) {
  return tgkilled_by_process(info) && (ot_on_core_thread() || ot_in_core_call());
}

static void call_action(const struct sigaction *a, int sig, siginfo_t *info, void *ctx) {
  if (a->sa_flags & SA_SIGINFO) {
    if (a->sa_sigaction)
      a->sa_sigaction(sig, info, ctx);
  } else if (is_function(a)) {
    a->sa_handler(sig);
  }
}

/* A handler of the program's installed behind one of the tool's
 * trampolines (SIGURG's; SIGCHLD's, SIGPROF's and SIGSTKFLT's below),
 * which gives the program the signals that are its own. The trampoline
 * goes in without the program's SA_RESETHAND and carries it out itself, on
 * a signal of the program's: the kernel would spend it on whichever signal
 * came first, the tool's ones included, and the program's next signal
 * found SIG_DFL.
 *
 * A handler may run on another thread while sigaction() changes the
 * program's action. Changes fill the slot handlers do not read (`now`
 * points to the other), under the signal lock; gen is odd while one does,
 * and a handler takes its copy again when gen moved meanwhile (a second
 * change refilled its slot): it never calls a torn action. */
typedef struct {
  struct sigaction program;  /* as the kernel would read it back */
  struct sigaction replaced; /* SIGURG's: the Go runtime's handler */
  int reset;                 /* SA_RESETHAND carried out; under the signal lock */
} behind_slot;
typedef struct {
  behind_slot slot[2];
  behind_slot *_Atomic now;
  _Atomic unsigned gen;
} behind;

/* Starts a change, under the signal lock: the slot it fills. */
static behind_slot *behind_begin(behind *b, const struct sigaction *program) {
  behind_slot *now = atomic_load(&b->now);
  behind_slot *fill = now == &b->slot[0] ? &b->slot[1] : &b->slot[0];
  atomic_fetch_add(&b->gen, 1);
  fill->program = as_kernel_keeps(program);
  fill->replaced = now->replaced;
  fill->reset = 0;
  return fill;
}

/* Ends the change: handlers read fill from now on. */
static void behind_end(behind *b, behind_slot *fill) {
  atomic_store(&b->now, fill);
  atomic_fetch_add(&b->gen, 1);
}

/* Copies the slot handlers read, whole, and returns the generation it
 * belongs to. A change takes a few stores on a thread that blocks every
 * signal: the wait for it is short. */
static unsigned behind_read(behind *b, behind_slot *out) {
  for (;;) {
    unsigned g = atomic_load(&b->gen);
    if (!(g & 1)) {
      *out = *atomic_load(&b->now);
      atomic_thread_fence(memory_order_acquire);
      if (atomic_load_explicit(&b->gen, memory_order_relaxed) == g)
        return g;
    }
    sched_yield();
  }
}

/* What the kernel is given for the program's handler act: the trampoline,
 * with the program's flags and mask, SA_RESETHAND and SA_NODEFER left to
 * the trampoline. The trampoline runs on a core thread's signal stack
 * (SA_ONSTACK: Go's, 32 KiB) where the kernel gives it a signal there:
 * with SA_NODEFER, a storm of SIGURGs sent to the process nested there
 * until it overflowed (a System V signal() handler, SA_RESETHAND |
 * SA_NODEFER, that installs itself again: a crash in 4 runs of 40 of
 * tests/signals/storm.c). */
typedef void (*trampoline_fn)(int, siginfo_t *, void *);
static struct sigaction behind_install(const struct sigaction *act, trampoline_fn trampoline) {
  struct sigaction install = *act;
  install.sa_sigaction = trampoline;
  install.sa_flags = (act->sa_flags | SA_SIGINFO | SA_ONSTACK) & ~(SA_RESETHAND | SA_NODEFER);
  return install;
}

/* A signal of the program's that came after its SA_RESETHAND fired gets
 * SIG_DFL's action: it ignores SIGURG and SIGCHLD, and ends the process for
 * SIGPROF and SIGSTKFLT. */
static void after_reset(int sig) {
  if (sig != SIGURG && sig != SIGCHLD)
    raise_again(sig);
}

/* Gives the program's handler its signal, in a trampoline. SA_NODEFER
 * holds on the program's threads, where the handler runs on the stack the
 * program chose; on a core thread the signal stays blocked until the
 * handler returns, and one that comes meanwhile waits for it. */
static void behind_call_program(behind *b, int sig, siginfo_t *info, void *ctx) {
  behind_slot a;
  unsigned g = behind_read(b, &a);
  if (a.reset) { /* SIGURG's trampoline stays in after the reset */
    after_reset(sig);
    return;
  }
  if ((a.program.sa_flags & SA_NODEFER) && !ot_on_core_thread()) {
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  }
  if (a.program.sa_flags & SA_RESETHAND) {
    struct sigaction dfl = reset_of(&a.program);
    int saved_errno = errno, second = 0;
    if (is_child()) { /* the reset is the child's kernel's alone */
      real_sigaction(sig, &dfl, NULL);
    } else {
      sigset_t saved;
      lock_signals(&saved);
      /* Where the program changed its action since, the signal came before
       * the change: its handler takes it, and the change stands. */
      if (atomic_load(&b->gen) == g) {
        behind_slot *now = atomic_load(&b->now);
        second = now->reset;
        if (!second && sig != SIGURG) /* the Go runtime's preemption still needs SIGURG's */
          real_sigaction(sig, &dfl, NULL);
        now->reset = 1;
      }
      unlock_signals(&saved);
    }
    errno = saved_errno;
    if (second) { /* a second signal before the reset */
      after_reset(sig);
      return;
    }
  }
  call_action(&a.program, sig, info, ctx);
}

/* SIGURG: the Go runtime signals its own threads with it (tgkill) to
 * preempt a goroutine, and a handler the program installed for SIGURG
 * (out-of-band socket data) received those: three in half a second of
 * tracing. So once the Go runtime has its handler, SIGURG's action is a
 * trampoline that gives the Go runtime's handler (`replaced`) what the
 * process sent one of the core's threads with tgkill, and the program's
 * action everything else, on any thread: a SIGURG from the kernel or
 * another process may land on a core's thread, and is the program's.
 * sigaction() reads back the program's own action, SIG_DFL and SIG_IGN
 * included, and the trampoline stays in for them: with SIG_DFL in the
 * kernel, the Go runtime lost its preemption signals. */
static behind urg_behind = {.now = &urg_behind.slot[0]};

static void urg_trampoline(int sig, siginfo_t *info, void *ctx) {
  if (sent_to_go(info)) {
    behind_slot a;
    behind_read(&urg_behind, &a);
    call_action(&a.replaced, sig, info, ctx);
  } else {
    behind_call_program(&urg_behind, sig, info, ctx);
  }
}

static int is_urg_trampoline(const struct sigaction *a) {
  return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == urg_trampoline;
}

static struct sigaction program_view(int sig, const struct sigaction *cur);

/* urg_sigaction is sigaction() for SIGURG while the core is loaded. The Go
 * runtime sets its handler as it starts, inside the core's dlopen(),
 * through this function: that one is the tool's, and the program's action
 * stays as it was (a handler set before the tool started read back as the
 * Go runtime's, and took none of its own signals). */
static int urg_sigaction(sigaction_fn next, const struct sigaction *act, struct sigaction *oact) {
  sigset_t saved;
  lock_signals(&saved);
  struct sigaction cur;
  memset(&cur, 0, sizeof cur);
  int rc = next(SIGURG, NULL, &cur);
  int behind_now = is_urg_trampoline(&cur);
  struct sigaction old = program_view(SIGURG, &cur);
  if (rc == 0 && act) {
    int from_go = go_starting();
    behind_slot *fill = behind_begin(&urg_behind, from_go ? &old : act);
    if (from_go)
      fill->replaced = *act;
    else if (!behind_now)
      fill->replaced = cur;
    behind_end(&urg_behind, fill);
    struct sigaction install = *act;
    if (is_function(&fill->program))
      install = behind_install(&fill->program, urg_trampoline);
    else if (is_function(&fill->replaced))
      install = behind_install(&fill->replaced, urg_trampoline);
    rc = next(SIGURG, &install, NULL);
  }
  unlock_signals(&saved);
  if (rc == 0 && oact)
    *oact = old;
  return rc;
}

/* SIGCHLD for a program that waits for it. A program that blocks SIGCHLD
 * in its threads and takes it with signalfd(), sigwait(), sigwaitinfo() or
 * sigtimedwait(), its action left at SIG_DFL, lost its children's SIGCHLD
 * while the core was loaded (4 of 5 in tests/signals/itimer.c, waiting with
 * signalfd): the kernel gave each to a core thread, where Go leaves SIGCHLD
 * unblocked, and the default action discarded it there. So once such a
 * program waits for SIGCHLD, a stand-in handler takes the place of SIG_DFL:
 * on a core thread it blocks SIGCHLD there for good (in the context it
 * returns to) and sends the signal to the process again, until every core
 * thread blocks it and it stays pending for the program; on the program's
 * threads it does nothing, as SIG_DFL. The program then reads a SIGCHLD sent
 * by its own process (SI_USER): the kernel lets a thread forge a child's
 * status only for itself. The stand-in goes in at the first such wait, or
 * at a fork() made with SIGCHLD blocked, whichever comes first (a child
 * made otherwise, posix_spawn() or vfork(), that ends before the first
 * wait is not covered). sigaction() reads back the program's own action;
 * any action other than SIG_DFL it sets replaces the stand-in. */
static _Atomic int chld_standin;      /* the stand-in is the kernel's action */
static struct sigaction chld_program; /* the program's SIG_DFL action meanwhile */

/* Hops are the fallback. While a core thread leaves SIGCHLD unblocked, it
 * may take a child's signal that the kernel woke the program's waiting
 * thread for: sigtimedwait() then returned EINTR, and the signal came
 * later, to a handler the program had installed by then (1 run of 10 of
 * tests/signals/itimer.c under `go test`). So as the stand-in goes in,
 * each core thread is sent a mark, a SIGCHLD of its own (tgkill), that the
 * stand-in takes by blocking SIGCHLD there and nothing more; the stand-in
 * waits for every mark to be taken (chld_marks, at most chld_marks_wait_ms)
 * so that none is left for a handler the program installs later. A core
 * thread that starts later is sent its mark as it starts, where it stays
 * pending until the Go runtime unblocks SIGCHLD in it. */
static _Atomic int chld_marks; /* sent and not yet taken */
static const long chld_marks_wait_ms = 200;

/* One mark fewer outstanding; none where a SIG_IGN discarded them first. */
static void take_mark(void) {
  int n = atomic_load(&chld_marks);
  while (n > 0 && !atomic_compare_exchange_weak(&chld_marks, &n, n - 1))
    ;
}

static void chld_handler(int sig, siginfo_t *info, void *ctx) {
  if (!ot_on_core_thread())
    return;
  int saved = errno;
  sigaddset(&((ucontext_t *)ctx)->uc_sigmask, sig);
  if (sent_to_core_thread(info)) /* a mark */
    take_mark();
  else
    kill(getpid(), sig); /* a child's: pass it on */
  errno = saved;
}

static void chld_block_on(pid_t tid) {
  atomic_fetch_add(&chld_marks, 1);
  if (syscall(SYS_tgkill, (long)getpid(), (long)tid, (long)SIGCHLD) != 0)
    take_mark();
}

void ot_core_thread_begins(void) {
  if (atomic_load(&chld_standin))
    ot_core_threads_once(chld_block_on);
}

static int is_default(const struct sigaction *a) {
  return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

/* The stand-in, with the program's flags that SIGCHLD's default action
 * heeds (no SIGCHLD for stopped children; no zombies). */
static struct sigaction chld_action(const struct sigaction *program) {
  struct sigaction a;
  memset(&a, 0, sizeof a);
  a.sa_sigaction = chld_handler;
  a.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | (program->sa_flags & (SA_NOCLDSTOP | SA_NOCLDWAIT));
  sigfillset(&a.sa_mask);
  return a;
}

/* Whether the program's set holds SIGCHLD, read as the kernel reads it (its
 * first 64 bits) and without a fault where the kernel would answer EFAULT:
 * a bad pointer must fail the program's call, not crash the program. Where
 * a seccomp filter forbids the read, no: the fork trigger still works. */
static int has_chld(const sigset_t *set) {
  uint64_t word = 0;
  int saved = errno;
  struct iovec local = {&word, sizeof word}, remote = {(void *)(uintptr_t)set, sizeof word};
  long n = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L);
  errno = saved;
  return n == (long)sizeof word && ((word >> (SIGCHLD - 1)) & 1);
}

/* The program takes SIGCHLD synchronously: the stand-in goes in when its
 * action is SIG_DFL. */
static void chld_standin_in(void) {
  if (!atomic_load(&core_loaded) || atomic_load(&chld_standin) || is_child())
    return;
  sigaction_fn next = next_sigaction();
  if (!next)
    return;
  sigset_t saved;
  lock_signals(&saved);
  struct sigaction cur;
  memset(&cur, 0, sizeof cur);
  int marked = 0;
  if (!atomic_load(&chld_standin) && next(SIGCHLD, NULL, &cur) == 0 && is_default(&cur)) {
    struct sigaction standin = chld_action(&cur);
    if (next(SIGCHLD, &standin, NULL) == 0) {
      chld_program = cur;
      atomic_store(&chld_standin, 1); /* before the threads are read: one that starts now sees it */
      /* Once per thread: SIGCHLD stays blocked where it was, and a second
       * mark there would stay pending for good. */
      marked = ot_core_threads_once(chld_block_on);
    }
  }
  unlock_signals(&saved);
  const struct timespec ms = {0, 1000 * 1000};
  for (long i = 0; marked > 0 && i < chld_marks_wait_ms && atomic_load(&chld_marks) > 0; i++)
    nanosleep(&ms, NULL);
}

/* The program waits for the signals in set. */
static void chld_waited(const sigset_t *set) {
  if (set && atomic_load(&core_loaded) && !atomic_load(&chld_standin) && has_chld(set))
    chld_standin_in();
}

static int onstack_sigaction(sigaction_fn next, int sig, const struct sigaction *act,
                             struct sigaction *oact);

/* sigaction() for SIGCHLD while the stand-in is in. */
static int chld_sigaction(sigaction_fn next, const struct sigaction *act, struct sigaction *oact) {
  sigset_t saved;
  lock_signals(&saved);
  if (!atomic_load(&chld_standin)) { /* another thread's sigaction() took it out */
    unlock_signals(&saved);
    return onstack_sigaction(next, SIGCHLD, act, oact);
  }
  struct sigaction old = chld_program;
  int rc = 0, takes_back = act && !is_default(act);
  if (takes_back) {
    atomic_store(&chld_standin, 0);
  } else if (act) {
    struct sigaction standin = chld_action(act);
    rc = next(SIGCHLD, &standin, NULL);
    if (rc == 0)
      chld_program = as_kernel_keeps(act);
  }
  unlock_signals(&saved);
  /* SIG_IGN or a handler: the program takes SIGCHLD back, installed as any
   * other signal's action. */
  if (takes_back)
    rc = onstack_sigaction(next, SIGCHLD, act, NULL);
  if (rc == 0 && oact)
    *oact = old;
  return rc;
}

/* Marks the stand-in did not see taken. A core thread starved past
 * chld_marks_wait_ms, or one that keeps SIGCHLD blocked a while (the Go
 * runtime making a thread), still holds its mark when the program installs
 * a handler of its own, and that handler got a SIGCHLD no child sent (once
 * in about 3,900 test runs under load). So while marks are outstanding, the
 * program's handler goes in behind a trampoline that takes them as the
 * stand-in does and gives the program every other SIGCHLD, on any thread.
 * The program's handlers stay behind it until the program sets SIG_DFL or
 * SIG_IGN; sigaction() reads back the program's action. */
static behind chld_behind = {.now = &chld_behind.slot[0]};

static void chld_trampoline(int sig, siginfo_t *info, void *ctx) {
  if (sent_to_core_thread(info)) { /* a mark */
    int saved_errno = errno;
    sigaddset(&((ucontext_t *)ctx)->uc_sigmask, sig);
    take_mark();
    errno = saved_errno;
    return;
  }
  behind_call_program(&chld_behind, sig, info, ctx);
}

/* The kernel discards pending signals, marks included, as SIG_IGN goes in. */
static void chld_action_set(const struct sigaction *act) {
  if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN)
    atomic_store(&chld_marks, 0);
}

/* SIGPROF's and SIGSTKFLT's handlers with SA_NODEFER go behind a
 * trampoline too, as SIGCHLD's do: installed as given, with SA_ONSTACK,
 * a storm of such signals nested on a core thread's 32 KiB signal stack
 * until it overflowed (SIGCHLD, System V signal() handlers: a crash or a
 * core thread stuck in handlers, the final flush timed out, in 3 runs of
 * 100 of tests/signals/storm.c). */
static behind prof_behind = {.now = &prof_behind.slot[0]};
static behind stkflt_behind = {.now = &stkflt_behind.slot[0]};

static behind *go_sig_behind(int sig) {
  switch (sig) {
  case SIGCHLD:
    return &chld_behind;
  case SIGPROF:
    return &prof_behind;
  default:
    return &stkflt_behind;
  }
}

static void nodefer_trampoline(int sig, siginfo_t *info, void *ctx) {
  behind_call_program(go_sig_behind(sig), sig, info, ctx);
}

static trampoline_fn go_sig_trampoline(int sig) { return sig == SIGCHLD ? chld_trampoline : nodefer_trampoline; }

/* Whether cur is the trampoline of sig, one of on_go_threads. */
static int is_go_sig_trampoline(int sig, const struct sigaction *cur) {
  return (cur->sa_flags & SA_SIGINFO) && cur->sa_sigaction == go_sig_trampoline(sig);
}

/* Puts the program's handler act for sig behind its trampoline (signal
 * lock held). */
static int go_sig_behind_install(sigaction_fn next, int sig, const struct sigaction *act) {
  behind *b = go_sig_behind(sig);
  behind_end(b, behind_begin(b, act));
  struct sigaction install = behind_install(act, go_sig_trampoline(sig));
  return next(sig, &install, NULL);
}

/* The Go runtime, starting in the core, gives SA_ONSTACK to the handlers it
 * finds: it reads the action back through this sigaction() and sets it
 * again with the flag. Behind a trampoline, which has the flag already,
 * that changes nothing of the program's, which must still read back the
 * flags it gave (a SIGPROF handler with SA_NODEFER set before the tool
 * started read back SA_ONSTACK: tests/signals/early.c). */
static int go_adds_onstack(const struct sigaction *act, const behind *b) {
  /* The flags a program sets; Go leaves out the one its libc adds
   * (SA_RESTORER), which the program's action read back with. */
  const int settable = SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER | SA_RESETHAND;
  struct sigaction program = atomic_load(&b->now)->program, with = *act;
  program.sa_flags = (program.sa_flags & settable) | SA_ONSTACK;
  with.sa_flags &= settable;
  return go_starting() && same_action(&with, &program);
}

/* sigaction() under the signal lock for a signal that lands on the core's
 * threads (on_go_threads), where its trampoline is in or a handler goes
 * behind it: SIGCHLD's while marks are outstanding, any with SA_NODEFER.
 * Once in, the trampoline takes the program's handlers until SIG_DFL or
 * SIG_IGN. 1 with *rc and *oact filled; 0 where it has nothing to do. */
static int behind_sigaction(sigaction_fn next, int sig, const struct sigaction *act, struct sigaction *oact,
                            int *rc) {
  struct sigaction cur;
  memset(&cur, 0, sizeof cur);
  if (next(sig, NULL, &cur) != 0)
    return 0;
  int is_behind = is_go_sig_trampoline(sig, &cur);
  int wants = act && ((act->sa_flags & SA_NODEFER) || (sig == SIGCHLD && atomic_load(&chld_marks) > 0));
  int goes_behind = act && is_function(act) && (is_behind || wants);
  if (!is_behind && !goes_behind)
    return 0;
  struct sigaction old = program_view(sig, &cur);
  *rc = 0;
  if (goes_behind) {
    if (!is_behind || !go_adds_onstack(act, go_sig_behind(sig)))
      *rc = go_sig_behind_install(next, sig, act);
  } else if (act) {
    *rc = next(sig, act, NULL);
  }
  if (*rc == 0 && act) {
    atomic_store(&onstack_added[sig], 0);
    if (sig == SIGCHLD)
      chld_action_set(act);
  }
  if (*rc == 0 && oact)
    *oact = old;
  return 1;
}

static int onstack_sigaction(sigaction_fn next, int sig, const struct sigaction *act,
                             struct sigaction *oact) {
  if (sig == SIGURG)
    return urg_sigaction(next, act, oact);
  if (sig <= 0 || sig >= NSIG)
    return next(sig, act, oact);
  const struct sigaction *orig_act = act;
  struct sigaction mine;
  int added = 0;
  if (act && is_function(act) && !(act->sa_flags & SA_ONSTACK) && on_go_threads(sig)) {
    mine = *act;
    mine.sa_flags |= SA_ONSTACK;
    act = &mine;
    added = 1;
  }
  sigset_t saved;
  lock_signals(&saved);
  if (sig == SIGCHLD && atomic_load(&chld_standin)) { /* decided under the lock that sets it */
    unlock_signals(&saved);
    return chld_sigaction(next, orig_act, oact);
  }
  int rc = 0;
  if (on_go_threads(sig) && behind_sigaction(next, sig, orig_act, oact, &rc)) {
    unlock_signals(&saved);
    return rc;
  }
  int was = atomic_load(&onstack_added[sig]);
  rc = next(sig, act, oact);
  if (rc == 0 && act) {
    atomic_store(&onstack_added[sig], (unsigned char)added);
    if (sig == SIGCHLD)
      chld_action_set(act);
  }
  unlock_signals(&saved);
  if (rc == 0 && oact && was && is_function(oact))
    oact->sa_flags &= ~SA_ONSTACK;
  return rc;
}

/* Before the core loads: the handlers already there (another library's
 * constructor) get SA_ONSTACK too, where they need it. */
static void onstack_existing(void) {
  if (!next_sigaction())
    return;
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction cur;
    memset(&cur, 0, sizeof cur);
    if (!on_go_threads(sig) || real_sigaction(sig, NULL, &cur) != 0 || !is_function(&cur))
      continue;
    if (cur.sa_flags & SA_NODEFER) { /* behind its trampoline (behind_sigaction) */
      sigset_t saved;
      lock_signals(&saved);
      go_sig_behind_install(real_sigaction, sig, &cur);
      unlock_signals(&saved);
      continue;
    }
    if (cur.sa_flags & SA_ONSTACK)
      continue;
    cur.sa_flags |= SA_ONSTACK;
    if (real_sigaction(sig, &cur, NULL) == 0)
      atomic_store(&onstack_added[sig], 1);
  }
}

static void on_toggle_signal(int sig);

/* What the program reads back where the kernel holds cur for sig: its own
 * action where one of the tool's handlers stands in for it (the managed
 * exit signals' sigaction() reads its record directly). */
static struct sigaction program_view(int sig, const struct sigaction *cur) {
  struct sigaction v = *cur;
  int i = signal_index(sig);
  if (i >= 0 && atomic_load(&managing) && (is_ours(cur) || cur->sa_handler == on_toggle_signal)) {
    v = app[i];
  } else if (is_urg_trampoline(cur)) {
    behind_slot *now = atomic_load(&urg_behind.now);
    v = now->program;
    if (now->reset)
      v.sa_handler = SIG_DFL;
  } else if (on_go_threads(sig) && is_go_sig_trampoline(sig, cur)) {
    v = atomic_load(&go_sig_behind(sig)->now)->program;
  } else if (sig == SIGCHLD && (cur->sa_flags & SA_SIGINFO) && cur->sa_sigaction == chld_handler) {
    v = chld_program;
  } else if (sig > 0 && sig < NSIG && atomic_load(&onstack_added[sig]) && is_function(cur)) {
    v.sa_flags &= ~SA_ONSTACK;
  }
  return v;
}

/* sigaction() in a child of the traced process (is_child). A vfork child
 * that reset its signals before exec, as spawners and Python's subprocess
 * do, wrote the parent's records, and the parent read back SIG_DFL for its
 * handlers and its own SIGURG handler was never called again
 * (tests/signals/vfork.c). So a child's actions go to its kernel as given,
 * and the tool's records are only read, to show the program its own action
 * where one of the tool's handlers, inherited, still stands in for it. */
static int child_sigaction(sigaction_fn next, int sig, const struct sigaction *act, struct sigaction *oact) {
  struct sigaction cur;
  memset(&cur, 0, sizeof cur);
  int rc = next(sig, NULL, &cur);
  if (rc == 0 && act)
    rc = next(sig, act, NULL);
  if (rc == 0 && oact)
    *oact = program_view(sig, &cur);
  return rc;
}

OT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact) {
  int i = signal_index(sig);
  int child = (atomic_load(&managing) || atomic_load(&core_loaded)) && is_child();
  if (child || i < 0 || !atomic_load(&managing)) {
    sigaction_fn next = next_sigaction();
    if (!next) {
      errno = ENOSYS;
      return -1;
    }
    if (child)
      return child_sigaction(next, sig, act, oact);
    if (atomic_load(&core_loaded))
      return onstack_sigaction(next, sig, act, oact);
    return next(sig, act, oact);
  }
  sigset_t saved;
  lock_signals(&saved);
  struct sigaction old = app[i];
  if (act) {
    app[i] = as_kernel_keeps(act);
    apply((size_t)i);
  }
  unlock_signals(&saved);
  if (oact)
    *oact = old;
  return 0;
}

/* The ways a program waits for signals it blocks: each puts SIGCHLD's
 * stand-in in first when SIGCHLD is one of them (chld_waited). */
typedef int (*signalfd_fn)(int, const sigset_t *, int);
typedef int (*sigwait_fn)(const sigset_t *, int *);
typedef int (*sigwaitinfo_fn)(const sigset_t *, siginfo_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
static void *_Atomic next_wait[4];
static const char *const wait_names[4] = {"signalfd", "sigwait", "sigwaitinfo", "sigtimedwait"};

static void *next_waiter(int i) {
  void *f = atomic_load(&next_wait[i]);
  if (!f) {
    f = dlsym(RTLD_NEXT, wait_names[i]);
    atomic_store(&next_wait[i], f);
  }
  if (!f)
    errno = ENOSYS;
  return f;
}

OT_EXPORT int signalfd(int fd, const sigset_t *mask, int flags) {
  signalfd_fn f = (signalfd_fn)next_waiter(0);
  chld_waited(mask);
  return f ? f(fd, mask, flags) : -1;
}

OT_EXPORT int sigwait(const sigset_t *set, int *sig) {
  sigwait_fn f = (sigwait_fn)next_waiter(1);
  chld_waited(set);
  return f ? f(set, sig) : ENOSYS;
}

OT_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info) {
  sigwaitinfo_fn f = (sigwaitinfo_fn)next_waiter(2);
  chld_waited(set);
  return f ? f(set, info) : -1;
}

OT_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
  sigtimedwait_fn f = (sigtimedwait_fn)next_waiter(3);
  chld_waited(set);
  return f ? f(set, info, timeout) : -1;
}

/* The signals whose handlers interrupt system calls: siginterrupt(sig, 1).
 * glibc keeps that set to its own signal() and siginterrupt(), and its
 * siginterrupt() changes the action with its own sigaction(), which no
 * interposition sees: a program that set siginterrupt(SIGALRM, 1), then
 * signal(SIGALRM, h), to time out a blocking read() with alarm(), got
 * SA_RESTART from the signal() here, and its read() went on waiting (and
 * the other order read back SA_RESTART: tests/signals/sigprog.c). So both
 * are here, on the sigaction() above. */
static _Atomic uint64_t interrupting[(NSIG + 63) / 64];

static int interrupts(int sig) {
  return sig > 0 && sig < NSIG && (atomic_load(&interrupting[(sig - 1) / 64]) >> ((sig - 1) % 64) & 1);
}

OT_EXPORT int siginterrupt(int sig, int flag) {
  struct sigaction act;
  if (sig <= 0 || sig >= NSIG) {
    errno = EINVAL;
    return -1;
  }
  if (sigaction(sig, NULL, &act) < 0)
    return -1;
  uint64_t bit = UINT64_C(1) << ((sig - 1) % 64);
  if (flag) {
    atomic_fetch_or(&interrupting[(sig - 1) / 64], bit);
    act.sa_flags &= ~SA_RESTART;
  } else {
    atomic_fetch_and(&interrupting[(sig - 1) / 64], ~bit);
    act.sa_flags |= SA_RESTART;
  }
  return sigaction(sig, &act, NULL) < 0 ? -1 : 0;
}

/* sigignore() (System V), as glibc builds it, on the sigaction() above:
 * glibc's sets the action with its own sigaction(), and a managed exit
 * signal read back the handler it replaced until the next flush adopted
 * SIG_IGN. */
OT_EXPORT int sigignore(int sig) {
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = SIG_IGN;
  sigemptyset(&act.sa_mask);
  return sigaction(sig, &act, NULL);
}

/* signal() and its variants, for a managed exit signal as glibc builds them
 * on sigaction(); any other signal goes to the next definition untouched,
 * unless siginterrupt() above set it. */
typedef void (*handler_fn)(int);
typedef handler_fn (*signal_fn)(int, handler_fn);
static signal_fn next_signal[3]; /* signal, bsd_signal, sysv_signal */
static const char *const signal_names[3] = {"signal", "bsd_signal", "sysv_signal"};

static handler_fn set_handler(int variant, int sig, handler_fn handler) {
  if ((signal_index(sig) < 0 || !atomic_load(&managing)) && !atomic_load(&core_loaded) && !interrupts(sig)) {
    if (!next_signal[variant])
      next_signal[variant] = (signal_fn)dlsym(RTLD_NEXT, signal_names[variant]);
    if (!next_signal[variant]) {
      errno = ENOSYS;
      return SIG_ERR;
    }
    return next_signal[variant](sig, handler);
  }
  if (handler == SIG_ERR) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (variant == 2) {
    act.sa_flags = SA_RESETHAND | SA_NODEFER;
  } else {
    act.sa_flags = interrupts(sig) ? 0 : SA_RESTART;
    sigaddset(&act.sa_mask, sig);
  }
  if (sigaction(sig, &act, &old) < 0)
    return SIG_ERR;
  return old.sa_handler;
}

OT_EXPORT handler_fn signal(int sig, handler_fn handler) { return set_handler(0, sig, handler); }
/* SVID's name for it, which glibc keeps. */
OT_EXPORT handler_fn ssignal(int sig, handler_fn handler) { return set_handler(0, sig, handler); }
OT_EXPORT handler_fn bsd_signal(int sig, handler_fn handler) { return set_handler(1, sig, handler); }
OT_EXPORT handler_fn sysv_signal(int sig, handler_fn handler) { return set_handler(2, sig, handler); }
/* What signal() is under strict ISO C (no _DEFAULT_SOURCE) in glibc. */
OT_EXPORT handler_fn __sysv_signal(int sig, handler_fn handler) {
  return set_handler(2, sig, handler);
}

/* sigset() (System V), as glibc builds it, on the sigaction() above: glibc's
 * calls its own sigaction, which no interposition sees, so a handler set with
 * it would miss SA_ONSTACK (and the SIGURG trampoline). */
OT_EXPORT handler_fn sigset(int sig, handler_fn disp) {
  sigset_t one, old;
  struct sigaction act, oact;
  sigemptyset(&one);
  if (sigaddset(&one, sig) < 0)
    return SIG_ERR;
  if (disp == SIG_HOLD) {
    if (pthread_sigmask(SIG_BLOCK, &one, &old) != 0)
      return SIG_ERR;
    if (sigismember(&old, sig))
      return SIG_HOLD;
    if (sigaction(sig, NULL, &oact) < 0)
      return SIG_ERR;
    return oact.sa_handler;
  }
  memset(&act, 0, sizeof act);
  act.sa_handler = disp;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &oact) < 0 || pthread_sigmask(SIG_UNBLOCK, &one, &old) != 0)
    return SIG_ERR;
  return sigismember(&old, sig) ? SIG_HOLD : oact.sa_handler;
}

/* Before any constructor without a priority (ot_init among them): the pid
 * is known before anything records, and a handler calling the functions
 * above never needs dlsym. */
__attribute__((constructor(101))) static void early_init(void) {
  traced_pid = getpid();
  next_sigaction();
  next_abort = (abort_fn)dlsym(RTLD_NEXT, "abort");
  for (size_t e = 0; e < NEND; e++)
    next_end[e] = (end_fn)dlsym(RTLD_NEXT, end_names[e]);
  next_exit = (end_fn)dlsym(RTLD_NEXT, "exit");
  for (int v = 0; v < 3; v++)
    if (!next_signal[v])
      next_signal[v] = (signal_fn)dlsym(RTLD_NEXT, signal_names[v]);
}

static void on_toggle_signal(int sig) {
  (void)sig;
  if (!is_child()) /* a vfork child would switch the parent's recording */
    ot_signal_toggle();
}

/* ---- Endings without exit() --------------------------------------------------------------- *
 *
 * _exit, _Exit and quick_exit end the process without the atexit handlers
 * and destructors that make the final flush, so the events since the last
 * periodic flush were lost without a count. They are exported here (and by
 * the preload shim) and make the final flush first. A child (fork, vfork:
 * another pid) goes straight on, touching nothing. quick_exit's handlers
 * run after the flush: what they record is counted lost. */

static _Atomic int ending; /* a thread makes the final flush */

__attribute__((noreturn)) static void end_with(int which, int status) {
  if (getpid() == traced_pid && !atomic_exchange(&ending, 1))
    final_flush();
  if (next_end[which])
    next_end[which](status);
  syscall(SYS_exit_group, status); /* no such function in this C library */
  __builtin_unreachable();
}

OT_EXPORT void _exit(int status) { end_with(0, status); }
OT_EXPORT void _Exit(int status) { end_with(1, status); }
OT_EXPORT void quick_exit(int status) { end_with(2, status); }

/* A Go program (OCCA through cgo) ends with the exit_group system call,
 * from os.Exit and from the return of main alike: no function of the C
 * library, so neither the above nor a destructor, and its trace loses
 * what was recorded since the last periodic flush. That cannot be caught;
 * it is said once, at the start. Go's linker gives every program it makes
 * a note named "Go" (the build id); the first object dl_iterate_phdr
 * reports is the main program. */
enum { GO_NOTE_BUILD_ID = 4 };

/* Does a readable loaded segment of the object hold [vaddr, vaddr + len)?
 * Only then are a note's bytes mapped: the headers are the program's, not
 * the tool's, and are read as they come. */
static int mapped(const struct dl_phdr_info *info, ElfW(Addr) vaddr, ElfW(Xword) len) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && vaddr >= ph->p_vaddr && len <= ph->p_memsz &&
        vaddr - ph->p_vaddr <= ph->p_memsz - len)
      return 1;
  }
  return 0;
}

static int main_has_go_note(struct dl_phdr_info *info, size_t size, void *found) {
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE || !mapped(info, ph->p_vaddr, ph->p_memsz))
      continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
      size_t name = ((size_t)n->n_namesz + 3) & ~(size_t)3, desc = ((size_t)n->n_descsz + 3) & ~(size_t)3;
      if (name > (size_t)(end - p) - sizeof *n || desc > (size_t)(end - p) - sizeof *n - name)
        break;
      /* The name is "Go" and its NUL, padded by Go's linker into its size. */
      if (n->n_type == GO_NOTE_BUILD_ID && (n->n_namesz == 3 || n->n_namesz == 4) && memcmp(n + 1, "Go", 3) == 0) {
        *(int *)found = 1;
        return 1;
      }
      p += sizeof *n + name + desc;
    }
  }
  return 1; /* only the main program */
}

static void warn_if_go_program(void) {
  int go = 0;
  dl_iterate_phdr(main_has_go_note, &go);
  if (go)
    ot_log(OT_LOG_WARN, "this program is a Go program: Go ends a process with a system call that no library "
                        "sees, so its trace ends without the final flush and loses the events recorded since "
                        "the last periodic one (output.flush_interval); call occa_tools_flush() before os.Exit "
                        "and before main returns to keep them");
}

/* exit() from several threads at once (every thread of an OpenMP team
 * that meets an error, say). glibc's exit runs the atexit handlers and the
 * destructors, the final flush among them (ot_fini), one at a time in
 * whichever caller takes them, and a caller that finds none left ends the
 * process at once, from inside libc, where no interposition sees it: the
 * process died inside the first caller's final flush, and the trace held
 * none of the events. So exit() is exported here (and by the preload
 * shim). The first caller flushes what was recorded so far, as before an
 * exec, and goes on into libc's exit; a later caller, on another thread,
 * waits until the final flush is done, up to the flush timeout (the first
 * caller's handlers may be waiting for it), then goes on too. The first
 * caller's status is the process's, which libc makes no promise about. A
 * child goes straight on. */
static _Atomic pid_t exiting_tid; /* the first thread in exit() */
static _Atomic int finished;      /* the final flush is done (ot_fini) */

OT_EXPORT void exit(int status) {
  /* SHUTDOWN too: a later caller may come once the final flush has begun.
   * Not on the core's threads (a critical callback that exits): the writer
   * cannot wait for itself. */
  int st = atomic_load(&ot_state);
  if (getpid() == traced_pid && (st == OT_STATE_ACTIVE || st == OT_STATE_SHUTDOWN) && !ot_on_core_thread()) {
    pid_t self = (pid_t)syscall(SYS_gettid), first = 0;
    if (atomic_compare_exchange_strong(&exiting_tid, &first, self)) {
      ot_flush_recorded();
    } else if (first != self) {
      int c = ot_cancel_off(); /* nanosleep is a cancellation point; exit is not */
      struct timespec ms = {0, 1000000};
      for (uint64_t i = 0; i < ot_cfg.flush_timeout_ms && !atomic_load(&finished); i++)
        nanosleep(&ms, NULL);
      ot_cancel_restore(c);
    }
  }
  if (next_exit)
    next_exit(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

/* ---- Crashes ---------------------------------------------------------------------------- *
 *
 * abort(). glibc's raises SIGABRT once for the handler; if the handler
 * returns, abort() sets the default action with its internal sigaction,
 * which no interposition sees, and raises SIGABRT again: the process dies
 * without the final flush. That is how an uncaught occa::exception ends
 * under OCCA's OpenCL mode on POCL: std::terminate calls abort(), and POCL's
 * in-process LLVM has installed its crash handlers (SA_RESETHAND, one for
 * SIGABRT among them), which remove files, put the previous dispositions
 * back and return. So abort() is exported here (and by the preload shim): it
 * does what glibc's does, with the final flush between the handler's return
 * and the default action. Aborts inside libc (assert, heap corruption) call
 * its own abort and still end at the last periodic flush when a handler of
 * the application returns.
 *
 * SIGSEGV, SIGBUS, SIGFPE. The Go runtime of the core installs its handler
 * for them as it loads and passes a fault outside Go code to the handler it
 * found (os/signal: "Go programs that use cgo or SWIG"). on_fault is that
 * handler when the program had the default action: it makes the final
 * flush and lets the fault end the process as the default action would. An
 * application's own handler, installed before or after, comes first, as in
 * an untraced run; handlers that put the previous one back and return
 * (LLVM's) reach on_fault through Go's. */

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE};
#define NFAULT (sizeof fault_signals / sizeof fault_signals[0])

static _Atomic int aborting; /* a thread makes abort()'s final flush */

OT_EXPORT void abort(void) {
  if (atomic_load(&managing) && getpid() == traced_pid) {
    sigset_t one, all, saved;
    sigemptyset(&one);
    sigaddset(&one, SIGABRT);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    /* The default action (on_dying_signal) ends the process here; a handler
     * may leave with longjmp, or call abort() again, as with glibc's. */
    raise(SIGABRT);
    /* A handler returned, or SIGABRT is ignored: abort() ends the process
     * all the same. Nothing interrupts the final flush, as in the handler;
     * a second thread here does not wait for the first one's. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    if (!atomic_exchange(&aborting, 1))
      final_flush();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigfillset(&dfl.sa_mask);
    real_sigaction(SIGABRT, &dfl, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
  }
  if (next_abort)
    next_abort(); /* raises SIGABRT once more: the default action now */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  if (next_sigaction())
    real_sigaction(SIGABRT, &dfl, NULL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, SIGABRT);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  raise(SIGABRT);
  _exit(127); /* as glibc when even that fails */
}

static void on_fault(int sig, siginfo_t *info, void *uc) {
  (void)uc;
  int saved_errno = errno;
  flush_then_default(sig);
  errno = saved_errno;
  /* A fault (si_code > 0) happens again when the handler returns, now with
   * the default action: the core dump and the parent see the real one. A
   * sent signal is sent again. */
  if (info && info->si_code > 0)
    return;
  raise_again(sig);
}

/* Before the Go core loads: on_fault becomes the handler that Go's passes
 * faults on to, for each fault signal whose action is the default. */
static void faults_before_core(void) {
  if (!next_sigaction())
    return;
  for (size_t i = 0; i < NFAULT; i++) {
    struct sigaction cur, act;
    memset(&cur, 0, sizeof cur);
    if (real_sigaction(fault_signals[i], NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) ||
        cur.sa_handler != SIG_DFL)
      continue;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_fault;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&act.sa_mask);
    real_sigaction(fault_signals[i], &act, NULL);
  }
}

/* After it: where Go did not take the signal over (no core loaded), the
 * program reads back the default action it had. */
static void faults_after_core(void) {
  if (!next_sigaction())
    return;
  for (size_t i = 0; i < NFAULT; i++) {
    struct sigaction cur, dfl;
    memset(&cur, 0, sizeof cur);
    if (real_sigaction(fault_signals[i], NULL, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) ||
        cur.sa_sigaction != on_fault)
      continue;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    real_sigaction(fault_signals[i], &dfl, NULL);
  }
}

/* ---- Fork ---------------------------------------------------------------------------- */

static void before_fork(void) {
  /* A program that forks with SIGCHLD blocked takes it synchronously: the
   * stand-in must be in before the child can end, not at the first wait. */
  sigset_t blocked;
  if (pthread_sigmask(SIG_SETMASK, NULL, &blocked) == 0 && sigismember(&blocked, SIGCHLD) == 1)
    chld_standin_in();
  if (atomic_load(&ot_state) != OT_STATE_ACTIVE)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (ot_kind_on(OCCA_TOOLS_EVENT_FORK))
    ot_emit(t, OCCA_TOOLS_EVENT_FORK, 0, NULL);
  ot_leave(t);
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

/* Blocks every asynchronous signal on this thread; *saved is the mask to
 * restore. */
static void block_async_signals(sigset_t *saved) {
  sigset_t all;
  sigfillset(&all);
  static const int sync_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};
  for (size_t i = 0; i < sizeof sync_signals / sizeof sync_signals[0]; i++)
    sigdelset(&all, sync_signals[i]);
  pthread_sigmask(SIG_BLOCK, &all, saved);
}

/* path for a message on one line: control bytes become '?'. */
static const char *shown(const char *path, char *buf, size_t size) {
  size_t i = 0;
  for (; path[i] && i + 1 < size; i++)
    buf[i] = ((unsigned char)path[i] < 0x20 || path[i] == 0x7f) ? '?' : path[i];
  buf[i] = 0;
  return buf;
}

/* The core's path: OCCA_TOOLS_CORE, a file (a name without '/' is one in
 * the current directory, as for any file, not a library searched for), or
 * libocca_tools_core.so beside this library. */
static int core_path(char *path, size_t size) {
  const char *env = getenv("OCCA_TOOLS_CORE");
  int n;
  if (env && *env) {
    n = snprintf(path, size, "%s%s", strchr(env, '/') ? "" : "./", env);
  } else {
    Dl_info info;
    if (!dladdr((void *)core_path, &info) || !info.dli_fname) {
      ot_log(OT_LOG_ERROR, "cannot find where libocca_tools.so is; set OCCA_TOOLS_CORE");
      return -1;
    }
    const char *slash = strrchr(info.dli_fname, '/');
    int dir = slash ? (int)(slash - info.dli_fname) + 1 : 0;
    n = snprintf(path, size, "%.*slibocca_tools_core.so", dir, info.dli_fname);
  }
  if (n < 0 || (size_t)n >= size) {
    ot_log(OT_LOG_ERROR, "the tracing core's path is longer than %zu bytes; running untraced",
           size - 1);
    return -1;
  }
  return 0;
}

/* The Go runtime reserves about 1.6 GiB of address space as it starts and
 * needs about 130 MiB of data (its heap, its threads' stacks, the default
 * budget's buffers); short of either it aborts the whole process. Under a
 * smaller `ulimit -v` or `ulimit -d`, common on login nodes, the program
 * runs untraced instead. */
static const struct {
  int resource;
  int statm_field; /* of /proc/self/statm: 0 size, 5 data and stack */
  const char *what, *flag;
  unsigned long long need;
} core_limits[] = {
    {RLIMIT_AS, 0, "address space", "-v", 2ull << 30},
    {RLIMIT_DATA, 5, "data", "-d", 160ull << 20},
};

static int limits_allow_core(void) {
  unsigned long long statm[7] = {0};
  FILE *f = fopen("/proc/self/statm", "re");
  if (f) {
    for (int i = 0; i < 7 && fscanf(f, "%llu", &statm[i]) == 1; i++) {
    }
    fclose(f);
  }
  unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < sizeof core_limits / sizeof core_limits[0]; i++) {
    struct rlimit rl;
    if (getrlimit(core_limits[i].resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
      continue;
    unsigned long long used = statm[core_limits[i].statm_field] * page;
    if ((unsigned long long)rl.rlim_cur >= used + core_limits[i].need)
      continue;
    ot_log(OT_LOG_WARN,
           "the %s limit (ulimit %s) is %llu MiB, and the tracing core needs about %llu MiB "
           "more than the program uses now; running untraced (raise it, e.g. ulimit %s unlimited)",
           core_limits[i].what, core_limits[i].flag, (unsigned long long)rl.rlim_cur >> 20,
           core_limits[i].need >> 20, core_limits[i].flag);
    return 0;
  }
  return 1;
}

/* The Go runtime also aborts the process when it cannot make a thread, and
 * it makes about six (its main thread, sysmon, the writer's and the
 * encoders', and one for each of them blocked in a system call). `ulimit -u`
 * (RLIMIT_NPROC) counts every thread of the user, so under a tight one the
 * program runs untraced unless core_threads more can exist now: a probe
 * starts that many, parked on a lock with every signal blocked, then lets
 * them go. The real root user is exempt from the limit. */
enum { core_threads = 16 };

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static void *probe_park(void *arg) {
  (void)arg;
  pthread_mutex_lock(&probe_lock);
  pthread_mutex_unlock(&probe_lock);
  return NULL;
}

static int threads_allow_core(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || getuid() == 0)
    return 1;
  pthread_t th[core_threads];
  pthread_attr_t attr;
  sigset_t all, saved;
  int n = 0, err = 0;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pthread_mutex_lock(&probe_lock);
  while (n < core_threads && (err = pthread_create(&th[n], &attr, probe_park, NULL)) == 0)
    n++;
  pthread_mutex_unlock(&probe_lock);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  pthread_attr_destroy(&attr);
  if (n == core_threads)
    return 1;
  ot_log(OT_LOG_WARN,
         "the process limit (ulimit -u) is %llu, and only %d more threads could start (%s); "
         "the tracing core needs %d: running untraced (raise it, e.g. ulimit -u unlimited)",
         (unsigned long long)rl.rlim_cur, n, strerror(err), core_threads);
  return 0;
}

/* And when it cannot open its poller's descriptors ("netpollinit failed",
 * "eventfd failed"); the core then opens the config and the trace. Under a
 * `ulimit -n` that leaves fewer than core_fds descriptors free, the program
 * runs untraced: a probe opens that many epoll descriptors (what the poller
 * opens, and no file system needed) and closes them. */
enum { core_fds = 8 };

static int fds_allow_core(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return 1;
  int fd[core_fds], n = 0, err = 0;
  while (n < core_fds && (fd[n] = epoll_create1(EPOLL_CLOEXEC)) >= 0)
    n++;
  if (n < core_fds)
    err = errno;
  for (int i = 0; i < n; i++)
    close(fd[i]);
  if (n == core_fds || (err != EMFILE && err != ENFILE))
    return 1; /* another failure: the probe says nothing */
  ot_log(OT_LOG_WARN,
         "the open files limit (ulimit -n) is %llu, and only %d more descriptors could open (%s); "
         "the tracing core needs %d: running untraced (raise it, e.g. ulimit -n 1024)",
         (unsigned long long)rl.rlim_cur, n, strerror(err), core_fds);
  return 0;
}

/* The core's Go runtime obeys GODEBUG as it starts, and reads it from the
 * process's initial environment (/proc/self/environ), not from environ. Some
 * of its settings, harmless to the Go programs they were set for, would
 * change this program: traces printed on its stderr, or the collector off or
 * never reusing memory (unbounded growth). With one of those on, the program
 * runs untraced. */
static const char *const godebug_refused[] = {
    "gctrace",      "schedtrace", "scheddetail",   "inittrace", "scavtrace", "gcpacertrace",
    "allocfreetrace", "efence",   "sbrk",          "clobberfree", "gcstoptheworld",
};

/* godebug_setting returns the first of godebug_refused that GODEBUG in the
 * initial environment turns on (Go's rules: the first GODEBUG variable, the
 * last setting of a key, "0" off), as "key=value" in buf, or NULL. */
static const char *godebug_setting(char *buf, size_t size) {
  static char env[1 << 16]; /* the constructor runs once; a longer one is cut */
  int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  size_t n = 0;
  for (ssize_t r; n < sizeof env - 1 && (r = read(fd, env + n, sizeof env - 1 - n)) > 0;)
    n += (size_t)r;
  close(fd);
  env[n] = '\0';
  const char *godebug = NULL;
  for (const char *e = env; e < env + n && !godebug; e += strlen(e) + 1)
    if (strncmp(e, "GODEBUG=", 8) == 0)
      godebug = e + 8;
  if (!godebug)
    return NULL;
  for (size_t k = 0; k < sizeof godebug_refused / sizeof godebug_refused[0]; k++) {
    const char *key = godebug_refused[k], *value = NULL;
    size_t klen = strlen(key), vlen = 0;
    for (const char *p = godebug; *p;) {
      size_t len = strcspn(p, ",");
      if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=')
        value = p + klen + 1, vlen = len - klen - 1;
      p += len + (p[len] == ',');
    }
    if (value && vlen > 0 && !(vlen == 1 && value[0] == '0')) {
      snprintf(buf, size, "%s=%.*s", key, (int)(vlen < 32 ? vlen : 32), value);
      return buf;
    }
  }
  return NULL;
}

static int godebug_allows_core(void) {
  char setting[128];
  const char *s = godebug_setting(setting, sizeof setting);
  if (!s)
    return 1;
  ot_log(OT_LOG_WARN,
         "GODEBUG sets %s, which the tracing core's Go runtime would obey in this program too; "
         "running untraced (unset GODEBUG for the traced program)",
         s);
  return 0;
}

static int load_core(void) {
  char path[PATH_MAX], buf[256];
  if (!limits_allow_core() || !threads_allow_core() || !fds_allow_core() || !godebug_allows_core() ||
      core_path(path, sizeof path) != 0)
    return -1;
  /* dlopen of a named pipe blocks until a writer comes; only a regular file
   * is worth trying. */
  struct stat st;
  const char *why = NULL;
  if (stat(path, &st) != 0)
    why = strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = "not a regular file";
  if (why) {
    ot_log(OT_LOG_ERROR,
           "cannot load the tracing core %s: %s; running untraced (OCCA_TOOLS_CORE must name "
           "libocca_tools_core.so, or be unset)",
           shown(path, buf, sizeof buf), why);
    return -1;
  }
  /* The Go runtime gives every thread it makes the signal mask of the thread
   * that starts it, which the core's initializer creates inside dlopen: with
   * the asynchronous signals blocked here, exit signals land on application
   * threads, never on the writer their handler waits for. Only here: the
   * config is read afterwards, on this thread, where SIGINT and SIGTERM act
   * as they would without tracing. */
  sigset_t saved;
  block_async_signals(&saved);
  onstack_existing();
  atomic_store(&core_loaded, 1); /* its threads start inside dlopen */
  ot_lastthread_core_path(path);
  atomic_store(&core_loader, (pid_t)syscall(SYS_gettid));
  core_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  atomic_store(&core_loader, 0);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  if (!core_handle) {
    atomic_store(&core_loaded, 0);
    ot_lastthread_core_path("");
    ot_log(OT_LOG_ERROR, "cannot load the tracing core %s: %s; running untraced",
           shown(path, buf, sizeof buf), dlerror());
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
           shown(path, buf, sizeof buf));
    return -1;
  }
  ot_core_calls_guard(&ot_core);
  return 0;
}

static void ot_start(void);

static void start_once(void) {
  static atomic_flag started = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&started))
    ot_start();
}

/* The preload shim loads this library with dlopen, and can send the
 * program's calls here (pthread_create's among them) only once dlopen has
 * returned. A core started by the constructor would make threads before
 * then that pass by the runtime's pthread_create, unrecorded: SIGCHLD's
 * stand-in would take them for the program's and drop the children's
 * signals the kernel gives them. So while the shim is loading this library
 * (occa_tools_preload_loading says so), the constructor leaves the start to
 * the shim, which calls occa_tools_preload_start once its forwards lead
 * here (only when OCCA_TOOLS_CONFIG is set, as here): the core starts as
 * in a program linked with this library. */
__attribute__((constructor)) static void ot_init(void) {
  const char *config = getenv("OCCA_TOOLS_CONFIG");
  if (!config || !*config)
    return;
  int (*shim_loading)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "occa_tools_preload_loading");
  if (!shim_loading || !shim_loading())
    start_once();
}

OT_EXPORT void occa_tools_preload_start(void) { start_once(); }

static void ot_start(void) {
  ot_cfg.log_level = OT_LOG_WARN;
  mark_fork_wiped();

  ot_signals_snapshot();
  faults_before_core();
  ot_fds_mark();
  if (ot_strings_init() != 0 || load_core() != 0)
    goto out;
  ot_cfg.tsc_usable = ot_tsc_usable();
  ot_cfg.trace_fd = -1;
  /* The core's descriptors (its poller's, the trace file) go high, out of
   * the way of the numbers programs dup2 onto (fds.c). */
  ot_fds_hold_low();
  int rc = ot_core.start(&host, &ot_cfg);
  ot_fds_release_low();
  /* Untraced or not, the Go runtime lives on in the process, and so do its
   * threads and its poller's descriptor. */
  ot_lastthread_core_started();
  ot_fds_claim(ot_cfg.trace_fd);
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
  if (ot_cfg.toggle_signal > 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_toggle_signal;
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    sigaction(ot_cfg.toggle_signal, &sa, NULL);
  }
  pthread_atfork(before_fork, NULL, in_child);
  warn_if_go_program();
  /* The exit-signal handlers go in only now (settle), once the writer that
   * their flush waits for runs. */
  ot_core.run();
out:
  faults_after_core();
  ot_signals_settle();
}

/* A child's exit (fork() or the raw system call) leaves the state alone: a
 * vfork child that calls exit() shares the parent's memory. */
__attribute__((destructor)) static void ot_fini(void) {
  if (getpid() != traced_pid)
    return;
  /* On a core's thread (a critical callback called exit()) the writer
   * would wait for itself: the trace ends at its last flush instead. */
  if (atomic_load(&ot_state) == OT_STATE_ACTIVE && !ot_on_core_thread())
    ot_core.shutdown();
  atomic_store(&finished, 1);
}
