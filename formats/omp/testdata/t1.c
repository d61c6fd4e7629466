#include <omp.h>
#include <stdio.h>
int main(void) {
  double s = 0;
  #pragma omp parallel for num_threads(2) reduction(+:s)
  for (int i = 0; i < 1000; i++) s += i;
  int a = 0, b = 0, c = 0, d = 0;
  #pragma omp parallel num_threads(2)
  #pragma omp single
  {
    #pragma omp task depend(out: a)
    a = 1;
    #pragma omp task depend(in: a) depend(out: b)
    b = a + 1;
    #pragma omp task depend(in: a) depend(out: c)
    c = a + 2;
    #pragma omp task depend(in: b, c) depend(out: d)
    d = b + c;
  }
  printf("%g %d\n", s, d);
  return 0;
}
