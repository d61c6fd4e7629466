/* preload.c: libocca_tools_preload.so, the LD_PRELOAD shim of occa-prof.
 *
 * LD_PRELOAD is inherited by every child of the traced program: OCCA's JIT
 * compiler (g++ ... -shared), shells, /bin/true. libocca_tools.so.1 starts a
 * Go runtime and writes a trace, so it must be loaded only in the process
 * that is the OCCA application. This shim decides, in its constructor:
 *
 *   traced = OCCA_TOOLS_CONFIG is set and not empty
 *            AND an object whose base name starts with "libocca.so" is
 *                already loaded (dl_iterate_phdr), or dlopen(RTLD_NOLOAD)
 *                finds it
 *
 * and only then dlopens libocca_tools.so.1 from its own directory (dladdr),
 * falling back to the ordinary library search, with RTLD_NOW | RTLD_GLOBAL,
 * points its forwards (below) at it and starts the runtime
 * (occa_tools_preload_start). The library's constructor leaves the start to
 * the shim while occa_tools_preload_loading() says so: the threads the
 * runtime makes as it starts then pass through its pthread_create. In every
 * other process the shim reads one or two environment variables, walks the
 * list of loaded objects once and returns: no thread, no file, no Go.
 *
 * OCCA_TOOLS_TARGET_LIB replaces the list of library names ("libocca.so"):
 * names separated by ':' or ',', each matched as a prefix of a loaded
 * object's base name (tests use a stand-in library).
 *
 * Limitation: the decision is made once, at start. An application that
 * dlopens libocca later (rather than linking it) is not traced through the
 * shim; link libocca, or preload libocca_tools.so.1 directly for it.
 *
 * If libocca_tools.so.1 is already part of the process (the program links
 * it), the shim does nothing: that copy starts the runtime itself.
 *
 * Exported: sigaction, signal, ssignal, bsd_signal, sysv_signal,
 * __sysv_signal, sigset, siginterrupt, sigignore, close, close_range,
 * closefrom, abort, exit, _exit, _Exit, quick_exit, pthread_create,
 * pthread_exit, the exec functions, and signalfd, sigwait, sigwaitinfo and
 * sigtimedwait, forwarded; occa_tools_preload_loading, for the runtime
 * (everything else is hidden). The runtime exports the forwarded ones to
 * keep the application's view of its exit signals and the SIGCHLD it waits
 * for, to flush when abort() ends the process after a handler returned or
 * the process ends without exit() (runtime/src/lifecycle.c), its own
 * descriptors (runtime/src/fds.c), to end the process with the
 * application's last thread (runtime/src/lastthread.c) and to flush before
 * an exec (runtime/src/exec.c), but a dlopen'ed library interposes nothing;
 * the shim, preloaded, comes first and forwards them to the runtime it
 * loaded, or to the next definition (libc, or the runtime the program
 * links) when it loaded none. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_list.h"

#define RUNTIME_SONAME "libocca_tools.so.1"
#define DEFAULT_TARGETS "libocca.so"

/* The base name of path. */
static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Does name start with one of the entries of the list (':' or ',' separated)? */
static int matches_list(const char *name, const char *list) {
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ":,");
    if (n > 0 && strncmp(name, p, n) == 0)
      return 1;
    p += n;
    if (*p)
      p++;
  }
  return 0;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  const char *targets = data;
  if (!info->dlpi_name || !*info->dlpi_name)
    return 0;
  return matches_list(base_name(info->dlpi_name), targets);
}

/* Is one of the target libraries part of this process? */
static int target_loaded(const char *targets) {
  if (dl_iterate_phdr(on_object, (void *)targets))
    return 1;
  /* A name that only the loader's list knows (a link-time alias): ask it.
   * Not a path, which no base name matches: dlopen opens a path even with
   * RTLD_NOLOAD, and a named pipe there would block the process for ever. */
  const char *p = targets;
  char name[256];
  while (*p) {
    size_t n = strcspn(p, ":,");
    if (n > 0 && n < sizeof name && !memchr(p, '/', n)) {
      memcpy(name, p, n);
      name[n] = '\0';
      void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
      if (h) {
        dlclose(h);
        return 1;
      }
    }
    p += n;
    if (*p)
      p++;
  }
  return 0;
}

