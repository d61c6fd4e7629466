/* mpi.c: libocca_tools_mpi.so, the MPI event source (PMPI interposition).
 *
 * Preloaded by `occa-prof --mpi`, it defines the MPI C functions below, which
 * the program's calls reach before libmpi's; each records through the
 * runtime's MPI entry points (occa_tools.h) and calls the PMPI_ name. Built
 * with the mpicc the user has (runtime/mpi/mpi.mk), so handles and constants
 * are that MPI's.
 *
 * Cost: a function whose kind is off costs one load and a bit test before the
 * PMPI call (the runtime's enabled mask, read through the pointer
 * occa_tools_connect gives); a recorded one adds two calls into the runtime
 * and, for the byte counts, MPI_Type_size.
 *
 * Ranks are recorded as MPI_COMM_WORLD ranks: each communicator this process
 * creates gets a table of its members' world ranks (comms[] below); a rank of
 * a communicator without a table (an intercommunicator, or more than
 * COMM_SLOTS alive at once) is recorded as MPI_RANK_UNKNOWN.
 *
 * Clocks: at the end of MPI_Init and the start of MPI_Finalize every rank
 * measures its offset to rank 0's CLOCK_MONOTONIC by ping-pongs on a private
 * duplicate of MPI_COMM_WORLD (FORMAT.md §4, mpi_clock_sync). Whether to do it
 * is agreed by all ranks at init (an allreduce), so a rank whose config or
 * state differs never leaves the others waiting. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "occa_tools.h"
#include "ot_internal.h" /* OT_MPI_* function codes, generated from formats/trace/kinds.go */


#define K_CALL OCCA_TOOLS_EVENT_MPI_CALL_BEGIN
#define K_P2P OCCA_TOOLS_EVENT_MPI_P2P_BEGIN
#define K_COLL OCCA_TOOLS_EVENT_MPI_COLLECTIVE_BEGIN
#define K_WAIT OCCA_TOOLS_EVENT_MPI_WAIT_BEGIN
#define K_DONE OCCA_TOOLS_EVENT_MPI_REQUEST_DONE
#define K_COMM OCCA_TOOLS_EVENT_MPI_COMM
#define K_SYNC OCCA_TOOLS_EVENT_MPI_CLOCK_SYNC

/* trace.MpiRank*: ranks that are not ranks. */
enum { RANK_ANY = -1, RANK_NULL = -2, RANK_UNKNOWN = -3 };

static const volatile uint64_t *enabled; /* NULL while no runtime records here */
static void (*mpi_begin)(occa_tools_call_t *, occa_tools_event_kind_t, const uint64_t *, unsigned);
static void (*mpi_end)(occa_tools_call_t *, const uint64_t *, unsigned);
static void (*mpi_event)(occa_tools_event_kind_t, const uint64_t *, unsigned);

static inline int on(unsigned kind) { return enabled && ((*enabled >> kind) & 1u); }

/* Finds the runtime at MPI_Init: occa-prof's shim (runtime/preload) loaded it
 * with RTLD_GLOBAL in the processes it traces, which with --mpi are those
 * that contain libmpi. Elsewhere (no runtime, or one too old to know the MPI
 * entry points) every wrapper only forwards. */
static void connect_runtime(void) {
  int (*connect)(uint32_t, const char *, occa_tools_api_t *) =
      (int (*)(uint32_t, const char *, occa_tools_api_t *))dlsym(RTLD_DEFAULT, "occa_tools_connect");
  occa_tools_api_t api;
  memset(&api, 0, sizeof api);
  api.size = sizeof api;
  if (!connect || connect(OCCA_TOOLS_ABI_VERSION, "mpi", &api) != 0 || !api.active || !api.lookup)
    return;
  *(void **)&mpi_begin = api.lookup("occa_tools_mpi_begin");
  *(void **)&mpi_end = api.lookup("occa_tools_mpi_end");
  *(void **)&mpi_event = api.lookup("occa_tools_mpi_event");
  if (mpi_begin && mpi_end && mpi_event)
    enabled = api.enabled_mask;
  else if (api.lookup("occa_tools_log"))
    ((void (*)(occa_tools_log_level_t, const char *))api.lookup("occa_tools_log"))(
        OCCA_TOOLS_LOG_WARN, "libocca_tools_mpi.so: the occa-tools runtime loaded here has no MPI "
                             "entry points (older than this library): MPI calls are not recorded");
}

