/* objects.c: the tool's side of device, kernel, memory and stream objects.
 *
 * A source's occa_tools_data_t slot holds a pointer to an ot_obj. The first
 * event that sees an object creates it, asks the Go core once whether its
 * events are selected, writes its definition, and publishes it in the slot
 * with a CAS; every later event reads the cached decision. Kernel decisions
 * depend on tags, which the control API can add at run time: they carry the
 * epoch they were made in and are remade when it moves. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static _Atomic uint32_t next_id[5] = {0, 1, 1, 1, 1};

/* Live memory objects by address, for occa_tools_tag_memory. */
enum { ADDR_BUCKETS = 4096, ADDR_LOCKS = 64 };
static ot_obj *addr_map[ADDR_BUCKETS];
static pthread_mutex_t addr_mu[ADDR_LOCKS];
static pthread_once_t addr_once = PTHREAD_ONCE_INIT;

static void addr_init(void) {
  for (int i = 0; i < ADDR_LOCKS; i++)
    pthread_mutex_init(&addr_mu[i], NULL);
}

static uint32_t addr_bucket(uintptr_t a) {
  uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 52) & (ADDR_BUCKETS - 1);
}

static ot_obj *obj_new(uint8_t type) {
  int c = ot_cancel_off();
  ot_obj *o = calloc(1, sizeof *o);
  ot_cancel_restore(c);
  if (!o)
    return NULL;
  o->type = type;
  o->id = atomic_fetch_add_explicit(&next_id[type], 1, memory_order_relaxed);
  return o;
}