/* ---- Forwarding of the signal functions -------------------------------- */

#define EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*handler_fn)(int);
typedef handler_fn (*signal_fn)(int, handler_fn);

enum {
  F_SIGACTION,
  F_SIGNAL,
  F_BSD_SIGNAL,
  F_SYSV_SIGNAL,
  F_SYSV_SIGNAL2,
  F_CLOSE,
  F_CLOSE_RANGE,
  F_CLOSEFROM,
  F_ABORT,
  F_PTHREAD_CREATE,
  F_PTHREAD_EXIT,
  F_EXECVE,
  F_EXECV,
  F_EXECVP,
  F_EXECVPE,
  F_FEXECVE,
  F_EXECVEAT,
  F__EXIT,
  F__EXIT2,
  F_QUICK_EXIT,
  F_SIGSET,
  F_EXIT,
  F_SIGNALFD,
  F_SIGWAIT,
  F_SIGWAITINFO,
  F_SIGTIMEDWAIT,
  F_SIGINTERRUPT,
  F_SIGIGNORE,
  F_SSIGNAL,
  NFORWARD
};
static const char *const forward_names[NFORWARD] = {
    "sigaction",    "signal",         "bsd_signal",   "sysv_signal", "__sysv_signal",
    "close",        "close_range",    "closefrom",    "abort",       "pthread_create",
    "pthread_exit", "execve",         "execv",        "execvp",      "execvpe",
    "fexecve",      "execveat",       "_exit",        "_Exit",       "quick_exit",
    "sigset",       "exit",           "signalfd",     "sigwait",     "sigwaitinfo",
    "sigtimedwait", "siginterrupt",   "sigignore",  "ssignal"};
static void *_Atomic forward_to[NFORWARD];

/* The runtime's definition once it is loaded, else the next one. Resolved
 * in the constructor, so a signal handler never calls dlsym. */
static void *target(int f) {
  void *p = atomic_load_explicit(&forward_to[f], memory_order_acquire);
  if (!p) {
    /* Only where nothing is set yet: storing the next definition over the
     * runtime's own would send a later thread of the core past the
     * runtime's pthread_create, unrecorded, and SIGCHLD's stand-in would
     * drop the signals such a thread took. */
    void *next = dlsym(RTLD_NEXT, forward_names[f]);
    p = NULL;
    if (!atomic_compare_exchange_strong_explicit(&forward_to[f], &p, next, memory_order_acq_rel,
                                                 memory_order_acquire))
      return p;
    p = next;
  }
  return p;
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact) {
  sigaction_fn f = (sigaction_fn)target(F_SIGACTION);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(sig, act, oact);
}

/* A C library without one of the variants: signal() stands in for it. */
static handler_fn call_signal(int f, int sig, handler_fn h) {
  signal_fn fn = (signal_fn)target(f);
  if (!fn)
    fn = (signal_fn)target(F_SIGNAL);
  if (!fn) {
    errno = ENOSYS;
    return SIG_ERR;
  }
  return fn(sig, h);
}

EXPORT handler_fn signal(int sig, handler_fn h) { return call_signal(F_SIGNAL, sig, h); }
EXPORT handler_fn bsd_signal(int sig, handler_fn h) { return call_signal(F_BSD_SIGNAL, sig, h); }
EXPORT handler_fn sysv_signal(int sig, handler_fn h) { return call_signal(F_SYSV_SIGNAL, sig, h); }
EXPORT handler_fn __sysv_signal(int sig, handler_fn h) { return call_signal(F_SYSV_SIGNAL2, sig, h); }
EXPORT handler_fn sigset(int sig, handler_fn h) { return call_signal(F_SIGSET, sig, h); }
EXPORT handler_fn ssignal(int sig, handler_fn h) { return call_signal(F_SSIGNAL, sig, h); }

