/* early: a handler with SA_NODEFER that was in place before the tool started
 * (set from .preinit_array, as a parent or an earlier library's constructor
 * would leave it), for a signal the Go runtime leaves unblocked on its
 * threads or sends them to preempt (tests/signals_test.go,
 * TestEarlyNoDeferHandler).
 *
 *   early chld|prof|stkflt|urg
 *                             blocks the signal in main, its only thread,
 *                             and sends it to the process 20 times, each
 *                             time waiting up to 1 s for a call on another
 *                             thread (traced, the core's; untraced there is
 *                             none, and it stops after the first); then
 *                             raises it on main, unblocked. Prints how the
 *                             handler reads back, the calls on other
 *                             threads and how many of them ran with the
 *                             signal unblocked, and whether it was unblocked
 *                             in the call on main
 *
 * The calls on other threads run on a core thread's small signal stack,
 * where the signal must stay blocked: with SA_NODEFER, a storm of them
 * would nest there until the stack overflowed. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *const names[] = {"chld", "prof", "stkflt", "urg"};
static const int sigs[] = {SIGCHLD, SIGPROF, SIGSTKFLT, SIGURG};
static int sig;
static pid_t main_tid;
static volatile sig_atomic_t on_main, on_others, unblocked_on_others, unblocked_on_main = -1;

static void on_sig(int s) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  int unblocked = !sigismember(&now, s);
  if ((pid_t)syscall(SYS_gettid) == main_tid) {
    on_main++;
    unblocked_on_main = unblocked;
  } else {
    on_others++;
    unblocked_on_others += unblocked;
  }
}

/* Runs before every constructor: the handler the tool finds. */
static void before_tool(int argc, char **argv, char **envp) {
  (void)envp;
  for (int i = 0; argc == 2 && i < 4; i++)
    if (strcmp(argv[1], names[i]) == 0)
      sig = sigs[i];
  if (!sig)
    return;
  main_tid = (pid_t)syscall(SYS_gettid);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sig;
  sa.sa_flags = SA_RESTART | SA_NODEFER;
  sigaction(sig, &sa, NULL);
}
__attribute__((section(".preinit_array"), used)) static void (*preinit)(int, char **, char **) = before_tool;

int main(int argc, char **argv) {
  (void)argc; /* read by before_tool */
  if (!sig) {
    fprintf(stderr, "usage: early chld|prof|stkflt|urg\n");
    return 2;
  }
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_BLOCK, &one, NULL);
  const struct timespec ms = {0, 1000 * 1000};
  for (int i = 0; i < 20; i++) {
    sig_atomic_t before = on_others;
    kill(getpid(), sig);
    for (int w = 0; w < 1000 && on_others == before; w++)
      nanosleep(&ms, NULL);
    if (on_others == before)
      break;
  }
  /* Untraced, the signal sent first is still pending: it comes here. */
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  on_main = 0;
  raise(sig);
  struct sigaction back;
  sigaction(sig, NULL, &back);
  printf("early: %s handler %s, SA_NODEFER %s, SA_ONSTACK %s; other threads %d calls, %d unblocked; "
         "main %d call, unblocked %s\n",
         argv[1], back.sa_handler == on_sig ? "ours" : "other", (back.sa_flags & SA_NODEFER) ? "set" : "clear",
         (back.sa_flags & SA_ONSTACK) ? "set" : "clear", (int)on_others, (int)unblocked_on_others, (int)on_main,
         unblocked_on_main == 1 ? "yes" : unblocked_on_main == 0 ? "no" : "unknown");
  return 0;
}
