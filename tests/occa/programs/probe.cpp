// probe: sets up the device PROPERTIES (OCCA's JSON) and prints its mode,
// or OCCA's error and exits 1: whether the OpenCL or CUDA tests can run.
#include <cstdio>

#include <occa.hpp>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: probe PROPERTIES\n");
    return 2;
  }
  try {
    occa::device device{std::string(argv[1])};
    printf("%s\n", device.mode().c_str());
  } catch (occa::exception &e) {
    printf("%s\n", e.message.c_str());
    return 1;
  }
  return 0;
}
