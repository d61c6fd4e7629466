/* driver_c.c: an OCCA C API application (C99) with a fixed scenario whose
 * events can be counted exactly, for testing occa-tools' OCCA adapter.
 *
 * usage: occa-standin-driver-c [-n N] [-mode Serial|OpenMP] [-okl PATH]
 *                              [-expect]
 *   -n N       launches (default 10, N >= 1)
 *   -mode M    the device's mode string (default Serial)
 *   -okl PATH  addVectors.okl (default: next to this executable)
 *   -expect    print the expected counts below on one line and exit
 * Prints "ok" and exits 0 when ab = a + a checks out; exit 1 otherwise, 2 on
 * a usage error.
 *
 * The scenario, in order (N = -n):
 *   1. occaCreateDeviceFromString("{mode: '<M>'}"): one device::setup(json),
 *      which creates and sets the initial stream.
 *   2. a = occaDeviceTypedMalloc(1000 floats, from hostA): an allocation of
 *      4000 B whose initial contents are a host->device copy made inside
 *      device::malloc; ab = occaDeviceMalloc(4000 bytes, NULL), which calls
 *      occaDeviceTypedMalloc (dtype byte): 4000 B.
 *   3. occaCopyPtrToMem(ab, zeros, occaAllBytes, 0): host->device, 4000 B.
 *   4. addVectors = occaDeviceBuildKernel(addVectors.okl).
 *   5. N launches occaKernelRun(addVectors, occaInt(1000), a, a, ab):
 *      occaKernelRunN -> occaKernelVaRun -> kernel::run(), on the initial
 *      stream.
 *   6. occaDeviceFinish.
 *   7. occaCopyMemToPtr(hostAB, ab, occaAllBytes, 0): device->host, 4000 B;
 *      check hostAB[i] == 2 * hostA[i].
 *   8. occaFree: the kernel, a and ab (explicit memory::free each), then the
 *      device (device::free).
 *
 * Expected counts (N = -n):
 *   device setups 1; stream creates 1; stream sets 1; device finishes 1;
 *   device frees 1 (setup's free() on the uninitialized handle aside);
 *   allocations 2, 8000 B; frees 2, 8000 B, both explicit;
 *   host->device copies 2, 8000 B (1 of them, 4000 B, inside device::malloc);
 *   device->host copies 1, 4000 B; device->device copies 0;
 *   kernel builds 1; launches N, all addVectors, all on the initial stream;
 *   kernel frees 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <occa.h>

#define ENTRIES 1000

static void usage(void) {
  fprintf(stderr,
          "usage: occa-standin-driver-c [-n N] [-mode Serial|OpenMP] [-okl PATH] [-expect]\n");
  exit(2);
}

/* The directory of this executable, into buf. */
static void executableDir(char *buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  char *slash;
  if (n <= 0) {
    snprintf(buf, size, ".");
    return;
  }
  buf[n] = '\0';
  slash = strrchr(buf, '/');
  if (slash) {
    *slash = '\0';
  } else {
    snprintf(buf, size, ".");
  }
}

int main(int argc, char **argv) {
  long n = 10;
  const char *mode = "Serial";
  char okl[4096] = "";
  char deviceProps[256];
  static float hostA[ENTRIES], hostAB[ENTRIES], zeros[ENTRIES];
  occaDevice device;
  occaMemory a, ab;
  occaKernel addVectors;
  long i;
  int expect = 0;

  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) {
      char *end = NULL;
      n = strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1) {
        usage();
      }
    } else if (!strcmp(argv[i], "-mode") && i + 1 < argc) {
      mode = argv[++i];
    } else if (!strcmp(argv[i], "-okl") && i + 1 < argc) {
      snprintf(okl, sizeof(okl), "%s", argv[++i]);
    } else if (!strcmp(argv[i], "-expect")) {
      expect = 1;
    } else {
      usage();
    }
  }
  if (expect) {
    printf("setups=1 stream_creates=1 stream_sets=1 stream_finishes=0 device_finishes=1"
           " device_frees=1"
           " allocs=2 alloc_bytes=8000 frees=2 free_bytes=8000 explicit_frees=2"
           " h2d=2 h2d_bytes=8000 h2d_in_malloc=1 h2d_in_malloc_bytes=4000"
           " d2h=1 d2h_bytes=4000 d2d=0 d2d_bytes=0"
           " builds=1 build_failures=0"
           " launches=%ld launches_addVectors=%ld launches_stream0=%ld kernel_frees=1\n",
           n, n, n);
    return 0;
  }
  if (!okl[0]) {
    char dir[4000];
    executableDir(dir, sizeof(dir));
    snprintf(okl, sizeof(okl), "%s/addVectors.okl", dir);
  }

  for (i = 0; i < ENTRIES; ++i) {
    hostA[i] = (float) i;
    hostAB[i] = -1;
    zeros[i] = 0;
  }

  snprintf(deviceProps, sizeof(deviceProps), "{mode: '%s'}", mode);
  device = occaCreateDeviceFromString(deviceProps);

  a = occaDeviceTypedMalloc(device, ENTRIES, occaDtypeFloat, hostA, occaDefault);
  ab = occaDeviceMalloc(device, ENTRIES * sizeof(float), NULL, occaDefault);
  occaCopyPtrToMem(ab, zeros, occaAllBytes, 0, occaDefault);

  addVectors = occaDeviceBuildKernel(device, okl, "addVectors", occaDefault);

  for (i = 0; i < n; ++i) {
    occaKernelRun(addVectors, occaInt(ENTRIES), a, a, ab);
  }
  occaDeviceFinish(device);

  occaCopyMemToPtr(hostAB, ab, occaAllBytes, 0, occaDefault);
  for (i = 0; i < ENTRIES; ++i) {
    if (hostAB[i] != 2 * hostA[i]) {
      fprintf(stderr, "driver_c: ab[%ld] = %g, want %g\n", i, (double) hostAB[i],
              (double) (2 * hostA[i]));
      return 1;
    }
  }

  occaFree(&addVectors);
  occaFree(&a);
  occaFree(&ab);
  occaFree(&device);
  printf("ok\n");
  return 0;
}
