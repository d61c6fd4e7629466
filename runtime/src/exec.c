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

/* The C library's functions, looked up before anything runs: exec is
 * async-signal-safe, and a vfork child calls it, where dlsym, which takes
 * the dynamic loader's lock, is not safe. */
enum { E_EXECVE, E_EXECV, E_EXECVP, E_EXECVPE, E_FEXECVE, E_EXECVEAT, NEXEC };
static const char *const exec_names[NEXEC] = {"execve", "execv", "execvp", "execvpe", "fexecve", "execveat"};
static void *exec_next[NEXEC];

__attribute__((constructor(101))) static void exec_init(void) {
  for (int i = 0; i < NEXEC; i++)
    exec_next[i] = dlsym(RTLD_NEXT, exec_names[i]);
}

static void *next(int which) {
  void *f = exec_next[which];
  if (!f) /* an exec before the constructors (another library's) */
    f = exec_next[which] = dlsym(RTLD_NEXT, exec_names[which]);
  if (!f)
    errno = ENOSYS;
  return f;
}

OT_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  execve_fn f = (execve_fn)next(E_EXECVE);
  ot_flush_recorded();
  return f ? f(path, argv, envp) : -1;
}

OT_EXPORT int execv(const char *path, char *const argv[]) {
  execv_fn f = (execv_fn)next(E_EXECV);
  ot_flush_recorded();
  return f ? f(path, argv) : -1;
}

OT_EXPORT int execvp(const char *file, char *const argv[]) {
  execv_fn f = (execv_fn)next(E_EXECVP);
  ot_flush_recorded();
  return f ? f(file, argv) : -1;
}

OT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  execve_fn f = (execve_fn)next(E_EXECVPE);
  ot_flush_recorded();
  return f ? f(file, argv, envp) : -1;
}

OT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  fexecve_fn f = (fexecve_fn)next(E_FEXECVE);
  ot_flush_recorded();
  return f ? f(fd, argv, envp) : -1;
}

OT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
  execveat_fn f = (execveat_fn)next(E_EXECVEAT);
  ot_flush_recorded();
  return f ? f(dirfd, path, argv, envp, flags) : -1;
}

/* The list forms, as the C library has them: through the vector forms
 * above. */
EXEC_LIST_FORMS(OT_EXPORT)
