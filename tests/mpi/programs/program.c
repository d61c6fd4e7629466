/* program.c: the MPI program of tests/mpi, for an even number of ranks.
 *
 * Every rank makes a known set of calls (tests/mpi/mpi_test.go counts them
 * in the traces): blocking pairs, a non-blocking ring completed by waitall,
 * a non-blocking pair completed by wait, collectives on MPI_COMM_WORLD, and
 * a split communicator with a send between its members. It checks what it
 * received and exits 1 on a wrong value.
 *
 * "bench N" instead times N ping-pongs of one byte between ranks 0 and 1,
 * N allreduces of one double on all ranks, N sends to MPI_PROC_NULL and N
 * allreduces on MPI_COMM_SELF, and rank 0 prints the time per round trip or
 * call of each (tests/mpi/bench.sh). */
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

/* The loops run in batches of BATCH; each figure is the best batch's time
 * per iteration, so that a batch in which the (shared) machine ran
 * something else does not count. */
enum { BATCH = 1000 };

static double best_pingpong(int rank, long n) {
  char byte = 0;
  double best = 1e30;
  for (long b = 0; b < n / BATCH; b++) {
    double t0 = now();
    for (int i = 0; i < BATCH; i++) {
      if (rank == 0) {
        MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
    double t = (now() - t0) / BATCH;
    best = t < best ? t : best;
  }
  return best;
}

static double best_allreduce(MPI_Comm comm, long n) {
  double x = 1, y = 0, best = 1e30;
  for (long b = 0; b < n / BATCH; b++) {
    double t0 = now();
    for (int i = 0; i < BATCH; i++)
      MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
    double t = (now() - t0) / BATCH;
    best = t < best ? t : best;
  }
  return best;
}

/* A send to MPI_PROC_NULL: a whole MPI call (and a whole wrapper) that
 * moves nothing, for the library's cost without the network's noise. */
static double best_null_send(long n) {
  char byte = 0;
  double best = 1e30;
  for (long b = 0; b < n / BATCH; b++) {
    double t0 = now();
    for (int i = 0; i < BATCH; i++)
      MPI_Send(&byte, 1, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    double t = (now() - t0) / BATCH;
    best = t < best ? t : best;
  }
  return best;
}

static void bench(int rank, long n) {
  MPI_Barrier(MPI_COMM_WORLD);
  double pp = best_pingpong(rank, n);
  MPI_Barrier(MPI_COMM_WORLD);
  double ar = best_allreduce(MPI_COMM_WORLD, n);
  double ns = best_null_send(n);
  double as = best_allreduce(MPI_COMM_SELF, n);
  if (rank == 0)
    printf("pingpong_ns %.1f allreduce_ns %.1f null_send_ns %.1f self_allreduce_ns %.1f\n", pp, ar,
           ns, as);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc == 3 && strcmp(argv[1], "bench") == 0) {
    bench(rank, atol(argv[2]));
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
  MPI_Status ring_status[2]; /* not MPI_STATUSES_IGNORE: gcc reads MPICH's as a 0-byte array */
  MPI_Irecv(in, 8, MPI_DOUBLE, left, 22, MPI_COMM_WORLD, &ring[0]);
  MPI_Isend(out, 8, MPI_DOUBLE, right, 22, MPI_COMM_WORLD, &ring[1]);
  MPI_Waitall(2, ring, ring_status);
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

  /* Sendrecv in the ring (2 ints each way, tag 55); a probed message (1 int
   * to the right, tag 66: isend, probe, recv, wait). */
  int pair[2] = {rank, rank}, pair_in[2];
  MPI_Sendrecv(pair, 2, MPI_INT, right, 55, pair_in, 2, MPI_INT, left, 55, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE); /* 16 bytes */
  expect("sendrecv", pair_in[0], left);
  MPI_Request probed;
  int token = rank, token_in = -1;
  MPI_Isend(&token, 1, MPI_INT, right, 66, MPI_COMM_WORLD, &probed);
  MPI_Probe(left, 66, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&token_in, 1, MPI_INT, left, 66, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&probed, MPI_STATUS_IGNORE);
  expect("probed", token_in, left);

  /* The v-collectives, reduce_scatter and scans: one int per part. */
  int counts[64], displs[64], mine = rank, all[64], parts[64];
  for (int i = 0; i < size && i < 64; i++) {
    counts[i] = 1;
    displs[i] = i;
    parts[i] = i;
  }
  MPI_Gatherv(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); /* 4 bytes */
  MPI_Scatterv(parts, counts, displs, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
  expect("scatterv", mine, rank); /* the root sends 4 ints (16 bytes), the others none */
  MPI_Allgatherv(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD); /* 4 bytes */
  expect("allgatherv", all[size - 1], size - 1);
  MPI_Alltoallv(parts, counts, displs, MPI_INT, all, counts, displs, MPI_INT,
                MPI_COMM_WORLD); /* 16 bytes */
  MPI_Reduce_scatter(parts, &mine, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 16 bytes */
  expect("reduce_scatter", mine, rank * size);
  MPI_Reduce_scatter_block(parts, &mine, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 16 bytes */
  int prefix = 0;
  MPI_Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 4 bytes */
  expect("scan", prefix, rank + 1);
  MPI_Exscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 4 bytes */
  if (rank > 0)
    expect("exscan", prefix, rank);

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
