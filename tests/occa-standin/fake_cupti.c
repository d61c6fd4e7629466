/* fake_cupti.c: the few CUPTI functions the OCCA adapter calls
 * (runtime/occa/cupti.cpp), for its tests without a GPU. The adapter loads
 * it as libcupti (OCCA_TOOLS_CUPTI=path); the stand-in's queued CUDA mode
 * (standin.cpp) reports each kernel to it with fake_cupti_launch, which does
 * what the CUDA driver and CUPTI would: call the subscriber back on entry to
 * cuLaunchKernel with a new correlation id and on exit, and keep a kernel
 * record, in the layout of CUPTI's, for a later flush. As CUPTI does, an
 * unforced flush delivers the held records only when every one of them is
 * complete (they share a buffer); a forced flush delivers them all, the
 * incomplete ones with start and end 0.
 *
 *   FAKE_CUPTI_OUT   a file: one line per kernel, "kernel CID START END"
 *                    (ns on the host clock), and "flush N" per flush that
 *                    delivered N records
 *   FAKE_CUPTI_LAG   flushes a record stays incomplete (0: complete at the
 *                    next), as a real CUPTI's records of kernels that just
 *                    ended can be; at exit all are complete and delivered,
 *                    from an exit handler that runs before the adapter's
 *   FAKE_CUPTI_EXIT  "incomplete": that exit handler delivers nothing, so
 *                    the adapter's forced flush at exit gets the records
 *                    still incomplete
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_abi.h" /* runtime/occa */

typedef int result;
typedef void (*callback_func)(void *, int, uint32_t, const void *);
typedef void (*buffer_requested)(uint8_t **, size_t *, size_t *);
typedef void (*buffer_completed)(void *, uint32_t, uint8_t *, size_t, size_t);
typedef uint64_t (*timestamp_func)(void);

enum { invalid = 1, cbid_launch = 307 /* cuLaunchKernel */ };

/* A record as CUPTI lays it out: the head, then fields the adapter skips. */
struct kernel_record {
  ot_cupti_kernel_record head;
  uint8_t rest[64];
};

