/*
 * sigprog: what a program observes of one exit signal, printed line by line
 * so that a traced run can be compared with an untraced one
 * (tests/signals_test.go). Built twice: linked against libocca_tools
 * (build/tests/sigprog) and without it (build/tests/sigprog-plain, for
 * untraced runs and for the preload shim).
 *
 * Usage: sigprog SIG BEFORE AFTER FLAGS [HANDLED]
 *   SIG     INT, TERM, HUP, QUIT, ABRT, PIPE, ALRM, XCPU, XFSZ, USR1 or USR2
 *   BEFORE  the disposition set before the tool starts (from .preinit_array,
 *           which runs before every library constructor, as a parent or an
 *           earlier library would leave it): dfl, ign or handler
 *   AFTER   the disposition set by main, after the tool started: none, dfl,
 *           ign, handler (sigaction), signal (signal()), sysv (sysv_signal()),
 *           interrupt (siginterrupt(SIG, 1), then signal()),
 *           signal-interrupt (signal(), then siginterrupt(SIG, 1)),
 *           sigignore (sigignore()) or ssignal (ssignal())
 *   FLAGS   for a handler set with sigaction: none or a comma list of
 *           restart, resethand, nodefer, siginfo, mask (SIGUSR2 in sa_mask)
 *   HANDLED deliveries of a handled signal at the end, each after a marker
 *           (0 by default)
 * Then, in order: the read-back of the disposition; one delivery to the main
 * thread while it blocks in read() on a pipe (EINTR or restarted); the
 * read-back again; a second delivery; a delivery from inside the handler
 * (nesting, SA_NODEFER); HANDLED deliveries; exit(0). A delivery whose
 * action is the default one ends the process there, by that signal.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "occa_tools.h"

static int sig;
static pid_t main_tid;
static _Atomic int count, depth, max_depth, nest, in_read;
static _Atomic int info_bad, mask_bad;
static int want_mask;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  line[n++] = '\n';
  ssize_t w = write(1, line, (size_t)n);
  (void)w;
}

static void body(void) {
  int d = atomic_fetch_add(&depth, 1) + 1;
  if (d > atomic_load(&max_depth))
    atomic_store(&max_depth, d);
  atomic_fetch_add(&count, 1);
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, NULL, &cur);
  if (sigismember(&cur, SIGUSR2) != want_mask)
    atomic_store(&mask_bad, 1);
  if (atomic_exchange(&nest, 0))
    raise(sig); /* at once with SA_NODEFER, after the return without */
  atomic_fetch_sub(&depth, 1);
}

static void on_plain(int s) {
  if (s != sig)
    atomic_store(&info_bad, 1);
  body();
}

static void on_info(int s, siginfo_t *info, void *uc) {
  if (s != sig || !info || info->si_signo != sig || info->si_code != SI_TKILL || !uc)
    atomic_store(&info_bad, 1);
  body();
}

static int parse_signal(const char *name) {
  static const struct {
    const char *name;
    int sig;
  } names[] = {{"INT", SIGINT},   {"TERM", SIGTERM}, {"HUP", SIGHUP},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
               {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
               {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i].name))
      return names[i].sig;
  return 0;
}

static struct sigaction handler_action(const char *flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_plain;
  if (strstr(flags, "restart"))
    sa.sa_flags |= SA_RESTART;
  if (strstr(flags, "resethand"))
    sa.sa_flags |= SA_RESETHAND;
  if (strstr(flags, "nodefer"))
    sa.sa_flags |= SA_NODEFER;
  if (strstr(flags, "siginfo")) {
    sa.sa_flags |= SA_SIGINFO;
    sa.sa_sigaction = on_info;
  }
  if (strstr(flags, "mask"))
    sigaddset(&sa.sa_mask, SIGUSR2);
  return sa;
}

static void usage(void) {
  static const char msg[] = "usage: sigprog SIG dfl|ign|handler none|dfl|ign|handler|signal|sysv|interrupt|signal-interrupt|"
                            "sigignore|ssignal FLAGS [HANDLED]\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(2);
}

/* Runs before every constructor: the disposition the tool finds. */
static void before_tool(int argc, char **argv, char **envp) {
  (void)envp;
  if (argc < 5 || !(sig = parse_signal(argv[1])))
    usage();
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  struct sigaction sa;
  if (!strcmp(argv[2], "handler")) {
    sa = handler_action(argv[4]);
  } else {
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = !strcmp(argv[2], "ign") ? SIG_IGN : SIG_DFL;
  }
  sigaction(sig, &sa, NULL);
}
__attribute__((section(".preinit_array"), used)) static void (*preinit)(int, char **, char **) = before_tool;

static void readback(const char *label) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigaction(sig, NULL, &sa);
  const char *h = sa.sa_handler == SIG_DFL ? "dfl" : sa.sa_handler == SIG_IGN ? "ign"
                  : (sa.sa_handler == on_plain || sa.sa_sigaction == on_info) ? "handler"
                                                                                : "OTHER";
  char mask[80] = "";
  for (int s = 1; s < 32; s++)
    if (sigismember(&sa.sa_mask, s))
      snprintf(mask + strlen(mask), sizeof mask - strlen(mask), "%s%d", *mask ? "," : "", s);
  say("%s: %s flags=%#x mask=[%s]", label, h, (unsigned)sa.sa_flags, mask);
}

