/* othertool: another OpenMP tool (OMPT), linked into omp-programs-othertool
 * after libocca_tools (tests/openmp, TestAnotherTool). It says on stderr
 * when the OpenMP runtime starts it. */
#include <omp-tools.h>
#include <stdio.h>

static int initialize(ompt_function_lookup_t lookup, int initial_device, ompt_data_t *data) {
  (void)lookup;
  (void)initial_device;
  (void)data;
  fprintf(stderr, "othertool: started\n");
  return 1;
}

static void finalize(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  (void)omp_version;
  (void)runtime_version;
  return &result;
}