typedef int (*siginterrupt_fn)(int, int);
typedef int (*sigignore_fn)(int);

EXPORT int siginterrupt(int sig, int flag) {
  siginterrupt_fn f = (siginterrupt_fn)target(F_SIGINTERRUPT);
  if (!f)
    errno = ENOSYS;
  return f ? f(sig, flag) : -1;
}

EXPORT int sigignore(int sig) {
  sigignore_fn f = (sigignore_fn)target(F_SIGIGNORE);
  if (!f)
    errno = ENOSYS;
  return f ? f(sig) : -1;
}

/* The runtime sees which signals the application waits for: SIGCHLD's
 * (runtime/src/lifecycle.c). */
typedef int (*signalfd_fn)(int, const sigset_t *, int);
typedef int (*sigwait_fn)(const sigset_t *, int *);
typedef int (*sigwaitinfo_fn)(const sigset_t *, siginfo_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);

EXPORT int signalfd(int fd, const sigset_t *mask, int flags) {
  signalfd_fn f = (signalfd_fn)target(F_SIGNALFD);
  if (!f)
    errno = ENOSYS;
  return f ? f(fd, mask, flags) : -1;
}

EXPORT int sigwait(const sigset_t *set, int *sig) {
  sigwait_fn f = (sigwait_fn)target(F_SIGWAIT);
  return f ? f(set, sig) : ENOSYS;
}

EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info) {
  sigwaitinfo_fn f = (sigwaitinfo_fn)target(F_SIGWAITINFO);
  if (!f)
    errno = ENOSYS;
  return f ? f(set, info) : -1;
}

EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
  sigtimedwait_fn f = (sigtimedwait_fn)target(F_SIGTIMEDWAIT);
  if (!f)
    errno = ENOSYS;
  return f ? f(set, info, timeout) : -1;
}

/* The runtime keeps its own descriptors from the application's close(),
 * close_range() and closefrom() (runtime/src/fds.c); a runtime loaded
 * here does not interpose them, so these forward to it. */
typedef int (*close_fn)(int);
typedef int (*close_range_fn)(unsigned, unsigned, int);
typedef void (*closefrom_fn)(int);

EXPORT int close(int fd) {
  close_fn f = (close_fn)target(F_CLOSE);
  return f ? f(fd) : (int)syscall(SYS_close, fd);
}

EXPORT int close_range(unsigned first, unsigned last, int flags) {
  close_range_fn f = (close_range_fn)target(F_CLOSE_RANGE);
  return f ? f(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
}

EXPORT void closefrom(int lowfd) {
  closefrom_fn f = (closefrom_fn)target(F_CLOSEFROM);
  if (f)
    f(lowfd);
  else
    syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0);
}

typedef void (*abort_fn)(void);

EXPORT void abort(void) {
  abort_fn f = (abort_fn)target(F_ABORT);
  if (f)
    f();
  /* No abort() to forward to: the default action of SIGABRT, as libc's. */
  signal(SIGABRT, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, SIGABRT);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  raise(SIGABRT);
  _exit(127);
}

/* The runtime tells the Go runtime's threads from the application's by
 * their start routine, which passes through here unchanged. */
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef void (*pthread_exit_fn)(void *);

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
  pthread_create_fn f = (pthread_create_fn)target(F_PTHREAD_CREATE);
  return f ? f(th, attr, start, arg) : ENOSYS;
}

EXPORT void pthread_exit(void *ret) {
  pthread_exit_fn f = (pthread_exit_fn)target(F_PTHREAD_EXIT);
  if (f)
    f(ret);
  syscall(SYS_exit, 0); /* no pthread_exit anywhere: end the thread as it would */
  __builtin_unreachable();
}

/* The runtime flushes before the process ends without exit(), and before
 * exit() runs the exit handlers. */
typedef void (*end_fn)(int);

