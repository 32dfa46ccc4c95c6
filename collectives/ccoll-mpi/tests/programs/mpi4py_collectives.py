"""An ordinary mpi4py program that knows nothing of libccoll_mpi.so.

    mpi4py_collectives.py TOL N

comm.Allreduce (SUM, also in place), comm.Bcast and comm.Alltoall on numpy float32 and
float64 arrays of N values per block; every rank checks its result against the exact
one (computed in float64) within TOL. Rank 0 prints "case NAME TYPE maxerr=E" per case
and "failures=F"; the exit status is 1 if any case failed.
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
tol, n = float(sys.argv[1]), int(sys.argv[2])
failures = 0


def value(r, idx):
    return np.sin(0.001 * idx + 0.7 * r) + 0.25 * r


def check(name, dtype, got, want):
    global failures
    err = comm.allreduce(float(np.max(np.abs(got.astype(np.float64) - want))), op=MPI.MAX)
    if rank == 0:
        print(f"case {name} {np.dtype(dtype).name} maxerr={err:.3e}", flush=True)
    if not err <= tol:
        failures += 1


idx = np.arange(n, dtype=np.float64)
for dtype in (np.float32, np.float64):
    mine = value(rank, idx).astype(dtype)
    total = sum(value(r, idx) for r in range(size))

    out = np.empty_like(mine)
    comm.Allreduce(mine, out, op=MPI.SUM)
    check("allreduce-sum", dtype, out, total)

    buf = mine.copy()
    comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
    check("allreduce-sum-inplace", dtype, buf, total)

    root = size - 1
    buf = value(root, idx).astype(dtype) if rank == root else np.zeros(n, dtype)
    comm.Bcast(buf, root=root)
    check("bcast", dtype, buf, value(root, idx))

    # Block d of rank s holds value(s, d*n + i); rank d receives it as block s.
    all_idx = np.arange(n * size, dtype=np.float64)
    send = value(rank, all_idx).astype(dtype)
    recv = np.empty_like(send)
    comm.Alltoall(send, recv)
    want = np.concatenate([value(s, rank * n + idx) for s in range(size)])
    check("alltoall", dtype, recv, want)

if rank == 0:
    print(f"failures={failures}", flush=True)
sys.exit(1 if failures else 0)
