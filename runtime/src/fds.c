/* fds.c: the file descriptors the tool owns, kept from the application.
 *
 * Daemons, launchers and process-spawning code close every descriptor above
 * 2 (close in a loop, close_range, closefrom). The tool's are the trace file
 * and the Go runtime's poller: the Go runtime aborts the whole process when
 * its poller's descriptor is gone, and a chunk written to a trace descriptor
 * number the application has reused lands in the application's file. So the
 * tool's descriptors do not exist for the application: closing one fails
 * with EBADF, exactly as it would untraced, and ranges are closed around
 * them. The owned set is made once, in the constructor (ot_fds_mark before
 * the core loads, ot_fds_claim after it started), and only read after.
 *
 * Launchers and test harnesses also dup2 their files onto fixed low numbers
 * (3, 4, ...). One of those was the Go poller's epoll descriptor: the
 * runtime aborted the process ("netpoll failed"), after the trace's chunks
 * had gone into the program's file. So while the core starts, placeholders
 * hold the free descriptors below fd_base (ot_fds_hold_low), and the
 * core's descriptors land above it.
 *
 * Not covered: the raw close_range/close system calls (the Go side then stops
 * writing instead of corrupting the reused descriptor, runtime/core), and
 * dup2/dup3 onto one of the tool's descriptors, now far above the numbers
 * programs pick. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt.h"

#ifndef SYS_close_range
#define SYS_close_range 436 /* the same number on every Linux architecture */
#endif

#define OT_EXPORT __attribute__((visibility("default")))

enum { MAX_SEEN = 1024, MAX_OWNED = 16 };

static int seen[MAX_SEEN]; /* open before the core loaded: the application's */
static int nseen = -1;     /* -1: more than MAX_SEEN or unreadable: own nothing */
static int owned[MAX_OWNED]; /* ascending */
static int nowned;
static int trace_fd = -1; /* owned only while tracing: Go closes it at the end */
static pid_t owner;       /* the process whose descriptors they are */

static int list_fds(int *out, int cap) {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  int n = 0, self = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    char *end;
    long fd = strtol(e->d_name, &end, 10);
    if (*end || end == e->d_name || fd == self)
      continue;
    if (n == cap) {
      n = -1;
      break;
    }
    out[n++] = (int)fd;
  }
  closedir(d);
  return n;
}

void ot_fds_mark(void) { nseen = list_fds(seen, MAX_SEEN); }

/* The descriptors the core opens as it starts go at or above fd_base: half
 * the open files limit, at most 512 (under a limit of 128 or less, below
 * which placeholders would crowd the program out, they go where they fall). */
enum { FD_BASE_MAX = 512, FD_BASE_MIN_LIMIT = 128 };
static int placeholders[FD_BASE_MAX];
static int nplaceholders;

void ot_fds_hold_low(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < FD_BASE_MIN_LIMIT)
    return;
  int fd_base = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 2 > FD_BASE_MAX ? FD_BASE_MAX : (int)(rl.rlim_cur / 2);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0)
    return;
  if (null >= fd_base) {
    close(null);
    return;
  }
  placeholders[nplaceholders++] = null;
  while (nplaceholders < fd_base) {
    int fd = fcntl(null, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
      break;
    if (fd >= fd_base) { /* every free one below is held */
      close(fd);
      break;
    }
    placeholders[nplaceholders++] = fd;
  }
}

void ot_fds_release_low(void) {
  for (int i = 0; i < nplaceholders; i++)
    syscall(SYS_close, placeholders[i]);
  nplaceholders = 0;
}

void ot_fds_claim(int trace) {
  int now[MAX_SEEN];
  int n = nseen < 0 ? -1 : list_fds(now, MAX_SEEN);
  for (int i = 0; i < n && nowned < MAX_OWNED; i++) {
    int old = 0;
    for (int j = 0; j < nseen && !old; j++)
      old = seen[j] == now[i];
    if (old)
      continue;
    int k = nowned++; /* insertion sort: a handful of descriptors */
    for (; k > 0 && owned[k - 1] > now[i]; k--)
      owned[k] = owned[k - 1];
    owned[k] = now[i];
  }
  trace_fd = trace;
  owner = getpid();
}

/* Is fd the tool's? In a child nothing is: the Go runtime is not there, and
 * the descriptors are close-on-exec anyway. A plain pid check, which changes
 * no state: a vfork child shares the parent's memory. */
static int is_owned(int fd) {
  for (int i = 0; i < nowned; i++) {
    if (owned[i] != fd)
      continue;
    if (fd == trace_fd && atomic_load(&ot_state) != OT_STATE_ACTIVE)
      return 0;
    return getpid() == owner;
  }
  return 0;
}

typedef int (*close_fn)(int);
static close_fn next_close;

OT_EXPORT int close(int fd) {
  if (OT_UNLIKELY(nowned) && is_owned(fd)) {
    errno = EBADF;
    return -1;
  }
  close_fn f = next_close;
  if (OT_UNLIKELY(!f)) /* before the constructor, or no next definition */
    return (int)syscall(SYS_close, fd);
  return f(fd);
}

static int close_range_raw(unsigned first, unsigned last, int flags) {
  return first > last ? 0 : (int)syscall(SYS_close_range, first, last, flags);
}

OT_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if (first > last) { /* what the kernel answers */
    errno = EINVAL;
    return -1;
  }
  unsigned lo = first;
  for (int i = 0; i < nowned; i++) {
    unsigned o = (unsigned)owned[i];
    if (o < lo || o > last || !is_owned(owned[i]))
      continue;
    if (o > lo && close_range_raw(lo, o - 1, flags) < 0)
      return -1;
    if (o == last)
      return 0;
    lo = o + 1;
  }
  return close_range_raw(lo, last, flags);
}

/* glibc's closefrom closes through the system call, past any close(). */
OT_EXPORT void closefrom(int lowfd) {
  if (lowfd < 0)
    lowfd = 0;
  if (close_range((unsigned)lowfd, ~0u, 0) == 0 || errno != ENOSYS)
    return;
  int fds[MAX_SEEN]; /* a kernel without close_range: one by one */
  int n;
  while ((n = list_fds(fds, MAX_SEEN)) != 0) {
    int closed = 0;
    for (int i = 0; i < (n < 0 ? 0 : n); i++)
      if (fds[i] >= lowfd && close(fds[i]) == 0)
        closed++;
    if (!closed)
      return;
  }
}

__attribute__((constructor(101))) static void fds_init(void) {
  next_close = (close_fn)dlsym(RTLD_NEXT, "close");
}
