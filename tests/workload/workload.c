/*
 * workload: a stand-in OCCA application that reports through the occa-tools
 * ABI exactly what OCCA would, in deterministic counts, so tests can assert
 * exact event counts, bytes and ordering for every config.
 *
 * Scenario (T worker threads, S steps; tests/workload/README.md has the
 * resulting counts):
 *   main:    sets up CUDA:0, CUDA:1 and Serial:-1, two streams each; builds
 *            axpy, dot and gemm_small on each CUDA device (the second build
 *            of each name hits the JIT cache) and init_fill on Serial, runs
 *            init_fill once.
 *   worker w (device CUDA:w%2): allocates a (1 MiB, tag "halo"),
 *            b (64 KiB, tag "scratch"), c (16 MiB, untagged); copies 1 MiB
 *            host->a; then each step: push "timestep", set stream s[step%2],
 *            run axpy x3 (device time reported), dot x1, gemm_small x2,
 *            copy a->c 1 MiB async on the stream, copy b->host 64 KiB;
 *            every 5th step a "checkpoint" marker and a stream finish; pop.
 *            Then device finish and frees a, b, c.
 *   main:    region "teardown" with marker "done", device finish x3.
 *
 * Usage: workload [-t threads] [-s steps] [-w us-per-step]
 *                 [--tag-memory] [--api-pause] [--sleep-ms N] [--fork]
 *                 [--kill-self SIGNAL] [--spin-forever] [--toggle-at STEP]...
 *                 [--report-maps] [--install-handler] [--flush-kill] [--tag-dot]
 *                 [--critical] [--default-signal SIGNAL] [--raw-fork N]
 *                 [--child-signal SIGNAL] [--count-signal SIGNAL]
 * Exit status 0; it prints one line "workload: threads=T steps=S".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "occa_tools.h"

#define MiB (1024u * 1024u)

typedef struct kernel {
  occa_tools_data_t slot;
  const char *name;
} kernel_t;

typedef struct device {
  occa_tools_data_t slot;
  occa_tools_data_t streams[2];
  kernel_t axpy, dot, gemm;
} device_t;

static device_t cuda[2], serial;
static kernel_t init_fill = {OCCA_TOOLS_DATA_NONE, "init_fill"};
static int steps = 10, nthreads = 2, step_us = 0, tag_memory = 0, api_pause = 0;
static int spin_forever = 0;
static int toggle_at[8], ntoggle = 0; /* steps at whose start worker 0 raises SIGUSR2 */

static void sleep_us(int us) {
  if (us <= 0)
    return;
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void setup(device_t *d, const char *mode, int64_t index, const char *props) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_device_setup_begin(&c, mode, index, props);
  occa_tools_device_setup_end(&c, &d->slot, OCCA_TOOLS_OK);
  for (int i = 0; i < 2; i++)
    occa_tools_stream_create(&d->slot, &d->streams[i]);
}

static void build(device_t *d, kernel_t *k, const char *name, const char *props, int hit) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  k->name = name;
  occa_tools_build_begin(&c, &d->slot, name, "kernels.okl", props, (uint64_t)strlen(props));
  occa_tools_build_end(&c, &k->slot, hit ? OCCA_TOOLS_CACHE_HIT : OCCA_TOOLS_CACHE_MISS,
                       OCCA_TOOLS_OK);
}

static void run(device_t *d, kernel_t *k, occa_tools_data_t *stream, int device_time) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  uint64_t t0 = occa_tools_now_ns();
  occa_tools_run_begin(&c, &k->slot, k->name, &d->slot, stream);
  occa_tools_run_end(&c, OCCA_TOOLS_OK);
  if (device_time && c.correlation_id)
    occa_tools_kernel_device_time(c.correlation_id, t0 + 100, t0 + 600);
}

static void alloc(device_t *d, occa_tools_data_t *m, uint64_t bytes, const char *tag, void *addr) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_memory_alloc_begin(&c, &d->slot, bytes, tag);
  occa_tools_memory_alloc_end(&c, m, addr, OCCA_TOOLS_OK);
}

static void release(occa_tools_data_t *m) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_memory_free_begin(&c, m);
  occa_tools_memory_free_end(&c, OCCA_TOOLS_OK);
}

static void copy(occa_tools_copy_direction_t dir, occa_tools_data_t *src, occa_tools_data_t *dst,
                 uint64_t bytes, occa_tools_data_t *stream) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_copy_begin(&c, dir, src, dst, bytes, stream != NULL, stream);
  occa_tools_copy_end(&c, OCCA_TOOLS_OK);
}

