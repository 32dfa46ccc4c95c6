//! The MPI library's own collectives and point-to-point calls, uncompressed: the `mpi`
//! baseline, and the plain steps inside the hierarchical allreduce.

use std::os::raw::c_int;

use mpi::collective::SystemOperation;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use crate::{watchdog, ReduceOp, Value};

/// Tells the watchdog that the call waits in the library's own `name`.
fn library(name: &'static str) {
    watchdog::waiting(|| format!("the MPI library's own {name} to complete"));
}

fn system_op(op: ReduceOp) -> SystemOperation {
    match op {
        ReduceOp::Sum => SystemOperation::sum(),
        ReduceOp::Prod => SystemOperation::product(),
        ReduceOp::Min => SystemOperation::min(),
        ReduceOp::Max => SystemOperation::max(),
    }
}

pub(crate) fn allreduce<C: Communicator, T: Value>(comm: &C, send: &[T], recv: &mut [T], op: ReduceOp) {
    library("allreduce");
    comm.all_reduce_into(send, recv, system_op(op));
}

/// `recv` is written at the root only.
pub(crate) fn reduce<C: Communicator, T: Value>(comm: &C, send: &[T], recv: &mut [T], root: usize, op: ReduceOp) {
    library("reduce");
    let root_proc = comm.process_at_rank(root as i32);
    if comm.rank() as usize == root {
        root_proc.reduce_into_root(send, recv, system_op(op));
    } else {
        root_proc.reduce_into(send, system_op(op));
    }
}

/// `MPI_Reduce_scatter` with per-rank counts (rsmpi wraps only the equal-count form).
pub(crate) fn reduce_scatter<C: Communicator + AsRaw<Raw = ffi::MPI_Comm>, T: Value>(
    comm: &C,
    send: &[T],
    recv: &mut [T],
    counts: &[usize],
    op: ReduceOp,
) {
    library("reduce_scatter");
    let counts: Vec<c_int> = counts.iter().map(|&c| c_int::try_from(c).expect("checked against the MPI count limit")).collect();
    // SAFETY: `send` holds sum(counts) values and `recv` counts[rank] (checked by the caller).
    unsafe {
        ffi::MPI_Reduce_scatter(
            send.as_ptr().cast(),
            recv.as_mut_ptr().cast(),
            counts.as_ptr(),
            T::equivalent_datatype().as_raw(),
            system_op(op).as_raw(),
            comm.as_raw(),
        );
    }
}

pub(crate) fn bcast<C: Communicator, T: Value>(comm: &C, buf: &mut [T], root: usize) {
    library("bcast");
    comm.process_at_rank(root as i32).broadcast_into(buf);
}

/// `send` is read at the root only.
pub(crate) fn scatter<C: Communicator, T: Value>(comm: &C, send: &[T], recv: &mut [T], root: usize) {
    library("scatter");
    let root_proc = comm.process_at_rank(root as i32);
    if comm.rank() as usize == root {
        root_proc.scatter_into_root(send, recv);
    } else {
        root_proc.scatter_into(recv);
    }
}

/// `recv` is written at the root only.
pub(crate) fn gather<C: Communicator, T: Value>(comm: &C, send: &[T], recv: &mut [T], root: usize) {
    library("gather");
    let root_proc = comm.process_at_rank(root as i32);
    if comm.rank() as usize == root {
        root_proc.gather_into_root(send, recv);
    } else {
        root_proc.gather_into(send);
    }
}

pub(crate) fn allgather<C: Communicator, T: Value>(comm: &C, send: &[T], recv: &mut [T]) {
    library("allgather");
    comm.all_gather_into(send, recv);
}

pub(crate) fn alltoall<C: Communicator, T: Value>(comm: &C, send: &[T], recv: &mut [T]) {
    library("alltoall");
    comm.all_to_all_into(send, recv);
}

pub(crate) fn send<C: Communicator, T: Value>(comm: &C, dest: usize, data: &[T], tag: i32) {
    library("send");
    comm.process_at_rank(dest as i32).send_with_tag(data, tag);
}

/// Returns the number of values received (at most `buf.len()`).
pub(crate) fn recv<C: Communicator, T: Value>(comm: &C, src: usize, buf: &mut [T], tag: i32) -> usize {
    library("recv");
    let status = comm.process_at_rank(src as i32).receive_into_with_tag(buf, tag);
    status.count(T::equivalent_datatype()) as usize
}
