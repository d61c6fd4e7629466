/* ompt.c: the runtime as an OpenMP tool (OMPT).
 *
 * An OpenMP runtime with OMPT (LLVM's libomp; GCC's libgomp has none) looks
 * for ompt_start_tool in the process when it starts, or loads the libraries
 * named by OMP_TOOL_LIBRARIES and looks there. Ours answers only while the
 * runtime records (a config is set) and the config enables some kind of the
 * "openmp" domain; otherwise it hands the question to the next definition
 * in the process, another tool's: a program linked with this library and
 * with another OpenMP tool after it had that tool silently disabled, even
 * untraced. A process has one tool: tracing OpenMP takes the place of
 * another one, which is said in a warning.
 *
 * Scope (openmp.scope): "kernels" records a parallel region only when the
 * thread that begins it is inside a recorded OCCA kernel launch (or inside
 * an implicit task already in scope), with everything the region contains;
 * "all" records everything. Each event carries the launch's correlation id.
 *
 * Per-event work is O(1): OMPT's data slots carry our ids (parallel_data
 * points at the beginning thread's record of the region, task_data holds the
 * task's id, 0 for a task out of scope), and each thread keeps a small stack
 * of its open implicit tasks and work/sync regions so an end finds its begin
 * (OMPT gives ends no slot of their own). Ids come from the correlation id
 * space, so begin/end pairs read like calls (FORMAT.md §4). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

#include "ompt_abi.h"
#include "rt.h"

static int ompt_active; /* initialize() ran and registered callbacks */

static inline int in_state(void) { return atomic_load_explicit(&ot_state, memory_order_relaxed) == OT_STATE_ACTIVE; }

/* Would an event of kind be recorded now? */
static inline int want(ot_thread *t, unsigned kind) {
  return ot_kind_on(kind) && ot_recording_event() && ot_budget_take(t);
}

/* The OCCA launch the thread is working for: its innermost implicit task's,
 * else the launch it runs itself. */
static inline uint64_t current_launch(const ot_thread *t) {
  for (uint32_t i = t->omp_depth; i > 0; i--)
    if (t->omp[i - 1].kind == OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_BEGIN)
      return t->omp[i - 1].launch;
  return t->launch;
}

static inline void emit(ot_thread *t, unsigned kind, unsigned n, uint64_t a0, uint64_t a1,
                        uint64_t a2, uint64_t a3, uint64_t a4) {
  uint64_t args[5] = {a0, a1, a2, a3, a4};
  ot_emit(t, kind, n, args);
}

/* LLVM's libomp reports a worker's end of the region's implicit barrier and
 * of its implicit task only when the worker is next woken (the next fork),
 * or never for a program's last region. Those ends are recorded at the
 * region's end, which the thread that ended it notes here: a table of
 * recently ended regions, by id (a collision loses one clamp, nothing else). */
enum { ENDED_SLOTS = 4096 };
static struct {
  _Atomic uint64_t id, ticks;
} ended[ENDED_SLOTS];

static inline void note_region_end(uint64_t id, uint64_t ticks) {
  uint32_t h = (uint32_t)(id ^ (id >> 40)) & (ENDED_SLOTS - 1);
  atomic_store_explicit(&ended[h].ticks, ticks, memory_order_relaxed);
  atomic_store_explicit(&ended[h].id, id, memory_order_release);
}

/* The time to record the end of frame f at: now, or its region's end when
 * the region is already over. */
static inline uint64_t end_ticks(const ot_omp_frame *f) {
  uint64_t now = ot_ticks();
  if (f->region == 0)
    return now;
  uint32_t h = (uint32_t)(f->region ^ (f->region >> 40)) & (ENDED_SLOTS - 1);
  if (atomic_load_explicit(&ended[h].id, memory_order_acquire) != f->region)
    return now;
  uint64_t e = atomic_load_explicit(&ended[h].ticks, memory_order_relaxed);
  return e < now ? e : now;
}

