/* execself: a program that replaces itself with exec (tests/exec_test.go).
 *
 *   execself K first    K regions "before", then execl of itself "second"
 *   execself K second   K regions "after", then exit 0
 *   execself K fail     K regions "before", an execv that fails (no such
 *                       file), K regions "after", then exit 0
 *
 * The region calls go through dlsym, so that the -plain build runs without
 * the runtime (untraced, or under the preload shim). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int (*push)(const char *);
static int (*pop)(void);

static void regions(const char *name, long k) {
  for (long i = 0; i < k && push && pop; i++) {
    push(name);
    pop();
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: execself K first|second|fail\n");
    return 2;
  }
  long k = atol(argv[1]);
  *(void **)&push = dlsym(RTLD_DEFAULT, "occa_tools_region_push");
  *(void **)&pop = dlsym(RTLD_DEFAULT, "occa_tools_region_pop");
  if (strcmp(argv[2], "second") == 0) {
    regions("after", k);
    printf("execself: second\n");
    return 0;
  }
  regions("before", k);
  fflush(stdout);
  if (strcmp(argv[2], "first") == 0) {
    execl("/proc/self/exe", argv[0], argv[1], "second", (char *)NULL);
    perror("execl");
    return 1;
  }
  char *none[] = {"none", NULL};
  if (execv("/nonexistent/execself", none) == 0)
    return 1;
  regions("after", k);
  printf("execself: exec failed\n");
  return 0;
}
