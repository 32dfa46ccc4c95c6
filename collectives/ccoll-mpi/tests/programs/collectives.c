/* An ordinary MPI program that knows nothing of libccoll_mpi.so.
 *
 *   collectives TOL N
 *
 * Runs MPI_Allreduce (SUM, MAX), MPI_Reduce, MPI_Reduce_scatter_block, MPI_Bcast,
 * MPI_Scatter, MPI_Gather, MPI_Allgather and MPI_Alltoall on N float and N double values
 * per block, each also with MPI_IN_PLACE where MPI allows it, an allgather whose receive
 * side is a derived type, then integer and small float calls. Every rank's input is a known function of (rank, index), so each rank
 * computes the exact result itself (in double) and checks the result it received:
 * float/double results within TOL, integer results exactly. Rank 0 prints one line per
 * case, "case NAME TYPE maxerr=E hash=H" (E the largest error over the ranks, H the sum of
 * every rank's digest of its result bytes, so that two runs can be compared bit for bit), then
 * "failures=F"; the exit status is 1 if any case failed. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;
static double tol;

/* The input of rank r at index i. */
static double value(int r, long i) { return sin(0.001 * (double)i + 0.7 * r) + 0.25 * r; }

static uint64_t fnv1a(const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* Combines this rank's error and result digest with every other rank's, prints the
 * case at rank 0 and counts a failure (on every rank) if the error exceeds `limit`. */
static void report(const char *name, const char *type, double err, const void *result, size_t len, double limit) {
  uint64_t h = result ? fnv1a(result, len) : 0, hall;
  double eall;
  MPI_Allreduce(&err, &eall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Reduce(&h, &hall, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("case %s %s maxerr=%.3e hash=%016llx\n", name, type, eall, (unsigned long long)hall);
  if (!(eall <= limit)) failures++;
}

/* The float and double cases, written once. */
#define CASES(T, MPIT, TNAME)                                                                      \
  static double err_##T(const T *got, long n, double (*want)(long, void *), void *ctx) {            \
    double e = 0;                                                                                   \
    for (long i = 0; i < n; i++) {                                                                  \
      double d = fabs((double)got[i] - want(i, ctx));                                               \
      if (!(d <= e)) e = d; /* NaN counts as the largest error */                                   \
    }                                                                                               \
    return e;                                                                                       \
  }                                                                                                 \
  static void run_##T(long n) {                                                                     \
    long p = size, all = n * p;                                                                     \
    T *a = malloc(sizeof(T) * all), *b = malloc(sizeof(T) * all);                                  \
    int root = size - 1;                                                                            \
    /* Allreduce SUM and MAX, out of place and in place. */                                        \
    for (int op = 0; op < 2; op++) {                                                                \
      for (int inplace = 0; inplace < 2; inplace++) {                                               \
        for (long i = 0; i < n; i++) a[i] = b[i] = (T)value(rank, i);                              \
        MPI_Allreduce(inplace ? MPI_IN_PLACE : a, b, (int)n, MPIT, op ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD); \
        int ops[2] = {op, 0};                                                                       \
        double e = err_##T(b, n, op ? want_max : want_sum, ops);                                    \
        char name[64];                                                                              \
        snprintf(name, sizeof name, "allreduce-%s%s", op ? "max" : "sum", inplace ? "-inplace" : ""); \
        report(name, TNAME, e, b, sizeof(T) * n, tol);                                              \
      }                                                                                             \
    }                                                                                               \
    /* Reduce SUM to the last rank, out of place and in place. */                                  \
    for (int inplace = 0; inplace < 2; inplace++) {                                                 \
      for (long i = 0; i < n; i++) a[i] = b[i] = (T)value(rank, i);                                \
      const void *send = (inplace && rank == root) ? MPI_IN_PLACE : a;                             \
      MPI_Reduce(send, rank == root ? b : NULL, (int)n, MPIT, MPI_SUM, root, MPI_COMM_WORLD);       \
      double e = rank == root ? err_##T(b, n, want_sum, NULL) : 0;                                  \
      report(inplace ? "reduce-sum-inplace" : "reduce-sum", TNAME, e, rank == root ? b : NULL, sizeof(T) * n, tol); \
    }                                                                                               \
    /* Reduce_scatter_block SUM: block r of the sum lands on rank r. */                            \
    for (int inplace = 0; inplace < 2; inplace++) {                                                 \
      for (long i = 0; i < all; i++) a[i] = b[i] = (T)value(rank, i);                              \
      MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : a, b, (int)n, MPIT, MPI_SUM, MPI_COMM_WORLD); \
      long off = (long)rank * n;                                                                    \
      double e = err_##T(b, n, want_sum_at, &off);                                                  \
      report(inplace ? "reduce_scatter_block-sum-inplace" : "reduce_scatter_block-sum", TNAME, e, b, sizeof(T) * n, tol); \
    }                                                                                               \
    /* Bcast from rank 1 (rank 0 on one rank). */                                                  \
    {                                                                                               \
      int from = size > 1 ? 1 : 0;                                                                  \
      for (long i = 0; i < n; i++) b[i] = rank == from ? (T)value(from, i) : (T)0;                 \
      MPI_Bcast(b, (int)n, MPIT, from, MPI_COMM_WORLD);                                             \
      int src = from;                                                                               \
      report("bcast", TNAME, err_##T(b, n, want_of_rank, &src), b, sizeof(T) * n, tol);            \
    }                                                                                               \
    /* Scatter from rank 0: block d of the root's vector goes to rank d. */                        \
    for (int inplace = 0; inplace < 2; inplace++) {                                                 \
      for (long i = 0; i < all; i++) a[i] = (T)value(0, i);                                        \
      for (long i = 0; i < n; i++) b[i] = (T)0;                                                    \
      int at_root = inplace && rank == 0;                                                           \
      MPI_Scatter(a, (int)n, MPIT, at_root ? MPI_IN_PLACE : b, (int)n, MPIT, 0, MPI_COMM_WORLD);    \
      long off = (long)rank * n;                                                                    \
      const T *got = at_root ? a : b;                                                               \
      report(inplace ? "scatter-inplace" : "scatter", TNAME, err_##T(got, n, want_rank0_at, &off), got, sizeof(T) * n, tol); \
    }                                                                                               \
    /* Gather to rank 0: rank r's block lands at r. */                                             \
    for (int inplace = 0; inplace < 2; inplace++) {                                                 \
      for (long i = 0; i < n; i++) a[i] = (T)value(rank, i);                                       \
      for (long i = 0; i < all; i++) b[i] = (T)0;                                                  \
      if (inplace && rank == 0) memcpy(b, a, sizeof(T) * n);                                        \
      MPI_Gather(inplace && rank == 0 ? MPI_IN_PLACE : a, (int)n, MPIT, b, (int)n, MPIT, 0, MPI_COMM_WORLD); \
      double e = rank == 0 ? err_##T(b, all, want_blocks, &n) : 0;                                  \
      report(inplace ? "gather-inplace" : "gather", TNAME, e, rank == 0 ? b : NULL, sizeof(T) * all, tol); \
    }                                                                                               \
    /* Allgather, out of place and in place. */                                                    \
    for (int inplace = 0; inplace < 2; inplace++) {                                                 \
      for (long i = 0; i < n; i++) a[i] = (T)value(rank, i);                                       \
      for (long i = 0; i < all; i++) b[i] = (T)0;                                                  \
      if (inplace) memcpy(b + (long)rank * n, a, sizeof(T) * n);                                    \
      MPI_Allgather(inplace ? MPI_IN_PLACE : a, (int)n, MPIT, b, (int)n, MPIT, MPI_COMM_WORLD);     \
      report(inplace ? "allgather-inplace" : "allgather", TNAME, err_##T(b, all, want_blocks, &n), b, sizeof(T) * all, tol); \
    }                                                                                               \
    /* Allgather received as one contiguous block type per rank: legal MPI, but the     \
     * sides differ, so the library must leave it to MPI on every rank. */                 \
    {                                                                                       \
      MPI_Datatype block;                                                                   \
      MPI_Type_contiguous((int)n, MPIT, &block);                                            \
      MPI_Type_commit(&block);                                                              \
      for (long i = 0; i < n; i++) a[i] = (T)value(rank, i);                               \
      MPI_Allgather(a, (int)n, MPIT, b, 1, block, MPI_COMM_WORLD);                          \
      MPI_Type_free(&block);                                                                \
      report("allgather-derived", TNAME, err_##T(b, all, want_blocks, &n), b, sizeof(T) * all, tol); \
    }                                                                                       \
    /* Alltoall: block d of rank s holds value(s, d*n + i); rank d receives it as block s. */      \
    for (int inplace = 0; inplace < 2; inplace++) {                                                 \
      for (long i = 0; i < all; i++) a[i] = b[i] = (T)value(rank, i);                              \
      MPI_Alltoall(inplace ? MPI_IN_PLACE : a, (int)n, MPIT, b, (int)n, MPIT, MPI_COMM_WORLD);      \
      long ctx[2] = {n, rank};                                                                      \
      report(inplace ? "alltoall-inplace" : "alltoall", TNAME, err_##T(b, all, want_alltoall, ctx), b, sizeof(T) * all, tol); \
    }                                                                                               \
    /* A small call, below any sensible threshold: MPI runs it (compare hashes). */                \
    for (long i = 0; i < 16; i++) a[i] = (T)value(rank, i);                                        \
    MPI_Allreduce(a, b, 16, MPIT, MPI_SUM, MPI_COMM_WORLD);                                         \
    report("allreduce-small", TNAME, err_##T(b, 16, want_sum, NULL), b, sizeof(T) * 16, 1e-5);     \
    free(a);                                                                                        \
    free(b);                                                                                        \
  }

/* The exact results, in double. */
static double want_sum(long i, void *ctx) {
  (void)ctx;
  double s = 0;
  for (int r = 0; r < size; r++) s += value(r, i);
  return s;
}
static double want_max(long i, void *ctx) {
  (void)ctx;
  double m = value(0, i);
  for (int r = 1; r < size; r++) m = fmax(m, value(r, i));
  return m;
}
static double want_sum_at(long i, void *ctx) { return want_sum(*(long *)ctx + i, NULL); }
static double want_of_rank(long i, void *ctx) { return value(*(int *)ctx, i); }
static double want_rank0_at(long i, void *ctx) { return value(0, *(long *)ctx + i); }
static double want_blocks(long i, void *ctx) {
  long n = *(long *)ctx;
  return value((int)(i / n), i % n);
}
static double want_alltoall(long i, void *ctx) {
  long n = ((long *)ctx)[0], me = ((long *)ctx)[1];
  return value((int)(i / n), me * n + i % n);
}

CASES(float, MPI_FLOAT, "float")
CASES(double, MPI_DOUBLE, "double")

/* Integer calls: MPI runs them, and they must be exact. */
static void run_int(long n) {
  long all = n * size;
  int *a = malloc(sizeof(int) * all), *b = malloc(sizeof(int) * all);
  for (long i = 0; i < n; i++) a[i] = (int)(i % 1000) * (rank + 1);
  MPI_Allreduce(a, b, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  double e = 0;
  for (long i = 0; i < n; i++)
    if (b[i] != (int)(i % 1000) * size * (size + 1) / 2) e = 1;
  report("allreduce-sum", "int", e, b, sizeof(int) * n, 0);
  for (long i = 0; i < all; i++) a[i] = (int)(rank * 100000 + i);
  MPI_Alltoall(a, (int)n, MPI_INT, b, (int)n, MPI_INT, MPI_COMM_WORLD);
  e = 0;
  for (long i = 0; i < all; i++)
    if (b[i] != (int)((i / n) * 100000 + rank * n + i % n)) e = 1;
  report("alltoall", "int", e, b, sizeof(int) * all, 0);
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    fprintf(stderr, "usage: collectives TOL N\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  tol = atof(argv[1]);
  long n = atol(argv[2]);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  run_float(n);
  run_double(n);
  run_int(n);
  if (rank == 0) printf("failures=%d\n", failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
