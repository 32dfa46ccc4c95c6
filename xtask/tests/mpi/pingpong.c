/* OSU-style check program for the emulated cluster: every rank reports its host,
 * an allreduce is verified, then rank 0 and the last rank ping-pong a large buffer
 * and rank 0 prints the achieved bandwidth and the small-message round trip. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    long bytes = argc > 1 ? atol(argv[1]) : 8L << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 4;
    printf("rank %d of %d on %s\n", rank, size, host);
    fflush(stdout);

    long sum = 0, mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long)size * (size + 1) / 2) {
        fprintf(stderr, "rank %d: allreduce gave %ld\n", rank, sum);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    int peer = size - 1;
    char *buf = calloc(bytes, 1);
    char one = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1 && (rank == 0 || rank == peer)) {
        int other = rank == 0 ? peer : 0;
        /* Small-message round trip, then the bulk ping-pong (one warm-up round). */
        double t0 = MPI_Wtime();
        for (int i = 0; i < 100; i++) {
            if (rank == 0) { MPI_Send(&one, 1, MPI_CHAR, other, 0, MPI_COMM_WORLD); MPI_Recv(&one, 1, MPI_CHAR, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { MPI_Recv(&one, 1, MPI_CHAR, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&one, 1, MPI_CHAR, other, 0, MPI_COMM_WORLD); }
        }
        double rtt = (MPI_Wtime() - t0) / 100;
        double start = 0;
        for (int i = 0; i <= iters; i++) {
            if (i == 1) start = MPI_Wtime();
            if (rank == 0) { MPI_Send(buf, bytes, MPI_CHAR, other, 1, MPI_COMM_WORLD); MPI_Recv(buf, bytes, MPI_CHAR, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { MPI_Recv(buf, bytes, MPI_CHAR, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(buf, bytes, MPI_CHAR, other, 1, MPI_COMM_WORLD); }
        }
        double secs = MPI_Wtime() - start;
        if (rank == 0)
            printf("pingpong bytes=%ld iters=%d rtt_us=%.1f MBps=%.2f\n", bytes, iters, rtt * 1e6, 2.0 * bytes * iters / secs / 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