struct held {
  struct kernel_record record;
  int wait; /* flushes left before it is complete */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static callback_func callback;
static void *callback_userdata;
static int launch_enabled;
static buffer_requested requested;
static buffer_completed completed;
static int kernels_enabled;
static uint32_t next_correlation = 1000;
static struct held held[4096];
static size_t nheld;
static FILE *out;

static void say(const char *fmt, uint64_t a, uint64_t b, uint64_t c) {
  if (!out) {
    const char *path = getenv("FAKE_CUPTI_OUT");
    out = path ? fopen(path, "w") : NULL;
  }
  if (out) {
    fprintf(out, fmt, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
    fflush(out);
  }
}

result cuptiGetVersion(uint32_t *version) {
  *version = 26;
  return OT_CUPTI_SUCCESS;
}

result cuptiSubscribe(void **subscriber, callback_func f, void *userdata) {
  static int handle;
  *subscriber = &handle;
  callback = f;
  callback_userdata = userdata;
  return OT_CUPTI_SUCCESS;
}

result cuptiEnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid) {
  (void)subscriber;
  if (domain == OT_CUPTI_DOMAIN_DRIVER_API && cbid == cbid_launch)
    launch_enabled = (int)enable;
  return OT_CUPTI_SUCCESS;
}

result cuptiActivityRegisterCallbacks(buffer_requested r, buffer_completed c) {
  requested = r;
  completed = c;
  return OT_CUPTI_SUCCESS;
}

result cuptiActivityRegisterTimestampCallback(timestamp_func f) {
  (void)f; /* the stand-in's kernel times are on the host clock already */
  return OT_CUPTI_SUCCESS;
}

result cuptiGetTimestamp(uint64_t *t) {
  *t = 0;
  return OT_CUPTI_SUCCESS;
}

result cuptiActivityEnable(int kind) {
  if (kind != OT_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
    return invalid;
  kernels_enabled = 1;
  return OT_CUPTI_SUCCESS;
}

result cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record) {
  uint8_t *next = *record ? (uint8_t *)*record + sizeof(struct kernel_record) : buffer;
  if (next + sizeof(struct kernel_record) > buffer + valid)
    return invalid; /* CUPTI_ERROR_MAX_LIMIT_REACHED */
  *record = next;
  return OT_CUPTI_SUCCESS;
}

enum how { unforced, forced, at_exit };

/* One flush: the records held, in one buffer, when how and their
 * completeness allow; each record still incomplete after it is a flush
 * nearer completion. */
static void deliver(enum how how) {
  uint8_t *buffer = NULL;
  size_t bytes = 0, max_records = 0, n = 0;
  pthread_mutex_lock(&mu);
  int all_complete = 1;
  for (size_t i = 0; i < nheld; i++)
    all_complete &= held[i].wait == 0;
  if (!completed || nheld == 0 || (how == unforced && !all_complete)) {
    for (size_t i = 0; i < nheld; i++)
      held[i].wait -= held[i].wait > 0;
    pthread_mutex_unlock(&mu);
    return;
  }
  requested(&buffer, &bytes, &max_records);
  size_t keep = 0;
  for (size_t i = 0; i < nheld; i++) {
    struct held *h = &held[i];
    if (buffer && (n + 1) * sizeof(struct kernel_record) <= bytes) {
      struct kernel_record r = h->record;
      if (how != at_exit && h->wait > 0)
        r.head.start = r.head.end = 0; /* CUPTI's record without timestamps */
      memcpy(buffer + n * sizeof(struct kernel_record), &r, sizeof r);
      n++;
    } else {
      held[keep++] = *h;
    }
  }
  nheld = keep;
  pthread_mutex_unlock(&mu);
  say("flush %llu\n", n, 0, 0);
  completed(NULL, 0, buffer, bytes, n * sizeof(struct kernel_record));
}

result cuptiActivityFlushAll(uint32_t flag) {
  deliver(flag & OT_CUPTI_FLUSH_FORCED ? forced : unforced);
  return OT_CUPTI_SUCCESS;
}

static void flush_at_exit(void) {
  const char *exit_how = getenv("FAKE_CUPTI_EXIT");
  if (!exit_how || strcmp(exit_how, "incomplete") != 0)
    deliver(at_exit);
}

/* Called by the stand-in for each kernel of its queued CUDA mode, with the
 * kernel's start and end (ns, host clock). */
void fake_cupti_launch(uint64_t start, uint64_t end) {
  static int registered;
  ot_cupti_callback_data cb;
  int status = 0;
  memset(&cb, 0, sizeof cb);
  pthread_mutex_lock(&mu);
  cb.correlation_id = next_correlation++;
  if (!registered) {
    registered = 1;
    atexit(flush_at_exit); /* registered after the adapter's: runs before it */
  }
  pthread_mutex_unlock(&mu);
  cb.function_name = "cuLaunchKernel";
  cb.function_return_value = &status;
  if (callback && launch_enabled) {
    cb.site = OT_CUPTI_API_ENTER;
    callback(callback_userdata, OT_CUPTI_DOMAIN_DRIVER_API, cbid_launch, &cb);
  }
  if (kernels_enabled) {
    const char *lag = getenv("FAKE_CUPTI_LAG");
    pthread_mutex_lock(&mu);
    if (nheld < sizeof held / sizeof held[0]) {
      struct held *h = &held[nheld++];
      memset(h, 0, sizeof *h);
      h->record.head.kind = OT_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      h->record.head.start = start;
      h->record.head.end = end;
      h->record.head.correlation_id = cb.correlation_id;
      h->wait = lag ? atoi(lag) : 0;
    }
    pthread_mutex_unlock(&mu);
    say("kernel %llu %llu %llu\n", cb.correlation_id, start, end);
  }
  if (callback && launch_enabled) {
    cb.site = OT_CUPTI_API_EXIT;
    callback(callback_userdata, OT_CUPTI_DOMAIN_DRIVER_API, cbid_launch, &cb);
  }
}
