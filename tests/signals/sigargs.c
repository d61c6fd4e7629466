/* sigargs: what the signal functions the tool interposes return, and the
 * errno they set, for every kind of signal number: out of range, the
 * ones no handler may take (SIGKILL, SIGSTOP), the C library's own (32
 * and 33), exit signals the tool manages, signals the Go runtime leaves
 * unblocked or sends (SIGCHLD, SIGPROF, SIGSTKFLT, SIGURG) and real-time
 * ones (tests/signals_test.go, TestSignalArgumentsTracedAsUntraced).
 *
 *   sigargs     one line per signal number: sigaction() with a handler,
 *               a read-back, SIG_DFL; signal(); siginterrupt(); sigset();
 *               sigignore(); each as result/errno */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static void handler(int sig) { (void)sig; }

int main(void) {
  static const int sigs[] = {-1, 0, SIGHUP, SIGINT, SIGKILL, SIGSTKFLT, SIGCHLD, SIGSTOP, SIGURG, SIGPROF,
                             32, 33, 34, 64, 65, 1000};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    int sig = sigs[i], r[7], e[7];
    struct sigaction act, old, dfl;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
#define CALL(k, expr) (errno = 0, r[k] = (expr), e[k] = errno)
    CALL(0, sigaction(sig, &act, &old));
    CALL(1, sigaction(sig, NULL, &old));
    CALL(2, sigaction(sig, &dfl, NULL));
    CALL(3, signal(sig, handler) == SIG_ERR ? -1 : 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* programs still call them */
    CALL(4, siginterrupt(sig, 1));
    CALL(5, sigset(sig, SIG_DFL) == SIG_ERR ? -1 : 0);
    CALL(6, sigignore(sig));
#pragma GCC diagnostic pop
    printf("sigargs: %d:", sig);
    for (int k = 0; k < 7; k++)
      printf(" %d/%d", r[k], e[k]);
    printf("\n");
  }
  return 0;
}