/* Ends that follow a begin that recorded nothing cost nothing either. */
static inline void end_call(occa_tools_call_t *c, const uint64_t *args, unsigned n) {
  if (c->tool_data)
    mpi_end(c, args, n);
}

/* A handle's value (a pointer in Open MPI, an int in MPICH). */
#define HANDLE(h) handle_value(&(h), sizeof(h))
static inline uint64_t handle_value(const void *h, size_t n) {
  uint64_t v = 0;
  memcpy(&v, h, n < sizeof v ? n : sizeof v);
  return v;
}

static inline uint64_t bytes(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      size < 0)
    return 0;
  return (uint64_t)count * (uint64_t)size;
}

/* ---- Communicators: world ranks of their members ------------------------------ */

enum { COMM_SLOTS = 64 };
static struct {
  _Atomic int used;        /* claimed by a creation */
  _Atomic uint64_t handle; /* 0 until the table is ready */
  _Atomic(int *) world;    /* world rank of each member */
  int size;
} comms[COMM_SLOTS];

static int world_rank = -1, world_size = 0;

/* Translates rank r of comm to a world rank. A slot's handle is published
 * after its table and cleared before the table is freed; MPI forbids using a
 * communicator while it is freed, so a matching handle is a live table. */
static int64_t to_world(MPI_Comm comm, int r) {
  if (r == MPI_ANY_SOURCE)
    return RANK_ANY;
  if (r == MPI_PROC_NULL || r == MPI_ROOT)
    return RANK_NULL;
  if (r < 0)
    return RANK_UNKNOWN;
  if (comm == MPI_COMM_WORLD)
    return r;
  uint64_t h = HANDLE(comm);
  for (int i = 0; i < COMM_SLOTS; i++)
    if (atomic_load_explicit(&comms[i].handle, memory_order_acquire) == h) {
      int *w = atomic_load_explicit(&comms[i].world, memory_order_relaxed);
      return r < comms[i].size ? w[r] : RANK_UNKNOWN;
    }
  return RANK_UNKNOWN;
}

/* Notes a new communicator (its members' world ranks) and records mpi_comm. */
static void comm_created(MPI_Comm comm, MPI_Comm parent) {
  int inter = 0, size = 0, rank = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size <= 0 ||
      PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return;
  int *world = malloc((size_t)size * 2 * sizeof *world);
  int leader = RANK_UNKNOWN;
  MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
  if (world && PMPI_Comm_group(comm, &g) == MPI_SUCCESS &&
      PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
    int *ranks = world + size;
    for (int i = 0; i < size; i++)
      ranks[i] = i;
    if (PMPI_Group_translate_ranks(g, size, ranks, wg, world) == MPI_SUCCESS) {
      leader = world[0];
      for (int i = 0; i < COMM_SLOTS && world; i++) {
        int unused = 0;
        if (!atomic_compare_exchange_strong(&comms[i].used, &unused, 1))
          continue;
        comms[i].size = size;
        atomic_store(&comms[i].world, world);
        atomic_store_explicit(&comms[i].handle, HANDLE(comm), memory_order_release);
        world = NULL; /* the slot owns it */
      }
    }
  }
  free(world);
  if (g != MPI_GROUP_NULL)
    PMPI_Group_free(&g);
  if (wg != MPI_GROUP_NULL)
    PMPI_Group_free(&wg);
  if (on(K_COMM)) {
    uint64_t a[6] = {HANDLE(comm), parent == MPI_COMM_NULL ? 0 : HANDLE(parent), (uint64_t)size,
                     (uint64_t)rank, (uint64_t)world_rank, (uint64_t)(int64_t)leader};
    mpi_event(K_COMM, a, 6);
  }
}

static void comm_freed(MPI_Comm comm) {
  uint64_t h = HANDLE(comm);
  for (int i = 0; i < COMM_SLOTS; i++)
    if (atomic_load(&comms[i].handle) == h) {
      int *w = atomic_load(&comms[i].world);
      atomic_store(&comms[i].handle, 0);
      free(w);
      atomic_store(&comms[i].used, 0);
      return;
    }
}

