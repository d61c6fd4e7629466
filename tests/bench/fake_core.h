/*
 * fake_core.h: the runtime's C side set up without the Go core, for the
 * C-only test drivers (tsan_driver.c, repro_writer.c): a core that selects
 * everything, and what the library constructor (lifecycle.c ot_init) does
 * once the core has answered. Include it after rt.h in one file per program.
 */
#ifndef OT_FAKE_CORE_H
#define OT_FAKE_CORE_H

#include <stdio.h>
#include <string.h>

#include "rt.h"

static void fake_decide_device(const char *mode, int64_t index, const char *props,
                               ot_decision_t *out) {
  (void)mode, (void)index, (void)props;
  out->selected = 1;
  out->memory_selected = 1;
  out->windows = 0;
}

static void fake_decide_kernel(const char *name, const char *props, ot_decision_t *out,
                               const char **tags) {
  (void)name, (void)props;
  out->selected = 1;
  out->memory_selected = 0;
  out->windows = 0;
  *tags = NULL;
}

static uint32_t fake_decide_region(const char *name) { return (void)name, 0; }
static int fake_memory_tag_selected(const char *tag) { return (void)tag, 1; }
static void fake_tag_kernel(const char *name, const char *tag) { (void)name, (void)tag; }
static void fake_shutdown(void) {}
static void fake_log(int level, const char *msg) {
  if (level >= OT_LOG_WARN)
    fprintf(stderr, "runtime log %d: %s\n", level, msg);
}

/* Installs the fake core and starts the runtime with every kind enabled,
 * no windows, and a pool of memory_bytes in buffers of buffer_bytes. The
 * caller sets ot_cfg's other fields first (this keeps them). Returns 0. */
static int fake_runtime_start(uint64_t memory_bytes, uint64_t buffer_bytes) {
  ot_cfg.enabled_mask = ~0ull;
  ot_core.decide_device = fake_decide_device;
  ot_core.decide_kernel = fake_decide_kernel;
  ot_core.decide_region = fake_decide_region;
  ot_core.memory_tag_selected = fake_memory_tag_selected;
  ot_core.tag_kernel = fake_tag_kernel;
  ot_core.shutdown = fake_shutdown;
  ot_core.log = fake_log;
  if (ot_strings_init() != 0 || ot_pool_init(memory_bytes, buffer_bytes) != 0)
    return -1;
  ot_thread_key_init();
  atomic_store(&ot_kinds, ot_cfg.enabled_mask);
  ot_triggers_init();
  atomic_store(&ot_state, OT_STATE_ACTIVE);
  ot_update_public_mask();
  return 0;
}

#endif /* OT_FAKE_CORE_H */
