/*
 * ot_internal.h: the contract between libocca_tools.so (C: the ABI, the hot
 * path, buffers, signals) and libocca_tools_core.so (Go: config, filters,
 * encoding, compression, file output). Private: not installed.
 *
 * libocca_tools.so loads the Go core with dlopen() only when OCCA_TOOLS_CONFIG
 * is set, so a process that does not trace never starts a Go runtime. The two
 * sides talk through two tables of function pointers:
 *   ot_core_api_t: Go functions the C side calls (start, decisions, shutdown);
 *   ot_host_t:     C functions the Go writer calls (take buffers, defs, clock).
 * Neither library links against the other.
 */
#ifndef OT_INTERNAL_H
#define OT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Raw records in per-thread buffers --------------------------------- *
 * A thread writes each event as a few bytes, in the encoding of an events
 * chunk of the trace (formats/trace/FORMAT.md §5) with the buffer as the
 * batch and times in ticks: formats/trace/raw.go defines it, and the writer
 * decodes it with trace.Batch's AddRaw, copying most events as they are.
 *   head   1 byte: the kind, bit 6 S (the arguments the S flag covers are
 *          those of the buffer's previous event of the kind), bit 7 C (the
 *          correlation id is the buffer's previous one, + 1 for a begin)
 *   delta  varint (zig-zag): ticks (TSC ticks or CLOCK_MONOTONIC ns, see
 *          ot_settings.clock) since the buffer's previous event, or since 0
 *   args   in the order of formats/trace/kinds.go, by ot_kind_codec: the
 *          correlation id a varint of its difference to the previous one,
 *          absent with C; a time a uvarint; the others a uvarint (an int a
 *          varint), absent with S.
 * String arguments are ids of interned strings (see defs below). Time
 * arguments are raw ticks, except DEVICE_TIME's start/end, which the source
 * gave in CLOCK_MONOTONIC ns. */
typedef struct ot_kind_codec {
  uint8_t nargs; /* corr included */
  uint8_t corr;  /* 1 + the index of the correlation id, 0 none */
  uint8_t same;  /* bit j: argument j is covered by the S flag */
  uint8_t ints;  /* bit j: argument j is an int (zig-zag) */
  uint8_t times; /* bit j: argument j is a time */
} ot_kind_codec_t;

/* ---- Definitions queue --------------------------------------------------- *
 * Definitions (trace kinds 64+: strings, devices, kernels, ...) go through
 * one global queue, drained by the writer before the event buffers it takes
 * in the same cycle, so every definition reaches the file before the events
 * that use it. Encoding of one entry:
 *   uint8 kind, uint8 nargs, uint16 pad, uint32 text_len,
 *   uint64 args[nargs], then text_len bytes of text (no NUL), padded to 8. */
/* BEGIN GENERATED tables: made by runtime/abi/gentables from formats/trace/kinds.go and
 * runtime/abi/abi.go; do not edit, change those and run `make generate`. */
/* The most arguments any kind has (trace.MaxArgs). */
#define OT_MAX_ARGS 6u

/* Definition kinds (trace.Def*). */
#define OT_DEF_STRING 64u
#define OT_DEF_DEVICE 65u
#define OT_DEF_KERNEL 66u
#define OT_DEF_KERNEL_TAG 67u
#define OT_DEF_STREAM 68u
#define OT_DEF_MEMORY 69u
#define OT_DEF_THREAD 70u

/* Values of DROPPED's reason and TRIGGER's action and cause: trace.Drop*,
 * trace.Trigger* and trace.Cause*, which say what each means. The comments
 * give their names in the trace. */
enum {
  OT_DROP_BUFFER_FULL = 1,           /* buffer_full */
  OT_DROP_WRITE_ERROR = 2,           /* write_error */
  OT_DROP_STRING_TABLE_FULL = 3,     /* string_table_full */
  OT_DROP_DEFINITION_QUEUE_FULL = 4, /* definition_queue_full */
  OT_DROP_AFTER_SHUTDOWN = 5,        /* after_shutdown */
  OT_DROP_REENTRANT = 6,             /* reentrant */
  OT_DROP_TOO_DEEP = 7               /* too_deep */
};
enum {
  OT_TRIGGER_OPEN = 1,   /* open */
  OT_TRIGGER_CLOSE = 2,  /* close */
  OT_TRIGGER_PAUSE = 3,  /* pause */
  OT_TRIGGER_RESUME = 4, /* resume */
  OT_TRIGGER_BUDGET = 5  /* budget */
};
enum {
  OT_CAUSE_LAUNCH = 1, /* launch */
  OT_CAUSE_REGION = 2, /* region */
  OT_CAUSE_TIME = 3,   /* time */
  OT_CAUSE_API = 4,    /* api */
  OT_CAUSE_SIGNAL = 5, /* signal */
  OT_CAUSE_BUDGET = 6  /* budget */
};

/* Values of the MPI kinds' function argument (trace.MpiFunctionName). */
enum {
  OT_MPI_INIT = 1,                  /* init */
  OT_MPI_INIT_THREAD = 2,           /* init_thread */
  OT_MPI_FINALIZE = 3,              /* finalize */
  OT_MPI_COMM_DUP = 4,              /* comm_dup */
  OT_MPI_COMM_SPLIT = 5,            /* comm_split */
  OT_MPI_COMM_CREATE = 6,           /* comm_create */
  OT_MPI_COMM_FREE = 7,             /* comm_free */
  OT_MPI_SEND = 8,                  /* send */
  OT_MPI_SSEND = 9,                 /* ssend */
  OT_MPI_BSEND = 10,                /* bsend */
  OT_MPI_RSEND = 11,                /* rsend */
  OT_MPI_RECV = 12,                 /* recv */
  OT_MPI_ISEND = 13,                /* isend */
  OT_MPI_ISSEND = 14,               /* issend */
  OT_MPI_IBSEND = 15,               /* ibsend */
  OT_MPI_IRSEND = 16,               /* irsend */
  OT_MPI_IRECV = 17,                /* irecv */
  OT_MPI_WAIT = 18,                 /* wait */
  OT_MPI_WAITALL = 19,              /* waitall */
  OT_MPI_WAITANY = 20,              /* waitany */
  OT_MPI_WAITSOME = 21,             /* waitsome */
  OT_MPI_TEST = 22,                 /* test */
  OT_MPI_TESTALL = 23,              /* testall */
  OT_MPI_TESTANY = 24,              /* testany */
  OT_MPI_TESTSOME = 25,             /* testsome */
  OT_MPI_BARRIER = 26,              /* barrier */
  OT_MPI_BCAST = 27,                /* bcast */
  OT_MPI_REDUCE = 28,               /* reduce */
  OT_MPI_ALLREDUCE = 29,            /* allreduce */
  OT_MPI_GATHER = 30,               /* gather */
  OT_MPI_ALLGATHER = 31,            /* allgather */
  OT_MPI_SCATTER = 32,              /* scatter */
  OT_MPI_ALLTOALL = 33,             /* alltoall */
  OT_MPI_IBARRIER = 34,             /* ibarrier */
  OT_MPI_IBCAST = 35,               /* ibcast */
  OT_MPI_IREDUCE = 36,              /* ireduce */
  OT_MPI_IALLREDUCE = 37,           /* iallreduce */
  OT_MPI_SENDRECV = 38,             /* sendrecv */
  OT_MPI_PROBE = 39,                /* probe */
  OT_MPI_IPROBE = 40,               /* iprobe */
  OT_MPI_GATHERV = 41,              /* gatherv */
  OT_MPI_SCATTERV = 42,             /* scatterv */
  OT_MPI_ALLGATHERV = 43,           /* allgatherv */
  OT_MPI_ALLTOALLV = 44,            /* alltoallv */
  OT_MPI_REDUCE_SCATTER = 45,       /* reduce_scatter */
  OT_MPI_REDUCE_SCATTER_BLOCK = 46, /* reduce_scatter_block */
  OT_MPI_SCAN = 47,                 /* scan */
  OT_MPI_EXSCAN = 48                /* exscan */
};

/* Drop counters, one per reason (index 0 unused): trace.NumReasonCounters. */
#define OT_DROP_COUNTERS 8u

/* How each event kind's record is encoded (rt.h: ot_encode, formats/trace/raw.go):
 * the initializer of events.c's ot_kind_codec[OCCA_TOOLS_EVENT_KIND_COUNT], one
 * {nargs, corr, same, ints, times} per kind: its number of arguments, corr
 * included; 1 + the index of its correlation id (0: none); and a bit per
 * argument that the S flag covers, that is an int (zig-zag), that is a time.
 * Then the kinds that begin a pair, a bit per kind. */
#define OT_KIND_CODEC { \
    {0}, /* invalid */ \
    [1] = {4, 1, 0x0e, 0x04, 0x00}, [2] = {3, 1, 0x06, 0x00, 0x00}, [3] = {4, 1, 0x0e, 0x00, 0x00}, [4] = {4, 1, 0x0e, 0x00, 0x00}, \
    [5] = {4, 1, 0x0e, 0x00, 0x00}, [6] = {2, 1, 0x02, 0x00, 0x00}, [7] = {6, 1, 0x3e, 0x00, 0x00}, [8] = {2, 1, 0x02, 0x00, 0x00}, \
    [9] = {6, 1, 0x3e, 0x00, 0x00}, [10] = {4, 1, 0x0e, 0x00, 0x00}, [11] = {4, 1, 0x0e, 0x00, 0x00}, [12] = {2, 1, 0x02, 0x00, 0x00}, \
    [13] = {3, 1, 0x00, 0x00, 0x06}, [14] = {2, 0, 0x03, 0x00, 0x00}, [15] = {2, 0, 0x03, 0x00, 0x00}, [16] = {2, 1, 0x02, 0x00, 0x00}, \
    [17] = {1, 1, 0x00, 0x00, 0x00}, [18] = {2, 1, 0x02, 0x00, 0x00}, [19] = {1, 1, 0x00, 0x00, 0x00}, [20] = {1, 0, 0x01, 0x00, 0x00}, \
    [21] = {1, 0, 0x01, 0x00, 0x00}, [22] = {1, 0, 0x01, 0x00, 0x00}, [23] = {3, 0, 0x03, 0x00, 0x04}, [24] = {3, 0, 0x07, 0x00, 0x00}, \
    [25] = {0, 0, 0x00, 0x00, 0x00}, [26] = {2, 1, 0x02, 0x00, 0x00}, [27] = {1, 1, 0x00, 0x00, 0x00}, [28] = {5, 1, 0x1e, 0x00, 0x00}, \
    [29] = {1, 1, 0x00, 0x00, 0x00}, [30] = {5, 1, 0x1e, 0x00, 0x00}, [31] = {1, 1, 0x00, 0x00, 0x00}, [32] = {5, 1, 0x1e, 0x00, 0x00}, \
    [33] = {1, 1, 0x00, 0x00, 0x00}, [34] = {4, 1, 0x0e, 0x00, 0x00}, [35] = {1, 1, 0x00, 0x00, 0x00}, [36] = {4, 1, 0x0e, 0x00, 0x00}, \
    [37] = {1, 1, 0x00, 0x00, 0x00}, [38] = {5, 0, 0x1f, 0x00, 0x00}, [39] = {3, 0, 0x07, 0x00, 0x00}, [40] = {2, 0, 0x03, 0x00, 0x00}, \
    [41] = {3, 0, 0x07, 0x00, 0x00}, [42] = {3, 1, 0x06, 0x00, 0x00}, [43] = {2, 1, 0x02, 0x00, 0x00}, [44] = {6, 1, 0x3e, 0x0c, 0x00}, \
    [45] = {3, 1, 0x06, 0x00, 0x00}, [46] = {6, 1, 0x3e, 0x04, 0x00}, [47] = {3, 1, 0x06, 0x00, 0x00}, [48] = {3, 1, 0x06, 0x00, 0x00}, \
    [49] = {3, 1, 0x06, 0x00, 0x00}, [50] = {2, 0, 0x03, 0x00, 0x00}, [51] = {6, 0, 0x3f, 0x00, 0x00}, [52] = {4, 0, 0x0f, 0x02, 0x00}, \
  }
