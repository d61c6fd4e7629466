/*
 * occa_tools.h: the callback ABI between an event source and the occa-tools
 * runtime (libocca_tools.so).
 *
 * An event source is anything that knows when OCCA does something: OCCA itself
 * one day, the occa-tools interposer for today's OCCA, or a test program. It
 * reports each event by calling one of the functions below. The tool decides
 * whether to record it, and records it without locks or allocation on the
 * calling thread.
 *
 * Shape of the interface (after OMPT and the Intel PTI callback proposal):
 *   - One dated ABI version, OCCA_TOOLS_ABI_VERSION, and one entry point,
 *     occa_tools_connect(), that a source calls once. Sources that load the
 *     tool with dlopen() look up only that symbol; every other entry point is
 *     reached through the lookup function it returns, by name, so the ABI
 *     grows by adding names, never by changing a struct layout.
 *   - API calls that take time are reported twice, at enter (..._begin) and
 *     at exit (..._end), with an occa_tools_call_t that the source keeps on
 *     its stack between the two. The tool stores the call's correlation id
 *     and its own per-call data there.
 *   - Every object (device, kernel, memory, stream) has one
 *     occa_tools_data_t slot that the source stores next to the object,
 *     initialises to OCCA_TOOLS_DATA_NONE, and passes by address. The tool
 *     fills it the first time it sees the object and decides once per object
 *     whether its events are recorded; later events cost a flag test.
 *   - Event kinds are grouped in domains; both can be switched on and off
 *     (occa_tools_enable_domain, occa_tools_enable_event), and a source can
 *     skip building an event's arguments when occa_tools_event_enabled() is 0.
 *
 * Rules for sources:
 *   - Call occa_tools_connect() once before any other function. Events sent
 *     while the tool is inactive (no OCCA_TOOLS_CONFIG) return at once,
 *     leaving the call untouched: initialise every occa_tools_call_t with
 *     OCCA_TOOLS_CALL_INIT, so its correlation_id reads 0 then.
 *   - A ..._end call must run on the thread that made the matching ..._begin
 *     call, with the same occa_tools_call_t. When the begin left both fields
 *     of the call 0 (nothing recorded, nothing to close), the end is a no-op
 *     and may be skipped.
 *   - A slot must stay at the same address for the object's lifetime and must
 *     not be written by the source after initialisation.
 *   - Strings are copied by the tool during the call; they may be freed after.
 *   - Every function is safe to call from any thread, any number of threads at
 *     once. None may be called from a signal handler.
 *
 * Timestamps: the tool timestamps every event itself. Device-side times given
 * to occa_tools_kernel_device_time() are nanoseconds of CLOCK_MONOTONIC, the
 * clock occa_tools_now_ns() reads.
 *
 * This header compiles as C99 (cc -std=c99 -pedantic) and as C++.
 */
#ifndef OCCA_TOOLS_H
#define OCCA_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version is the date (YYYYMMDD) of the last change to this file's
 * contract. A tool accepts sources built against the same or an older ABI. */
/* BEGIN GENERATED abi-version: made by runtime/abi/gentables from formats/trace/kinds.go and
 * runtime/abi/abi.go; do not edit, change those and run `make generate`. */
#define OCCA_TOOLS_ABI_VERSION 20261123u
/* END GENERATED abi-version */

#if defined(__GNUC__)
#define OCCA_TOOLS_API __attribute__((visibility("default")))
#else
#define OCCA_TOOLS_API
#endif

/* ------------------------------------------------------------------------ */
/* Basic types                                                              */
/* ------------------------------------------------------------------------ */

/* A tool-owned slot, one per object. The source initialises it to
 * OCCA_TOOLS_DATA_NONE and never touches it again. */
typedef union occa_tools_data {
  uint64_t value;
  void *ptr;
} occa_tools_data_t;

#define OCCA_TOOLS_DATA_NONE {0}

/* Per-call state carried from a ..._begin to its ..._end. The tool fills
 * both fields at begin; correlation_id is unique within the process and is
 * what occa_tools_kernel_device_time() takes. The source may read
 * correlation_id after begin returns; it must not write either field. */
typedef struct occa_tools_call {
  uint64_t correlation_id;
  uint64_t tool_data;
} occa_tools_call_t;

#define OCCA_TOOLS_CALL_INIT {0, 0}

