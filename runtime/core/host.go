package main

/*
#cgo CFLAGS: -I${SRCDIR}/../src -I${SRCDIR}/../include
#include <stdlib.h>
#include "ot_internal.h"

static inline int h_wait(const ot_host_t *h, int ms) { return h->wait(ms); }
static inline int h_take_full(const ot_host_t *h, ot_span_t *s) { return h->take_full(s); }
static inline int h_take_partial(const ot_host_t *h, uint32_t *c, ot_span_t *s) { return h->take_partial(c, s); }
static inline void h_release(const ot_host_t *h, const ot_span_t *s) { h->release(s); }
static inline uint64_t h_take_defs(const ot_host_t *h, uint8_t *d, uint64_t cap, int try_only) { return h->take_defs(d, cap, try_only); }
static inline void h_set_clock(const ot_host_t *h, int tsc) { h->set_clock(tsc); }
static inline void h_sync_point(const ot_host_t *h, uint64_t *t, int64_t *m) { h->sync_point(t, m); }
static inline void h_counters(const ot_host_t *h, ot_counters_t *c) { h->counters(c); }
static inline void h_window_set(const ot_host_t *h, uint32_t w, int open) { h->window_set(w, open); }
static inline void h_window_time(const ot_host_t *h, uint32_t w, uint64_t from, uint64_t to) { h->window_time(w, from, to); }
static inline void h_budget_exhausted(const ot_host_t *h) { h->budget_exhausted(); }
static inline uint64_t h_request_flush(const ot_host_t *h) { return h->request_flush(); }
static inline uint64_t h_flush_requested(const ot_host_t *h) { return h->flush_requested(); }
static inline void h_flush_done(const ot_host_t *h, uint64_t s) { h->flush_done(s); }
static inline uint64_t h_final_requested(const ot_host_t *h) { return h->final_requested(); }
static inline void h_rearm(const ot_host_t *h) { h->rearm_signals(); }
static inline void h_stop(const ot_host_t *h) { h->stop_for_good(); }
static inline int h_toggle_at(const ot_host_t *h, uint64_t i, uint64_t *t, uint32_t *r) { return h->signal_toggle_at(i, t, r); }
static inline void h_critical(const ot_host_t *h, uint32_t k, uint64_t n, const char *m) { h->critical(k, n, m); }
*/
import "C"

import (
	"time"
	"unsafe"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/runtime/writer"
)

// cHost is writer.Host over the C runtime's ot_host_t table.
type cHost struct{ h *C.ot_host_t }

var _ writer.Host = cHost{}

func (c cHost) Wait(d time.Duration) writer.Wake {
	ms := d.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	return writer.Wake(C.h_wait(c.h, C.int(ms)))
}

func span(s *C.ot_span_t) writer.Span {
	return writer.Span{
		Data:      unsafe.Slice((*byte)(unsafe.Pointer(s.data)), int(s.len)),
		Offset:    uint32(s.offset),
		Thread:    uint32(s.thread),
		Slot:      uint32(s.slot),
		Full:      s.full != 0,
		Counts:    (*[64]uint32)(unsafe.Pointer(s.counts)),
		LastTicks: uint64(s.last_ticks),
	}
}

func (c cHost) TakeFull() (writer.Span, bool) {
	var s C.ot_span_t
	if C.h_take_full(c.h, &s) == 0 {
		return writer.Span{}, false
	}
	return span(&s), true
}

func (c cHost) TakePartial(cursor *uint32) (writer.Span, writer.Partial) {
	var s C.ot_span_t
	cur := C.uint32_t(*cursor)
	r := C.h_take_partial(c.h, &cur, &s)
	*cursor = uint32(cur)
	switch r {
	case 1:
		return span(&s), writer.PartialSpan
	case 2:
		return writer.Span{}, writer.PartialDrainFull
	}
	return writer.Span{}, writer.PartialDone
}

func (c cHost) Release(s writer.Span) {
	cs := C.ot_span_t{len: C.uint64_t(len(s.Data)), thread: C.uint32_t(s.Thread), slot: C.uint32_t(s.Slot)}
	if s.Full {
		cs.full = 1
	}
	C.h_release(c.h, &cs)
}

// defsBuf is C memory, so C can copy into it without cgo pointer rules.
var defsBuf = C.malloc(1 << 20)

func (c cHost) TakeDefs(dst []byte, tryOnly bool) int {
	try := C.int(0)
	if tryOnly {
		try = 1
	}
	n := int(C.h_take_defs(c.h, (*C.uint8_t)(defsBuf), C.uint64_t(min(len(dst), 1<<20)), try))
	copy(dst, unsafe.Slice((*byte)(defsBuf), n))
	return n
}

// SetClock chooses the tick clock; not part of writer.Host (start only).
func (c cHost) SetClock(tsc bool) {
	v := C.int(0)
	if tsc {
		v = 1
	}
	C.h_set_clock(c.h, v)
}

func (c cHost) SyncPoint() (uint64, int64) {
	var t C.uint64_t
	var m C.int64_t
	C.h_sync_point(c.h, &t, &m)
	return uint64(t), int64(m)
}

func (c cHost) Counters() writer.Counters {
	var cc C.ot_counters_t
	C.h_counters(c.h, &cc)
	var out writer.Counters
	for i := range out.Dropped {
		out.Dropped[i] = uint64(cc.dropped[i])
	}
	out.Threads = uint64(cc.threads)
	out.BuffersAllocated = uint64(cc.buffers_used)
	out.SignalToggles = uint64(cc.signal_toggles)
	out.TicksClamped = uint64(cc.ticks_clamped)
	return out
}

func (c cHost) SignalToggle(i uint64) (ticks uint64, recording, ok bool) {
	var t C.uint64_t
	var r C.uint32_t
	if C.h_toggle_at(c.h, C.uint64_t(i), &t, &r) == 0 {
		return 0, false, false
	}
	return uint64(t), r != 0, true
}

func (c cHost) WindowSet(w int, open bool) {
	o := C.int(0)
	if open {
		o = 1
	}
	C.h_window_set(c.h, C.uint32_t(w), o)
}

func (c cHost) WindowTime(w int, from, to uint64) {
	C.h_window_time(c.h, C.uint32_t(w), C.uint64_t(from), C.uint64_t(to))
}

func (c cHost) BudgetExhausted()       { C.h_budget_exhausted(c.h) }
func (c cHost) RequestFlush() uint64   { return uint64(C.h_request_flush(c.h)) }
func (c cHost) FlushRequested() uint64 { return uint64(C.h_flush_requested(c.h)) }
func (c cHost) FlushDone(seq uint64)   { C.h_flush_done(c.h, C.uint64_t(seq)) }
func (c cHost) FinalRequested() uint64 { return uint64(C.h_final_requested(c.h)) }
func (c cHost) RearmSignals()          { C.h_rearm(c.h) }
func (c cHost) StopForGood()           { C.h_stop(c.h) }
func (c cHost) Critical(k trace.Kind, n uint64, msg string) {
	cs := C.CString(msg)
	C.h_critical(c.h, C.uint32_t(k), C.uint64_t(n), cs)
	C.free(unsafe.Pointer(cs))
}
