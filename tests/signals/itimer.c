/* itimer: a program profiling itself with SIGPROF (setitimer(ITIMER_PROF),
 * as gprof and sampling profilers do) while it records regions
 * (tests/signals_test.go, TestProfilingSignalOnToolThreads).
 *
 *   itimer sigaction|signal|sigset
 *                             installs the handler so (sigaction: flags
 *                             SA_RESTART; sigset: System V's, flags 0), takes a 1 ms profiling timer
 *                             for 0.3 s while it records as fast as it can
 *                             (the writer's threads busy too), then prints
 *                             how its handler reads back
 *   itimer urg [oneshot]      a SIGURG handler instead (out-of-band data),
 *                             the same recording, and 5 SIGURGs sent to
 *                             itself with kill(): prints how SIGURG's
 *                             action read back before, how many calls the
 *                             handler had (5 untraced); oneshot: installed
 *                             with SA_RESETHAND, 2 SIGURGs (1 call untraced)
 *   itimer urg nodefer        a SIGURG handler with SA_NODEFER, raised once:
 *                             prints whether SIGURG was blocked in it (no)
 *   itimer altstack           a 16 KiB signal stack (sigaltstack, as for a
 *                             SIGSEGV handler) and a SIGALRM handler without
 *                             SA_ONSTACK that uses 64 KiB of stack, raised 5
 *                             times in regions: prints how many calls the
 *                             handler had and how it reads back
 *   itimer sigchld signalfd|sigtimedwait [oneshot]
 *                             first waits on a set it cannot read (EFAULT);
 *                             blocks SIGCHLD, as a program that waits for it
 *                             does, leaves its action at SIG_DFL, and 5 times
 *                             forks a child that exits, waits up to 3 s for
 *                             its SIGCHLD with signalfd (poll) or
 *                             sigtimedwait, and reaps it, in regions; then
 *                             installs a handler, unblocks SIGCHLD and forks
 *                             one more: prints how many of the 5 came, how
 *                             SIGCHLD's action read back before the handler
 *                             and after, and the handler's calls; oneshot:
 *                             the handler is installed with SA_RESETHAND
 *
 * The region calls go through dlsym, so that the -plain build runs without
 * the runtime (untraced, or under the preload shim). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks, urgs, alarms, chlds;
static void on_chld(int sig) {
  (void)sig;
  chlds++;
}
static void on_prof(int sig) {
  (void)sig;
  ticks++;
}
static void on_urg(int sig) {
  (void)sig;
  urgs++;
}
static volatile sig_atomic_t urg_blocked = -1;
static void on_urg_nodefer(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  urg_blocked = sigismember(&now, sig);
  urgs++;
}

static void on_alarm(int sig) {
  volatile char big[64 * 1024];
  memset((char *)big, sig, sizeof big);
  alarms += big[sizeof big - 1] == sig;
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int (*push)(const char *);
static int (*pop)(void);

/* record enters and leaves regions as fast as it can for secs seconds. */
static void record(double secs) {
  double start = seconds();
  while (seconds() - start < secs) {
    for (int i = 0; i < 1000 && push && pop; i++) {
      push("work");
      pop();
    }
  }
}

/* sigchld: 5 children, each one's SIGCHLD waited for with how. */
static int sigchld(const char *how, int oneshot) {
  /* A set the call cannot read fails it, and nothing else. */
  const struct timespec zero = {0, 0};
  int bad = sigtimedwait((const sigset_t *)8, NULL, &zero) == -1 && errno == EFAULT;
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, NULL);
  int fd = strcmp(how, "signalfd") == 0 ? signalfd(-1, &chld, SFD_CLOEXEC) : -1;
  int got = 0;
  for (int i = 0; i < 5; i++) {
    if (push)
      push("child");
    pid_t c = fork();
    if (c == 0)
      _exit(7);
    if (fd >= 0) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      struct signalfd_siginfo si;
      if (poll(&p, 1, 3000) == 1 && read(fd, &si, sizeof si) == (ssize_t)sizeof si)
        got++;
    } else {
      const struct timespec limit = {3, 0};
      if (sigtimedwait(&chld, NULL, &limit) == SIGCHLD)
        got++;
    }
    int status = 0;
    if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
      printf("itimer: child %d not reaped with status 7\n", i);
    if (pop)
      pop();
  }
  struct sigaction back;
  sigaction(SIGCHLD, NULL, &back);
  int dfl = back.sa_handler == SIG_DFL && !(back.sa_flags & SA_SIGINFO);
  /* Then a handler of the program's takes SIGCHLD, unblocked: one call for
   * one child, on whichever thread, and it reads back as installed (as
   * SIG_DFL after that call where SA_RESETHAND). */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_RESTART | (oneshot ? SA_RESETHAND : 0);
  sigaction(SIGCHLD, &sa, NULL);
  pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
  /* Time for a SIGCHLD no child sent, pending on another thread, to come
   * first. */
  const struct timespec ms = {0, 1000 * 1000};
  for (int w = 0; w < 100; w++)
    nanosleep(&ms, NULL);
  pid_t c = fork();
  if (c == 0)
    _exit(7);
  for (int w = 0; w < 3000 && !chlds; w++)
    nanosleep(&ms, NULL);
  waitpid(c, NULL, 0);
  sigaction(SIGCHLD, NULL, &back);
  printf("itimer: bad set %s; sigchld %d of 5 by %s, action %s; then handler %s, calls %d\n",
         bad ? "EFAULT" : "other", got, how, dfl ? "default" : "other",
         back.sa_handler == on_chld ? "ours" : back.sa_handler == SIG_DFL ? "default" : "other", (int)chlds);
  return 0;
}