#define OT_BEGIN_KINDS 0x0001541554050aaaull

/* A raw record's most bytes, and its head's S and C flags (rt.h: ot_encode):
 * trace.MaxEventBytes, trace.HeadS and trace.HeadC. */
#define OT_RAW_MAX 71u
#define OT_RAW_S 0x40u
#define OT_RAW_C 0x80u

/* The part of output.memory kept for the writer (ot_pool_init):
 * abi.WriterReserve. */
#define OT_WRITER_RESERVE 13631488ull

/* The event kinds of each domain, a bit per kind: the initializer of
 * control.c's domain_kinds[OCCA_TOOLS_DOMAIN_COUNT]. */
#define OT_DOMAIN_KINDS                                                   \
  {                                                                       \
    [OCCA_TOOLS_DOMAIN_DEVICE] = 0x0000000000000006ull, /* kinds 1-2 */   \
    [OCCA_TOOLS_DOMAIN_MEMORY] = 0x0000000000000078ull, /* kinds 3-6 */   \
    [OCCA_TOOLS_DOMAIN_COPY] = 0x0000000000000180ull, /* kinds 7-8 */     \
    [OCCA_TOOLS_DOMAIN_BUILD] = 0x0000000000000600ull, /* kinds 9-10 */   \
    [OCCA_TOOLS_DOMAIN_KERNEL] = 0x0000000000003800ull, /* kinds 11-13 */ \
    [OCCA_TOOLS_DOMAIN_STREAM] = 0x000000000000c000ull, /* kinds 14-15 */ \
    [OCCA_TOOLS_DOMAIN_SYNC] = 0x00000000000f0000ull, /* kinds 16-19 */   \
    [OCCA_TOOLS_DOMAIN_USER] = 0x0000000000700000ull, /* kinds 20-22 */   \
    [OCCA_TOOLS_DOMAIN_TOOL] = 0x0000000003800000ull, /* kinds 23-25 */   \
    [OCCA_TOOLS_DOMAIN_OPENMP] = 0x000003fffc000000ull, /* kinds 26-41 */ \
    [OCCA_TOOLS_DOMAIN_MPI] = 0x001ffc0000000000ull, /* kinds 42-52 */    \
  }
