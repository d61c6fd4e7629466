/* domains: switches every domain and event kind off and on again through
 * the control API and prints which kinds each switch turned off, as the
 * runtime answers occa_tools_event_enabled (tests/domains_test.go compares
 * that with formats/trace/kinds.go). Run traced, with every kind enabled. */
#include <stdint.h>
#include <stdio.h>

#include "occa_tools.h"

/* The kinds 1..OCCA_TOOLS_EVENT_KIND_COUNT-1 that are off now, as bits. */
static unsigned long long off_kinds(void) {
  unsigned long long m = 0;
  for (int k = 1; k < OCCA_TOOLS_EVENT_KIND_COUNT; k++)
    if (!occa_tools_event_enabled((occa_tools_event_kind_t)k))
      m |= 1ull << k;
  return m;
}

int main(void) {
  occa_tools_api_t api = {0};
  api.size = sizeof api;
  if (occa_tools_connect(OCCA_TOOLS_ABI_VERSION, "domains", &api) != 0 || !api.active) {
    fprintf(stderr, "domains: the tool is not active (run with OCCA_TOOLS_CONFIG)\n");
    return 1;
  }
  printf("off at start 0x%016llx\n", off_kinds());
  for (int d = 0; d < OCCA_TOOLS_DOMAIN_COUNT; d++) {
    int rc = occa_tools_enable_domain((occa_tools_domain_t)d, 0);
    unsigned long long off = off_kinds();
    int rc_on = occa_tools_enable_domain((occa_tools_domain_t)d, 1);
    printf("domain %d rc %d 0x%016llx rc %d 0x%016llx\n", d, rc, off, rc_on, off_kinds());
  }
  for (int k = 0; k <= OCCA_TOOLS_EVENT_KIND_COUNT; k++) {
    int rc = occa_tools_enable_event((occa_tools_event_kind_t)k, 0);
    unsigned long long off = off_kinds();
    int rc_on = occa_tools_enable_event((occa_tools_event_kind_t)k, 1);
    printf("event %d rc %d 0x%016llx rc %d 0x%016llx\n", k, rc, off, rc_on, off_kinds());
  }
  printf("domain %d rc %d\n", OCCA_TOOLS_DOMAIN_COUNT,
         occa_tools_enable_domain(OCCA_TOOLS_DOMAIN_COUNT, 0));
  return 0;
}
