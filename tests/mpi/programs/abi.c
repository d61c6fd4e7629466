/* abi.c: a hostile source of MPI events (tests/mpi TestHostileSource). It
 * calls occa_tools_mpi_begin/end/event with kinds and argument counts that
 * do not fit, NULLs and an overwritten call, between a few valid events; the
 * trace must hold exactly the valid ones. Needs no MPI. */
#include <stddef.h>
#include <stdint.h>

#include "occa_tools.h"

int main(void) {
  occa_tools_api_t api = {sizeof api, 0, 0, NULL, NULL};
  occa_tools_connect(OCCA_TOOLS_ABI_VERSION, "abi-test", &api);
  uint64_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;

  /* Not recorded. */
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_RUN_BEGIN, a, 3);  /* not an MPI kind */
  occa_tools_mpi_end(&c, a, 2);                                /* nothing begun: no-op */
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_P2P_BEGIN, a, 4); /* 5 arguments expected */
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_P2P_BEGIN, NULL, 5);
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_P2P_END, a, 2);  /* an end */
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_COMM, a, 5);     /* an instant */
  occa_tools_mpi_begin(&c, (occa_tools_event_kind_t)200, a, 2);
  occa_tools_mpi_begin(NULL, OCCA_TOOLS_EVENT_MPI_CALL_BEGIN, a, 2);
  occa_tools_mpi_end(&c, a, 2);
  occa_tools_mpi_end(NULL, a, 2);
  occa_tools_mpi_event(OCCA_TOOLS_EVENT_MPI_CALL_BEGIN, a, 3); /* a begin */
  occa_tools_mpi_event(OCCA_TOOLS_EVENT_MPI_COMM, a, 7);       /* 6 expected */
  occa_tools_mpi_event(OCCA_TOOLS_EVENT_MPI_COMM, NULL, 6);
  occa_tools_mpi_event((occa_tools_event_kind_t)63, a, 0);

  /* Recorded: a call whose end gives no arguments (status 0), a p2p whose
   * end gives too many (the extra one is ignored), an instant. */
  uint64_t call[2] = {1, 5}, p2p[5] = {8, (uint64_t)-1, 3, 100, 7}, end[3] = {9, 0, 99},
           done[2] = {9, 42};
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_CALL_BEGIN, call, 2);
  occa_tools_mpi_end(&c, NULL, 0);
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_P2P_BEGIN, p2p, 5);
  occa_tools_mpi_end(&c, end, 3);
  occa_tools_mpi_event(OCCA_TOOLS_EVENT_MPI_REQUEST_DONE, done, 2);

  /* A begin whose call the source overwrites: the end cannot know its kind
   * and records nothing (the begin stays unpaired). */
  uint64_t wait[2] = {18, 1};
  occa_tools_mpi_begin(&c, OCCA_TOOLS_EVENT_MPI_WAIT_BEGIN, wait, 2);
  c.tool_data = 1u | (uint64_t)200 << 2;
  occa_tools_mpi_end(&c, a, 2);
  return 0;
}