/* Status passed to every ..._end: OCCA_TOOLS_OK, or OCCA_TOOLS_FAILED when
 * the call failed (for example a C++ exception propagated through it). */
typedef enum occa_tools_status {
  OCCA_TOOLS_OK = 0,
  OCCA_TOOLS_FAILED = 1
} occa_tools_status_t;

/* BEGIN GENERATED kinds: made by runtime/abi/gentables from formats/trace/kinds.go and
 * runtime/abi/abi.go; do not edit, change those and run `make generate`. */
/* Domains group event kinds so a source or the config can switch a whole
 * area on or off. */
typedef enum occa_tools_domain {
  OCCA_TOOLS_DOMAIN_DEVICE = 0, /* device setup */
  OCCA_TOOLS_DOMAIN_MEMORY = 1, /* allocations and frees */
  OCCA_TOOLS_DOMAIN_COPY = 2,   /* memory copies */
  OCCA_TOOLS_DOMAIN_BUILD = 3,  /* kernel builds (JIT) */
  OCCA_TOOLS_DOMAIN_KERNEL = 4, /* kernel launches and device times */
  OCCA_TOOLS_DOMAIN_STREAM = 5, /* stream create, set */
  OCCA_TOOLS_DOMAIN_SYNC = 6,   /* stream and device finish */
  OCCA_TOOLS_DOMAIN_USER = 7,   /* user regions and markers */
  OCCA_TOOLS_DOMAIN_TOOL = 8,   /* the tool's own events: drops, triggers, fork */
  OCCA_TOOLS_DOMAIN_OPENMP = 9, /* OpenMP regions, tasks and syncs (the OMPT tool) */
  OCCA_TOOLS_DOMAIN_MPI = 10,   /* MPI calls, requests, communicators and clock offsets (the PMPI library, runtime/mpi) */
  OCCA_TOOLS_DOMAIN_COUNT = 11
} occa_tools_domain_t;

/* Every event kind, numbered as in the trace format (formats/trace/FORMAT.md).
 * Numbers are stable: new kinds are added at the end. Each comment gives the
 * kind's domain and the arguments of its record. */
