/* exec_list.h: the list forms of exec (execl, execlp, execle), which the
 * runtime (exec.c) and the preload shim both define on top of their vector
 * forms, as the C library does. */
#ifndef OT_EXEC_LIST_H
#define OT_EXEC_LIST_H

#include <stdarg.h>
#include <stddef.h>

/* ARGV_FROM_LIST declares argv, the arguments from arg0 up to the NULL, and
 * leaves ap started after that NULL (execle's environment follows it): the
 * caller ends it with va_end. */
#define ARGV_FROM_LIST(arg0, ap, argv)                                                             \
  size_t argc_ = 1;                                                                                \
  va_start(ap, arg0);                                                                              \
  while (va_arg(ap, const char *) != NULL)                                                         \
    argc_++;                                                                                       \
  va_end(ap);                                                                                      \
  const char *argv[argc_ + 1];                                                                     \
  argv[0] = arg0;                                                                                  \
  va_start(ap, arg0);                                                                              \
  for (size_t i_ = 1; i_ <= argc_; i_++)                                                           \
    argv[i_] = va_arg(ap, const char *);

/* EXEC_LIST_FORMS defines execl, execlp and execle with the vector forms
 * in scope (execv, execvp, execve), with the attributes in ATTR. */
#define EXEC_LIST_FORMS(ATTR)                                                                      \
  ATTR int execl(const char *path, const char *arg0, ...) {                                        \
    va_list ap;                                                                                    \
    ARGV_FROM_LIST(arg0, ap, argv)                                                                 \
    va_end(ap);                                                                                    \
    return execv(path, (char *const *)argv);                                                       \
  }                                                                                                \
  ATTR int execlp(const char *file, const char *arg0, ...) {                                       \
    va_list ap;                                                                                    \
    ARGV_FROM_LIST(arg0, ap, argv)                                                                 \
    va_end(ap);                                                                                    \
    return execvp(file, (char *const *)argv);                                                      \
  }                                                                                                \
  ATTR int execle(const char *path, const char *arg0, ...) {                                       \
    va_list ap;                                                                                    \
    ARGV_FROM_LIST(arg0, ap, argv)                                                                 \
    char *const *envp = va_arg(ap, char *const *);                                                 \
    va_end(ap);                                                                                    \
    return execve(path, (char *const *)argv, envp);                                                \
  }

#endif
