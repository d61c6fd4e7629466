/* ompt_abi.h: the part of OpenMP's tool interface (OMPT, OpenMP 5.1 §4 and
 * §19) that the runtime's OMPT tool uses, declared here so the runtime
 * builds without an OpenMP implementation's omp-tools.h. Names follow the
 * specification; values are the specification's. */
#ifndef OT_OMPT_ABI_H
#define OT_OMPT_ABI_H

#include <stdint.h>

typedef union ompt_data_t {
  uint64_t value;
  void *ptr;
} ompt_data_t;

typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *interface_function_name);

typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num,
                                 ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);

typedef struct ompt_start_tool_result_t {
  ompt_initialize_t initialize;
  ompt_finalize_t finalize;
  ompt_data_t tool_data;
} ompt_start_tool_result_t;

/* Callback numbers (ompt_callbacks_t). */
enum {
  ompt_callback_thread_begin = 1,
  ompt_callback_thread_end = 2,
  ompt_callback_parallel_begin = 3,
  ompt_callback_parallel_end = 4,
  ompt_callback_task_create = 5,
  ompt_callback_task_schedule = 6,
  ompt_callback_implicit_task = 7,
  ompt_callback_sync_region_wait = 16,
  ompt_callback_dependences = 18,
  ompt_callback_task_dependence = 19,
  ompt_callback_work = 20,
  ompt_callback_sync_region = 23
};

/* ompt_set_result_t: what ompt_set_callback says. */
enum { ompt_set_error = 0, ompt_set_never = 1 };

typedef int (*ompt_set_callback_t)(int event, ompt_interface_fn_t callback);

/* ompt_scope_endpoint_t */
enum { ompt_scope_begin = 1, ompt_scope_end = 2, ompt_scope_beginend = 3 };

/* ompt_task_flag_t bits */
enum { ompt_task_initial = 0x1, ompt_task_implicit = 0x2, ompt_task_explicit = 0x4 };

/* ompt_frame_t is only passed through by address. */
typedef struct ompt_frame_t ompt_frame_t;

typedef struct ompt_dependence_t {
  ompt_data_t variable;
  int dependence_type; /* ompt_dependence_type_t */
} ompt_dependence_t;

/* Callback signatures. */
typedef void (*ompt_callback_thread_begin_t)(int thread_type, ompt_data_t *thread_data);
typedef void (*ompt_callback_thread_end_t)(ompt_data_t *thread_data);
typedef void (*ompt_callback_parallel_begin_t)(ompt_data_t *encountering_task_data,
                                               const ompt_frame_t *encountering_task_frame,
                                               ompt_data_t *parallel_data,
                                               unsigned int requested_parallelism, int flags,
                                               const void *codeptr_ra);
typedef void (*ompt_callback_parallel_end_t)(ompt_data_t *parallel_data,
                                             ompt_data_t *encountering_task_data, int flags,
                                             const void *codeptr_ra);
typedef void (*ompt_callback_implicit_task_t)(int endpoint, ompt_data_t *parallel_data,
                                              ompt_data_t *task_data,
                                              unsigned int actual_parallelism, unsigned int index,
                                              int flags);
typedef void (*ompt_callback_work_t)(int work_type, int endpoint, ompt_data_t *parallel_data,
                                     ompt_data_t *task_data, uint64_t count,
                                     const void *codeptr_ra);
typedef void (*ompt_callback_sync_region_t)(int kind, int endpoint, ompt_data_t *parallel_data,
                                            ompt_data_t *task_data, const void *codeptr_ra);
typedef void (*ompt_callback_task_create_t)(ompt_data_t *encountering_task_data,
                                            const ompt_frame_t *encountering_task_frame,
                                            ompt_data_t *new_task_data, int flags,
                                            int has_dependences, const void *codeptr_ra);
typedef void (*ompt_callback_task_schedule_t)(ompt_data_t *prior_task_data, int prior_task_status,
                                              ompt_data_t *next_task_data);
typedef void (*ompt_callback_dependences_t)(ompt_data_t *task_data, const ompt_dependence_t *deps,
                                            int ndeps);
typedef void (*ompt_callback_task_dependence_t)(ompt_data_t *src_task_data,
                                                ompt_data_t *sink_task_data);

#endif
