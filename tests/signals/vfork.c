/* vfork: a child of the traced process that reads back and resets its
 * signals before it ends, as spawners (and Python's subprocess, which uses
 * vfork) do before exec (tests/signals_test.go, TestChildSignalsLeaveParent).
 *
 *   vfork vfork|fork     the parent sets SIGPIPE to SIG_IGN, handlers for
 *                        SIGURG and SIGINT, a one-shot handler
 *                        (SA_RESETHAND) for SIGUSR1, and leaves SIGTERM at
 *                        SIG_DFL; the child raises SIGUSR1 (its handler
 *                        runs, its action resets), reads the four others
 *                        back, sets them to SIG_DFL (SIGTERM to SIG_IGN),
 *                        reads them again and exits with how many of the 9
 *                        read back as set; the parent then reads its own
 *                        back and raises SIGURG, SIGINT and SIGUSR1. Prints
 *                        both.
 *   vfork record         the parent records a marker "before", the vfork
 *                        child records 50,000 regions (past its thread's
 *                        buffer, into the runtime's slow path) and exits,
 *                        the parent records a marker "after". Prints how
 *                        the child ended.
 *
 * A vfork child shares the parent's memory: it writes nothing but its
 * result, and ends with _exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t urgs, ints, usr1s;
static void on_urg(int sig) { (void)sig, urgs++; }
static void on_int(int sig) { (void)sig, ints++; }
static void on_usr1(int sig) { (void)sig, usr1s++; }

static const int sigs[4] = {SIGPIPE, SIGURG, SIGINT, SIGTERM};

static void (*handler_of(int sig))(int) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigaction(sig, NULL, &sa);
  return sa.sa_handler;
}

static const char *name(void (*h)(int)) {
  return h == SIG_DFL   ? "dfl"
         : h == SIG_IGN ? "ign"
         : h == on_urg  ? "on_urg"
         : h == on_int  ? "on_int"
         : h == on_usr1 ? "on_usr1"
                        : "other";
}

/* The child's part: how many of its 9 read-backs are as set. */
static int child(void) {
  void (*before[4])(int) = {SIG_IGN, on_urg, on_int, SIG_DFL};
  void (*after[4])(int) = {SIG_DFL, SIG_DFL, SIG_DFL, SIG_IGN};
  raise(SIGUSR1);
  int right = handler_of(SIGUSR1) == SIG_DFL;
  for (int i = 0; i < 4; i++) {
    right += handler_of(sigs[i]) == before[i];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = after[i];
    sigaction(sigs[i], &sa, NULL);
    right += handler_of(sigs[i]) == after[i];
  }
  return right;
}

/* vfork record. The calls go through dlsym, so that the -plain build runs
 * without the runtime. */
static int record(void) {
  int (*marker)(const char *), (*push)(const char *), (*pop)(void);
  *(void **)&marker = dlsym(RTLD_DEFAULT, "occa_tools_marker");
  *(void **)&push = dlsym(RTLD_DEFAULT, "occa_tools_region_push");
  *(void **)&pop = dlsym(RTLD_DEFAULT, "occa_tools_region_pop");
  if (marker)
    marker("before");
  pid_t c = vfork();
  if (c == 0) {
    for (int i = 0; i < 50000 && push && pop; i++) {
      push("child");
      pop();
    }
    _exit(0);
  }
  int status = -1;
  if (c < 0 || waitpid(c, &status, 0) != c)
    status = -1;
  if (marker)
    marker("after");
  printf("vfork: record, child %s\n", status == 0 ? "exited 0" : "failed");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "record") == 0)
    return record();
  int use_vfork = argc == 2 && strcmp(argv[1], "vfork") == 0;
  if (argc != 2 || (!use_vfork && strcmp(argv[1], "fork") != 0)) {
    fprintf(stderr, "usage: vfork vfork|fork|record\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGURG, on_urg);
  signal(SIGINT, on_int);
  struct sigaction once;
  memset(&once, 0, sizeof once);
  once.sa_handler = on_usr1;
  once.sa_flags = SA_RESETHAND;
  sigaction(SIGUSR1, &once, NULL);
  pid_t c = use_vfork ? vfork() : fork();
  if (c == 0)
    _exit(child());
  int status = 0;
  if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
    printf("vfork: no child\n");
  void (*h[5])(int);
  for (int i = 0; i < 4; i++)
    h[i] = handler_of(sigs[i]);
  h[4] = handler_of(SIGUSR1);
  raise(SIGURG);
  raise(SIGINT);
  raise(SIGUSR1);
  printf("vfork: %s child read back %d of 9 as set; parent: PIPE %s, URG %s, INT %s, TERM %s, USR1 %s then %s; "
         "calls urg %d, int %d, usr1 %d\n",
         argv[1], WEXITSTATUS(status), name(h[0]), name(h[1]), name(h[2]), name(h[3]), name(h[4]),
         name(handler_of(SIGUSR1)), (int)urgs, (int)ints, (int)usr1s);
  return 0;
}
