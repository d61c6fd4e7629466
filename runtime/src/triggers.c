/* triggers.c: the recording gate and trigger windows (the C twin of the
 * reference state machine in filters/, whose doc states the semantics).
 *
 * ot_gate packs why recording is paused (low 32 bits, OT_PAUSED_*) and how
 * many windows are open (high 32 bits). With no windows configured the count
 * starts at 1 and never moves, so "recording" is one load and two compares.
 *
 * Time windows are decided by each event's own ticks, not by when a timer
 * ran: while any has an edge ahead the gate carries OT_GATE_TIMED, and
 * ot_recording_timed compares the ticks it reads (which the event is then
 * stamped with) against the thresholds the writer set (window_time). Once a
 * window's edges have passed, the writer retires it (window_set): open for
 * good joins the count, shut for good drops out, and the last retirement
 * clears OT_GATE_TIMED. */
#define _GNU_SOURCE
#include <string.h>

#include "rt.h"

_Atomic uint64_t ot_gate = 1ull << 32;
uint32_t ot_nwindows;
int ot_budget_on;

static _Atomic uint64_t win_count[OT_MAX_WINDOWS];  /* matching launches / region pushes */
static _Atomic int64_t win_inside[OT_MAX_WINDOWS];  /* region windows: open instances */
static _Atomic uint32_t win_open[OT_MAX_WINDOWS];   /* 1 while the window holds the gate */
static _Atomic uint64_t win_from[OT_MAX_WINDOWS];  /* time windows: [from, to) in ticks */
static _Atomic uint64_t win_to[OT_MAX_WINDOWS];
static _Atomic uint32_t win_retired[OT_MAX_WINDOWS];
static _Atomic uint32_t timed_left; /* time windows not retired yet */
static uint32_t timed[OT_MAX_WINDOWS], ntimed;
OT_TLS uint64_t ot_decided_ticks;
static _Atomic int64_t budget_left;
static _Atomic int budget_spent;

void ot_triggers_init(void) {
  ot_nwindows = ot_cfg.nwindows > OT_MAX_WINDOWS ? OT_MAX_WINDOWS : ot_cfg.nwindows;
  uint64_t g = ot_nwindows ? 0 : 1ull << 32;
  if (ot_cfg.start_paused)
    g |= OT_PAUSED_API;
  ntimed = 0;
  for (uint32_t w = 0; w < ot_nwindows; w++) {
    if (ot_cfg.windows[w].kind != OT_WINDOW_TIME)
      continue;
    /* Shut until the writer sets its thresholds (before the application
     * runs: the core's start). */
    atomic_store(&win_from[w], UINT64_MAX);
    atomic_store(&win_to[w], UINT64_MAX);
    atomic_store(&win_retired[w], 0);
    timed[ntimed++] = w;
  }
  atomic_store(&timed_left, ntimed);
  if (ntimed)
    g |= OT_GATE_TIMED;
  atomic_store(&ot_gate, g);
  ot_budget_on = ot_cfg.budget_events != 0;
  atomic_store(&budget_left, (int64_t)ot_cfg.budget_events);
}

void ot_trigger_event(ot_thread *t, uint32_t window, uint32_t action, uint32_t cause) {
  if (!t || (atomic_load(&budget_spent) && action != OT_TRIGGER_BUDGET))
    return; /* after the budget, the trace ends: nothing more to explain */
  uint64_t args[3] = {window, action, cause};
  ot_emit(t, OCCA_TOOLS_EVENT_TRIGGER, 3, args);
}

/* Opens or closes window w once; returns 1 when its state changed. */
static int window_flip(uint32_t w, int open) {
  uint32_t want = open ? 0 : 1;
  if (!atomic_compare_exchange_strong(&win_open[w], &want, open ? 1u : 0u))
    return 0;
  if (open)
    atomic_fetch_add(&ot_gate, 1ull << 32);
  else
    atomic_fetch_sub(&ot_gate, 1ull << 32);
  return 1;
}

void ot_window_set(uint32_t w, int open) {
  if (w >= ot_nwindows)
    return;
  if (ot_cfg.windows[w].kind != OT_WINDOW_TIME) {
    window_flip(w, open);
    return;
  }
  /* Retire a time window: hold its state in the count (open for good), then
   * drop its thresholds, so that no moment sees it neither way. */
  if (atomic_exchange(&win_retired[w], 1))
    return; /* retired already */
  if (open)
    window_flip(w, 1);
  atomic_store(&win_from[w], UINT64_MAX);
  atomic_store(&win_to[w], UINT64_MAX);
  if (atomic_fetch_sub(&timed_left, 1) == 1)
    atomic_fetch_and(&ot_gate, ~(uint64_t)OT_GATE_TIMED);
}

void ot_window_time(uint32_t w, uint64_t from_ticks, uint64_t to_ticks) {
  if (w >= ot_nwindows || ot_cfg.windows[w].kind != OT_WINDOW_TIME || from_ticks > to_ticks ||
      atomic_load(&win_retired[w]))
    return;
  /* Two stores, not one: the writer moves an edge only while it is well
   * ahead of the clock, so no event is decided between them. */
  atomic_store(&win_to[w], to_ticks);
  atomic_store(&win_from[w], from_ticks);
}

