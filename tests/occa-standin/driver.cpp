// driver.cpp: an OCCA application with a fixed scenario whose events can be
// counted exactly, for testing occa-tools' OCCA adapter (built against the
// stand-in's include/occa.hpp; written as it would be against real OCCA).
//
// usage: occa-standin-driver [-n N] [-mode Serial|OpenMP] [-props JSON]
//                            [-exception] [-okl PATH] [-expect]
//   -n N        launches per loop (default 10, N >= 1)
//   -mode M     the device's mode string (default Serial)
//   -props P    the device's properties (default "{mode: '<M>'}")
//   -exception  also build a kernel from a missing file and catch the
//               occa::exception it throws
//   -okl PATH   addVectors.okl (default: next to this executable)
//   -expect     print the expected counts below on one line and exit
// Prints "ok" and exits 0 when ab = a + b checks out; exit 1 otherwise, 2 on
// a usage error.
//
// The scenario, in order (N = -n):
//   1. device from the string "{mode: '<M>'}" (or -props): device(string) -> device(json)
//      -> setup(json), which creates the initial stream (stream0) and sets it.
//   2. a = malloc<float>(1000); b = malloc<float>(1000, hostB) (its initial
//      contents are a host->device copy made inside device::malloc, with no
//      copyFrom call); c = malloc(4000) (void: 4000 bytes, dtype byte).
//   3. a.copyFrom(hostA) (whole, 4000 B); a.copyFrom(hostA, 100, 10) (100
//      floats at element 10: 400 B at byte offset 40); a.copyFrom(hostA, json)
//      (the short overload: it calls the full one, 4000 B).
//   4. occa::memcpy(c, a): c.copyFrom(a), device->device, 4000 B.
//   5. b.copyTo(hostC, 50, 5): 50 floats from element 5: 200 B.
//   6. addVectors built from the file addVectors.okl; busyKernel built from a
//      string with properties {sleep_ns: 1000} (buildKernelFromString calls
//      buildKernel).
//   7. tag0 = tagStream(); N launches addVectors(1000, a, b, c) (operator()
//      with 4 arguments) on stream0; tag1 = tagStream(); waitFor(tag1);
//      timeBetween(tag0, tag1).
//   8. stream1 = createStream(); setStream(stream1); N launches busyKernel(N)
//      (operator() with 1 argument, 1 us each); stream1.finish();
//      setStream(stream0).
//   9. addVectors: clearArgs(), pushArg() x4, run(); then run({1000, a, b, c})
//      (clearArgs + pushArg + run inside): 2 more launches on stream0.
//  10. memory pool: 3 reservations of 100 floats (400 B each; they do not go
//      through device::malloc); the first is freed with free(), the other two
//      and the pool are released when their handles go out of scope.
//  11. a.slice(10, 100): a view of 400 B, not an allocation (destroying it
//      runs modeMemory_t's destructor, which must not count as a free).
//  12. with -exception: buildKernel("<dir of okl>/no-such-kernel.okl", ...)
//      throws occa::exception, caught here.
//  13. c.copyTo(hostC) (whole, 4000 B); check hostC[i] == hostA[i] + hostB[i].
//  14. a.free() (explicit); device.finish(); print "ok".
//  15. leaving main's scope: the kernels, streams and tags go, c and b are
//      freed by handle destruction, then the device (device::free(), which
//      frees what is left on it: only stream0 and stream1 by then).
//
// Expected counts (N = -n; E = 1 with -exception, else 0):
//   device setups (setup(json))       1
//   stream creates                    2  (1 inside setup, 1 explicit)
//   stream sets                       3  (1 inside setup, 2 explicit)
//   stream finishes                   1
//   device finishes                   1
//   device frees                      1  (at exit; setup also calls free() on
//                                         the still uninitialized handle, a
//                                         no-op)
//   allocations (device::malloc)      3, 12000 B
//   frees of allocations              3, 12000 B (1 explicit memory::free)
//   host->device copies               4, 12400 B (1 of them, 4000 B, inside
//                                         device::malloc)
//   device->host copies               2, 4200 B
//   device->device copies             1, 4000 B
//   kernel builds                     2 (addVectors from a file, busyKernel
//                                         from a string); E failed
//   launches (kernel::run)            2N+2: addVectors N+2, busyKernel N;
//                                         stream0 N+2, stream1 N
//   pool reservations                 3, 1200 B; 3 released (1 explicit)
//   slices                            1 (not an allocation, not a free)
//   stream tags                       2 (1 waitFor, 1 timeBetween)
//   modeMemory_t destructor runs      7 (a, b, c, 3 reservations, the slice)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include <occa.hpp>

namespace {
  const int entries = 1000;

  const char *busySource =
    "@kernel void busyKernel(const int n) {\n"
    "  for (int i = 0; i < n; ++i; @tile(16, @outer, @inner)) {}\n"
    "}\n";

  void usage() {
    fprintf(stderr,
            "usage: occa-standin-driver [-n N] [-mode Serial|OpenMP] [-props JSON]\n"
            "                           [-exception] [-okl PATH] [-expect]\n");
    exit(2);
  }

