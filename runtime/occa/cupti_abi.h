/* cupti_abi.h: the part of CUPTI's C ABI that occa-tools uses, as in CUPTI's
 * headers (cupti_activity.h, cupti_callbacks.h, cupti_driver_cbid.h; read
 * from CUDA 12.8's, and seen right in CUDA 13.0's records on an H200), so
 * that the OCCA adapter (cupti.cpp) needs no CUDA to build. Also read by the tests' fake CUPTI
 * (tests/occa-standin/fake_cupti.c) and CUPTI client
 * (tests/occa/programs/cupti_kernels.c). C99 and C++. */
#ifndef OT_CUPTI_ABI_H
#define OT_CUPTI_ABI_H

#include <stdint.h>

enum {
  OT_CUPTI_SUCCESS = 0,                       /* CUptiResult */
  OT_CUPTI_ACTIVITY_KIND_KERNEL = 3,          /* CUpti_ActivityKind */
  OT_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
  OT_CUPTI_FLUSH_FORCED = 1,                  /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED */
  OT_CUPTI_DOMAIN_DRIVER_API = 1,             /* CUpti_CallbackDomain */
  OT_CUPTI_API_ENTER = 0,                     /* CUpti_ApiCallbackSite */
  OT_CUPTI_API_EXIT = 1
};

/* CUPTI_DRIVER_TRACE_CBID_: cuLaunchKernel, cuLaunchKernel_ptsz,
 * cuLaunchCooperativeKernel, cuLaunchKernelEx, cuLaunchKernelEx_ptsz */
#define OT_CUPTI_LAUNCH_CBIDS {307, 442, 477, 652, 653}

/* CUpti_CallbackData */
typedef struct {
  int site; /* OT_CUPTI_API_ENTER or OT_CUPTI_API_EXIT */
  const char *function_name;
  const void *function_params;
  void *function_return_value; /* a CUresult* for the driver API */
  const char *symbol_name;
  void *context;
  uint32_t context_uid;
  uint64_t *correlation_data;
  uint32_t correlation_id;
} ot_cupti_callback_data;

/* The head of CUPTI's kernel record, which its versions share
 * (CUpti_ActivityKernel4 to 9 in CUDA 12.8; the full record's name changes
 * with the CUDA version). */
typedef struct {
  int kind;
  uint8_t cache_config, shared_memory_config;
  uint16_t registers_per_thread;
  uint32_t partitioned_requested, partitioned_executed;
  uint64_t start, end, completed;
  uint32_t device_id, context_id, stream_id;
  int32_t grid[3], block[3];
  int32_t static_shared_memory, dynamic_shared_memory;
  uint32_t local_memory_per_thread, local_memory_total;
  uint32_t correlation_id;
  int64_t grid_id;
  const char *name;
} ot_cupti_kernel_record;

#endif
