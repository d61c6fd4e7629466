/* lastthread.c: the process ends when the application's last thread does.
 *
 * A process lives while any of its threads does, and glibc ends it with
 * exit(0) when the last one ends. So a program whose main thread leaves with
 * pthread_exit ends when its last worker returns, untraced. Once the tracing
 * core is loaded, its Go runtime's threads never end, and that program
 * would hang for ever after its work is done.
 *
 * So the threads the core makes are told apart. Those it makes while it
 * starts, in the constructor of a process with no other thread yet, are
 * every thread but the constructor's once it has started. Later, cgo
 * creates them through pthread_create, which this library interposes (and
 * the preload shim forwards here, once it has loaded this library), with a
 * start routine in the core's code; those, and only those, get a start
 * routine that records their thread id first.
 * When the main thread leaves with pthread_exit, a reaper thread (one of the
 * tool's too) looks at the process's threads every few milliseconds, and
 * once only the tool's are left (the main thread is a zombie until the
 * process ends) it calls exit(0), as glibc would have: the program's atexit
 * handlers, then the tool's final flush, run on it.
 *
 * The Go runtime never ends its threads (an M lives as long as the
 * process), so a recorded id is never reused by a thread of the program.
 * The same record, less the reaper, tells the SIGURG trampoline and exit()
 * (lifecycle.c) which threads are the core's.
 *
 * A thread the tool cannot tell apart (its ids overflowed the table, the
 * core made it some other way, or the program dlopened libocca_tools.so.1
 * itself, which then interposes nothing) counts as the application's: the
 * process then lives on as it did before, never ends early. Threads of the
 * application pass through pthread_create untouched. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define OT_EXPORT __attribute__((visibility("default")))

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef void (*exit_fn)(void *);

static create_fn next_create;
static exit_fn next_exit;

/* The core's path as dlopen was given it, set before the dlopen (the Go
 * runtime makes threads while it starts, inside dlopen); "" until then. */
static char core_path[4096];

enum { MAX_TOOL_THREADS = 256 };
static _Atomic pid_t tool_tids[MAX_TOOL_THREADS];
static _Atomic int ntool; /* may pass MAX_TOOL_THREADS: then some are unknown */
static atomic_flag reaper_started = ATOMIC_FLAG_INIT;
static _Atomic pid_t reaper_tid; /* the tool thread that is not the core's */

static pid_t thread_id(void) { return (pid_t)syscall(SYS_gettid); }

static void add_tool_thread(pid_t tid) {
  int i = atomic_fetch_add(&ntool, 1);
  if (i < MAX_TOOL_THREADS)
    atomic_store(&tool_tids[i], tid);
}

static int is_tool_thread(pid_t tid) {
  int n = atomic_load(&ntool);
  for (int i = 0; i < n && i < MAX_TOOL_THREADS; i++)
    if (atomic_load(&tool_tids[i]) == tid)
      return 1;
  return 0;
}

static int alone_before_core; /* the process had one thread as the core loaded */

/* each_thread calls fn (when not NULL) on every thread of the process but
 * the calling one, until fn returns 0. It returns 0 when fn stopped it,
 * else how many threads there are, the calling one included (-1 when
 * unknown). */
static int each_thread(int (*fn)(pid_t)) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  pid_t self = thread_id();
  int n = 0;
  for (struct dirent *e; n >= 0 && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    n++;
    pid_t tid = (pid_t)atoi(e->d_name);
    if (fn && tid != self && !fn(tid))
      n = -1;
  }
  closedir(d);
  return n < 0 ? 0 : n;
}

static int record_tool_thread(pid_t tid) {
  if (!is_tool_thread(tid)) /* those made through pthread_create are already */
    add_tool_thread(tid);
  return 1;
}

static _Atomic unsigned char called_once[MAX_TOOL_THREADS];

int ot_core_threads_once(void (*fn)(pid_t tid)) {
  pid_t reaper = atomic_load(&reaper_tid); /* blocks every signal: not one of them */
  int n = atomic_load(&ntool), called = 0;
  for (int i = 0; i < n && i < MAX_TOOL_THREADS; i++) {
    pid_t tid = atomic_load(&tool_tids[i]);
    if (tid > 0 && tid != reaper && !atomic_exchange(&called_once[i], 1)) {
      fn(tid);
      called++;
    }
  }
  return called;
}

int ot_on_core_thread(void) {
  pid_t self = thread_id();
  return self != atomic_load(&reaper_tid) && is_tool_thread(self);
}