static void *worker(void *arg) {
  int w = (int)(intptr_t)arg;
  device_t *d = &cuda[w % 2];
  occa_tools_data_t a = OCCA_TOOLS_DATA_NONE, b = OCCA_TOOLS_DATA_NONE, cbuf = OCCA_TOOLS_DATA_NONE;
  /* Fake but distinct device addresses, for occa_tools_tag_memory. */
  uintptr_t base = 0x100000000ull * (uintptr_t)(w + 1);
  alloc(d, &a, 1 * MiB, "halo", (void *)(base + 0x0));
  alloc(d, &b, 64 * 1024, "scratch", (void *)(base + 0x1000000));
  alloc(d, &cbuf, 16 * MiB, NULL, (void *)(base + 0x2000000));
  if (tag_memory)
    occa_tools_tag_memory((void *)(base + 0x2000000), "big");
  copy(OCCA_TOOLS_COPY_H2D, NULL, &a, 1 * MiB, NULL);
  for (int step = 1; step <= steps || spin_forever; step++) {
    occa_tools_data_t *s = &d->streams[step % 2];
    for (int i = 0; i < ntoggle; i++)
      if (w == 0 && toggle_at[i] == step)
        raise(SIGUSR2); /* delivered to this thread before raise returns */
    occa_tools_region_push("timestep");
    occa_tools_stream_set(&d->slot, s);
    for (int i = 0; i < 3; i++)
      run(d, &d->axpy, s, 1);
    run(d, &d->dot, s, 0);
    for (int i = 0; i < 2; i++)
      run(d, &d->gemm, s, 0);
    copy(OCCA_TOOLS_COPY_D2D, &a, &cbuf, 1 * MiB, s);
    copy(OCCA_TOOLS_COPY_D2H, &b, NULL, 64 * 1024, NULL);
    if (step % 5 == 0) {
      occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
      occa_tools_marker("checkpoint");
      occa_tools_stream_finish_begin(&c, s);
      occa_tools_stream_finish_end(&c);
    }
    occa_tools_region_pop();
    sleep_us(step_us);
  }
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  occa_tools_device_finish_begin(&c, &d->slot);
  occa_tools_device_finish_end(&c);
  release(&a);
  release(&b);
  release(&cbuf);
  return NULL;
}

static void on_term(int sig) {
  (void)sig;
  static const char msg[] = "workload: handler ran\n";
  ssize_t n = write(2, msg, sizeof msg - 1);
  (void)n;
  exit(3);
}

static volatile sig_atomic_t counted;
static void on_counted(int sig) { (void)sig, counted++; }

/* --count-signal: once its handler is in, says so, waits up to 20 s for
 * the signal, then 500 ms for another copy of it, and prints how many
 * came. */
static void count_signal(int sig) {
  printf("workload: waiting for signal %d\n", sig);
  fflush(stdout);
  const struct timespec ms = {0, 1000 * 1000};
  for (int i = 0; i < 20000 && !counted; i++)
    nanosleep(&ms, NULL);
  for (int i = 0; i < 500; i++)
    nanosleep(&ms, NULL);
  printf("workload: signal %d came %d times\n", sig, (int)counted);
  fflush(stdout);
}

/* Says whether the Go core is mapped and how many threads the process has:
 * without a config, neither the core nor its threads may exist. */
static void report_maps(void) {
  char line[512];
  int core = 0, threads = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "libocca_tools_core"))
      core = 1;
  if (f)
    fclose(f);
  f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "Threads:", 8))
      threads = atoi(line + 8);
  if (f)
    fclose(f);
  printf("workload: core_loaded=%d threads=%d\n", core, threads);
}

static void on_critical(void *user, occa_tools_event_kind_t kind, uint64_t count,
                        const char *message) {
  (void)user;
  fprintf(stderr, "workload: critical kind=%d count=%llu: %s\n", (int)kind,
          (unsigned long long)count, message);
}

static int signal_number(const char *name) {
  if (!strcmp(name, "TERM")) return SIGTERM;
  if (!strcmp(name, "INT")) return SIGINT;
  if (!strcmp(name, "HUP")) return SIGHUP;
  if (!strcmp(name, "QUIT")) return SIGQUIT;
  if (!strcmp(name, "USR1")) return SIGUSR1;
  if (!strcmp(name, "KILL")) return SIGKILL;
  if (!strcmp(name, "ABRT")) return SIGABRT;
  if (!strcmp(name, "USR2")) return SIGUSR2;
  return atoi(name);
}

