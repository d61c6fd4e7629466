/*
 * repro_writer: reproduces, deterministically and on one thread, what the Go
 * writer's collect() (runtime/writer/loop.go) meets when it follows the
 * take_partial contract of runtime/src/buffers.c ("2 means: a full buffer of
 * this thread is still queued; drain take_full first and call again with the
 * same cursor") while it releases spans only later, in writeSpans:
 *
 *   1. LIVELOCK: after take_full has drained the predecessor, it is still in
 *      state FULL until released, so take_partial keeps returning 2 and
 *      collect() loops until the application hands over another buffer (for
 *      an idle or exiting application: forever; occa_tools_flush and the final
 *      flush time out, and the trace misses its last buffers and final stats).
 *   2. DUPLICATE: a partial span taken in a pass, then the same buffer taken
 *      full in the same pass (after a 2), starts at the same byte: the records
 *      of the partial span are written twice.
 *
 * Both were fixed in 518cd65 (take_full marks a buffer taken; flushed moves
 * when a span is taken); this stays as their regression test.
 *
 *   3. LATE DROPPED: a drop counted while the writer's revocation of the
 *      thread's buffer had zeroed its limit (the pop of a region whose push
 *      was dropped) waited for the thread's next buffer for its DROPPED
 *      record, although the revocation was cancelled and the thread went on
 *      in the same buffer: the record came after later events, between a
 *      begin and its end (make tsan failed once so: "end kind 12 carries id
 *      ..., the open begin has 0"). Now it goes before the next record.
 *
 * Built with the runtime's C sources (no Go core, no sanitizer). Exit status
 * 1 when any is reproduced, 0 when none is.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_core.h"

static uint8_t defs[1 << 16];

static void markers(int n) {
  for (int i = 0; i < n; i++)
    occa_tools_marker("m");
}

int main(void) {
  if (getenv("OCCA_TOOLS_CONFIG")) {
    fprintf(stderr, "repro_writer: unset OCCA_TOOLS_CONFIG\n");
    return 2;
  }
  memset(&ot_cfg, 0, sizeof ot_cfg);
  ot_cfg.flush_timeout_ms = 1000;
  if (fake_runtime_start(4 * 4096, 4096) != 0)
    return 2;

  const unsigned rec = 24; /* a marker: 16-byte header + 1 argument */
  const unsigned per_buf = 4096 / rec;
  int livelock = 0, duplicate = 0;
  ot_span_t s;

  /* Buffer A fills and is handed over; B is live with 30 records. */
  markers((int)per_buf + 30);
  while (ot_take_defs(defs, sizeof defs, 0))
    ;

  /* ---- 1. collect(periodic): drainFull, then TakePartial --------------- */
  ot_span_t held[16];
  int nheld = 0;
  while (ot_host_take_full(&s))
    held[nheld++] = s; /* appended to l.spans; released later, in writeSpans */
  uint32_t cursor = 0;
  int twos = 0;
  for (int i = 0; i < 1000; i++) {
    int r = ot_host_take_partial(&cursor, &s);
    if (r == 0)
      break;
    if (r == 1) { /* a partial span: held like the others */
      held[nheld++] = s;
      continue;
    }
    twos++;
    while (ot_host_take_full(&s)) /* drainFull: nothing left to take */
      held[nheld++] = s;
  }
  printf("1. after draining every full buffer, take_partial returned 2 %d times in a row%s\n",
         twos, twos == 1000 ? " (and would forever): LIVELOCK" : "");
  livelock = twos == 1000;
  for (int i = 0; i < nheld; i++) /* writeSpans */
    ot_host_release(&held[i]);
  nheld = 0;

  /* ---- 2. a partial span, then the same buffer taken full in one pass --- */
  markers(30); /* B: records not taken yet */
  cursor = 0;
  int r = ot_host_take_partial(&cursor, &s); /* B's 30 records */
  if (r != 1) {
    printf("2. set-up: expected a partial span of B, take_partial returned %d\n", r);
    return 2;
  }
  ot_span_t partial = s;
  held[nheld++] = s;
  markers((int)per_buf); /* B fills and is handed over; C, B's successor, is live */
  r = ot_host_take_partial(&cursor, &s);
  if (r == 2) {
    printf("2. take_partial returned 2 for B's successor; take_full follows\n");
    while (ot_host_take_full(&s)) {
      held[nheld++] = s;
      if (s.slot == partial.slot && s.data < partial.data + partial.len) {
        uint64_t overlap = (uint64_t)(partial.data + partial.len - s.data);
        printf("2. the full span of slot %u starts %s the partial span taken before it in the "
               "same pass: %llu bytes (%llu records) would be written twice: DUPLICATE\n",
               s.slot, s.data == partial.data ? "at the same byte as" : "inside",
               (unsigned long long)overlap, (unsigned long long)(overlap / rec));
        duplicate = 1;
      }
    }
  } else {
    printf("2. take_partial returned %d (no predecessor rule hit)\n", r);
  }
  if (!duplicate)
    printf("2. no span overlaps another: each record is taken once\n");
  for (int i = 0; i < nheld; i++)
    ot_host_release(&held[i]);

  nheld = 0;

  /* ---- 3. a drop counted during a revocation the thread cancels -------- */
  ot_thread *t = ot_self_tls;
  for (int i = 0; i < 1 << 20 && t && t->buf; i++) /* until every buffer is full and queued */
    markers(1);
  occa_tools_region_push("r"); /* dropped: no buffer */
  while (ot_host_take_full(&s)) /* the writer writes them out */
    ot_host_release(&s);
  markers(1); /* a buffer again: the DROPPED record, then the marker */
  if (!t || !t->buf || t->dropped != 0) {
    printf("3. set-up: the thread should hold a buffer with no drop pending\n");
    return 2;
  }
  /* The writer's first step of a revocation (buffers.c, reclaim): the
   * buffer REVOKING, its owner's limit zeroed. */
  atomic_store(&t->buf->state, OT_BUF_REVOKING);
  atomic_store(&t->limit, 0);
  occa_tools_region_pop(); /* its push was dropped: counted, 1 pending */
  markers(1);              /* cancels the revocation, goes on in the buffer */
  int late = t->dropped != 0;
  printf("3. after the revocation was cancelled, %llu drop(s) still wait for the next buffer%s\n",
         (unsigned long long)t->dropped, late ? ": LATE DROPPED" : "");

  atomic_store(&ot_state, OT_STATE_INACTIVE);
  if (livelock || duplicate || late) {
    printf("repro_writer: REPRODUCED (%s%s%s%s%s)\n", livelock ? "livelock" : "",
           livelock && duplicate ? ", " : "", duplicate ? "duplicate records" : "",
           (livelock || duplicate) && late ? ", " : "", late ? "late DROPPED record" : "");
    return 1;
  }
  printf("repro_writer: not reproduced\n");
  return 0;
}
