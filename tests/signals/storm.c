/* storm: a storm of signals sent to the process (kill) while two threads
 * change their handler as fast as they can, between three kinds: a plain
 * handler, a one-shot SA_SIGINFO one, and a System V signal() one
 * (SA_RESETHAND | SA_NODEFER) that installs itself again, as programs
 * built for strict ISO C get from signal(). The program's threads block
 * the signal: traced, the signals land on the core's threads, where the
 * program's handlers run on Go's 32 KiB signal stacks, behind the tool's
 * trampolines (tests/signals_test.go); untraced, one stays pending. Both
 * signals are ignored by default, so the storm does not end the program
 * between a reset and the next handler.
 *
 *   storm urg|chld SECONDS    prints the changes and calls made, which
 *                             vary from run to run, and ends with exit 0 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic long calls, changes;
static _Atomic int stop;
static int storm_sig = SIGURG;

static void plain(int sig) { (void)sig, calls++; }
static void oneshot(int sig, siginfo_t *info, void *ctx) { (void)sig, (void)info, (void)ctx, calls++; }

static void sysv(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = sysv;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigaction(sig, &sa, NULL);
  calls++;
}

static void *changer(void *arg) {
  for (long k = (long)arg; !stop; k++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    switch (k % 3) {
    case 0:
      sa.sa_handler = plain;
      sa.sa_flags = SA_RESTART;
      break;
    case 1:
      sa.sa_sigaction = oneshot;
      sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
      break;
    default:
      sa.sa_handler = sysv;
      sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    }
    sigaction(storm_sig, &sa, NULL);
    changes++;
  }
  return arg;
}

static void *sender(void *arg) {
  while (!stop) {
    kill(getpid(), storm_sig);
    sched_yield();
  }
  return arg;
}

int main(int argc, char **argv) {
  double seconds = argc == 3 ? atof(argv[2]) : 0;
  const char *names[] = {"urg", "chld"};
  const int sigs[] = {SIGURG, SIGCHLD};
  int named = 0;
  for (int i = 0; i < 2; i++)
    if (argc == 3 && strcmp(argv[1], names[i]) == 0)
      storm_sig = sigs[i], named = 1;
  if (!named || seconds <= 0 || seconds > 60) {
    fprintf(stderr, "usage: storm urg|chld SECONDS\n");
    return 2;
  }
  /* Blocked in every thread of the program: the signals go to the
   * threads that leave it unblocked, the core's, and the program's own
   * handlers do not nest on its stacks (SA_NODEFER), which untraced would
   * overflow them too, given a fast enough storm. */
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, storm_sig);
  pthread_sigmask(SIG_BLOCK, &one, NULL);
  pthread_t t[4];
  void *(*fn[4])(void *) = {changer, changer, sender, sender};
  for (long i = 0; i < 4; i++)
    if (pthread_create(&t[i], NULL, fn[i], (void *)i) != 0) {
      fprintf(stderr, "storm: pthread_create failed\n");
      return 1;
    }
  /* Till the deadline: the signals cut each sleep short. */
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  long ns = end.tv_nsec + (long)((seconds - (long)seconds) * 1e9);
  end.tv_sec += (time_t)seconds + ns / 1000000000L;
  end.tv_nsec = ns % 1000000000L;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) != 0)
    ;
  stop = 1;
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  signal(storm_sig, SIG_IGN); /* discards the one pending */
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  printf("storm: %ld changes, %ld calls\n", (long)changes, (long)calls);
  return 0;
}
