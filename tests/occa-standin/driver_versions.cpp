// driver_versions.cpp: an OCCA application written as users of each OCCA
// version write it, built against each variant of the stand-in
// (include/occa.hpp: OCCA_STANDIN_VERSION, OCCA_STANDIN_NEKRS), so the
// adapter's tests check every supported OCCA with exact counts.
//
// usage: occa-standin-versions [-n N] [-first-copy]
//   -n N         N >= 1 launches, default 5
//   -first-copy  before anything else, copy into an empty occa::memory (a
//                no-op in OCCA): the first OCCA call is then a copy, not a
//                device setup (one more host-to-device copy, of 0 bytes)
// Prints "ok" and exits 0; 2 on a usage error. Built next to its variant's
// lib/ (RUNPATH $ORIGIN/lib) and addVectors.okl.
//
// The scenario (V = OCCA_STANDIN_VERSION; U = 8 before OCCA 2.0, whose copy
// counts and offsets are bytes, else 1 (elements of double)):
//   1. device "{mode: 'Serial'}".
//   2. a = malloc<double>(1000); b = malloc<double>(1000, hostB) (a copy to
//      the device inside the allocation); c = malloc<float>(1000).
//      Allocations: 3, 20000 B.
//   3. a.copyFrom(hostA) (whole: 8000 B); a.copyFrom(hostA, 100U, 10U)
//      (800 B); b.copyTo(hostC, 50U, 5U) (400 B); b.copyFrom(a, 200U)
//      (1600 B). Host-to-device: 3, 16800 B (with the one in malloc);
//      device-to-host: 1, 400 B; device-to-device: 1, 1600 B.
//   4. addVectors built from addVectors.okl. nekRS: as nekRS does, first
//      with {build: {compile_only: true, load_only: false}} and kernel
//      name "" (an empty kernel comes back), then with the flags swapped:
//      2 builds.
//   5. N launches addVectors(1000, c, c, c) through operator() (its
//      arguments are float, as OCCA checks), then one
//      through run({1000, c, c, c}) (V < 1.2: operator() again): N + 1
//      launches.
//   6. V >= 1.5: a memory pool, reserve<double>(100) (800 B) and
//      reserve<double>(50) (400 B); the first freed with free(), the second
//      and the pool released at the end of main. Allocations +2, 1200 B.
//   7. V >= 2.0: w = wrapMemory(hostA, 1000 doubles), w.copyTo(hostC)
//      (whole: device-to-host 8000 B); not an allocation, and releasing it
//      is not a free.
//   8. s = createStream(); setStream(s); V >= 1.4: s.finish(),
//      device.finishAll(); device.finish().
//   9. a.free(); b, c and the rest go at the end of main.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include <occa.hpp>

namespace {
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

#if OCCA_STANDIN_VERSION < 20000
  const occa::dim_t U = sizeof(double);
#else
  const occa::dim_t U = 1;
#endif
}

int main(int argc, char **argv) {
  long n = 5;
  bool firstCopy = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-first-copy") {
      firstCopy = true;
    } else if (arg == "-n" && i + 1 < argc) {
      char *end;
      n = strtol(argv[++i], &end, 10);
      if (*end || n < 1) {
        fprintf(stderr, "usage: occa-standin-versions [-n N] [-first-copy]\n");
        return 2;
      }
    } else {
      fprintf(stderr, "usage: occa-standin-versions [-n N] [-first-copy]\n");
      return 2;
    }
  }
  const std::string okl = executableDir() + "/addVectors.okl";

  if (firstCopy) {
    double x = 0;
    occa::memory empty;
    empty.copyFrom(&x);
  }

  occa::device device(std::string("{mode: 'Serial'}"));
  std::vector<double> hostA(1000, 1.0), hostB(1000, 2.0), hostC(1000, 0.0);

  occa::memory a = device.malloc<double>(1000);
  occa::memory b = device.malloc<double>(1000, hostB.data());
  occa::memory c = device.malloc<float>(1000);

  a.copyFrom(hostA.data());
  a.copyFrom(hostA.data(), 100 * U, 10 * U);
  b.copyTo(hostC.data(), 50 * U, 5 * U);
  b.copyFrom(a, 200 * U);

#ifdef OCCA_STANDIN_NEKRS
  occa::json compileOnly;
  compileOnly["build/compile_only"] = true;
  compileOnly["build/load_only"] = false;
  occa::kernel empty = device.buildKernel(okl, "", compileOnly);
  if (empty.isInitialized()) {
    fprintf(stderr, "a compile-only build returned a kernel\n");
    return 1;
  }
  occa::json loadOnly;
  loadOnly["build/load_only"] = true;
  loadOnly["build/compile_only"] = false;
  occa::kernel addVectors = device.buildKernel(okl, "addVectors", loadOnly);
#else
  occa::kernel addVectors = device.buildKernel(okl, "addVectors");
#endif
  for (long i = 0; i < n; ++i) {
    addVectors(1000, c, c, c);
  }
#if OCCA_STANDIN_VERSION >= 10200
  addVectors.run({1000, c, c, c});
#else
  addVectors(1000, c, c, c);  // OCCA 1.1 has no run({...})
#endif

#if OCCA_STANDIN_VERSION >= 10500
  auto pool = device.createMemoryPool();
  occa::memory r1 = pool.reserve<double>(100);
  occa::memory r2 = pool.reserve<double>(50);
  r1.free();
#endif

#if OCCA_STANDIN_VERSION >= 20000
  occa::memory w = device.wrapMemory(hostA.data(), 1000, occa::dtype::double_);
  w.copyTo(hostC.data());
#endif

  occa::stream s = device.createStream();
  device.setStream(s);
#if OCCA_STANDIN_VERSION >= 10400
  s.finish();
  device.finishAll();
#endif
  device.finish();

  a.free();
  printf("ok\n");
  return 0;
}
