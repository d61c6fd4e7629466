/* cupti_kernels: the vendor's own kernel times, to check occa-tools' device
 * times against (tests/occa, CUDA only).
 *
 * The CUDA driver loads it when CUDA_INJECTION64_PATH names it and calls
 * InitializeInjection; it asks CUPTI for a record of every kernel (start and
 * end as the GPU saw them) and at exit writes one line per kernel to the
 * file CUPTI_KERNELS_OUT names:
 *
 *   kernel NAME STREAM START_NS END_NS
 *
 * CUPTI's clock is not the host's CLOCK_MONOTONIC: compare durations, and
 * starts relative to each other.
 *
 *   cc -shared -fPIC -I$CUDA/include -I$CUPTI/include -I../../runtime/occa \
 *      cupti_kernels.c -L$CUPTI/lib64 -lcupti -o libcupti_kernels.so
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "cupti_abi.h" /* runtime/occa */

typedef ot_cupti_kernel_record kernel_head;

static FILE *out;
static unsigned long dropped;

static void check(CUptiResult r, const char *what) {
  if (r != CUPTI_SUCCESS) {
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    fprintf(stderr, "cupti_kernels: %s: %s\n", what, msg);
  }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 8 << 20;
  *buffer = aligned_alloc(8, *size);
  *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)ctx;
  (void)stream;
  (void)size;
  CUpti_Activity *record = NULL;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      continue;
    const kernel_head *k = (const kernel_head *)record;
    if (out)
      fprintf(out, "kernel %s %u %llu %llu\n", k->name ? k->name : "?", k->stream_id,
              (unsigned long long)k->start, (unsigned long long)k->end);
  }
  size_t n = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS)
    dropped += n;
  free(buffer);
}

static void at_exit(void) {
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
  if (out) {
    fprintf(out, "dropped %lu\n", dropped);
    fclose(out);
    out = NULL;
  }
}

int InitializeInjection(void) {
  const char *path = getenv("CUPTI_KERNELS_OUT");
  if (!path || !(out = fopen(path, "w"))) {
    fprintf(stderr, "cupti_kernels: set CUPTI_KERNELS_OUT to a file to write\n");
    return 0;
  }
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register callbacks");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable kernel records");
  atexit(at_exit);
  return 1;
}