/* END GENERATED tables */

/* Thread index 0 is the tool itself (writer-side events). */
#define OT_TOOL_THREAD 0u

/* ---- Settings: what the Go core tells C at start ------------------------- */
enum { OT_MAX_WINDOWS = 16 };

enum ot_window_kind { OT_WINDOW_LAUNCH = 1, OT_WINDOW_REGION = 2, OT_WINDOW_TIME = 3 };

typedef struct ot_window_setting {
  uint32_t kind; /* ot_window_kind */
  uint64_t from; /* launch or region instance number, 1-based */
  uint64_t to;   /* inclusive; 0 = no end */
} ot_window_setting_t;

typedef struct ot_settings {
  uint64_t enabled_mask;  /* bit per event kind */
  uint64_t memory_bytes;  /* total buffer memory */
  uint64_t buffer_bytes;  /* size of one buffer */
  uint64_t flush_timeout_ms;
  uint64_t budget_events; /* 0 = none */
  uint64_t mem_min_bytes; /* memory filter size range; max 0 = none */
  uint64_t mem_max_bytes;
  int32_t use_tsc;        /* 1: ticks are TSC, 0: CLOCK_MONOTONIC ns */
  int32_t on_full_wait;   /* 1: wait for a free buffer, 0: drop and count */
  int32_t start_paused;
  int32_t toggle_signal;  /* 0 = none */
  int32_t device_time;    /* sources should report device-side timing */
  int32_t log_level;      /* zerolog level: -1 trace .. 5 panic, 7 disabled */
  int32_t tsc_usable;     /* in: C found an invariant TSC the kernel trusts */
  int32_t omp_all;        /* OMPT tool: 1 records all OpenMP activity, 0 only inside recorded launches */
  int32_t trace_fd;       /* out: the trace file's descriptor, -1 none (fds.c keeps it from the application) */
  uint32_t nwindows;
  ot_window_setting_t windows[OT_MAX_WINDOWS];
} ot_settings_t;