static inline void emit_end(ot_thread *t, const ot_omp_frame *f, uint64_t ticks) {
  uint64_t args[1] = {f->id};
  ot_emit_at(t, f->kind + 1, 1, args, ticks);
}

/* Pushes an open region; returns 0 when the stack is full (then the region
 * and what it contains are not recorded; its begin and end, if they would
 * have been, are counted as dropped, reason too_deep). */
static int push(ot_thread *t, uint32_t kind, uint32_t sub, uint64_t id, uint64_t region,
                uint64_t launch, uint32_t recorded) {
  if (t->omp_depth >= OT_OMP_DEPTH) {
    if (recorded) { /* its begin and its end */
      ot_drop(t, OT_DROP_TOO_DEEP);
      ot_drop(t, OT_DROP_TOO_DEEP);
    }
    return 0;
  }
  t->omp[t->omp_depth++] = (ot_omp_frame){id, region, launch, kind, sub, recorded};
  return 1;
}

/* Pops the innermost open region of kind (and sub) and records its end if
 * its begin was; returns 0 when there was none (it began out of scope).
 * Frames above it are ones whose end the OpenMP runtime reports later or
 * never: they are closed now, at the same time, so every recorded begin has
 * its end and their late ends find nothing. */
static int pop(ot_thread *t, uint32_t kind, uint32_t sub) {
  for (uint32_t i = t->omp_depth; i > 0; i--) {
    ot_omp_frame *f = &t->omp[i - 1];
    if (f->kind != kind || f->sub != sub)
      continue;
    uint64_t ticks = end_ticks(f);
    for (uint32_t j = t->omp_depth; j > i; j--)
      if (t->omp[j - 1].recorded)
        emit_end(t, &t->omp[j - 1], ticks);
    if (f->recorded)
      emit_end(t, f, ticks);
    t->omp_depth = i - 1;
    return 1;
  }
  return 0;
}

/* ---- Callbacks ------------------------------------------------------------------- */

static void on_thread_begin(int thread_type, ompt_data_t *thread_data) {
  if (!in_state() || !thread_data)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  thread_data->value = 0;
  if (want(t, OCCA_TOOLS_EVENT_OMP_THREAD_BEGIN)) {
    thread_data->value = ot_next_corr(t);
    emit(t, OCCA_TOOLS_EVENT_OMP_THREAD_BEGIN, 2, thread_data->value, (uint64_t)thread_type, 0, 0, 0);
  }
  ot_leave(t);
}

static void on_thread_end(ompt_data_t *thread_data) {
  if (!in_state() || !thread_data || !thread_data->value)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  emit(t, OCCA_TOOLS_EVENT_OMP_THREAD_END, 1, thread_data->value, 0, 0, 0, 0);
  ot_leave(t);
}

static void on_parallel_begin(ompt_data_t *encountering_task_data, const ompt_frame_t *frame,
                              ompt_data_t *parallel_data, unsigned int requested, int flags,
                              const void *codeptr) {
  (void)frame;
  (void)codeptr;
  if (!parallel_data)
    return;
  parallel_data->ptr = NULL;
  if (!in_state())
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  uint64_t launch = current_launch(t);
  uint64_t parent = encountering_task_data ? encountering_task_data->value : 0;
  if (!ot_cfg.omp_all && launch == 0 && parent == 0)
    goto out; /* out of scope */
  if (t->omp_par_depth >= OT_OMP_DEPTH) {
    if (want(t, OCCA_TOOLS_EVENT_OMP_PARALLEL_BEGIN)) { /* its begin and its end */
      ot_drop(t, OT_DROP_TOO_DEEP);
      ot_drop(t, OT_DROP_TOO_DEEP);
    }
    goto out;
  }
  ot_omp_parallel *p = &t->omp_par[t->omp_par_depth++];
  p->id = ot_next_corr(t);
  p->launch = launch;
  p->recorded = want(t, OCCA_TOOLS_EVENT_OMP_PARALLEL_BEGIN);
  if (p->recorded)
    emit(t, OCCA_TOOLS_EVENT_OMP_PARALLEL_BEGIN, 5, p->id, parent, requested, (uint64_t)(unsigned)flags,
         launch);
  parallel_data->ptr = p;
out:
  ot_leave(t);
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
                            int flags, const void *codeptr) {
  (void)encountering_task_data;
  (void)flags;
  (void)codeptr;
  ot_omp_parallel *p = parallel_data ? parallel_data->ptr : NULL;
  if (!p)
    return;
  parallel_data->ptr = NULL;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (t->omp_par_depth == 0)
    goto out;
  uint64_t ticks = ot_ticks();
  note_region_end(p->id, ticks);
  if (p->recorded && in_state()) {
    uint64_t args[1] = {p->id};
    ot_emit_at(t, OCCA_TOOLS_EVENT_OMP_PARALLEL_END, 1, args, ticks);
  }
  /* Regions end in the order they began on their thread. */
  t->omp_par_depth = (uint32_t)(p - t->omp_par);
out:
  ot_leave(t);
}