typedef enum occa_tools_event_kind {
  OCCA_TOOLS_EVENT_DEVICE_SETUP_BEGIN = 1,       /* device: corr, mode, index, properties */
  OCCA_TOOLS_EVENT_DEVICE_SETUP_END = 2,         /* device: corr, device, status */
  OCCA_TOOLS_EVENT_MEMORY_ALLOC_BEGIN = 3,       /* memory: corr, device, bytes, tag */
  OCCA_TOOLS_EVENT_MEMORY_ALLOC_END = 4,         /* memory: corr, memory, address, status */
  OCCA_TOOLS_EVENT_MEMORY_FREE_BEGIN = 5,        /* memory: corr, memory, device, bytes */
  OCCA_TOOLS_EVENT_MEMORY_FREE_END = 6,          /* memory: corr, status */
  OCCA_TOOLS_EVENT_COPY_BEGIN = 7,               /* copy: corr, direction, src, dst, bytes, stream */
  OCCA_TOOLS_EVENT_COPY_END = 8,                 /* copy: corr, status */
  OCCA_TOOLS_EVENT_BUILD_BEGIN = 9,              /* build: corr, device, name, source, properties, properties_hash */
  OCCA_TOOLS_EVENT_BUILD_END = 10,               /* build: corr, kernel, cache, status */
  OCCA_TOOLS_EVENT_RUN_BEGIN = 11,               /* kernel: corr, kernel, device, stream */
  OCCA_TOOLS_EVENT_RUN_END = 12,                 /* kernel: corr, status */
  OCCA_TOOLS_EVENT_DEVICE_TIME = 13,             /* kernel: corr, start, end */
  OCCA_TOOLS_EVENT_STREAM_CREATE = 14,           /* stream: device, stream */
  OCCA_TOOLS_EVENT_STREAM_SET = 15,              /* stream: device, stream */
  OCCA_TOOLS_EVENT_STREAM_FINISH_BEGIN = 16,     /* sync: corr, stream */
  OCCA_TOOLS_EVENT_STREAM_FINISH_END = 17,       /* sync: corr */
  OCCA_TOOLS_EVENT_DEVICE_FINISH_BEGIN = 18,     /* sync: corr, device */
  OCCA_TOOLS_EVENT_DEVICE_FINISH_END = 19,       /* sync: corr */
  OCCA_TOOLS_EVENT_REGION_PUSH = 20,             /* user: name */
  OCCA_TOOLS_EVENT_REGION_POP = 21,              /* user: name */
  OCCA_TOOLS_EVENT_MARKER = 22,                  /* user: name */
  OCCA_TOOLS_EVENT_DROPPED = 23,                 /* tool: count, reason, since */
  OCCA_TOOLS_EVENT_TRIGGER = 24,                 /* tool: window, action, cause */
  OCCA_TOOLS_EVENT_FORK = 25,                    /* tool */
  OCCA_TOOLS_EVENT_OMP_THREAD_BEGIN = 26,        /* openmp: corr, thread_type */
  OCCA_TOOLS_EVENT_OMP_THREAD_END = 27,          /* openmp: corr */
  OCCA_TOOLS_EVENT_OMP_PARALLEL_BEGIN = 28,      /* openmp: corr, parent_task, requested_team, flags, launch */
  OCCA_TOOLS_EVENT_OMP_PARALLEL_END = 29,        /* openmp: corr */
  OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_BEGIN = 30, /* openmp: corr, parallel, thread_num, team_size, launch */
  OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_END = 31,   /* openmp: corr */
  OCCA_TOOLS_EVENT_OMP_WORK_BEGIN = 32,          /* openmp: corr, work_type, parallel, task, count */
  OCCA_TOOLS_EVENT_OMP_WORK_END = 33,            /* openmp: corr */
  OCCA_TOOLS_EVENT_OMP_SYNC_BEGIN = 34,          /* openmp: corr, sync_kind, parallel, task */
  OCCA_TOOLS_EVENT_OMP_SYNC_END = 35,            /* openmp: corr */
  OCCA_TOOLS_EVENT_OMP_SYNC_WAIT_BEGIN = 36,     /* openmp: corr, sync_kind, parallel, task */
  OCCA_TOOLS_EVENT_OMP_SYNC_WAIT_END = 37,       /* openmp: corr */
  OCCA_TOOLS_EVENT_OMP_TASK_CREATE = 38,         /* openmp: task, parent_task, flags, has_dependences, launch */
  OCCA_TOOLS_EVENT_OMP_TASK_SCHEDULE = 39,       /* openmp: prior_task, prior_status, next_task */
  OCCA_TOOLS_EVENT_OMP_TASK_DEPENDENCE = 40,     /* openmp: src_task, sink_task */
  OCCA_TOOLS_EVENT_OMP_TASK_DEPEND = 41,         /* openmp: task, address, dependence_type */
  OCCA_TOOLS_EVENT_MPI_CALL_BEGIN = 42,          /* mpi: corr, function, comm */
  OCCA_TOOLS_EVENT_MPI_CALL_END = 43,            /* mpi: corr, status */
  OCCA_TOOLS_EVENT_MPI_P2P_BEGIN = 44,           /* mpi: corr, function, peer, tag, bytes, comm */
  OCCA_TOOLS_EVENT_MPI_P2P_END = 45,             /* mpi: corr, request, status */
  OCCA_TOOLS_EVENT_MPI_COLLECTIVE_BEGIN = 46,    /* mpi: corr, function, root, bytes, comm, comm_size */
  OCCA_TOOLS_EVENT_MPI_COLLECTIVE_END = 47,      /* mpi: corr, request, status */
  OCCA_TOOLS_EVENT_MPI_WAIT_BEGIN = 48,          /* mpi: corr, function, count */
  OCCA_TOOLS_EVENT_MPI_WAIT_END = 49,            /* mpi: corr, completed, status */
  OCCA_TOOLS_EVENT_MPI_REQUEST_DONE = 50,        /* mpi: request, wait */
  OCCA_TOOLS_EVENT_MPI_COMM = 51,                /* mpi: comm, parent, size, rank, world_rank, leader */
  OCCA_TOOLS_EVENT_MPI_CLOCK_SYNC = 52,          /* mpi: reference, offset, error, phase */
  OCCA_TOOLS_EVENT_KIND_COUNT = 53
} occa_tools_event_kind_t;
/* END GENERATED kinds */