/* ---- Spans: what the writer takes from C --------------------------------- */
typedef struct ot_span {
  const uint8_t *data; /* first byte of complete records */
  uint64_t len;        /* bytes */
  uint32_t offset;     /* of data in the buffer: 0 for its first span, whose records start afresh */
  uint32_t thread;     /* thread index */
  uint32_t slot;       /* pool slot, for ot_host.release */
  int32_t full;        /* 1: the buffer is done; release returns it to the pool */
  /* When the span is all of a buffer its thread handed over (offset 0,
   * full): its events by kind and its last (latest) record's ticks; else
   * counts is NULL. */
  const uint32_t *counts;
  uint64_t last_ticks;
} ot_span_t;

/* Counters the writer reads for the stats chunk. */
typedef struct ot_counters {
  uint64_t dropped[OT_DROP_COUNTERS]; /* per trace drop reason */
  uint64_t strings;      /* interned strings */
  uint64_t threads;      /* threads seen */
  uint64_t buffers_used; /* buffers ever allocated */
  uint64_t signal_toggles; /* deliveries of the toggle signal so far */
  uint64_t ticks_clamped;  /* event times raised to the thread's previous one */
} ot_counters_t;

/* Wake-up reasons returned by ot_host.wait. */
enum { OT_WAKE_TIMEOUT = 0, OT_WAKE_WORK = 1, OT_WAKE_FLUSH = 2 };

