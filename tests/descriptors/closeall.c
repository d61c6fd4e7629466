/*
 * closeall: a program that closes every descriptor above 2, as daemons and
 * process-spawning code do, then opens and writes a file of its own, while
 * it records events (tests/descriptors_test.go).
 *
 *   closeall loop|range|from|stderr|dup2 OUTFILE
 *
 * loop: close() of 3..4095; range: close_range(3, ~0U, 0); from:
 * closefrom(3); stderr: close(2) only, so OUTFILE becomes descriptor 2;
 * dup2: /dev/null dup2'ed onto 3..63, as launchers set up fixed numbers. Markers "before" (N), then the closing, then "after" (N),
 * a pause of several flush intervals, "late" (N). OUTFILE is opened after
 * the closing (it takes the lowest free descriptor, one the tool may have
 * had) and gets exactly "app data\n". Prints one line: how many close()
 * calls succeeded (loop), and the descriptor OUTFILE got.
 *
 * Built twice (Makefile): closeall links the runtime, closeall-plain does
 * not (untraced, or traced through the preload shim); both find
 * occa_tools_marker at run time, and record nothing without it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


enum { N = 50000 };

static int (*marker)(const char *);

static void markers(const char *name) {
  for (int i = 0; marker && i < N; i++)
    marker(name);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: closeall loop|range|from|stderr|dup2 OUTFILE\n");
    return 2;
  }
  *(void **)&marker = dlsym(RTLD_DEFAULT, "occa_tools_marker");
  markers("before");
  int closed = 0;
  if (!strcmp(argv[1], "loop")) {
    for (int fd = 3; fd < 4096; fd++)
      closed += close(fd) == 0;
  } else if (!strcmp(argv[1], "range")) {
    if (close_range(3, ~0U, 0) != 0) {
      perror("close_range");
      return 1;
    }
  } else if (!strcmp(argv[1], "from")) {
    closefrom(3);
  } else if (!strcmp(argv[1], "stderr")) {
    close(2);
  } else if (!strcmp(argv[1], "dup2")) {
    int null = open("/dev/null", O_WRONLY);
    for (int fd = 3; fd < 64; fd++)
      if (fd != null && dup2(null, fd) != fd) {
        perror("dup2");
        return 1;
      }
  } else {
    fprintf(stderr, "closeall: unknown mode %s\n", argv[1]);
    return 2;
  }
  int fd = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) {
    perror(argv[2]);
    return 1;
  }
  markers("after");
  struct timespec pause = {0, 300 * 1000 * 1000}; /* a few flush intervals */
  nanosleep(&pause, NULL);
  markers("late");
  if (write(fd, "app data\n", 9) != 9 || close(fd) != 0) {
    perror(argv[2]);
    return 1;
  }
  printf("closeall: closed=%d fd=%d\n", closed, fd);
  return 0;
}
