/* lttng_tp.h: the LTTng-UST tracepoint provider for eventcost's lttng case:
 * one event with 3 integers and a ~20-byte string. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER occa_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(OCCA_BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define OCCA_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(occa_bench, event,
                 TP_ARGS(uint64_t, a, uint64_t, b, uint64_t, c, const char *, name),
                 TP_FIELDS(ctf_integer(uint64_t, a, a) ctf_integer(uint64_t, b, b)
                               ctf_integer(uint64_t, c, c) ctf_string(name, name)))

#endif

#include <lttng/tracepoint-event.h>