/* ---- Clock offsets to rank 0 ---------------------------------------------------- */

enum { SYNC_ROUNDS = 10, SYNC_TAG = 7301 };
static MPI_Comm sync_comm = MPI_COMM_NULL;
static int64_t test_shift; /* OCCA_TOOLS_MPI_TEST_CLOCK_SHIFT_NS times the world rank */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + test_shift;
}

/* Agrees on measuring (every rank must: it is collective) and sets up the
 * private communicator. */
static void sync_setup(void) {
  const char *s = getenv("OCCA_TOOLS_MPI_TEST_CLOCK_SHIFT_NS");
  if (s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end == 0 && v > -1000000000000LL && v < 1000000000000LL && world_rank < 1000000)
      test_shift = (int64_t)v * world_rank;
  }
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &sync_comm) != MPI_SUCCESS) {
    sync_comm = MPI_COMM_NULL;
    return;
  }
  int want = on(K_SYNC), all = 0;
  if (PMPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, sync_comm) != MPI_SUCCESS || !all) {
    PMPI_Comm_free(&sync_comm);
    sync_comm = MPI_COMM_NULL;
  }
}

static void sync_measure(uint64_t phase) {
  if (sync_comm == MPI_COMM_NULL)
    return;
  int64_t offset = 0, error = 0;
  if (world_rank == 0) {
    for (int r = 1; r < world_size; r++)
      for (int k = 0; k < SYNC_ROUNDS; k++) {
        int64_t t;
        if (PMPI_Recv(&t, 1, MPI_INT64_T, r, SYNC_TAG, sync_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          break;
        t = now_ns();
        PMPI_Send(&t, 1, MPI_INT64_T, r, SYNC_TAG, sync_comm);
      }
  } else {
    int64_t best = INT64_MAX;
    for (int k = 0; k < SYNC_ROUNDS; k++) {
      int64_t t0 = now_ns(), r0 = 0;
      if (PMPI_Send(&t0, 1, MPI_INT64_T, 0, SYNC_TAG, sync_comm) != MPI_SUCCESS ||
          PMPI_Recv(&r0, 1, MPI_INT64_T, 0, SYNC_TAG, sync_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return;
      int64_t t1 = now_ns();
      if (t1 - t0 < best) {
        best = t1 - t0;
        /* r0 was read between t0 and t1: the true offset is within
         * (t1 - t0) / 2 of r0 - midpoint. */
        offset = r0 - (t0 / 2 + t1 / 2 + (t0 % 2 + t1 % 2) / 2);
        error = (best + 1) / 2;
      }
    }
  }
  uint64_t a[4] = {0, (uint64_t)offset, (uint64_t)error, phase};
  mpi_event(K_SYNC, a, 4);
}

/* ---- Recording helpers ----------------------------------------------------------- */

static inline void end2(occa_tools_call_t *c, uint64_t a, int rc) {
  uint64_t args[2] = {a, (uint64_t)rc};
  end_call(c, args, 2);
}

static inline void p2p_begin(occa_tools_call_t *c, unsigned fn, MPI_Comm comm, int peer, int tag,
                             int count, MPI_Datatype type) {
  uint64_t a[5] = {fn, (uint64_t)to_world(comm, peer), (uint64_t)(int64_t)tag, bytes(count, type),
                   HANDLE(comm)};
  mpi_begin(c, K_P2P, a, 5);
}

static inline void coll_begin(occa_tools_call_t *c, unsigned fn, MPI_Comm comm, int root,
                              uint64_t nbytes) {
  int size = 0;
  if (comm == MPI_COMM_WORLD)
    size = world_size;
  else if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    size = 0;
  uint64_t a[5] = {fn, (uint64_t)(root < 0 && root != MPI_ROOT ? RANK_NULL : to_world(comm, root)),
                   nbytes, HANDLE(comm), (uint64_t)size};
  mpi_begin(c, K_COLL, a, 5);
}

static inline void call_begin(occa_tools_call_t *c, unsigned fn, uint64_t comm) {
  uint64_t a[2] = {fn, comm};
  mpi_begin(c, K_CALL, a, 2);
}

static int comm_size(MPI_Comm comm) {
  int size = 0;
  return PMPI_Comm_size(comm, &size) == MPI_SUCCESS ? size : 0;
}

/* ---- Init and finalize ------------------------------------------------------------ */

/* The library is linked without libmpi (mpi.mk): a libmpi that a program
 * dlopens after start leaves its MPI_COMM_WORLD unresolved here (Open MPI's
 * handles are addresses of libmpi's objects), and then the library only
 * forwards. */
static int mpi_bound(void) {
  MPI_Comm world = MPI_COMM_WORLD;
  return HANDLE(world) != 0;
}

static void after_init(void) {
  if (!mpi_bound()) {
    enabled = NULL;
    return;
  }
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (enabled)
    comm_created(MPI_COMM_WORLD, MPI_COMM_NULL);
  /* Even untraced: a rank whose runtime did not start (no config, a
   * memory limit) must still take part in the agreement, or the others
   * would wait for it forever. */
  sync_setup();
  sync_measure(1);
}

int MPI_Init(int *argc, char ***argv) {
  connect_runtime();
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  if (on(K_CALL))
    call_begin(&c, OT_MPI_INIT, 0);
  int rc = PMPI_Init(argc, argv);
  end_call(&c, (uint64_t[]){(uint64_t)rc}, 1);
  if (rc == MPI_SUCCESS)
    after_init();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  connect_runtime();
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  if (on(K_CALL))
    call_begin(&c, OT_MPI_INIT_THREAD, 0);
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  end_call(&c, (uint64_t[]){(uint64_t)rc}, 1);
  if (rc == MPI_SUCCESS)
    after_init();
  return rc;
}

int MPI_Finalize(void) {
  if (sync_comm != MPI_COMM_NULL) {
    sync_measure(2);
    PMPI_Comm_free(&sync_comm);
  }
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  if (on(K_CALL))
    call_begin(&c, OT_MPI_FINALIZE, 0);
  int rc = PMPI_Finalize();
  end_call(&c, (uint64_t[]){(uint64_t)rc}, 1);
  return rc;
}

/* ---- Communicators ---------------------------------------------------------------- */

#define COMM_NEW(fn, code, parent, newcomm, ...)                  \
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;                     \
  if (on(K_CALL))                                                 \
    call_begin(&c, code, HANDLE(parent));                         \
  int rc = fn(__VA_ARGS__);                                       \
  if (rc == MPI_SUCCESS && enabled && newcomm)                    \
    comm_created(*newcomm, parent);                               \
  end_call(&c, (uint64_t[]){(uint64_t)rc}, 1);          \
  return rc

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  COMM_NEW(PMPI_Comm_dup, OT_MPI_COMM_DUP, comm, newcomm, comm, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  COMM_NEW(PMPI_Comm_split, OT_MPI_COMM_SPLIT, comm, newcomm, comm, color, key, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  COMM_NEW(PMPI_Comm_create, OT_MPI_COMM_CREATE, comm, newcomm, comm, group, newcomm);
}

int MPI_Comm_free(MPI_Comm *comm) {
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  MPI_Comm old = comm ? *comm : MPI_COMM_NULL;
  if (on(K_CALL))
    call_begin(&c, OT_MPI_COMM_FREE, HANDLE(old));
  int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS && old != MPI_COMM_NULL)
    comm_freed(old);
  end_call(&c, (uint64_t[]){(uint64_t)rc}, 1);
  return rc;
}

/* ---- Point-to-point ----------------------------------------------------------------- */

#define SEND(name, code)                                                                  \
  int name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) { \
    if (!on(K_P2P))                                                                       \
      return P##name(buf, count, type, dest, tag, comm);                                  \
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;                                           \
    p2p_begin(&c, code, comm, dest, tag, count, type);                                    \
    int rc = P##name(buf, count, type, dest, tag, comm);                                  \
    end2(&c, 0, rc);                                                                      \
    return rc;                                                                            \
  }
SEND(MPI_Send, OT_MPI_SEND)
SEND(MPI_Ssend, OT_MPI_SSEND)
SEND(MPI_Bsend, OT_MPI_BSEND)
SEND(MPI_Rsend, OT_MPI_RSEND)

#define ISEND(name, code)                                                                   \
  int name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,   \
           MPI_Request *req) {                                                              \
    if (!on(K_P2P))                                                                         \
      return P##name(buf, count, type, dest, tag, comm, req);                               \
    occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;                                             \
    p2p_begin(&c, code, comm, dest, tag, count, type);                                      \
    int rc = P##name(buf, count, type, dest, tag, comm, req);                               \
    end2(&c, rc == MPI_SUCCESS && req ? HANDLE(*req) : 0, rc);                              \
    return rc;                                                                              \
  }
ISEND(MPI_Isend, OT_MPI_ISEND)
ISEND(MPI_Issend, OT_MPI_ISSEND)
ISEND(MPI_Ibsend, OT_MPI_IBSEND)
ISEND(MPI_Irsend, OT_MPI_IRSEND)

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  if (!on(K_P2P))
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  p2p_begin(&c, OT_MPI_RECV, comm, source, tag, count, type);
  int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
  end2(&c, 0, rc);
  return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
  if (!on(K_P2P))
    return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  p2p_begin(&c, OT_MPI_IRECV, comm, source, tag, count, type);
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  end2(&c, rc == MPI_SUCCESS && req ? HANDLE(*req) : 0, rc);
  return rc;
}

/* Sendrecv: one point-to-point row, its peer and tag the send's, its bytes
 * both halves'. Probe: the source and tag probed, no bytes. */
int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
  if (!on(K_P2P))
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                         status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  uint64_t a[5] = {OT_MPI_SENDRECV, (uint64_t)to_world(comm, dest), (uint64_t)(int64_t)stag,
                   bytes(scount, stype) + bytes(rcount, rtype), HANDLE(comm)};
  mpi_begin(&c, K_P2P, a, 5);
  int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                         status);
  end2(&c, 0, rc);
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (!on(K_P2P))
    return PMPI_Probe(source, tag, comm, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  p2p_begin(&c, OT_MPI_PROBE, comm, source, tag, 0, MPI_BYTE);
  int rc = PMPI_Probe(source, tag, comm, status);
  end2(&c, 0, rc);
  return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  if (!on(K_P2P))
    return PMPI_Iprobe(source, tag, comm, flag, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  p2p_begin(&c, OT_MPI_IPROBE, comm, source, tag, 0, MPI_BYTE);
  int rc = PMPI_Iprobe(source, tag, comm, flag, status);
  end2(&c, 0, rc);
  return rc;
}

/* ---- Completion ------------------------------------------------------------------------ */

/* The handles of the requests a wait or test was given, copied before the
 * call (MPI sets finished ones to MPI_REQUEST_NULL). Per thread, grown to the
 * largest count seen, so steady state allocates nothing. */
static __thread uint64_t *held;
static __thread int held_cap;

static uint64_t *hold(int count, const MPI_Request *reqs) {
  if (count <= 0 || !reqs)
    return NULL;
  if (count > held_cap) {
    uint64_t *n = realloc(held, (size_t)count * sizeof *n);
    if (!n)
      return NULL; /* the wait is recorded; which requests finished is not */
    held = n;
    held_cap = count;
  }
  for (int i = 0; i < count; i++)
    held[i] = HANDLE(reqs[i]);
  return held;
}

/* A request the call saw finish: recorded, and counted (1) unless it was
 * MPI_REQUEST_NULL, which finishes nothing. */
static int done(const occa_tools_call_t *c, uint64_t request) {
  if (request == handle_value(&(MPI_Request){MPI_REQUEST_NULL}, sizeof(MPI_Request)))
    return 0;
  if (on(K_DONE)) {
    uint64_t a[2] = {request, c->correlation_id};
    mpi_event(K_DONE, a, 2);
  }
  return 1;
}

static inline void wait_begin(occa_tools_call_t *c, unsigned fn, int count) {
  uint64_t a[2] = {fn, (uint64_t)(count > 0 ? count : 0)};
  mpi_begin(c, K_WAIT, a, 2);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  if (!on(K_WAIT))
    return PMPI_Wait(req, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  uint64_t h = req ? HANDLE(*req) : 0;
  wait_begin(&c, OT_MPI_WAIT, 1);
  int rc = PMPI_Wait(req, status);
  int n = rc == MPI_SUCCESS && req ? done(&c, h) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  if (!on(K_WAIT))
    return PMPI_Test(req, flag, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  uint64_t h = req ? HANDLE(*req) : 0;
  wait_begin(&c, OT_MPI_TEST, 1);
  int rc = PMPI_Test(req, flag, status);
  int n = rc == MPI_SUCCESS && req && flag && *flag ? done(&c, h) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

static int all_done(occa_tools_call_t *c, const uint64_t *h, int count) {
  int n = 0;
  for (int i = 0; h && i < count; i++)
    n += done(c, h[i]);
  return h ? n : count;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!on(K_WAIT))
    return PMPI_Waitall(count, reqs, statuses);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  const uint64_t *h = hold(count, reqs);
  wait_begin(&c, OT_MPI_WAITALL, count);
  int rc = PMPI_Waitall(count, reqs, statuses);
  int n = rc == MPI_SUCCESS ? all_done(&c, h, count) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
  if (!on(K_WAIT))
    return PMPI_Testall(count, reqs, flag, statuses);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  const uint64_t *h = hold(count, reqs);
  wait_begin(&c, OT_MPI_TESTALL, count);
  int rc = PMPI_Testall(count, reqs, flag, statuses);
  int n = rc == MPI_SUCCESS && flag && *flag ? all_done(&c, h, count) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

static int one_done(occa_tools_call_t *c, const uint64_t *h, int count, int index) {
  if (index == MPI_UNDEFINED || index < 0 || index >= count)
    return 0;
  return h ? done(c, h[index]) : 1;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status) {
  if (!on(K_WAIT))
    return PMPI_Waitany(count, reqs, index, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  const uint64_t *h = hold(count, reqs);
  wait_begin(&c, OT_MPI_WAITANY, count);
  int rc = PMPI_Waitany(count, reqs, index, status);
  int n = rc == MPI_SUCCESS && index ? one_done(&c, h, count, *index) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  if (!on(K_WAIT))
    return PMPI_Testany(count, reqs, index, flag, status);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  const uint64_t *h = hold(count, reqs);
  wait_begin(&c, OT_MPI_TESTANY, count);
  int rc = PMPI_Testany(count, reqs, index, flag, status);
  int n = rc == MPI_SUCCESS && index && flag && *flag ? one_done(&c, h, count, *index) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

static int some_done(occa_tools_call_t *c, const uint64_t *h, int count, const int *outcount,
                     const int *indices) {
  if (!outcount || *outcount == MPI_UNDEFINED || *outcount < 0)
    return 0;
  int n = 0;
  for (int i = 0; i < *outcount && i < count; i++)
    n += indices ? one_done(c, h, count, indices[i]) : 0;
  return n;
}

int MPI_Waitsome(int count, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!on(K_WAIT))
    return PMPI_Waitsome(count, reqs, outcount, indices, statuses);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  const uint64_t *h = hold(count, reqs);
  wait_begin(&c, OT_MPI_WAITSOME, count);
  int rc = PMPI_Waitsome(count, reqs, outcount, indices, statuses);
  int n = rc == MPI_SUCCESS ? some_done(&c, h, count, outcount, indices) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

int MPI_Testsome(int count, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!on(K_WAIT))
    return PMPI_Testsome(count, reqs, outcount, indices, statuses);
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;
  const uint64_t *h = hold(count, reqs);
  wait_begin(&c, OT_MPI_TESTSOME, count);
  int rc = PMPI_Testsome(count, reqs, outcount, indices, statuses);
  int n = rc == MPI_SUCCESS ? some_done(&c, h, count, outcount, indices) : 0;
  end2(&c, (uint64_t)n, rc);
  return rc;
}

/* ---- Collectives ----------------------------------------------------------------------- */

#define COLL(call_expr, code, comm, root, nbytes, req)           \
  occa_tools_call_t c = OCCA_TOOLS_CALL_INIT;                    \
  coll_begin(&c, code, comm, root, nbytes);                      \
  int rc = call_expr;                                            \
  end2(&c, rc == MPI_SUCCESS && (req) ? HANDLE(*(req)) : 0, rc); \
  return rc

int MPI_Barrier(MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Barrier(comm);
  COLL(PMPI_Barrier(comm), OT_MPI_BARRIER, comm, RANK_NULL, 0, (MPI_Request *)NULL);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Bcast(buf, count, type, root, comm);
  COLL(PMPI_Bcast(buf, count, type, root, comm), OT_MPI_BCAST, comm, root, bytes(count, type),
       (MPI_Request *)NULL);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
  COLL(PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm), OT_MPI_REDUCE, comm, root,
       bytes(count, type), (MPI_Request *)NULL);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
  COLL(PMPI_Allreduce(sbuf, rbuf, count, type, op, comm), OT_MPI_ALLREDUCE, comm, RANK_NULL,
       bytes(count, type), (MPI_Request *)NULL);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  COLL(PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm), OT_MPI_GATHER, comm,
       root, bytes(scount, stype), (MPI_Request *)NULL);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  COLL(PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm), OT_MPI_ALLGATHER, comm,
       RANK_NULL, bytes(scount, stype), (MPI_Request *)NULL);
}

/* scatter and alltoall: what this rank sends, all members' parts. */
int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int me = -1;
  PMPI_Comm_rank(comm, &me);
  uint64_t n = me == root ? bytes(scount, stype) * (uint64_t)comm_size(comm) : 0;
  COLL(PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm), OT_MPI_SCATTER, comm,
       root, n, (MPI_Request *)NULL);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  COLL(PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm), OT_MPI_ALLTOALL, comm,
       RANK_NULL, bytes(scount, stype) * (uint64_t)comm_size(comm), (MPI_Request *)NULL);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req) {
  if (!on(K_COLL))
    return PMPI_Ibarrier(comm, req);
  COLL(PMPI_Ibarrier(comm, req), OT_MPI_IBARRIER, comm, RANK_NULL, 0, req);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *req) {
  if (!on(K_COLL))
    return PMPI_Ibcast(buf, count, type, root, comm, req);
  COLL(PMPI_Ibcast(buf, count, type, root, comm, req), OT_MPI_IBCAST, comm, root,
       bytes(count, type), req);
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req) {
  if (!on(K_COLL))
    return PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req);
  COLL(PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req), OT_MPI_IREDUCE, comm, root,
       bytes(count, type), req);
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req) {
  if (!on(K_COLL))
    return PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req);
  COLL(PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req), OT_MPI_IALLREDUCE, comm,
       RANK_NULL, bytes(count, type), req);
}