static void on_implicit_task(int endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                             unsigned int actual, unsigned int index, int flags) {
  if (!task_data || !in_state())
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (endpoint == ompt_scope_begin) {
    task_data->value = 0;
    ot_omp_parallel *p = parallel_data ? parallel_data->ptr : NULL;
    if (flags & ompt_task_initial) {
      /* The initial task: an id, so tasks it creates name their parent, but
       * no event (it is the thread itself). */
      if (ot_cfg.omp_all)
        task_data->value = ot_next_corr(t);
      goto out;
    }
    if (!p)
      goto out; /* its region is out of scope */
    uint64_t id = ot_next_corr(t);
    uint32_t rec = want(t, OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_BEGIN);
    if (!push(t, OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_BEGIN, 0, id, p->id, p->launch, rec))
      goto out;
    task_data->value = id;
    if (rec)
      emit(t, OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_BEGIN, 5, id, p->id, index, actual, p->launch);
    goto out;
  }
  if (endpoint != ompt_scope_end || task_data->value == 0 || (flags & ompt_task_initial))
    goto out;
  pop(t, OCCA_TOOLS_EVENT_OMP_IMPLICIT_TASK_BEGIN, 0);
out:
  ot_leave(t);
}

/* Work and sync regions: in scope when the task they belong to is. */
static void region(unsigned begin_kind, int sub, int endpoint, ompt_data_t *parallel_data,
                   ompt_data_t *task_data, uint64_t count) {
  if (!in_state())
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (endpoint == ompt_scope_begin) {
    if (!task_data || task_data->value == 0)
      goto out;
    ot_omp_parallel *p = parallel_data ? parallel_data->ptr : NULL;
    uint64_t id = ot_next_corr(t);
    uint32_t rec = want(t, begin_kind);
    uint64_t par = p ? p->id : 0;
    if (!push(t, begin_kind, (uint32_t)sub, id, par, 0, rec) || !rec)
      goto out;
    if (begin_kind == OCCA_TOOLS_EVENT_OMP_WORK_BEGIN)
      emit(t, begin_kind, 5, id, (uint64_t)sub, par, task_data->value, count);
    else
      emit(t, begin_kind, 4, id, (uint64_t)sub, par, task_data->value, 0);
    goto out;
  }
  if (endpoint == ompt_scope_end)
    pop(t, begin_kind, (uint32_t)sub);
out:
  ot_leave(t);
}

static void on_work(int work_type, int endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                    uint64_t count, const void *codeptr) {
  (void)codeptr;
  region(OCCA_TOOLS_EVENT_OMP_WORK_BEGIN, work_type, endpoint, parallel_data, task_data, count);
}

static void on_sync_region(int kind, int endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                           const void *codeptr) {
  (void)codeptr;
  region(OCCA_TOOLS_EVENT_OMP_SYNC_BEGIN, kind, endpoint, parallel_data, task_data, 0);
}