int ot_recording_timed(uint64_t gate, int for_event) {
  uint64_t now = ot_ticks();
  int open = (gate >> 32) != 0;
  for (uint32_t i = 0; i < ntimed && !open; i++) {
    uint32_t w = timed[i];
    open = now >= atomic_load_explicit(&win_from[w], memory_order_relaxed) &&
           now < atomic_load_explicit(&win_to[w], memory_order_relaxed);
  }
  if (open && for_event)
    ot_decided_ticks = now;
  return open;
}

uint32_t ot_count_launch(ot_thread *t, uint32_t mask) {
  uint32_t close = 0;
  for (uint32_t w = 0; w < ot_nwindows; w++) {
    if (!(mask & (1u << w)) || ot_cfg.windows[w].kind != OT_WINDOW_LAUNCH)
      continue;
    uint64_t n = atomic_fetch_add(&win_count[w], 1) + 1;
    const ot_window_setting_t *ws = &ot_cfg.windows[w];
    if (n == ws->from && window_flip(w, 1))
      ot_trigger_event(t, w, OT_TRIGGER_OPEN, OT_CAUSE_LAUNCH);
    if (ws->to != 0 && n == ws->to)
      close |= 1u << w;
  }
  return close;
}

void ot_close_windows(ot_thread *t, uint32_t mask, unsigned cause) {
  for (uint32_t w = 0; w < ot_nwindows; w++) {
    if (!(mask & (1u << w)))
      continue;
    if (ot_cfg.windows[w].kind == OT_WINDOW_REGION &&
        atomic_fetch_sub(&win_inside[w], 1) != 1)
      continue; /* another inside instance is still open */
    if (window_flip(w, 0))
      ot_trigger_event(t, w, OT_TRIGGER_CLOSE, cause);
  }
}

/* A push of a region counted by the windows in mask: returns the windows
 * this instance is inside of (they open now and close at its pop). */
uint16_t ot_region_enter(ot_thread *t, uint32_t mask) {
  uint16_t inside = 0;
  for (uint32_t w = 0; w < ot_nwindows; w++) {
    if (!(mask & (1u << w)) || ot_cfg.windows[w].kind != OT_WINDOW_REGION)
      continue;
    uint64_t n = atomic_fetch_add(&win_count[w], 1) + 1;
    const ot_window_setting_t *ws = &ot_cfg.windows[w];
    if (n < ws->from || (ws->to != 0 && n > ws->to))
      continue;
    inside |= (uint16_t)(1u << w);
    if (atomic_fetch_add(&win_inside[w], 1) == 0 && window_flip(w, 1))
      ot_trigger_event(t, w, OT_TRIGGER_OPEN, OT_CAUSE_REGION);
  }
  return inside;
}

void ot_pause(uint32_t reason, int paused) {
  if (paused)
    atomic_fetch_or(&ot_gate, (uint64_t)reason);
  else
    atomic_fetch_and(&ot_gate, ~(uint64_t)reason);
}

/* Exact: one atomic decrement per counted event, paid only when a budget is
 * configured. */
int ot_budget_take_slow(ot_thread *t) {
  int64_t left = atomic_fetch_sub_explicit(&budget_left, 1, memory_order_relaxed);
  if (left <= 0) {
    ot_decided_ticks = 0; /* not recorded: not for the next event */
    return 0;
  }
  if (left == 1) { /* this is the last event the budget allows */
    ot_pause(OT_PAUSED_BUDGET, 1);
    ot_trigger_event(t, OT_NO_WINDOW, OT_TRIGGER_BUDGET, OT_CAUSE_BUDGET);
    atomic_store(&budget_spent, 1);
  }
  return 1;
}

/* The toggle signal resumes recording paused by the API or by itself, and
 * otherwise pauses it (async-signal-safe). */
/* Each toggle is logged in a ring the writer turns into Trigger events: a
 * handler may not append to a thread buffer it might have interrupted. An
 * entry is valid when its seq is its index + 1. */
enum { TOGGLE_RING = 64 };
static struct {
  _Atomic uint64_t seq;
  _Atomic uint64_t ticks;
  _Atomic uint32_t recording;
} toggle_ring[TOGGLE_RING];
static _Atomic uint64_t toggles;

void ot_signal_toggle(void) {
  const uint64_t both = OT_PAUSED_API | OT_PAUSED_SIGNAL;
  uint64_t g = atomic_load(&ot_gate), next;
  do {
    next = (g & both) ? (g & ~both) : (g | OT_PAUSED_SIGNAL);
  } while (!atomic_compare_exchange_weak(&ot_gate, &g, next));
  uint64_t i = atomic_fetch_add(&toggles, 1);
  atomic_store(&toggle_ring[i % TOGGLE_RING].ticks, ot_ticks());
  atomic_store(&toggle_ring[i % TOGGLE_RING].recording, !(next & both));
  atomic_store(&toggle_ring[i % TOGGLE_RING].seq, i + 1);
}

uint64_t ot_signal_toggle_count(void) { return atomic_load(&toggles); }

int ot_signal_toggle_at(uint64_t i, uint64_t *ticks, uint32_t *recording) {
  if (atomic_load(&toggle_ring[i % TOGGLE_RING].seq) != i + 1)
    return 0; /* overwritten by a later toggle, or not written yet */
  *ticks = atomic_load(&toggle_ring[i % TOGGLE_RING].ticks);
  *recording = atomic_load(&toggle_ring[i % TOGGLE_RING].recording);
  return atomic_load(&toggle_ring[i % TOGGLE_RING].seq) == i + 1;
}