void ot_lastthread_core_path(const char *path) {
  size_t n = strlen(path);
  if (n < sizeof core_path)
    memcpy(core_path, path, n + 1);
  if (n > 0)
    alone_before_core = each_thread(NULL) == 1;
}

static int find_core(struct dl_phdr_info *info, size_t size, void *data);

void ot_lastthread_core_started(void) {
  if (alone_before_core)
    each_thread(record_tool_thread);
  if (core_path[0])
    dl_iterate_phdr(find_core, NULL);
}

/* The core's executable segments, once it has started: after that, telling
 * its threads apart takes no lock. dladdr takes the dynamic loader's lock,
 * and a thread of the program that creates a thread while another holds
 * that lock in dlopen (waiting for the first, say) would deadlock in it. */
static _Atomic uintptr_t core_lo, core_hi;

static int in_core(void *code) {
  uintptr_t hi = atomic_load(&core_hi);
  if (hi)
    return (uintptr_t)code >= atomic_load(&core_lo) && (uintptr_t)code < hi;
  /* While the core loads (inside dlopen). */
  Dl_info info;
  return core_path[0] && dladdr(code, &info) && info.dli_fname && strcmp(info.dli_fname, core_path) == 0;
}

static int find_core(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  if (!info->dlpi_name || strcmp(info->dlpi_name, core_path) != 0)
    return 0;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    lo = start < lo ? start : lo;
    hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
  }
  if (hi > lo) {
    atomic_store(&core_lo, lo);
    atomic_store(&core_hi, hi);
  }
  return 1;
}

typedef struct {
  void *(*start)(void *);
  void *arg;
  sigset_t mask; /* the creator's */
} tool_start;

/* A core thread starts with every signal blocked and takes its creator's
 * mask only once it is recorded: until then, a signal that only the tool's
 * threads take (a child's SIGCHLD, with the stand-in in) would find it
 * counted as the program's. cgo blocks them all itself; this does not
 * count on it. */
static void *tool_thread(void *p) {
  tool_start s = *(tool_start *)p;
  free(p);
  add_tool_thread(thread_id());
  ot_core_thread_begins();
  pthread_sigmask(SIG_SETMASK, &s.mask, NULL);
  return s.start(s.arg);
}

static void resolve(void) {
  if (!next_create)
    next_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  if (!next_exit)
    next_exit = (exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
}

OT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
  resolve();
  if (!in_core((void *)start))
    return next_create(th, attr, start, arg);
  tool_start *s = malloc(sizeof *s);
  if (!s)
    return next_create(th, attr, start, arg); /* unknown: the safe side */
  s->start = start;
  s->arg = arg;
  sigset_t all, mine;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &mine);
  s->mask = mine; /* s is the new thread's to free */
  int rc = next_create(th, attr, tool_thread, s);
  pthread_sigmask(SIG_SETMASK, &mine, NULL);
  if (rc != 0)
    free(s);
  return rc;
}

static int main_or_tool(pid_t tid) { return tid == getpid() || is_tool_thread(tid); }

/* only_tool_threads_left: every thread but the (exited) main one is the
 * tool's (the caller, the reaper, is). */
static int only_tool_threads_left(void) { return each_thread(main_or_tool) > 0; }

static void *reaper(void *arg) {
  (void)arg;
  atomic_store(&reaper_tid, thread_id());
  add_tool_thread(thread_id());
  const struct timespec period = {0, 5 * 1000 * 1000};
  for (;;) {
    nanosleep(&period, NULL);
    if (only_tool_threads_left())
      exit(0);
  }
  return NULL;
}

/* start_reaper starts the reaper once, with every signal blocked (the
 * program's signals go to its own threads, as untraced). */
static void start_reaper(void) {
  if (atomic_flag_test_and_set(&reaper_started))
    return;
  pthread_t th;
  pthread_attr_t attr;
  sigset_t all, saved;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 << 10);
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  next_create(&th, &attr, reaper, NULL);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  pthread_attr_destroy(&attr);
}

OT_EXPORT void pthread_exit(void *ret) {
  resolve();
  /* Only with the core loaded are there threads that never end; a forked
   * child has none of them. */
  if (core_path[0] && atomic_load(&ot_state) != OT_STATE_FORKED && thread_id() == getpid())
    start_reaper();
  next_exit(ret);
  __builtin_unreachable();
}