/* Direction of a copy. */
typedef enum occa_tools_copy_direction {
  OCCA_TOOLS_COPY_H2D = 0, /* host memory to device memory */
  OCCA_TOOLS_COPY_D2H = 1, /* device memory to host memory */
  OCCA_TOOLS_COPY_D2D = 2, /* device memory to device memory */
  OCCA_TOOLS_COPY_H2H = 3  /* host memory to host memory */
} occa_tools_copy_direction_t;

/* JIT cache outcome of a kernel build. */
typedef enum occa_tools_cache {
  OCCA_TOOLS_CACHE_UNKNOWN = 0,
  OCCA_TOOLS_CACHE_HIT = 1, /* binary loaded from the kernel cache */
  OCCA_TOOLS_CACHE_MISS = 2 /* compiler ran */
} occa_tools_cache_t;

/* ------------------------------------------------------------------------ */
/* Connecting                                                               */
/* ------------------------------------------------------------------------ */

/* Looks up any entry point of this header by its C name
 * ("occa_tools_run_begin", ...). Returns NULL for an unknown name. */
typedef void *(*occa_tools_lookup_fn)(const char *name);

/* Critical-event callback: called by the tool, on a thread of its own, when
 * recorded data is lost (kind OCCA_TOOLS_EVENT_DROPPED) or the tool stops
 * recording for good. count is the number of events lost since the last
 * call; message says why in one line. */
typedef void (*occa_tools_critical_fn)(void *user_data, occa_tools_event_kind_t kind,
                                       uint64_t count, const char *message);

/* What occa_tools_connect() returns to the source. */
typedef struct occa_tools_api {
  size_t size;                  /* sizeof(occa_tools_api_t) as the tool knows it */
  uint32_t abi_version;         /* the tool's OCCA_TOOLS_ABI_VERSION */
  int active;                   /* 1 when tracing is configured in this process */
  occa_tools_lookup_fn lookup;  /* entry points by name */
  /* Bit k is set when event kind k is enabled. Read it with
   * OCCA_TOOLS_ENABLED(api, kind) to skip building arguments for an event
   * that would not be recorded. Stays valid for the life of the process. */
  const volatile uint64_t *enabled_mask;
} occa_tools_api_t;

#define OCCA_TOOLS_ENABLED(api, kind) \
  ((api)->enabled_mask != NULL && ((*(api)->enabled_mask >> (unsigned)(kind)) & 1u))

/* The single entry point. A source calls it once, with the ABI version it
 * was built against and a short name for itself ("occa", "occa-interposer",
 * "workload"), before sending any event. It fills *api (api->size must be
 * set by the caller to sizeof(occa_tools_api_t)) and returns 0, or -1 when
 * abi_version is newer than the tool or api is NULL. Calling it again is
 * harmless. */
OCCA_TOOLS_API int occa_tools_connect(uint32_t abi_version, const char *source_name,
                                      occa_tools_api_t *api);

/* Levels of occa_tools_log(). */
typedef enum occa_tools_log_level {
  OCCA_TOOLS_LOG_DEBUG = 0,
  OCCA_TOOLS_LOG_INFO = 1,
  OCCA_TOOLS_LOG_WARN = 2,
  OCCA_TOOLS_LOG_ERROR = 3
} occa_tools_log_level_t;

/* Writes message as one line of the tool's log (stderr), filtered by the
 * tool's log level, for sources that have no logger of their own. Reached
 * through the lookup function; NULL from tools older than this header. */
OCCA_TOOLS_API void occa_tools_log(occa_tools_log_level_t level, const char *message);

/* ------------------------------------------------------------------------ */
/* Events: devices                                                          */
/* ------------------------------------------------------------------------ */

/* A device is being set up. mode is the backend ("Serial", "OpenMP", "CUDA",
 * "HIP", "OpenCL", "Metal", "dpcpp"); device_index is the backend's device
 * number, or -1 where it has none; properties is the setup properties text
 * (JSON as OCCA prints it), or NULL. */
OCCA_TOOLS_API void occa_tools_device_setup_begin(occa_tools_call_t *call, const char *mode,
                                                  int64_t device_index,
                                                  const char *properties);

/* The setup finished. device is the new device's slot; the tool describes the
 * device from the begin arguments. */
OCCA_TOOLS_API void occa_tools_device_setup_end(occa_tools_call_t *call,
                                                occa_tools_data_t *device,
                                                occa_tools_status_t status);

