/* An "OCCA application": it links the stand-in libocca.so and nothing of
 * occa-tools. With --sleep it waits (for /proc checks) until killed. */
#include <string.h>
#include <unistd.h>

int occa_standin_value(void);

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--sleep"))
    for (;;)
      pause();
  return occa_standin_value() == 42 ? 0 : 1;
}
