// launchcost: the cost of one OCCA kernel launch, for the OCCA adapter's
// benchmark (cmd/launchbench runs it with and without the adapter).
//
//   launchcost MODE LAUNCHES ROUNDS
//
// MODE is a mode name or the device's properties as OCCA's JSON
// ("{mode: 'CUDA', device_id: 0}").
//
// Builds an empty kernel on a MODE device and launches it LAUNCHES times per
// round; prints the best round's nanoseconds per launch ("ns_per_launch
// 451.2"). Written against OCCA's public API: it builds with a real OCCA
// or with the stand-in (tests/occa-standin).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <occa.hpp>

static double now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: launchcost MODE LAUNCHES ROUNDS\n");
    return 2;
  }
  const std::string mode = argv[1];
  const long launches = atol(argv[2]);
  const int rounds = atoi(argv[3]);
  occa::device device;
  device.setup(mode[0] == '{' ? mode : "{mode: '" + mode + "'}");
  occa::kernel empty = device.buildKernelFromString(
      "@kernel void emptyKernel(const int n) {\n"
      "  for (int o = 0; o < 1; ++o; @outer) { for (int i = 0; i < 1; ++i; @inner) {} }\n"
      "}\n",
      "emptyKernel");
  double best = 1e300;
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns();
    for (long i = 0; i < launches; i++)
      empty(1);
    double per = (now_ns() - t0) / double(launches);
    if (per < best)
      best = per;
  }
  device.finish();
  printf("ns_per_launch %.2f\n", best);
  return 0;
}