/* ------------------------------------------------------------------------ */
/* Events: memory                                                           */
/* ------------------------------------------------------------------------ */

/* An allocation of bytes on device begins. tag is an optional label (NULL
 * when none); memory filters select objects by it. */
OCCA_TOOLS_API void occa_tools_memory_alloc_begin(occa_tools_call_t *call,
                                                  occa_tools_data_t *device, uint64_t bytes,
                                                  const char *tag);

/* The allocation finished. memory is the new object's slot; address is the
 * device pointer or handle (used by occa_tools_tag_memory), may be NULL. With
 * no slot the allocation is recorded, but the runtime keeps nothing of it: no
 * free or tag can name it later. */
OCCA_TOOLS_API void occa_tools_memory_alloc_end(occa_tools_call_t *call,
                                                occa_tools_data_t *memory,
                                                const void *address,
                                                occa_tools_status_t status);

/* A free of memory begins. The source must not use the slot after the end. */
OCCA_TOOLS_API void occa_tools_memory_free_begin(occa_tools_call_t *call,
                                                 occa_tools_data_t *memory);
OCCA_TOOLS_API void occa_tools_memory_free_end(occa_tools_call_t *call,
                                               occa_tools_status_t status);

/* A copy of bytes begins. src and dst are memory slots, NULL for host memory
 * that is not a tracked object; direction says which sides are device memory.
 * stream is the stream of an asynchronous copy (is_async != 0), else NULL. */
OCCA_TOOLS_API void occa_tools_copy_begin(occa_tools_call_t *call,
                                          occa_tools_copy_direction_t direction,
                                          occa_tools_data_t *src, occa_tools_data_t *dst,
                                          uint64_t bytes, int is_async,
                                          occa_tools_data_t *stream);
OCCA_TOOLS_API void occa_tools_copy_end(occa_tools_call_t *call, occa_tools_status_t status);

/* ------------------------------------------------------------------------ */
/* Events: kernels                                                          */
/* ------------------------------------------------------------------------ */

/* A kernel build (JIT compile or cache load) begins on device. name is the
 * kernel's name, source_file the OKL file (or a cache file name for a
 * kernel built from a string), properties the build properties text (NULL
 * when none; a key "occa_tools_tag" in it tags the kernel), properties_hash
 * the source's hash of them (0 when none). Builds on several threads at once
 * are kept apart by their calls. */
OCCA_TOOLS_API void occa_tools_build_begin(occa_tools_call_t *call, occa_tools_data_t *device,
                                           const char *name, const char *source_file,
                                           const char *properties, uint64_t properties_hash);

/* The build finished: kernel is the built kernel's slot (NULL when it
 * failed), cache says whether the JIT cache was hit. */
OCCA_TOOLS_API void occa_tools_build_end(occa_tools_call_t *call, occa_tools_data_t *kernel,
                                         occa_tools_cache_t cache,
                                         occa_tools_status_t status);

/* A kernel launch begins. name is read only the first time the tool sees
 * kernel (a source that reported the build may pass NULL). stream is the
 * stream it runs on, NULL for the device's current stream. */
OCCA_TOOLS_API void occa_tools_run_begin(occa_tools_call_t *call, occa_tools_data_t *kernel,
                                         const char *name, occa_tools_data_t *device,
                                         occa_tools_data_t *stream);
OCCA_TOOLS_API void occa_tools_run_end(occa_tools_call_t *call, occa_tools_status_t status);

/* Device-side start and end of the launch whose begin returned
 * correlation_id, in CLOCK_MONOTONIC nanoseconds. May be called any time
 * later, from any thread (for example when the source resolves timing events
 * at the next synchronisation). A source that knows only the duration passes
 * start_ns = 0 and end_ns = the duration. Ignored when the launch was not
 * recorded. */
OCCA_TOOLS_API void occa_tools_kernel_device_time(uint64_t correlation_id, uint64_t start_ns,
                                                  uint64_t end_ns);

/* ------------------------------------------------------------------------ */
/* Events: streams and synchronisation                                      */
/* ------------------------------------------------------------------------ */

/* A stream was created on device (slot stream). */
OCCA_TOOLS_API void occa_tools_stream_create(occa_tools_data_t *device,
                                             occa_tools_data_t *stream);

/* stream became device's current stream. */
OCCA_TOOLS_API void occa_tools_stream_set(occa_tools_data_t *device, occa_tools_data_t *stream);

