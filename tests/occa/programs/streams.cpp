// streams: kernels on two streams at once, for asynchronous backends
// (OpenCL, CUDA, HIP), where a launch returns before its kernel ends.
//
//   streams MODE OKL_FILE LAUNCHES ITERS
//
// MODE is a mode name or the device's properties as OCCA's JSON; OKL_FILE
// is busy.okl. With N = 4096 floats and L = LAUNCHES, it makes:
//   device setups   1 (MODE)
//   allocations     2 x 16384 B
//   copies          H2D 2 x 16384 B, D2H 2 x 16384 B (after both finishes)
//   builds          busy
//   streams         2 created; 2L sets
//   launches        busy 2L, alternating: one on the first stream, one on
//                   the second, with nothing waited for in between, so
//                   each stream's kernels run while the other's are queued
//   finishes        2 stream finishes (the first, then the second)
// It prints "ok" when the results are right, and on stderr the time from
// the first launch to the end of the second finish and the host time of
// the launches alone: "streams: wall_us W launch_us H".
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <occa.hpp>

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: streams MODE OKL_FILE LAUNCHES ITERS\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int launches = atoi(argv[3]), iters = atoi(argv[4]);
  const int n = 4096;
  bool ok = true;
  {
    occa::device device = mode[0] == '{' ? occa::device(mode) : occa::device({{"mode", mode}});
    std::vector<float> zero(n, 0.0f), a(n), b(n);
    occa::memory x_a = device.malloc<float>(n);
    occa::memory x_b = device.malloc<float>(n);
    x_a.copyFrom(zero.data());
    x_b.copyFrom(zero.data());
    occa::kernel busy = device.buildKernel(argv[2], "busy");
    occa::stream first = device.createStream(), second = device.createStream();

    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    for (int i = 0; i < launches; i++) {
      device.setStream(first);
      busy(n, iters, x_a);
      device.setStream(second);
      busy(n, iters, x_b);
    }
    auto t1 = clock::now();
    first.finish();
    second.finish();
    auto t2 = clock::now();

    x_a.copyTo(a.data());
    x_b.copyTo(b.data());
    float v = 0.0f;
    for (int i = 0; i < launches * iters; i++)
      v = 0.999f * v + 0.001f;
    for (int i = 0; i < n; i++)
      ok = ok && std::fabs(a[i] - v) <= 1e-4f && std::fabs(b[i] - v) <= 1e-4f;
    auto us = [](clock::duration d) {
      return (long long)std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    };
    fprintf(stderr, "streams: wall_us %lld launch_us %lld\n", us(t2 - t0), us(t1 - t0));
  }
  printf("%s\n", ok ? "ok" : "wrong results");
  return ok ? 0 : 1;
}
