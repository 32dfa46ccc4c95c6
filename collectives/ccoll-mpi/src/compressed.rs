//! The compressed calls: the caller's buffers viewed as slices and handed to the
//! collectives, with `MPI_IN_PLACE` turned into the collectives' in-place forms (or a
//! copy of the input where they have none).
//!
//! Each function takes the raw arguments of one MPI collective. Where this rank cannot
//! view its buffers as the call needs (a null or misaligned buffer, overlapping send and
//! receive buffers, `MPI_IN_PLACE` where MPI does not allow it, another datatype or count
//! on the other side of the message), it runs the call with no data instead, which fails
//! the agreement on every rank ([`Ran::Vetoed`]), and MPI runs the call.
//!
//! # Safety (every function)
//! The pointers, counts and handles are an MPI collective's arguments as the caller
//! passed them, for the call that `plan` describes (`plan.count` values per block of the
//! element type `T` that `plan.elem` names).

use core::ffi::c_void;

use collectives::{CollConfig, CompressedCollectives, ReduceOp, Result, Value};
use mpi::ffi;

use crate::ops::{is_in_place, is_root, Collective};
use crate::route::{disjoint, view, view_mut, Desc, Plan, Ran, UserComm};

fn cfg(p: &Plan) -> &CollConfig {
    p.active.cfg.as_ref().expect("a planned call has a codec")
}

fn reduce_op(p: &Plan) -> ReduceOp {
    p.op.expect("a planned reduction has an operator").reduce_op()
}

/// `run`'s result, or, where it could not view the buffers (`None`), the veto: the same
/// call with no data.
fn attempt(run: impl FnOnce() -> Option<Result<collectives::CollStats>>, no_data: impl FnOnce() -> Result<collectives::CollStats>) -> Ran {
    match run() {
        Some(done) => Ran::Done(done),
        None => {
            let _ = no_data();
            Ran::Vetoed
        }
    }
}

fn bytes<T>(values: usize) -> usize {
    values * core::mem::size_of::<T>()
}

pub unsafe fn allreduce<T: Value>(p: &Plan, comm: &UserComm, send: *const c_void, recv: *mut c_void) -> Ran {
    let (n, op, cfg) = (p.count, reduce_op(p), cfg(p));
    let run = || {
        if is_in_place(send) {
            return Some(comm.c_allreduce_in_place(view_mut::<T>(recv, n)?, op, cfg));
        }
        disjoint(send, bytes::<T>(n), recv, bytes::<T>(n)).then_some(())?;
        Some(comm.c_allreduce(view::<T>(send, n)?, view_mut::<T>(recv, n)?, op, cfg))
    };
    attempt(run, || comm.c_allreduce_in_place::<T>(&mut [], op, cfg))
}

pub unsafe fn reduce<T: Value>(p: &Plan, comm: &UserComm, send: *const c_void, recv: *mut c_void, root: i32) -> Ran {
    let (n, op, cfg, root) = (p.count, reduce_op(p), cfg(p), root as usize);
    let run = || {
        if p.rank != root {
            (!is_in_place(send)).then_some(())?;
            return Some(comm.c_reduce(view::<T>(send, n)?, &mut [], root, op, cfg));
        }
        let out = if is_in_place(send) {
            view_mut::<T>(recv, n)?
        } else {
            disjoint(send, bytes::<T>(n), recv, bytes::<T>(n)).then_some(())?;
            return Some(comm.c_reduce(view::<T>(send, n)?, view_mut::<T>(recv, n)?, root, op, cfg));
        };
        let input = out.to_vec();
        Some(comm.c_reduce(&input, out, root, op, cfg))
    };
    attempt(run, || comm.c_reduce::<T>(&[], &mut [], root, op, cfg))
}

pub unsafe fn reduce_scatter_block<T: Value>(p: &Plan, comm: &UserComm, send: *const c_void, recv: *mut c_void) -> Ran {
    let (n, op, cfg) = (p.count, reduce_op(p), cfg(p));
    let total = n * p.ranks;
    let run = || {
        let counts = vec![n; p.ranks];
        if is_in_place(send) {
            let all = view_mut::<T>(recv, total)?;
            let input = all.to_vec();
            return Some(comm.c_reduce_scatter(&input, &mut all[..n], &counts, op, cfg));
        }
        disjoint(send, bytes::<T>(total), recv, bytes::<T>(n)).then_some(())?;
        Some(comm.c_reduce_scatter(view::<T>(send, total)?, view_mut::<T>(recv, n)?, &counts, op, cfg))
    };
    attempt(run, || comm.c_reduce_scatter::<T>(&[], &mut [], &vec![0; p.ranks], op, cfg))
}

pub unsafe fn bcast<T: Value>(p: &Plan, comm: &UserComm, buf: *mut c_void, root: i32) -> Ran {
    let (cfg, root) = (cfg(p), root as usize);
    attempt(|| Some(comm.c_bcast(view_mut::<T>(buf, p.count)?, root, cfg)), || comm.c_bcast::<T>(&mut [], root, cfg))
}