static void on_sync_region_wait(int kind, int endpoint, ompt_data_t *parallel_data,
                                ompt_data_t *task_data, const void *codeptr) {
  (void)codeptr;
  region(OCCA_TOOLS_EVENT_OMP_SYNC_WAIT_BEGIN, kind, endpoint, parallel_data, task_data, 0);
}

static void on_task_create(ompt_data_t *encountering_task_data, const ompt_frame_t *frame,
                           ompt_data_t *new_task_data, int flags, int has_dependences,
                           const void *codeptr) {
  (void)frame;
  (void)codeptr;
  if (!new_task_data)
    return;
  new_task_data->value = 0;
  if (!in_state() || (flags & (ompt_task_initial | ompt_task_implicit)))
    return; /* implicit tasks are announced by on_implicit_task */
  ot_thread *t = ot_enter();
  if (!t)
    return;
  uint64_t parent = encountering_task_data ? encountering_task_data->value : 0;
  if (!ot_cfg.omp_all && parent == 0)
    goto out;
  new_task_data->value = ot_next_corr(t);
  if (want(t, OCCA_TOOLS_EVENT_OMP_TASK_CREATE))
    emit(t, OCCA_TOOLS_EVENT_OMP_TASK_CREATE, 5, new_task_data->value, parent,
         (uint64_t)(unsigned)flags, (uint64_t)(has_dependences != 0), current_launch(t));
out:
  ot_leave(t);
}

static void on_task_schedule(ompt_data_t *prior, int prior_status, ompt_data_t *next) {
  if (!in_state())
    return;
  uint64_t p = prior ? prior->value : 0, n = next ? next->value : 0;
  if (p == 0 && n == 0)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (want(t, OCCA_TOOLS_EVENT_OMP_TASK_SCHEDULE))
    emit(t, OCCA_TOOLS_EVENT_OMP_TASK_SCHEDULE, 3, p, (uint64_t)prior_status, n, 0, 0);
  ot_leave(t);
}

static void on_dependences(ompt_data_t *task_data, const ompt_dependence_t *deps, int ndeps) {
  if (!in_state() || !task_data || task_data->value == 0 || !deps)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  for (int i = 0; i < ndeps; i++)
    if (want(t, OCCA_TOOLS_EVENT_OMP_TASK_DEPEND))
      emit(t, OCCA_TOOLS_EVENT_OMP_TASK_DEPEND, 3, task_data->value,
           (uint64_t)(uintptr_t)deps[i].variable.ptr, (uint64_t)(unsigned)deps[i].dependence_type, 0,
           0);
  ot_leave(t);
}

static void on_task_dependence(ompt_data_t *src, ompt_data_t *sink) {
  if (!in_state() || !src || !sink || src->value == 0 || sink->value == 0)
    return;
  ot_thread *t = ot_enter();
  if (!t)
    return;
  if (want(t, OCCA_TOOLS_EVENT_OMP_TASK_DEPENDENCE))
    emit(t, OCCA_TOOLS_EVENT_OMP_TASK_DEPENDENCE, 2, src->value, sink->value, 0, 0, 0);
  ot_leave(t);
}

/* ---- Start -------------------------------------------------------------------- */