static void end_with(int f, int status) __attribute__((noreturn));
static void end_with(int f, int status) {
  end_fn fn = (end_fn)target(f);
  if (fn)
    fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

EXPORT void _exit(int status) { end_with(F__EXIT, status); }
EXPORT void _Exit(int status) { end_with(F__EXIT2, status); }
EXPORT void quick_exit(int status) { end_with(F_QUICK_EXIT, status); }
EXPORT void exit(int status) { end_with(F_EXIT, status); }

/* The runtime flushes before an exec replaces the program. */
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *exec_target(int f) {
  void *p = target(f);
  if (!p)
    errno = ENOSYS;
  return p;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  execve_fn f = (execve_fn)exec_target(F_EXECVE);
  return f ? f(path, argv, envp) : -1;
}

EXPORT int execv(const char *path, char *const argv[]) {
  execv_fn f = (execv_fn)exec_target(F_EXECV);
  return f ? f(path, argv) : -1;
}

EXPORT int execvp(const char *file, char *const argv[]) {
  execv_fn f = (execv_fn)exec_target(F_EXECVP);
  return f ? f(file, argv) : -1;
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  execve_fn f = (execve_fn)exec_target(F_EXECVPE);
  return f ? f(file, argv, envp) : -1;
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  fexecve_fn f = (fexecve_fn)exec_target(F_FEXECVE);
  return f ? f(fd, argv, envp) : -1;
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
  execveat_fn f = (execveat_fn)exec_target(F_EXECVEAT);
  return f ? f(dirfd, path, argv, envp, flags) : -1;
}

EXEC_LIST_FORMS(EXPORT)

/* ---- Loading the runtime ------------------------------------------------- */

static void anchor(void) {}

/* Whether the shim is inside its dlopen of the runtime, which then leaves
 * its start to the shim. */
static _Atomic int loading_runtime;

EXPORT int occa_tools_preload_loading(void) { return atomic_load(&loading_runtime); }

__attribute__((constructor)) static void occa_tools_preload_init(void) {
  for (int f = 0; f < NFORWARD; f++)
    target(f);
  const char *config = getenv("OCCA_TOOLS_CONFIG");
  if (!config || !*config)
    return;
  const char *targets = getenv("OCCA_TOOLS_TARGET_LIB");
  if (!targets || !*targets)
    targets = DEFAULT_TARGETS;
  if (!target_loaded(targets))
    return;

  /* The program links the runtime itself: its copy is starting already. */
  void *h = dlopen(RUNTIME_SONAME, RTLD_LAZY | RTLD_NOLOAD);
  if (h) {
    dlclose(h);
    return;
  }

  char path[PATH_MAX];
  Dl_info self;
  h = NULL;
  atomic_store(&loading_runtime, 1);
  if (dladdr((void *)anchor, &self) && self.dli_fname && strchr(self.dli_fname, '/')) {
    size_t dir = (size_t)(base_name(self.dli_fname) - self.dli_fname);
    if (dir + sizeof RUNTIME_SONAME <= sizeof path) {
      memcpy(path, self.dli_fname, dir);
      memcpy(path + dir, RUNTIME_SONAME, sizeof RUNTIME_SONAME);
      h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    }
  }
  if (!h)
    h = dlopen(RUNTIME_SONAME, RTLD_NOW | RTLD_GLOBAL);
  atomic_store(&loading_runtime, 0);
  if (!h) {
    const char *err = dlerror();
    fprintf(stderr, "occa-tools: warning: cannot load %s: %s; running untraced\n", RUNTIME_SONAME,
            err ? err : "not found");
    return;
  }
  /* The handle stays open for the life of the process. */
  for (int f = 0; f < NFORWARD; f++) {
    void *p = dlsym(h, forward_names[f]);
    if (p)
      atomic_store_explicit(&forward_to[f], p, memory_order_release);
  }
  /* A runtime without it started in its constructor. */
  void (*start)(void) = (void (*)(void))dlsym(h, "occa_tools_preload_start");
  if (start)
    start();
}