ot_obj *ot_publish(occa_tools_data_t *slot, ot_obj *o) {
  if (!slot || !o)
    return o;
  void *expected = NULL;
  if (__atomic_compare_exchange_n(&slot->ptr, &expected, o, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return o;
  /* Another thread published first. Ours was defined in the trace already
   * (harmless: an id nothing refers to); keep memory bounded. */
  if (o->type != OT_OBJ_MEMORY)
    ot_free(o);
  return (ot_obj *)expected;
}

/* ---- Devices ---------------------------------------------------------------- */

ot_obj *ot_device_new(const char *mode, int64_t index, const char *props) {
  ot_obj *d = obj_new(OT_OBJ_DEVICE);
  if (!d)
    return NULL;
  d->name = ot_intern(mode);
  d->props = ot_intern(props);
  d->index = index;
  ot_decision_t dec = {1, 1, 0};
  if (ot_core.decide_device)
    ot_core.decide_device(d->name ? d->name->text : "", index, d->props ? d->props->text : "",
                          &dec);
  atomic_store(&d->selected, (uint8_t)(dec.selected != 0));
  atomic_store(&d->memory_selected, (uint8_t)(dec.selected && dec.memory_selected));
  uint64_t args[4] = {d->id, ot_str_id(d->name), (uint64_t)index, ot_str_id(d->props)};
  ot_def(OT_DEF_DEVICE, 4, args, NULL, 0);
  return d;
}

ot_obj *ot_device_of(occa_tools_data_t *slot) {
  ot_obj *d = ot_slot_obj(slot);
  if (OT_LIKELY(d != NULL) || slot == NULL)
    return d;
  return ot_publish(slot, ot_device_new(NULL, -1, NULL)); /* setup not reported */
}

/* ---- Kernels ------------------------------------------------------------------ */

static void kernel_decide(ot_obj *k) {
  uint32_t epoch = atomic_load(&ot_epoch);
  ot_decision_t dec = {1, 0, 0};
  const char *tags = NULL;
  if (ot_core.decide_kernel)
    ot_core.decide_kernel(k->name ? k->name->text : "", k->props ? k->props->text : "", &dec,
                          &tags);
  int selected = dec.selected && ot_obj_selected(k->device);
  atomic_store(&k->selected, (uint8_t)selected);
  atomic_store(&k->windows, dec.windows);
  /* Tags go into the trace once per (kernel, tag); a remade decision writes
   * the full list again and readers keep the union. */
  for (const char *p = tags; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char buf[256];
    if (n > 0 && n < sizeof buf) {
      memcpy(buf, p, n);
      buf[n] = 0;
      uint64_t args[2] = {k->id, ot_str_id(ot_intern(buf))};
      ot_def(OT_DEF_KERNEL_TAG, 2, args, NULL, 0);
    }
    p = nl ? nl + 1 : p + n;
  }
  atomic_store(&k->epoch, epoch);
}

ot_obj *ot_kernel_new(const char *name, const char *source, const char *props, uint64_t hash,
                      ot_obj *device) {
  ot_obj *k = obj_new(OT_OBJ_KERNEL);
  if (!k)
    return NULL;
  k->name = ot_intern(name);
  k->props = ot_intern(props);
  k->device = device;
  ot_str *src = ot_intern(source);
  uint64_t args[5] = {k->id, ot_obj_id(device), ot_str_id(k->name), ot_str_id(src), hash};
  ot_def(OT_DEF_KERNEL, 5, args, NULL, 0);
  kernel_decide(k);
  return k;
}

void ot_kernel_redecide(ot_obj *k) { kernel_decide(k); }

ot_obj *ot_kernel_of(occa_tools_data_t *slot, const char *name, ot_obj *device) {
  ot_obj *k = ot_slot_obj(slot);
  if (OT_UNLIKELY(k == NULL)) {
    if (!name)
      name = "<unknown kernel>";
    if (!slot) { /* no slot to cache it in: one object per kernel name */
      ot_str *s = ot_intern(name);
      k = s ? atomic_load(&s->kernel) : NULL;
      if (!k) {
        ot_obj *fresh = ot_kernel_new(name, NULL, NULL, 0, device);
        void *expected = NULL;
        if (s && fresh && !atomic_compare_exchange_strong(&s->kernel, &expected, fresh)) {
          ot_free(fresh);
          fresh = expected;
        }
        k = fresh;
      }
    } else {
      k = ot_publish(slot, ot_kernel_new(name, NULL, NULL, 0, device));
    }
  }
  if (k && OT_UNLIKELY(!ot_kernel_decided(k)))
    kernel_decide(k);
  return k;
}

/* ---- Streams -------------------------------------------------------------------- */

ot_obj *ot_stream_of(occa_tools_data_t *slot, ot_obj *device) {
  ot_obj *s = ot_slot_obj(slot);
  if (OT_LIKELY(s != NULL) || slot == NULL)
    return s;
  s = obj_new(OT_OBJ_STREAM);
  if (!s)
    return NULL;
  s->device = device;
  atomic_store(&s->selected, (uint8_t)ot_obj_selected(device));
  uint64_t args[2] = {s->id, ot_obj_id(device)};
  ot_def(OT_DEF_STREAM, 2, args, NULL, 0);
  return ot_publish(slot, s);
}

/* ---- Memory ------------------------------------------------------------------------ */

static int memory_decide(const ot_obj *m) {
  if (m->device && !atomic_load(&m->device->memory_selected))
    return 0;
  if (m->bytes < ot_cfg.mem_min_bytes)
    return 0;
  if (ot_cfg.mem_max_bytes && m->bytes > ot_cfg.mem_max_bytes)
    return 0;
  ot_str *tag = atomic_load(&m->tag);
  if (!tag)
    return !ot_core.memory_tag_selected || ot_core.memory_tag_selected("");
  int32_t sel = atomic_load_explicit(&tag->memtag_selected, memory_order_relaxed);
  if (sel < 0) {
    sel = !ot_core.memory_tag_selected || ot_core.memory_tag_selected(tag->text);
    atomic_store(&tag->memtag_selected, sel);
  }
  return sel;
}

ot_obj *ot_memory_new(ot_obj *device, uint64_t bytes, const char *tag) {
  ot_obj *m = obj_new(OT_OBJ_MEMORY);
  if (!m)
    return NULL;
  m->device = device;
  m->bytes = bytes;
  atomic_init(&m->tag, ot_intern(tag));
  atomic_store(&m->selected, (uint8_t)memory_decide(m));
  return m;
}

/* Queues a memory object's definition unless one is queued already. Every
 * thread about to record an event that names m calls it first: the flag is
 * set only after the definition is queued, so a thread that sees it knows the
 * definition reaches the file before its own event; threads racing on the
 * first use may each queue one (readers keep the last, all equal). */
void ot_memory_define(ot_obj *m) {
  if (!m || atomic_load_explicit(&m->defined, memory_order_acquire))
    return;
  uint64_t args[5] = {m->id, ot_obj_id(m->device), m->bytes, (uint64_t)m->address,
                      ot_str_id(atomic_load(&m->tag))};
  ot_def(OT_DEF_MEMORY, 5, args, NULL, 0);
  atomic_store_explicit(&m->defined, 1, memory_order_release);
}

ot_obj *ot_memory_of(occa_tools_data_t *slot) {
  ot_obj *m = ot_slot_obj(slot);
  if (OT_LIKELY(m != NULL) || slot == NULL)
    return m;
  m = ot_memory_new(NULL, 0, NULL); /* allocation not reported */
  if (!m)
    return NULL;
  ot_obj *won = ot_publish(slot, m);
  if (won != m)
    ot_free(m);
  return won;
}

void ot_memory_publish(ot_obj *m, occa_tools_data_t *slot, const void *address) {
  m->address = (uintptr_t)address;
  if (address) {
    pthread_once(&addr_once, addr_init);
    uint32_t b = addr_bucket(m->address);
    int c = ot_cancel_off();
    pthread_mutex_lock(&addr_mu[b % ADDR_LOCKS]);
    m->hnext = addr_map[b];
    addr_map[b] = m;
    pthread_mutex_unlock(&addr_mu[b % ADDR_LOCKS]);
    ot_cancel_restore(c);
  }
  if (slot)
    __atomic_store_n(&slot->ptr, m, __ATOMIC_RELEASE);
}

/* Called at the end of a free: forgets the object. */
void ot_memory_retire(ot_obj *m) {
  if (!m)
    return;
  int c = ot_cancel_off();
  if (m->address) {
    uint32_t b = addr_bucket(m->address);
    pthread_mutex_lock(&addr_mu[b % ADDR_LOCKS]);
    for (ot_obj **pp = &addr_map[b]; *pp; pp = &(*pp)->hnext) {
      if (*pp == m) {
        *pp = m->hnext;
        break;
      }
    }
    pthread_mutex_unlock(&addr_mu[b % ADDR_LOCKS]);
  }
  free(m);
  ot_cancel_restore(c);
}

int ot_memory_tag(const void *address, const char *tag) {
  if (!address || !tag)
    return -1;
  pthread_once(&addr_once, addr_init);
  uint32_t b = addr_bucket((uintptr_t)address);
  int found = -1;
  ot_str *s = ot_intern(tag);
  int c = ot_cancel_off();
  pthread_mutex_lock(&addr_mu[b % ADDR_LOCKS]);
  for (ot_obj *m = addr_map[b]; m; m = m->hnext) {
    if (m->address == (uintptr_t)address) {
      atomic_store(&m->tag, s);
      atomic_store(&m->selected, (uint8_t)memory_decide(m));
      found = 0;
      if (atomic_load(&m->defined)) { /* tell the trace about the new tag */
        uint64_t args[5] = {m->id, ot_obj_id(m->device), m->bytes, (uint64_t)m->address,
                            ot_str_id(s)};
        ot_def(OT_DEF_MEMORY, 5, args, NULL, 0);
      }
      break;
    }
  }
  pthread_mutex_unlock(&addr_mu[b % ADDR_LOCKS]);
  ot_cancel_restore(c);
  return found;
}
