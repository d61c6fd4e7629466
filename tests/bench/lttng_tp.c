/* lttng_tp.c: probes of the occa_bench tracepoint provider (lttng_tp.h). */
#define TRACEPOINT_CREATE_PROBES
#include "lttng_tp.h"