  std::string executableDir() {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) {
      return ".";
    }
    path[n] = '\0';
    std::string p(path);
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
  }

  void printExpected(const long n, const int withException) {
    printf("setups=1 stream_creates=2 stream_sets=3 stream_finishes=1 device_finishes=1"
           " device_frees=1"
           " allocs=3 alloc_bytes=12000 frees=3 free_bytes=12000 explicit_frees=1"
           " h2d=4 h2d_bytes=12400 h2d_in_malloc=1 h2d_in_malloc_bytes=4000"
           " d2h=2 d2h_bytes=4200 d2d=1 d2d_bytes=4000"
           " builds=2 build_failures=%d"
           " launches=%ld launches_addVectors=%ld launches_busyKernel=%ld"
           " launches_stream0=%ld launches_stream1=%ld"
           " pool_reserves=3 pool_reserve_bytes=1200 pool_releases=3"
           " slices=1 tags=2 waits=1 time_betweens=1 mode_memory_destructors=7\n",
           withException,
           2 * n + 2, n + 2, n, n + 2, n);
  }
}

int main(int argc, char **argv) {
  long n = 10;
  std::string mode = "Serial";
  std::string props;
  std::string okl;
  bool withException = false;
  bool expect = false;

  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-n" && i + 1 < argc) {
      char *end = NULL;
      n = strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1) {
        usage();
      }
    } else if (arg == "-mode" && i + 1 < argc) {
      mode = argv[++i];
    } else if (arg == "-props" && i + 1 < argc) {
      props = argv[++i];
    } else if (arg == "-okl" && i + 1 < argc) {
      okl = argv[++i];
    } else if (arg == "-exception") {
      withException = true;
    } else if (arg == "-expect") {
      expect = true;
    } else {
      usage();
    }
  }
  if (expect) {
    printExpected(n, withException ? 1 : 0);
    return 0;
  }
  if (okl.empty()) {
    okl = executableDir() + "/addVectors.okl";
  }

  static float hostA[entries], hostB[entries], hostC[entries];
  for (int i = 0; i < entries; ++i) {
    hostA[i] = (float) i;
    hostB[i] = (float) (entries - i);
    hostC[i] = 0;
  }

  // 1. The device, its initial stream.
  const std::string deviceProps = props.empty() ? "{mode: '" + mode + "'}" : props;
  occa::device device(deviceProps);
  occa::stream stream0 = device.getStream();

  // 2. Allocations.
  occa::memory a = device.malloc<float>(entries);
  occa::memory b = device.malloc<float>(entries, hostB);
  occa::memory c = device.malloc(entries * sizeof(float));

  // 3-5. Copies.
  a.copyFrom(hostA);
  a.copyFrom(hostA, 100, 10);
  a.copyFrom(hostA, occa::json());
  occa::memcpy(c, a);
  b.copyTo(hostC, 50, 5);

  // 6. Builds.
  occa::kernel addVectors = device.buildKernel(okl, "addVectors");
  occa::kernel busyKernel = device.buildKernelFromString(
    busySource, "busyKernel", occa::json::parse("{sleep_ns: 1000}"));

  // 7. N launches on stream0, timed with stream tags.
  occa::streamTag tag0 = device.tagStream();
  for (long i = 0; i < n; ++i) {
    addVectors(entries, a, b, c);
  }
  occa::streamTag tag1 = device.tagStream();
  device.waitFor(tag1);
  const double seconds = device.timeBetween(tag0, tag1);
  if (seconds < 0) {
    fprintf(stderr, "driver: negative time between tags (%g s)\n", seconds);
    return 1;
  }

  // 8. N launches on a second stream.
  occa::stream stream1 = device.createStream();
  device.setStream(stream1);
  for (long i = 0; i < n; ++i) {
    busyKernel((int) n);
  }
  stream1.finish();
  device.setStream(stream0);

  // 9. Launches with pushed arguments and with an argument list.
  addVectors.clearArgs();
  addVectors.pushArg(entries);
  addVectors.pushArg(a);
  addVectors.pushArg(b);
  addVectors.pushArg(c);
  addVectors.run();
  addVectors.run({entries, a, b, c});

  // 10. A memory pool.
  {
    occa::memoryPool pool = device.createMemoryPool();
    occa::memory r1 = pool.reserve<float>(100);
    occa::memory r2 = pool.reserve<float>(100);
    occa::memory r3 = pool.reserve<float>(100);
    if (pool.numReservations() != 3 || r2.byte_size() != 400) {
      fprintf(stderr, "driver: unexpected pool state\n");
      return 1;
    }
    r1.free();
    if (r1.isInitialized() || pool.numReservations() != 2) {
      fprintf(stderr, "driver: a freed reservation is still there\n");
      return 1;
    }
  }

  // 11. A slice.
  {
    occa::memory s = a.slice(10, 100);
    if (s.length() != 100 || s.byte_size() != 400) {
      fprintf(stderr, "driver: unexpected slice size\n");
      return 1;
    }
  }

  // 12. A failing build.
  if (withException) {
    const size_t slash = okl.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string(".") : okl.substr(0, slash);
    bool thrown = false;
    try {
      device.buildKernel(dir + "/no-such-kernel.okl", "missing");
    } catch (occa::exception &e) {
      thrown = true;
    }
    if (!thrown) {
      fprintf(stderr, "driver: building a missing file did not throw\n");
      return 1;
    }
  }

  // 13. The result.
  c.copyTo(hostC);
  for (int i = 0; i < entries; ++i) {
    if (hostC[i] != hostA[i] + hostB[i]) {
      fprintf(stderr, "driver: ab[%d] = %g, want %g\n", i, (double) hostC[i],
              (double) (hostA[i] + hostB[i]));
      return 1;
    }
  }

  // 14. Explicit free, finish.
  a.free();
  if (a.isInitialized()) {
    fprintf(stderr, "driver: a freed memory is still initialized\n");
    return 1;
  }
  device.finish();
  printf("ok\n");
  return 0;
}
