/* strings.c: interned strings and the definitions queue.
 *
 * Lookups are lock-free (slots are published with a release store and never
 * change after); inserts take a mutex. The table has a fixed size so that
 * readers never see it move: when it is 3/4 full, new strings are recorded as
 * id 0 and counted as dropped (reason string_table_full). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { STR_SLOTS = 1 << 16, STR_MAX_LEN = 64 * 1024, DEFS_MAX = 16 << 20 };

static ot_str *_Atomic *slots;
static uint32_t nstrings;
static pthread_mutex_t str_mu = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t defs_mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *defs;
static uint64_t defs_len, defs_cap;

int ot_strings_init(void) {
  slots = calloc(STR_SLOTS, sizeof *slots);
  return slots ? 0 : -1;
}

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h | 1; /* never 0 */
}

ot_str *ot_intern(const char *s) {
  if (!s || !*s || !slots)
    return NULL;
  size_t n = strnlen(s, STR_MAX_LEN);
  uint64_t h = hash_bytes(s, n);
  uint32_t mask = STR_SLOTS - 1;
  for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
    ot_str *e = atomic_load_explicit(&slots[i], memory_order_acquire);
    if (!e)
      break;
    if (e->hash == h && e->len == n && memcmp(e->text, s, n) == 0)
      return e;
  }
  /* A child of the raw fork system call has only the thread that forked:
   * a lock another thread held then is held for ever there. */
  if (ot_forked_child())
    return NULL;
  int c = ot_cancel_off();
  pthread_mutex_lock(&str_mu);
  ot_str *found = NULL;
  uint32_t i = (uint32_t)h & mask;
  for (;; i = (i + 1) & mask) { /* again under the lock: another insert may have won */
    ot_str *e = atomic_load_explicit(&slots[i], memory_order_relaxed);
    if (!e)
      break;
    if (e->hash == h && e->len == n && memcmp(e->text, s, n) == 0) {
      found = e;
      break;
    }
  }
  if (!found && nstrings < STR_SLOTS / 4 * 3) {
    ot_str *e = malloc(sizeof *e + n + 1);
    if (e) {
      e->hash = h;
      e->id = ++nstrings;
      e->len = (uint32_t)n;
      atomic_init(&e->region_windows, -1);
      atomic_init(&e->memtag_selected, -1);
      atomic_init(&e->kernel, NULL);
      memcpy(e->text, s, n);
      e->text[n] = 0;
      uint64_t id = e->id;
      ot_def(OT_DEF_STRING, 1, &id, e->text, e->len); /* before anyone can use the id */
      atomic_store_explicit(&slots[i], e, memory_order_release);
      found = e;
    }
  }
  pthread_mutex_unlock(&str_mu);
  ot_cancel_restore(c);
  if (!found)
    ot_count_drop(OT_DROP_STRING_TABLE_FULL, 1);
  return found;
}

void ot_def(unsigned kind, unsigned nargs, const uint64_t *args, const char *text,
            uint32_t text_len) {
  uint64_t need = 8 + 8ull * nargs + ((text_len + 7u) & ~7u);
  if (ot_forked_child()) /* as in ot_intern; nobody would write it there */
    return;
  int c = ot_cancel_off();
  pthread_mutex_lock(&defs_mu);
  if (defs_len + need > defs_cap) {
    uint64_t cap = defs_cap ? defs_cap * 2 : 64 * 1024;
    while (cap < defs_len + need)
      cap *= 2;
    uint8_t *grown = cap <= DEFS_MAX ? realloc(defs, cap) : NULL;
    if (!grown) {
      pthread_mutex_unlock(&defs_mu);
      ot_cancel_restore(c);
      ot_count_drop(OT_DROP_DEFINITION_QUEUE_FULL, 1);
      return;
    }
    defs = grown;
    defs_cap = cap;
  }
  uint8_t *p = defs + defs_len;
  p[0] = (uint8_t)kind;
  p[1] = (uint8_t)nargs;
  p[2] = p[3] = 0;
  memcpy(p + 4, &text_len, 4);
  memcpy(p + 8, args, 8ull * nargs);
  if (text_len) {
    memcpy(p + 8 + 8ull * nargs, text, text_len);
    memset(p + 8 + 8ull * nargs + text_len, 0, ((text_len + 7u) & ~7u) - text_len);
  }
  defs_len += need;
  pthread_mutex_unlock(&defs_mu);
  ot_cancel_restore(c);
}

/* Moves whole entries, oldest first, into dst. */
uint64_t ot_take_defs(uint8_t *dst, uint64_t cap, int try_only) {
  if (try_only) {
    if (pthread_mutex_trylock(&defs_mu) != 0)
      return 0;
  } else {
    pthread_mutex_lock(&defs_mu);
  }
  uint64_t n = 0;
  while (n < defs_len) {
    uint32_t text_len;
    memcpy(&text_len, defs + n + 4, 4);
    uint64_t size = 8 + 8ull * defs[n + 1] + ((text_len + 7u) & ~7u);
    if (n + size > cap)
      break;
    n += size;
  }
  memcpy(dst, defs, n);
  memmove(defs, defs + n, defs_len - n);
  defs_len -= n;
  pthread_mutex_unlock(&defs_mu);
  return n;
}
