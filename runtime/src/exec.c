/* exec.c: what was recorded is in the trace before exec replaces the program.
 *
 * exec ends the process image without exit: no atexit handler, no
 * destructor, so the events since the last periodic flush were lost and not
 * counted (the trace ended as if killed). Each exec function of the C
 * library is interposed (the preload shim forwards them here) and flushes
 * first, waiting up to the flush timeout as at a fatal signal. The trace
 * then holds every event and the counters up to the exec; it has no final
 * statistics, because the exec may fail, and then the program, and its
 * trace, go on. A new image that is traced writes a trace of its own.
 *
 * Not flushed: a vfork child's exec (it shares the parent's memory and must
 * not touch the writer; it is not the traced process), and the exec inside
 * posix_spawn and system (the child's, which the C library makes without
 * these functions). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "exec_list.h"
#include "rt.h"

#define OT_EXPORT __attribute__((visibility("default")))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f)
    errno = ENOSYS;
  return f;
}

OT_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  execve_fn f = (execve_fn)next("execve");
  ot_flush_before_exec();
  return f ? f(path, argv, envp) : -1;
}

OT_EXPORT int execv(const char *path, char *const argv[]) {
  execv_fn f = (execv_fn)next("execv");
  ot_flush_before_exec();
  return f ? f(path, argv) : -1;
}

OT_EXPORT int execvp(const char *file, char *const argv[]) {
  execv_fn f = (execv_fn)next("execvp");
  ot_flush_before_exec();
  return f ? f(file, argv) : -1;
}

OT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  execve_fn f = (execve_fn)next("execvpe");
  ot_flush_before_exec();
  return f ? f(file, argv, envp) : -1;
}

OT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  fexecve_fn f = (fexecve_fn)next("fexecve");
  ot_flush_before_exec();
  return f ? f(fd, argv, envp) : -1;
}

OT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
  execveat_fn f = (execveat_fn)next("execveat");
  ot_flush_before_exec();
  return f ? f(dirfd, path, argv, envp, flags) : -1;
}

/* The list forms, as the C library has them: through the vector forms
 * above. */
EXEC_LIST_FORMS(OT_EXPORT)
