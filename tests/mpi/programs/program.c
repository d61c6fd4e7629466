/* program.c: the MPI program of tests/mpi, for an even number of ranks.
 *
 * Every rank makes a known set of calls (tests/mpi/mpi_test.go counts them
 * in the traces): blocking pairs, a non-blocking ring completed by waitall,
 * a non-blocking pair completed by wait, collectives on MPI_COMM_WORLD, and
 * a split communicator with a send between its members. It checks what it
 * received and exits 1 on a wrong value.
 *
 * "bench N" instead times N ping-pongs between ranks 0 and 1 and N
 * allreduces of one double on all ranks, and rank 0 prints
 * "pingpong_ns <per round trip> allreduce_ns <per call>" (tests/mpi/bench). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fails;

static void expect(const char *what, long got, long want) {
  if (got != want) {
    fprintf(stderr, "mpi-program: %s: got %ld, want %ld\n", what, got, want);
    fails++;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench(int rank, int size, long n) {
  char byte = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  for (long i = 0; i < n && size > 1; i++) {
    if (rank == 0) {
      MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  double t1 = now();
  MPI_Barrier(MPI_COMM_WORLD);
  double x = 1, y = 0, t2 = now();
  for (long i = 0; i < n; i++)
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double t3 = now();
  if (rank == 0)
    printf("pingpong_ns %.1f allreduce_ns %.1f\n", (t1 - t0) / (double)n, (t3 - t2) / (double)n);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc == 3 && strcmp(argv[1], "bench") == 0) {
    bench(rank, size, atol(argv[2]));
    MPI_Finalize();
    return 0;
  }
  if (size % 2) {
    fprintf(stderr, "mpi-program: needs an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* Blocking: even ranks send 25 ints (100 bytes) to the next, tag 11. */
  int ints[25];
  if (rank % 2 == 0) {
    for (int i = 0; i < 25; i++)
      ints[i] = rank * 100 + i;
    MPI_Send(ints, 25, MPI_INT, rank + 1, 11, MPI_COMM_WORLD);
  } else {
    MPI_Recv(ints, 25, MPI_INT, rank - 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect("blocking recv", ints[24], (rank - 1) * 100 + 24);
  }

  /* Non-blocking ring: 8 doubles (64 bytes) to the right, tag 22, waitall. */
  double out[8], in[8];
  for (int i = 0; i < 8; i++)
    out[i] = rank + i;
  MPI_Request ring[2];
  MPI_Irecv(in, 8, MPI_DOUBLE, left, 22, MPI_COMM_WORLD, &ring[0]);
  MPI_Isend(out, 8, MPI_DOUBLE, right, 22, MPI_COMM_WORLD, &ring[1]);
  MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);
  expect("ring", (long)in[7], left + 7);

  /* Non-blocking pair, each request waited for alone: 3 ints (12 bytes), tag 33. */
  int three[3] = {rank, rank, rank}, got[3];
  MPI_Request rr, sr;
  MPI_Irecv(got, 3, MPI_INT, MPI_ANY_SOURCE, 33, MPI_COMM_WORLD, &rr);
  MPI_Isend(three, 3, MPI_INT, right, 33, MPI_COMM_WORLD, &sr);
  MPI_Wait(&rr, MPI_STATUS_IGNORE);
  MPI_Wait(&sr, MPI_STATUS_IGNORE);
  expect("pair", got[0], left);

  /* Collectives on the world. */
  MPI_Barrier(MPI_COMM_WORLD);
  double b[16] = {0};
  if (rank == 2)
    b[15] = 42;
  MPI_Bcast(b, 16, MPI_DOUBLE, 2, MPI_COMM_WORLD); /* 128 bytes */
  expect("bcast", (long)b[15], 42);
  long sum[4] = {rank, 1, 2, 3}, total[4];
  for (int i = 0; i < 3; i++)
    MPI_Allreduce(sum, total, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD); /* 32 bytes */
  expect("allreduce", total[0], (long)size * (size - 1) / 2);
  int one = 1, ones = 0;
  MPI_Reduce(&one, &ones, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD); /* 4 bytes, root 1 */
  if (rank == 1)
    expect("reduce", ones, size);

  /* A split: even and odd ranks. Local rank 0 sends 2 shorts (4 bytes, tag
   * 44) to local rank 1; then an allreduce of one int on the half. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int hr;
  MPI_Comm_rank(half, &hr);
  short two[2] = {7, 8};
  if (hr == 0)
    MPI_Send(two, 2, MPI_SHORT, 1, 44, half);
  else if (hr == 1)
    MPI_Recv(two, 2, MPI_SHORT, 0, 44, half, MPI_STATUS_IGNORE);
  int hsum = 0;
  MPI_Allreduce(&one, &hsum, 1, MPI_INT, MPI_SUM, half);
  expect("half allreduce", hsum, size / 2);
  MPI_Comm_free(&half);

  MPI_Finalize();
  return fails != 0;
}