static int blocked_in_read(void) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)main_tid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the name may hold spaces */
  return p && p[1] == ' ' && p[2] == 'S';
}

static int pipefd[2];
static pthread_t main_thread;

static void nap_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* Delivers the signal to the main thread once it sleeps in read(), then,
 * once a handler ran (or at once when none will), feeds the pipe. */
static void *deliver(void *arg) {
  int handled = *(int *)arg;
  while (!atomic_load(&in_read) || !blocked_in_read())
    nap_ms(1);
  int before = atomic_load(&count);
  pthread_kill(main_thread, sig);
  for (int i = 0; handled && atomic_load(&count) == before && i < 20000; i++)
    nap_ms(1);
  char c = 'x';
  ssize_t w = write(pipefd[1], &c, 1);
  (void)w;
  return NULL;
}

static int handled_now(void) {
  struct sigaction sa;
  sigaction(sig, NULL, &sa);
  return sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

int main(int argc, char **argv) {
  (void)argc;
  main_tid = (pid_t)syscall(SYS_gettid);
  main_thread = pthread_self();
  const char *after = argv[3], *flags = argv[4];
  int handled_rounds = argc > 5 ? atoi(argv[5]) : 0;
  want_mask = strstr(flags, "mask") != NULL;

  /* The tracing API, when the tool is part of the process. */
  int (*marker)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "occa_tools_marker");
  int (*connect)(uint32_t, const char *, occa_tools_api_t *) =
      (int (*)(uint32_t, const char *, occa_tools_api_t *))dlsym(RTLD_DEFAULT, "occa_tools_connect");
  if (connect) {
    occa_tools_api_t api = {.size = sizeof api};
    connect(OCCA_TOOLS_ABI_VERSION, "sigprog", &api);
  }

  if (!strcmp(after, "handler")) {
    struct sigaction sa = handler_action(flags);
    if (sigaction(sig, &sa, NULL) != 0)
      say("sigaction failed: %s", strerror(errno));
  } else if (!strcmp(after, "dfl") || !strcmp(after, "ign")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = !strcmp(after, "ign") ? SIG_IGN : SIG_DFL;
    sigaction(sig, &sa, NULL);
  } else if (!strcmp(after, "signal")) {
    want_mask = 0;
    if (signal(sig, on_plain) != SIG_DFL)
      say("signal() returned another handler than the default");
  } else if (!strcmp(after, "interrupt") || !strcmp(after, "signal-interrupt")) {
    /* A handler whose signal interrupts system calls (EINTR), as one that
     * times out a blocking read() with alarm(). */
    want_mask = 0;
    int first = !strcmp(after, "interrupt");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* programs still call it */
    if (first && siginterrupt(sig, 1) != 0)
      say("siginterrupt failed: %s", strerror(errno));
    if (signal(sig, on_plain) != SIG_DFL)
      say("signal() returned another handler than the default");
    if (!first && siginterrupt(sig, 1) != 0)
      say("siginterrupt failed: %s", strerror(errno));
#pragma GCC diagnostic pop
  } else if (!strcmp(after, "ssignal")) {
    want_mask = 0;
    if (ssignal(sig, on_plain) != SIG_DFL)
      say("ssignal() returned another handler than the default");
  } else if (!strcmp(after, "sigignore")) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* programs still call it */
    if (sigignore(sig) != 0)
      say("sigignore failed: %s", strerror(errno));
#pragma GCC diagnostic pop
  } else if (!strcmp(after, "sysv")) {
    want_mask = 0;
    if (sysv_signal(sig, on_plain) != SIG_DFL)
      say("sysv_signal() returned another handler than the default");
  } else if (strcmp(after, "none")) {
    usage();
  }
  readback("first");
  if (marker)
    marker("before-read");

  /* One delivery while the main thread blocks in read(). */
  if (pipe(pipefd) != 0)
    return 2;
  int handled = handled_now();
  pthread_t th;
  pthread_create(&th, NULL, deliver, &handled);
  atomic_store(&in_read, 1);
  char c;
  ssize_t r = read(pipefd[0], &c, 1);
  int err = errno;
  atomic_store(&in_read, 0);
  pthread_join(th, NULL);
  say("read: %s count=%d", r == 1 ? "restarted or not interrupted" : r < 0 && err == EINTR ? "EINTR" : "OTHER",
      atomic_load(&count));
  readback("after one");

  raise(sig);
  say("second: count=%d", atomic_load(&count));

  atomic_store(&nest, 1);
  raise(sig);
  atomic_store(&nest, 0);
  say("nested: count=%d max_depth=%d", atomic_load(&count), atomic_load(&max_depth));

  for (int i = 0; i < handled_rounds; i++) {
    if (marker)
      marker("handled");
    raise(sig);
  }
  say("end: count=%d info_ok=%d mask_ok=%d", atomic_load(&count), !atomic_load(&info_bad),
      !atomic_load(&mask_bad));
  exit(0);
}
