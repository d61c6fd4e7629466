// real.cpp: finds libocca's own functions by their mangled names.
//
// The names are those of OCCA 1.0 to 2.x built by GCC or Clang with the
// C++11 string ABI (the default since GCC 5). A name libocca lacks (another
// OCCA version, the pre-C++11 string ABI) leaves its pointer null: the hook
// or helper that needs it forwards or does without, and probe.cpp reports in
// one line what that leaves out of the trace.
#include <dlfcn.h>

#include <cstdio>
#include <stdexcept>

#include "adapter.hpp"

namespace ot_occa {

Real real;

namespace {

struct Name {
  const char *symbol;
  void **fn;
};

#define R(field) reinterpret_cast<void **>(&real.field)
// OCCA 1.0-1.1 mangle their property parameters as occa::properties
// (NS_10propertiesE) where later versions have occa::json (NS_4jsonE).
#define JSON "NS_4jsonE"
#define PROPS "NS_10propertiesE"
#define STR "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
const Name names[] = {
    {"_ZN4occa6device5setupERK" STR, R(device_setup_string)},
    {"_ZN4occa6device5setupERK" JSON, R(json.device_setup)},
    {"_ZN4occa6device5setupERK" PROPS, R(props.device_setup)},
    {"_ZN4occa6device4freeEv", R(device_free)},
    {"_ZN4occa6device6finishEv", R(device_finish)},
    {"_ZN4occa6device9finishAllEv", R(device_finish_all)},
    {"_ZN4occa6device12createStreamERK" JSON, R(json.device_create_stream)},
    {"_ZN4occa6device12createStreamERK" PROPS, R(props.device_create_stream)},
    {"_ZN4occa6device9setStreamENS_6streamE", R(device_set_stream)},
    {"_ZNK4occa6device11buildKernelERK" STR "S8_RK" JSON, R(json.device_build_kernel)},
    {"_ZNK4occa6device11buildKernelERK" STR "S8_RK" PROPS, R(props.device_build_kernel)},
    {"_ZN4occa6device6mallocElRKNS_7dtype_tEPKvRK" JSON, R(json.device_malloc)},
    {"_ZN4occa6device6mallocElRKNS_7dtype_tEPKvRK" PROPS, R(props.device_malloc)},
    {"_ZNK4occa6kernel3runEv", R(kernel_run)},
    {"_ZNK4occa6kernel3runESt16initializer_listINS_9kernelArgEE", R(kernel_run_list)},
    {"_ZN4occa6memory8copyFromEPKvllRK" JSON, R(json.memory_copy_from_ptr)},
    {"_ZN4occa6memory8copyFromES0_lllRK" JSON, R(json.memory_copy_from_mem)},
    {"_ZNK4occa6memory6copyToEPvllRK" JSON, R(json.memory_copy_to_ptr)},
    {"_ZNK4occa6memory6copyToES0_lllRK" JSON, R(json.memory_copy_to_mem)},
    {"_ZN4occa6memory8copyFromEPKvllRK" PROPS, R(props.memory_copy_from_ptr)},
    {"_ZN4occa6memory8copyFromES0_lllRK" PROPS, R(props.memory_copy_from_mem)},
    {"_ZNK4occa6memory6copyToEPvllRK" PROPS, R(props.memory_copy_to_ptr)},
    {"_ZNK4occa6memory6copyToES0_lllRK" PROPS, R(props.memory_copy_to_mem)},
    {"_ZN4occa6memory4freeEv", R(memory_free)},
    {"_ZN4occa6stream6finishEv", R(stream_finish)},
    {"_ZN4occa10memoryPool7reserveElRKNS_7dtype_tE", R(pool_reserve)},
    {"_ZN4occa12experimental10memoryPool7reserveElRKNS_7dtype_tE", R(experimental_pool_reserve)},
    {"_ZN4occa12modeMemory_tD2Ev", R(mode_memory_dtor)},
    {"_ZN4occa12modeKernel_tD2Ev", R(mode_kernel_dtor)},
    {"_ZN4occa12modeStream_tD2Ev", R(mode_stream_dtor)},
    {"_ZN4occa12modeDevice_t13freeResourcesEv", R(mode_device_free_resources)},

    {"_ZNK4occa6device13getModeDeviceEv", R(device_mode_device)},
    {"_ZNK4occa6device4modeB5cxx11Ev", R(device_mode)},
    {"_ZN4occa6device9getStreamEv", R(device_get_stream)},
    {"_ZN4occa6device9tagStreamEv", R(device_tag_stream)},
    {"_ZN4occa6device11timeBetweenERKNS_9streamTagES3_", R(device_time_between)},
    {"_ZNK4occa6kernel13getModeKernelEv", R(kernel_mode_kernel)},
    {"_ZN4occa6kernel4nameB5cxx11Ev", R(kernel_name)},
    {"_ZN4occa6kernel14binaryFilenameB5cxx11Ev", R(kernel_binary_filename)},
    {"_ZN4occa6kernel9getDeviceEv", R(kernel_get_device)},
    {"_ZNK4occa6memory13getModeMemoryEv", R(memory_mode_memory)},
    {"_ZNK4occa6memory5dtypeEv", R(memory_dtype)},
    {"_ZNK4occa6memory6lengthEv", R(memory_length)},
    {"_ZNK4occa6memory9byte_sizeEv", R(memory_byte_size)},
    {"_ZNK4occa6memory9getDeviceEv", R(memory_get_device)},
    {"_ZN4occa6memory3ptrIvEEPT_v", R(memory_ptr)},
    {"_ZNK4occa6stream13getModeStreamEv", R(stream_mode_stream)},
    {"_ZNK4occa6stream9getDeviceEv", R(stream_get_device)},
    {"_ZNK4occa9streamTag16getModeStreamTagEv", R(stream_tag_mode)},
    {"_ZNK4occa7dtype_t5bytesEv", R(dtype_bytes)},
    {"_ZNK4occa4json4dumpB5cxx11Ei", R(json_dump)},
    {"_ZNK4occa4jsonixEPKc", R(json_get)},
    {"_ZN4occa8settingsEv", R(settings)},
    {"_ZNK4occa10memoryPool13getModeDeviceEv", R(pool_mode_device)},
    {"_ZNK4occa12experimental10memoryPool13getModeDeviceEv", R(experimental_pool_mode_device)},

    {"_ZN4occa6deviceC1Ev", R(handle_default[occa::ot_mirror::DEVICE])},
    {"_ZN4occa6kernelC1Ev", R(handle_default[occa::ot_mirror::KERNEL])},
    {"_ZN4occa6memoryC1Ev", R(handle_default[occa::ot_mirror::MEMORY])},
    {"_ZN4occa6streamC1Ev", R(handle_default[occa::ot_mirror::STREAM])},
    {"_ZN4occa9streamTagC1Ev", R(handle_default[occa::ot_mirror::STREAM_TAG])},
    {"_ZN4occa6deviceC1ERKS0_", R(handle_copy[occa::ot_mirror::DEVICE])},
    {"_ZN4occa6kernelC1ERKS0_", R(handle_copy[occa::ot_mirror::KERNEL])},
    {"_ZN4occa6memoryC1ERKS0_", R(handle_copy[occa::ot_mirror::MEMORY])},
    {"_ZN4occa6streamC1ERKS0_", R(handle_copy[occa::ot_mirror::STREAM])},
    {"_ZN4occa9streamTagC1ERKS0_", R(handle_copy[occa::ot_mirror::STREAM_TAG])},
    {"_ZN4occa6deviceD1Ev", R(handle_destroy[occa::ot_mirror::DEVICE])},
    {"_ZN4occa6kernelD1Ev", R(handle_destroy[occa::ot_mirror::KERNEL])},
    {"_ZN4occa6memoryD1Ev", R(handle_destroy[occa::ot_mirror::MEMORY])},
    {"_ZN4occa6streamD1Ev", R(handle_destroy[occa::ot_mirror::STREAM])},
    {"_ZN4occa9streamTagD1Ev", R(handle_destroy[occa::ot_mirror::STREAM_TAG])},
};
#undef JSON
#undef PROPS
#undef STR
#undef R

const char *const kernel_op_names[] = {
#include "kernel_ops_names.inc"
};
constexpr int kernel_ops = sizeof kernel_op_names / sizeof kernel_op_names[0];

// dlsym(RTLD_NEXT) finds libocca's definition when libocca is linked or
// loaded globally; a libocca dlopened with RTLD_LOCAL is asked directly.
void *find(void *local, const char *symbol) {
  void *fn = dlsym(RTLD_NEXT, symbol);
  if (!fn && local)
    fn = dlsym(local, symbol);
  return fn;
}

}  // namespace

void *kernel_op[kernel_ops];

int resolve_real() {
  void *local = dlopen("libocca.so", RTLD_LAZY | RTLD_NOLOAD);
  int missing_count = 0;
  for (const Name &n : names) {
    *n.fn = find(local, n.symbol);
    if (!*n.fn) {
      missing_count++;
      log(OCCA_TOOLS_LOG_DEBUG, "OCCA adapter: libocca has no %s", n.symbol);
    }
  }
  for (int i = 0; i < kernel_ops; i++)
    kernel_op[i] = find(local, kernel_op_names[i]);
  if (local)
    dlclose(local);
  return missing_count;
}

void missing(const char *what) {
  // Unreachable with a consistent libocca: the application could not have
  // been linked against a function libocca does not define.
  char msg[200];
  snprintf(msg, sizeof msg, "occa-tools OCCA adapter: libocca's %s was not found", what);
  log(OCCA_TOOLS_LOG_ERROR, "%s", msg);
  throw std::runtime_error(msg);
}

}  // namespace ot_occa

namespace occa {
namespace ot_mirror {
void copy_handle(int cls, void *self, const void *other) {
  if (OT_UNLIKELY(!ot_occa::real.handle_copy[cls]))
    ot_occa::missing("handle copy constructor");
  ot_occa::real.handle_copy[cls](self, other);
}
void destroy_handle(int cls, void *self) {
  if (OT_LIKELY(ot_occa::real.handle_destroy[cls] != nullptr))
    ot_occa::real.handle_destroy[cls](self);
}
}  // namespace ot_mirror
}  // namespace occa