int main(int argc, char **argv) {
  *(void **)&push = dlsym(RTLD_DEFAULT, "occa_tools_region_push");
  *(void **)&pop = dlsym(RTLD_DEFAULT, "occa_tools_region_pop");
  if ((argc == 3 || (argc == 4 && strcmp(argv[3], "oneshot") == 0)) && strcmp(argv[1], "sigchld") == 0 &&
      (strcmp(argv[2], "signalfd") == 0 || strcmp(argv[2], "sigtimedwait") == 0))
    return sigchld(argv[2], argc == 4);
  if ((argc != 2 && !(argc == 3 && strcmp(argv[1], "urg") == 0 &&
                      (strcmp(argv[2], "oneshot") == 0 || strcmp(argv[2], "nodefer") == 0))) ||
      (strcmp(argv[1], "sigaction") != 0 && strcmp(argv[1], "signal") != 0 && strcmp(argv[1], "sigset") != 0 &&
       strcmp(argv[1], "urg") != 0 && strcmp(argv[1], "altstack") != 0)) {
    fprintf(stderr, "usage: itimer sigaction|signal|sigset|urg [oneshot|nodefer]|altstack|"
                    "sigchld signalfd|sigtimedwait [oneshot]\n");
    return 2;
  }
  if (strcmp(argv[1], "altstack") == 0) {
    static char alt[16 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    for (int i = 0; i < 5 && push && pop; i++) {
      push("alarm");
      raise(SIGALRM);
      pop();
    }
    for (int i = 0; i < 5 && !(push && pop); i++)
      raise(SIGALRM);
    struct sigaction back;
    sigaction(SIGALRM, NULL, &back);
    printf("itimer: alarm handler %s, SA_ONSTACK %s, calls %d\n", back.sa_handler == on_alarm ? "ours" : "other",
           (back.sa_flags & SA_ONSTACK) ? "set" : "clear", (int)alarms);
    return 0;
  }
  if (strcmp(argv[1], "urg") == 0 && argc == 3 && strcmp(argv[2], "nodefer") == 0) {
    /* raise(): to this thread, one of the program's, where SA_NODEFER
     * leaves the signal unblocked in its handler. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_urg_nodefer;
    sa.sa_flags = SA_RESTART | SA_NODEFER;
    sigaction(SIGURG, &sa, NULL);
    raise(SIGURG);
    printf("itimer: urg nodefer, blocked in the handler %s, calls %d\n",
           urg_blocked == 1 ? "yes" : urg_blocked == 0 ? "no" : "unknown", (int)urgs);
    return 0;
  }
  if (strcmp(argv[1], "urg") == 0) {
    int oneshot = argc == 3;
    struct sigaction sa;
    sigaction(SIGURG, NULL, &sa);
    int was_default = sa.sa_handler == SIG_DFL && !(sa.sa_flags & SA_SIGINFO);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_urg;
    sa.sa_flags = SA_RESTART | (oneshot ? SA_RESETHAND : 0);
    sigaction(SIGURG, &sa, NULL);
    record(0.3);
    /* One at a time: traced, a SIGURG to the process may land on another
     * thread, and one still pending would swallow the next. */
    const struct timespec ms = {0, 1000 * 1000};
    for (int i = 0; i < (oneshot ? 1 : 5); i++) {
      sig_atomic_t before = urgs;
      kill(getpid(), SIGURG);
      for (int w = 0; w < 1000 && urgs == before; w++)
        nanosleep(&ms, NULL);
    }
    if (oneshot) /* one more, which SIG_DFL ignores */
      kill(getpid(), SIGURG);
    for (int w = 0; w < (oneshot ? 20 : 1); w++)
      nanosleep(&ms, NULL);
    struct sigaction back;
    sigaction(SIGURG, NULL, &back);
    printf("itimer: urg before %s; handler %s, SA_ONSTACK %s, calls %d\n", was_default ? "default" : "other",
           back.sa_handler == on_urg ? "ours" : back.sa_handler == SIG_DFL ? "default" : "other",
           (back.sa_flags & SA_ONSTACK) ? "set" : "clear", (int)urgs);
    return 0;
  }
  if (strcmp(argv[1], "signal") == 0) {
    signal(SIGPROF, on_prof);
  } else if (strcmp(argv[1], "sigset") == 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* programs still call it */
    sigset(SIGPROF, on_prof);
#pragma GCC diagnostic pop
  } else {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
  }
  struct itimerval on = {{0, 1000}, {0, 1000}}, off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_PROF, &on, NULL);
  record(0.3);
  setitimer(ITIMER_PROF, &off, NULL);
  struct sigaction back;
  sigaction(SIGPROF, NULL, &back);
  printf("itimer: handler %s, SA_ONSTACK %s, SA_RESTART %s, ticks %s\n",
         back.sa_handler == on_prof ? "ours" : "other", (back.sa_flags & SA_ONSTACK) ? "set" : "clear",
         (back.sa_flags & SA_RESTART) ? "set" : "clear", ticks > 0 ? "some" : "none");
  return 0;
}