static const uint64_t omp_kinds =
    ((1ull << (OCCA_TOOLS_EVENT_OMP_TASK_DEPEND + 1)) - 1) & ~((1ull << OCCA_TOOLS_EVENT_OMP_THREAD_BEGIN) - 1);

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
  (void)initial_device_num;
  (void)tool_data;
  ompt_set_callback_t set = lookup ? (ompt_set_callback_t)lookup("ompt_set_callback") : NULL;
  if (!set)
    return 0;
  static const struct {
    int event;
    unsigned kind; /* registered when this kind (or its pair) is enabled */
    ompt_interface_fn_t fn;
  } cbs[] = {
      {ompt_callback_thread_begin, OCCA_TOOLS_EVENT_OMP_THREAD_BEGIN, (ompt_interface_fn_t)on_thread_begin},
      {ompt_callback_thread_end, OCCA_TOOLS_EVENT_OMP_THREAD_BEGIN, (ompt_interface_fn_t)on_thread_end},
      /* Parallel and implicit task callbacks set the scope of everything else. */
      {ompt_callback_parallel_begin, 0, (ompt_interface_fn_t)on_parallel_begin},
      {ompt_callback_parallel_end, 0, (ompt_interface_fn_t)on_parallel_end},
      {ompt_callback_implicit_task, 0, (ompt_interface_fn_t)on_implicit_task},
      {ompt_callback_task_create, 0, (ompt_interface_fn_t)on_task_create},
      {ompt_callback_work, OCCA_TOOLS_EVENT_OMP_WORK_BEGIN, (ompt_interface_fn_t)on_work},
      {ompt_callback_sync_region, OCCA_TOOLS_EVENT_OMP_SYNC_BEGIN, (ompt_interface_fn_t)on_sync_region},
      {ompt_callback_sync_region_wait, OCCA_TOOLS_EVENT_OMP_SYNC_WAIT_BEGIN, (ompt_interface_fn_t)on_sync_region_wait},
      {ompt_callback_task_schedule, OCCA_TOOLS_EVENT_OMP_TASK_SCHEDULE, (ompt_interface_fn_t)on_task_schedule},
      {ompt_callback_dependences, OCCA_TOOLS_EVENT_OMP_TASK_DEPEND, (ompt_interface_fn_t)on_dependences},
      {ompt_callback_task_dependence, OCCA_TOOLS_EVENT_OMP_TASK_DEPENDENCE, (ompt_interface_fn_t)on_task_dependence},
  };
  int n = 0;
  for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
    if (cbs[i].kind && !ot_kind_on(cbs[i].kind))
      continue;
    int r = set(cbs[i].event, cbs[i].fn);
    if (r == ompt_set_error || r == ompt_set_never)
      ot_log(OT_LOG_DEBUG, "OMPT: this OpenMP runtime does not deliver callback %d", cbs[i].event);
    else
      n++;
  }
  ompt_active = 1;
  ot_log(OT_LOG_INFO, "OMPT tool active: %d callbacks, scope %s", n, ot_cfg.omp_all ? "all" : "kernels");
  return 1;
}

static void finalize(ompt_data_t *tool_data) {
  (void)tool_data;
  ompt_active = 0;
}

/* Whether fn, a definition of ompt_start_tool, is an OpenMP runtime's own
 * (LLVM's and Intel's define a weak one that asks the next definition):
 * not a tool to warn about. */
static int is_runtime_stub(void *fn) {
  Dl_info info;
  if (!dladdr(fn, &info) || !info.dli_fname)
    return 0;
  void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!h)
    return 0;
  /* In that same object: dlsym also searches the object's dependencies. */
  void *fork_call = dlsym(h, "__kmpc_fork_call");
  Dl_info where;
  int runtime = fork_call && dladdr(fork_call, &where) && where.dli_fbase == info.dli_fbase;
  dlclose(h);
  return runtime;
}

OCCA_TOOLS_API ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                       const char *runtime_version);

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  typedef ompt_start_tool_result_t *(*start_tool_fn)(unsigned int, const char *);
  start_tool_fn next = (start_tool_fn)dlsym(RTLD_NEXT, "ompt_start_tool");
  if (!in_state() || (atomic_load(&ot_kinds) & omp_kinds) == 0) /* not tracing OpenMP */
    return next ? next(omp_version, runtime_version) : NULL;
  if (next && !is_runtime_stub((void *)next)) {
    Dl_info other;
    const char *where = dladdr((void *)next, &other) && other.dli_fname ? other.dli_fname : "another library";
    ot_log(OT_LOG_WARN, "OMPT: the OpenMP tool in %s is not started, since an OpenMP runtime has one tool and "
                        "this trace records OpenMP; leave openmp out of [events] to let it run",
           where);
  }
  ot_log(OT_LOG_DEBUG, "OMPT: %s asked for a tool", runtime_version ? runtime_version : "an OpenMP runtime");
  return &result;
}
