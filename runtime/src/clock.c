/* clock.c: the tick clock. TSC where the CPU says it is invariant and the
 * kernel trusts it as its clocksource (so it is synchronised across CPUs),
 * else CLOCK_MONOTONIC. The writer converts ticks to CLOCK_MONOTONIC ns with
 * sync points taken each cycle (ot_sync_point). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "rt.h"

int ot_use_tsc;

uint64_t ot_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int kernel_clocksource_is(const char *want) {
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
  if (!f)
    return 0;
  char buf[64] = {0};
  int ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok)
    return 0;
  buf[strcspn(buf, "\n")] = 0;
  return strcmp(buf, want) == 0;
}

int ot_tsc_usable(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
    return 0;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  if (!(d & (1u << 8))) /* invariant TSC */
    return 0;
  return kernel_clocksource_is("tsc");
#elif defined(__aarch64__)
  return 1; /* the generic timer's virtual counter runs at a constant rate */
#else
  return 0;
#endif
}

/* A (ticks, monotonic) pair read as close together as we can: the pair with
 * the narrowest tick bracket of a few tries, ticks taken at its midpoint. */
void ot_sync_point(uint64_t *ticks, int64_t *mono_ns) {
  if (!ot_use_tsc) {
    uint64_t t = ot_mono_ns();
    *ticks = t;
    *mono_ns = (int64_t)t;
    return;
  }
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 5; i++) {
    uint64_t t0 = ot_ticks();
    uint64_t m = ot_mono_ns();
    uint64_t t1 = ot_ticks();
    if (t1 - t0 < best_gap) {
      best_gap = t1 - t0;
      *ticks = t0 + (t1 - t0) / 2;
      *mono_ns = (int64_t)m;
    }
  }
}