/* C functions the Go core calls. All are safe from any thread; the writer
 * calls them from its one goroutine. */
typedef struct ot_host {
  /* Blocks up to timeout_ms for a full buffer or a flush request. */
  int (*wait)(int timeout_ms);
  /* Pops the oldest full buffer; 0 when none. */
  int (*take_full)(ot_span_t *out);
  /* Partial flush: visits live buffers in pool order starting at *cursor;
   * returns 1 with the next span of records not yet written, 0 at the end. */
  int (*take_partial)(uint32_t *cursor, ot_span_t *out);
  /* Marks a span written; a full span's buffer goes back to the pool. */
  void (*release)(const ot_span_t *span);
  /* Moves pending definitions into dst (cap bytes); returns bytes moved.
   * Call until it returns 0. try_only: do not block on the queue's lock. */
  uint64_t (*take_defs)(uint8_t *dst, uint64_t cap, int try_only);
  /* Chooses the tick clock (1: TSC, 0: CLOCK_MONOTONIC); called by start
   * before it reads any sync point. */
  void (*set_clock)(int use_tsc);
  /* Reads the tick clock and CLOCK_MONOTONIC as one pair. */
  void (*sync_point)(uint64_t *ticks, int64_t *mono_ns);
  void (*counters)(ot_counters_t *out);
  /* Time windows and the byte budget are driven from Go. A time window is
   * open for the events whose own ticks lie in [from_ticks, to_ticks)
   * (window_time, which the writer may refine while both are ahead); once
   * both edges have passed, window_set retires its thresholds, holding the
   * window open (open = 1, no end) or shut for good. */
  void (*window_set)(uint32_t window, int open);
  void (*window_time)(uint32_t window, uint64_t from_ticks, uint64_t to_ticks);
  void (*budget_exhausted)(void);
  /* The flush sequence: requested by C (signal, occa_tools_flush), done when
   * the writer stores the sequence it finished. */
  uint64_t (*request_flush)(void);
  uint64_t (*flush_requested)(void);
  void (*flush_done)(uint64_t seq);
  /* Nonzero once a signal whose default action ends the process asked for
   * the final flush. It is set before that flush is requested, so a writer
   * that reads flush_requested first and then this sees both. */
  uint64_t (*final_requested)(void);
  /* Adopts an exit signal's disposition that the application changed
   * without going through sigaction() or signal() (the raw system call). */
  void (*rearm_signals)(void);
  /* Stops recording for good (final flush, fatal output error); later
   * events are counted as lost with reason after_shutdown. */
  void (*stop_for_good)(void);
  /* The i-th toggle signal delivery: when it came and whether recording
   * was on after it. 0 when that entry was overwritten (over 64 toggles in
   * one writer cycle). */
  int (*signal_toggle_at)(uint64_t i, uint64_t *ticks, uint32_t *recording);
  /* Calls the application's critical-event callback, if it set one. */
  void (*critical)(uint32_t kind, uint64_t count, const char *message);
} ot_host_t;

