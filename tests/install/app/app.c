/* A program built against the installed occa-tools (tests/install/check.sh
 * builds it with pkg-config and with CMake): it marks a region and an
 * instant, and says whether it was traced. */
#include <stdio.h>

#include <occa_tools.h>

int main(void) {
  int traced = occa_tools_region_push("install-check") == 0;
  occa_tools_marker("built-against-the-installed-tree");
  occa_tools_region_pop();
  occa_tools_flush();
  printf("app: abi=%u traced=%d\n", (unsigned)OCCA_TOOLS_ABI_VERSION, traced);
  return 0;
}
