// vectors: an OCCA application that exercises every path the adapter hooks,
// with a fixed number of each event so tests/occa can assert exact counts.
//
//   vectors MODE OKL_FILE LAUNCHES
//
// MODE is a mode name (Serial, OpenMP) or the device's properties as
// OCCA's JSON ("{mode: 'OpenCL', platform_id: 0, device_id: 0}").
//
// With N = 1000 floats and L = LAUNCHES, it makes:
//   device setups      1 (MODE)
//   allocations        3 x 4000 B with device.malloc (one with a source,
//                      whose copy is reported as a 4000 B host-to-device
//                      copy), 2 memory-pool reservations (400 B and 800 B)
//   copies             H2D: 4000 (malloc source) + 4000 + 400 = 8400 B in 3
//                      D2D: 4000 B in 1 (occa::memcpy)
//                      D2H: 4000 + 200 = 4200 B in 2
//   builds             addVectors (from OKL_FILE), _occa_jit_kernel (OCCA_JIT)
//   launches           addVectors 2L (L on the first stream, L on a second),
//                      _occa_jit_kernel 1
//   streams            1 created, 2 sets, 1 stream finish
//   frees              5, every allocation (one pool reservation and one
//                      malloc freed explicitly, the rest by their handles)
// It prints "ok" when the results are right.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <occa.hpp>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: vectors MODE OKL_FILE LAUNCHES\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int launches = atoi(argv[3]);
  const int n = 1000;
  bool ok = true;
  {
    occa::device device = mode[0] == '{' ? occa::device(mode) : occa::device({{"mode", mode}});
    std::vector<float> a(n), b(n), ab(n, 0.0f);
    for (int i = 0; i < n; i++) {
      a[i] = float(i);
      b[i] = float(2 * i);
    }
    occa::memory o_a = device.malloc<float>(n);
    occa::memory o_b = device.malloc<float>(n, b.data());
    occa::memory o_ab = device.malloc<float>(n);
    o_a.copyFrom(a.data());
    o_a.copyFrom(a.data() + 10, 100, 10);  // elements 10..109 again
    occa::memcpy(o_ab, o_a);

    occa::kernel add = device.buildKernel(argv[2], "addVectors");
    occa::stream first = device.getStream();
    for (int i = 0; i < launches; i++)
      add(n, o_a, o_b, o_ab);
    occa::stream second = device.createStream();
    device.setStream(second);
    for (int i = 0; i < launches; i++)
      add(n, o_a, o_b, o_ab);
    second.finish();
    device.setStream(first);

    occa::scope scope({{"n", n}, {"ab", o_ab}}, {});
    OCCA_JIT(scope, (for (int i = 0; i < n; ++i; @tile(16, @outer, @inner)) { ab[i] += 1; }));

    o_ab.copyTo(ab.data());
    std::vector<float> part(50);
    o_ab.copyTo(part.data(), 50, 5);
    for (int i = 0; i < n; i++)
      ok = ok && ab[i] == 3.0f * float(i) + 1.0f;
    for (int i = 0; i < 50; i++)
      ok = ok && part[i] == ab[i + 5];

    occa::memoryPool pool = device.createMemoryPool();
    occa::memory r1 = pool.reserve<float>(100);
    {
      occa::memory r2 = pool.reserve<float>(200);
      r1.free();
    }
    o_a.free();
    device.finish();
  }
  printf("%s\n", ok ? "ok" : "wrong results");
  return ok ? 0 : 1;
}