/* Waiting for all work on stream (stream_finish) or on device
 * (device_finish) to complete. */
OCCA_TOOLS_API void occa_tools_stream_finish_begin(occa_tools_call_t *call,
                                                   occa_tools_data_t *stream);
OCCA_TOOLS_API void occa_tools_stream_finish_end(occa_tools_call_t *call);
OCCA_TOOLS_API void occa_tools_device_finish_begin(occa_tools_call_t *call,
                                                   occa_tools_data_t *device);
OCCA_TOOLS_API void occa_tools_device_finish_end(occa_tools_call_t *call);

/* ------------------------------------------------------------------------ */
/* Events: MPI (the PMPI library, runtime/mpi)                              */
/* ------------------------------------------------------------------------ */

/* An MPI call begins. kind is a begin kind of the mpi domain
 * (OCCA_TOOLS_EVENT_MPI_*_BEGIN); args are its arguments after the
 * correlation id, in the order of formats/trace/kinds.go, nargs of them
 * (signed ones cast to uint64_t). A kind or count that does not match is
 * not recorded (one warning). */
OCCA_TOOLS_API void occa_tools_mpi_begin(occa_tools_call_t *call, occa_tools_event_kind_t kind,
                                         const uint64_t *args, unsigned nargs);

/* The call ends: the end kind of the begin's kind, with its arguments after
 * the correlation id (missing ones are recorded as 0). */
OCCA_TOOLS_API void occa_tools_mpi_end(occa_tools_call_t *call, const uint64_t *args,
                                       unsigned nargs);

/* An instant of the mpi domain (OCCA_TOOLS_EVENT_MPI_REQUEST_DONE,
 * _MPI_COMM, _MPI_CLOCK_SYNC) with all its arguments. */
OCCA_TOOLS_API void occa_tools_mpi_event(occa_tools_event_kind_t kind, const uint64_t *args,
                                         unsigned nargs);

/* ------------------------------------------------------------------------ */
/* Control API: what an application may call directly                       */
/* ------------------------------------------------------------------------ */
/* All return 0 on success and -1 when the tool is inactive or the argument is
 * invalid; none ever aborts. */

/* Resume recording (after occa_tools_stop() or a config with
 * start_paused = true). */
OCCA_TOOLS_API int occa_tools_start(void);

/* Pause recording. Calls already begun still record their end. */
OCCA_TOOLS_API int occa_tools_stop(void);

/* Write everything recorded so far to the trace file and return once it is
 * there (or after the config's flush timeout). */
OCCA_TOOLS_API int occa_tools_flush(void);

/* Enter and leave a named region of the calling thread ("timestep", "solve").
 * Regions nest per thread; pop closes the innermost. */
OCCA_TOOLS_API int occa_tools_region_push(const char *name);
OCCA_TOOLS_API int occa_tools_region_pop(void);

/* An instant marker on the calling thread. */
OCCA_TOOLS_API int occa_tools_marker(const char *name);

/* Tag every kernel named kernel_name (exact name), present and future: its
 * builds and launches are selected by filters and triggers on that tag. */
OCCA_TOOLS_API int occa_tools_tag_kernel(const char *kernel_name, const char *tag);

/* Tag the live memory object whose allocation returned address. */
OCCA_TOOLS_API int occa_tools_tag_memory(const void *address, const char *tag);

/* Switch a domain or one event kind on or off (on top of the config). Returns
 * -1 for an unknown domain or kind. */
OCCA_TOOLS_API int occa_tools_enable_domain(occa_tools_domain_t domain, int enable);
OCCA_TOOLS_API int occa_tools_enable_event(occa_tools_event_kind_t kind, int enable);

/* 1 when events of kind would be recorded right now (tool active, kind
 * enabled, recording not paused), else 0. */
OCCA_TOOLS_API int occa_tools_event_enabled(occa_tools_event_kind_t kind);

/* Register fn to hear about lost data (see occa_tools_critical_fn). One
 * callback per process; NULL removes it. */
OCCA_TOOLS_API int occa_tools_set_critical_callback(occa_tools_critical_fn fn, void *user_data);

/* The tool's clock, CLOCK_MONOTONIC in nanoseconds. */
OCCA_TOOLS_API uint64_t occa_tools_now_ns(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OCCA_TOOLS_H */