/* Object decisions the Go core returns. */
typedef struct ot_decision {
  uint32_t selected;        /* events of this object are recorded */
  uint32_t memory_selected; /* devices: allocations on it pass the memory filter */
  uint32_t windows;         /* kernels, regions: bitmask of windows they count for */
} ot_decision_t;

/* Go functions the C side calls, found with dlsym in the core. */
typedef struct ot_core_api {
  /* Loads the config, fills *settings and opens the trace file. Returns 0,
   * or -1 (message already logged) to run untraced, or -2 when the config
   * says on_error = "abort". */
  int (*start)(const ot_host_t *host, ot_settings_t *settings);
  /* Starts the writer, once C has set up buffers from the settings. */
  void (*run)(void);
  void (*decide_device)(const char *mode, int64_t index, const char *props, ot_decision_t *out);
  /* Also returns in *tags_out a newline-separated list of the kernel's tags
   * (owned by Go, valid until the next call on this thread) or NULL. */
  void (*decide_kernel)(const char *name, const char *props, ot_decision_t *out,
                        const char **tags_out);
  uint32_t (*decide_region)(const char *name);
  int (*memory_tag_selected)(const char *tag);
  void (*tag_kernel)(const char *name, const char *tag);
  /* Final flush and close; called once at exit. */
  void (*shutdown)(void);
  /* Logs one line through zerolog at level (0 debug .. 3 error). */
  void (*log)(int level, const char *msg);
} ot_core_api_t;

/* Names of the Go exports (runtime/core/exports.go). */
#define OT_CORE_START "OccaToolsCoreStart"
#define OT_CORE_RUN "OccaToolsCoreRun"
#define OT_CORE_DECIDE_DEVICE "OccaToolsCoreDecideDevice"
#define OT_CORE_DECIDE_KERNEL "OccaToolsCoreDecideKernel"
#define OT_CORE_DECIDE_REGION "OccaToolsCoreDecideRegion"
#define OT_CORE_MEMORY_TAG "OccaToolsCoreMemoryTagSelected"
#define OT_CORE_TAG_KERNEL "OccaToolsCoreTagKernel"
#define OT_CORE_SHUTDOWN "OccaToolsCoreShutdown"
#define OT_CORE_LOG "OccaToolsCoreLog"

#ifdef __cplusplus
}
#endif
#endif /* OT_INTERNAL_H */
