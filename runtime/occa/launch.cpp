// launch.cpp: kernel launches. kernel::run() is where every launch ends up in
// a GCC-built libocca (operator(), run({...}), OCCA_JIT kernels and the C
// API's occaKernelRunN all call it through the PLT); the operator()
// overloads and run({...}) are hooked too for a libocca that calls run()
// directly or inlines it (Clang, -fno-semantic-interposition). The first
// hook on the thread reports.
#include "adapter.hpp"

void occa::kernel::run() const {
  ot_occa::launch(this, [&] { OT_REAL(kernel_run)(this); });
}

void occa::kernel::run(std::initializer_list<occa::kernelArg> args) const {
  ot_occa::launch(this, [&] { OT_REAL(kernel_run_list)(this, args); });
}

#include "kernel_ops.inc"