int main(int argc, char **argv) {
  int do_fork = 0, kill_self = 0, sleep_ms = 0, maps = 0, handler = 0;
  int flush_kill = 0, tag_dot = 0, critical = 0, default_signal = 0, raw_fork = 0;
  int child_signal = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-t") && i + 1 < argc) nthreads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-s") && i + 1 < argc) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-w") && i + 1 < argc) step_us = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc) sleep_ms = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--kill-self") && i + 1 < argc) kill_self = signal_number(argv[++i]);
    else if (!strcmp(argv[i], "--toggle-at") && i + 1 < argc && ntoggle < 8) toggle_at[ntoggle++] = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--tag-memory")) tag_memory = 1;
    else if (!strcmp(argv[i], "--report-maps")) maps = 1;
    else if (!strcmp(argv[i], "--flush-kill")) flush_kill = 1;
    else if (!strcmp(argv[i], "--tag-dot")) tag_dot = 1;
    else if (!strcmp(argv[i], "--critical")) critical = 1;
    else if (!strcmp(argv[i], "--install-handler")) handler = 1;
    else if (!strcmp(argv[i], "--api-pause")) api_pause = 1;
    else if (!strcmp(argv[i], "--fork")) do_fork = 1;
    else if (!strcmp(argv[i], "--raw-fork") && i + 1 < argc) raw_fork = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--child-signal") && i + 1 < argc) child_signal = signal_number(argv[++i]);
    else if (!strcmp(argv[i], "--default-signal") && i + 1 < argc) default_signal = signal_number(argv[++i]);
    else if (!strcmp(argv[i], "--count-signal") && i + 1 < argc) count = signal_number(argv[++i]);
    else if (!strcmp(argv[i], "--spin-forever")) spin_forever = 1;
    else {
      fprintf(stderr, "workload: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (default_signal) /* whatever the parent left (nohup leaves SIGHUP ignored) */
    signal(default_signal, SIG_DFL);
  if (handler) /* installed after the tool's: it must still run */
    signal(SIGTERM, on_term);
  occa_tools_api_t api = {sizeof api, 0, 0, NULL, NULL};
  occa_tools_connect(OCCA_TOOLS_ABI_VERSION, "workload", &api);
  if (critical)
    occa_tools_set_critical_callback(on_critical, NULL);
  if (count) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_counted;
    sa.sa_flags = SA_RESTART;
    sigaction(count, &sa, NULL);
    count_signal(count);
  }

  setup(&cuda[0], "CUDA", 0, "{mode: 'CUDA', device_id: 0}");
  setup(&cuda[1], "CUDA", 1, "{mode: 'CUDA', device_id: 1}");
  setup(&serial, "Serial", -1, "{mode: 'Serial'}");
  for (int i = 0; i < 2; i++) {
    build(&cuda[i], &cuda[i].axpy, "axpy", "{occa_tools_tag: 'hot'}", i);
    build(&cuda[i], &cuda[i].dot, "dot", "{}", i);
    build(&cuda[i], &cuda[i].gemm, "gemm_small", "{defines: {N: 16}}", i);
  }
  build(&serial, &init_fill, "init_fill", "{}", 0);
  run(&serial, &init_fill, NULL, 0);

  if (api_pause) /* the control API: nothing recorded until start */
    occa_tools_start();
  if (tag_dot) /* tags every kernel named dot, built already or not */
    occa_tools_tag_kernel("dot", "hot");

  if (do_fork) { /* a child that does not exec must not touch the trace */
    pid_t pid = fork();
    if (pid == 0) {
      run(&serial, &init_fill, NULL, 0);
      occa_tools_marker("in-child");
      _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
  }
  if (raw_fork) { /* no atfork handler runs: the child is known by its pid */
#ifdef SYS_fork
    pid_t pid = (pid_t)syscall(SYS_fork);
#else
    pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
    if (pid == 0) {
      alarm(10); /* a hang ends the child, and the parent reports it */
      for (int i = 0; i < raw_fork; i++) /* past every buffer of the pool */
        run(&serial, &init_fill, NULL, 0);
      occa_tools_marker("in-child");
      if (child_signal) { /* default action: it ends the child */
        signal(child_signal, SIG_DFL);
        kill(getpid(), child_signal);
      }
      exit(0); /* the destructors run */
    }
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) != pid)
      pid = -1;
    int ok = child_signal ? WIFSIGNALED(st) && WTERMSIG(st) == child_signal
                          : WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (pid < 0 || !ok) {
      fprintf(stderr, "workload: the raw-forked child failed (status %#x)\n", st);
      return 1;
    }
  }

  pthread_t th[64];
  if (nthreads > 64) nthreads = 64;
  for (int i = 0; i < nthreads; i++)
    pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
  if (sleep_ms)
    sleep_us(sleep_ms * 1000);
  if (kill_self)
    raise(kill_self);
  for (int i = 0; i < nthreads; i++)
    pthread_join(th[i], NULL);
  if (flush_kill) { /* everything so far must be in the file, then die hard */
    if (occa_tools_flush() != 0)
      fprintf(stderr, "workload: occa_tools_flush failed\n");
    raise(SIGKILL);
  }

  occa_tools_region_push("teardown");
  occa_tools_marker("done");
  occa_tools_region_pop();
  device_t *all[3] = {&cuda[0], &cuda[1], &serial};
  for (int i = 0; i < 3; i++) {
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
    occa_tools_device_finish_begin(&c, &all[i]->slot);
    occa_tools_device_finish_end(&c);
  }
  if (maps)
    report_maps();
  printf("workload: threads=%d steps=%d\n", nthreads, steps);
  return 0;
}