/// The arguments of scatter, gather, allgather and alltoall.
pub struct Movement {
    pub send: *const c_void,
    pub send_count: i32,
    pub send_type: ffi::MPI_Datatype,
    pub recv: *mut c_void,
    pub recv_count: i32,
    pub recv_type: ffi::MPI_Datatype,
}

impl Movement {
    /// The decision's description of the call: the side that describes this rank's block
    /// is the send side, except where MPI makes it the receive side (scatter, and a rank
    /// that sends in place), or where it is `MPI_IN_PLACE` at a root.
    pub fn desc(&self, coll: Collective, comm: ffi::MPI_Comm, root: Option<i32>) -> Desc {
        let at_root = || root.is_some_and(|r| is_root(comm, r));
        let recv_side = match coll {
            Collective::Scatter => !(is_in_place(self.recv) && at_root()),
            Collective::Gather => is_in_place(self.send) && at_root(),
            _ => is_in_place(self.send),
        };
        let (datatype, count) = if recv_side { (self.recv_type, self.recv_count) } else { (self.send_type, self.send_count) };
        Desc { coll, comm, datatype, count, op: None }
    }

    /// True if both sides describe a block the same way.
    fn same_sides(&self) -> bool {
        (self.send_count, self.send_type) == (self.recv_count, self.recv_type)
    }
}

pub unsafe fn scatter<T: Value>(p: &Plan, comm: &UserComm, m: &Movement, root: i32) -> Ran {
    let (n, cfg, root) = (p.count, cfg(p), root as usize);
    let run = || {
        if p.rank != root {
            (!is_in_place(m.recv)).then_some(())?;
            return Some(comm.c_scatter(&[], view_mut::<T>(m.recv, n)?, root, cfg));
        }
        let input = view::<T>(m.send, n * p.ranks)?;
        if is_in_place(m.recv) {
            // The root's own block stays where it is; the collectives write a copy.
            let mut own = input.get(root * n..(root + 1) * n)?.to_vec();
            return Some(comm.c_scatter(input, &mut own, root, cfg));
        }
        (m.same_sides() && disjoint(m.send, bytes::<T>(n * p.ranks), m.recv, bytes::<T>(n))).then_some(())?;
        Some(comm.c_scatter(input, view_mut::<T>(m.recv, n)?, root, cfg))
    };
    attempt(run, || comm.c_scatter::<T>(&[], &mut [], root, cfg))
}

pub unsafe fn gather<T: Value>(p: &Plan, comm: &UserComm, m: &Movement, root: i32) -> Ran {
    let (n, cfg, root) = (p.count, cfg(p), root as usize);
    let run = || {
        if p.rank != root {
            (!is_in_place(m.send)).then_some(())?;
            return Some(comm.c_gather(view::<T>(m.send, n)?, &mut [], root, cfg));
        }
        if is_in_place(m.send) {
            let all = view_mut::<T>(m.recv, n * p.ranks)?;
            let own = all.get(root * n..(root + 1) * n)?.to_vec();
            return Some(comm.c_gather(&own, all, root, cfg));
        }
        (m.same_sides() && disjoint(m.send, bytes::<T>(n), m.recv, bytes::<T>(n * p.ranks))).then_some(())?;
        Some(comm.c_gather(view::<T>(m.send, n)?, view_mut::<T>(m.recv, n * p.ranks)?, root, cfg))
    };
    attempt(run, || comm.c_gather::<T>(&[], &mut [], root, cfg))
}

pub unsafe fn allgather<T: Value>(p: &Plan, comm: &UserComm, m: &Movement) -> Ran {
    let (n, cfg) = (p.count, cfg(p));
    let run = || {
        if is_in_place(m.send) {
            return Some(comm.c_allgather_in_place(view_mut::<T>(m.recv, n * p.ranks)?, cfg));
        }
        (m.same_sides() && disjoint(m.send, bytes::<T>(n), m.recv, bytes::<T>(n * p.ranks))).then_some(())?;
        Some(comm.c_allgather(view::<T>(m.send, n)?, view_mut::<T>(m.recv, n * p.ranks)?, cfg))
    };
    attempt(run, || comm.c_allgather::<T>(&[], &mut [], cfg))
}

pub unsafe fn alltoall<T: Value>(p: &Plan, comm: &UserComm, m: &Movement) -> Ran {
    let (n, cfg) = (p.count, cfg(p));
    let total = n * p.ranks;
    let run = || {
        if is_in_place(m.send) {
            let all = view_mut::<T>(m.recv, total)?;
            let input = all.to_vec();
            return Some(comm.c_alltoall(&input, all, cfg));
        }
        (m.same_sides() && disjoint(m.send, bytes::<T>(total), m.recv, bytes::<T>(total))).then_some(())?;
        Some(comm.c_alltoall(view::<T>(m.send, total)?, view_mut::<T>(m.recv, total)?, cfg))
    };
    attempt(run, || comm.c_alltoall::<T>(&[], &mut [], cfg))
}
