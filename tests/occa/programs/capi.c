/* capi: the C API path (occaKernelRun goes through occaKernelRunN).
 *
 *   capi MODE OKL_FILE LAUNCHES
 *
 * MODE is a mode name or the device's properties as OCCA's JSON.
 * Makes 1 device setup, 2 allocations of 4000 B (occaDeviceTypedMalloc with
 * a source: a 4000 B host-to-device copy; occaDeviceMalloc), 1 H2D copy of
 * 4000 B (occaCopyPtrToMem), 1 D2H copy of 4000 B (occaCopyMemToPtr), 1
 * build of addVectors, LAUNCHES launches, 1 device finish and 2 frees.
 * Prints "ok" when the results are right. */
#include <stdio.h>
#include <stdlib.h>

#include <occa.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: capi MODE OKL_FILE LAUNCHES\n");
    return 2;
  }
  enum { N = 1000 };
  char props[256];
  if (argv[1][0] == '{')
    snprintf(props, sizeof props, "%s", argv[1]);
  else
    snprintf(props, sizeof props, "{mode: '%s'}", argv[1]);
  int launches = atoi(argv[3]);
  float a[N], b[N], ab[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 1.0f;
    ab[i] = 0.0f;
  }
  occaDevice device = occaCreateDeviceFromString(props);
  occaMemory o_a = occaDeviceTypedMalloc(device, N, occaDtypeFloat, a, occaDefault);
  occaMemory o_b = occaDeviceMalloc(device, N * sizeof(float), NULL, occaDefault);
  occaCopyPtrToMem(o_b, b, occaAllBytes, 0, occaDefault);
  occaKernel add = occaDeviceBuildKernel(device, argv[2], "addVectors", occaDefault);
  /* ab lives on the device too: reuse o_b as the output (b + a). */
  for (int i = 0; i < launches; i++)
    occaKernelRun(add, occaInt(N), o_a, o_b, o_b);
  occaDeviceFinish(device);
  occaCopyMemToPtr(ab, o_b, occaAllBytes, 0, occaDefault);
  int ok = 1;
  for (int i = 0; i < N; i++)
    ok = ok && ab[i] == 1.0f + (float)launches * (float)i;
  occaFree(&add);
  occaFree(&o_a);
  occaFree(&o_b);
  occaFree(&device);
  printf("%s\n", ok ? "ok" : "wrong results");
  return ok ? 0 : 1;
}