/* The v-collectives, reduce_scatter and scans: bytes are what this rank
 * sends (for a rooted scatter, all the root's parts; for the others, the
 * rank's own contribution). */
static uint64_t sum_counts(const int *counts, int n, MPI_Datatype type) {
  uint64_t total = 0;
  for (int i = 0; counts && i < n; i++)
    total += bytes(counts[i], type);
  return total;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  COLL(PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm), OT_MPI_GATHERV,
       comm, root, bytes(scount, stype), (MPI_Request *)NULL);
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  int me = -1;
  PMPI_Comm_rank(comm, &me);
  uint64_t n = me == root ? sum_counts(scounts, comm_size(comm), stype) : 0;
  COLL(PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm), OT_MPI_SCATTERV,
       comm, root, n, (MPI_Request *)NULL);
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  COLL(PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), OT_MPI_ALLGATHERV,
       comm, RANK_NULL, bytes(scount, stype), (MPI_Request *)NULL);
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  COLL(PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
       OT_MPI_ALLTOALLV, comm, RANK_NULL, sum_counts(scounts, comm_size(comm), stype),
       (MPI_Request *)NULL);
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
  COLL(PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm), OT_MPI_REDUCE_SCATTER, comm,
       RANK_NULL, sum_counts(rcounts, comm_size(comm), type), (MPI_Request *)NULL);
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
  COLL(PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm), OT_MPI_REDUCE_SCATTER_BLOCK,
       comm, RANK_NULL, bytes(rcount, type) * (uint64_t)comm_size(comm), (MPI_Request *)NULL);
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Scan(sbuf, rbuf, count, type, op, comm);
  COLL(PMPI_Scan(sbuf, rbuf, count, type, op, comm), OT_MPI_SCAN, comm, RANK_NULL, bytes(count, type),
       (MPI_Request *)NULL);
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  if (!on(K_COLL))
    return PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
  COLL(PMPI_Exscan(sbuf, rbuf, count, type, op, comm), OT_MPI_EXSCAN, comm, RANK_NULL,
       bytes(count, type), (MPI_Request *)NULL);
}
