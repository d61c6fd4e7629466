// crash: an OCCA application that dies after a known amount of work, the
// ways OCCA programs die, so that tests can check that the trace holds all
// of that work and that the program ends as it would untraced.
//
//   crash MODE OKL_FILE LAUNCHES HOW [llvm]
//
// MODE is a mode name or the device's properties as OCCA's JSON.
//
// Work, in order (L = LAUNCHES):
//   device setups   1 (MODE)
//   allocations     3 x 4000 B (device.malloc<float>(1000))
//   builds          addVectors from OKL_FILE
//   launches        addVectors L, then device.finish()
// It prints "launched L" and then ends by HOW:
//   throw   builds a kernel from a file that does not exist: the
//           occa::exception is not caught, std::terminate calls abort()
//           (one more build, failed); SIGABRT
//   abort   abort(); SIGABRT
//   segv    a store through a null pointer; SIGSEGV
//   kernel-segv  builds kernel "fault" from a string and launches it: a
//           store through a null pointer inside the kernel (one more build;
//           in Serial or OpenMP the launch has not returned when the
//           process dies of SIGSEGV)
//   exit    exit(3), the control
// llvm: first installs, for SIGABRT and SIGSEGV, a handler as LLVM's crash
// handlers are (POCL runs LLVM in the process: OCCA's OpenCL mode on POCL
// has them once a kernel is compiled): SA_RESETHAND | SA_NODEFER, and when
// it runs it puts the previous dispositions back, says so on stderr and
// returns, leaving the end to abort() or to the fault happening again.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include <occa.hpp>

static struct sigaction previous[2];
static const int crash_signals[2] = {SIGABRT, SIGSEGV};

static void llvm_like(int) {
  for (int i = 0; i < 2; i++)
    sigaction(crash_signals[i], &previous[i], nullptr);
  static const char msg[] = "crash: crash handler ran\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "llvm") != 0)) {
    fprintf(stderr, "usage: crash MODE OKL_FILE LAUNCHES throw|abort|segv|kernel-segv|exit [llvm]\n");
    return 2;
  }
  const std::string mode = argv[1], how = argv[4];
  const int launches = atoi(argv[3]);
  const int n = 1000;
  occa::device device = mode[0] == '{' ? occa::device(mode) : occa::device({{"mode", mode}});
  occa::memory o_a = device.malloc<float>(n);
  occa::memory o_b = device.malloc<float>(n);
  occa::memory o_ab = device.malloc<float>(n);
  occa::kernel add = device.buildKernel(argv[2], "addVectors");
  for (int i = 0; i < launches; i++)
    add(n, o_a, o_b, o_ab);
  device.finish();
  if (argc == 6) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = llvm_like;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    for (int i = 0; i < 2; i++)
      sigaction(crash_signals[i], &sa, &previous[i]);
  }
  printf("launched %d\n", launches);
  fflush(stdout);
  if (how == "throw") {
    device.buildKernel(std::string(argv[2]) + ".missing", "addVectors");
  } else if (how == "abort") {
    abort();
  } else if (how == "segv") {
    *(volatile int *)nullptr = 1;
  } else if (how == "kernel-segv") {
    occa::kernel fault = device.buildKernelFromString(
        "@kernel void fault(const int entries) {\n"
        "  for (int i = 0; i < entries; ++i; @tile(16, @outer, @inner)) {\n"
        "    int *p = (int *) 0;\n"
        "    p[i] = i;\n"
        "  }\n"
        "}\n",
        "fault");
    fault(n);
  } else if (how == "exit") {
    exit(3);
  }
  fprintf(stderr, "crash: still alive after %s\n", how.c_str());
  return 1;
}
