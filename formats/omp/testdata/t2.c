#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define NV 6
#define NT 300
int v[NV];
static void work(int n) { volatile double x = 0; for (int i = 0; i < n; i++) x += i; }
int main(void) {
  unsigned s = 12345;
  #pragma omp parallel num_threads(4)
  #pragma omp single
  {
    for (int t = 0; t < NT; t++) {
      s = s * 1103515245u + 12345u;
      int a = (s >> 8) % NV, b = (s >> 16) % NV, k = (s >> 24) % 4;
      if (k == 0) {
        #pragma omp task depend(in: v[a]) depend(out: v[b])
        work(2000);
      } else if (k == 1) {
        #pragma omp task depend(inout: v[a])
        work(3000);
      } else if (k == 2) {
        #pragma omp task depend(in: v[a], v[b])
        work(1000);
      } else {
        #pragma omp task depend(mutexinoutset: v[a])
        work(1500);
      }
    }
    #pragma omp taskwait
    #pragma omp taskloop num_tasks(8)
    for (int i = 0; i < 64; i++) work(500);
  }
  printf("done\n");
  return 0;
}
