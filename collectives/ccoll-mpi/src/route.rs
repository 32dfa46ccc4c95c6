//! Whether an intercepted call is compressed, and what happens to it either way.
//!
//! A rank decides from its own arguments (the ones MPI makes significant on every rank:
//! the message's datatype and count, the operator, the communicator), so every rank of
//! a correct program takes the same decision. A call MPI should run goes to its `PMPI_`
//! function with the caller's arguments untouched. A compressed call starts with the
//! collectives' agreement; if that fails (ranks disagree, or one rank vetoed because its
//! other arguments do not fit, see [`Ran::Vetoed`]), no data has moved and every rank
//! passes the call to MPI after all.

use core::ffi::c_void;
use core::fmt;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::panic::{catch_unwind, AssertUnwindSafe};

use collectives::{CollError, CollStats};
use mpi::ffi;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;

use crate::guard::{self, Inside};
use crate::lifecycle::{active, Active};
use crate::ops::{is_intra, rank_and_size, Collective, Elem, Operator};
use crate::report;

/// An intercepted call as the decision sees it.
pub struct Desc {
    pub coll: Collective,
    pub comm: ffi::MPI_Comm,
    /// The datatype that describes the message on this rank.
    pub datatype: ffi::MPI_Datatype,
    /// Its count (per rank block for scatter, gather, allgather, alltoall and
    /// reduce-scatter-block).
    pub count: i32,
    /// The reduction operator, for the reductions.
    pub op: Option<ffi::MPI_Op>,
}

/// A call to compress.
pub struct Plan {
    pub elem: Elem,
    pub count: usize,
    pub op: Option<Operator>,
    pub ranks: usize,
    pub rank: usize,
    /// The size compared with `CCOLL_MIN_BYTES`.
    pub message_bytes: usize,
    pub active: &'static Active,
}

/// Why a call went to MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    NoCodec,
    Disabled,
    Datatype,
    Operator,
    InterCommunicator,
    OneRank,
    Empty,
    Small,
    /// The compressed call was abandoned before any data moved.
    Agreement,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Skip::NoCodec => "CCOLL_CODEC unset",
            Skip::Disabled => "not in CCOLL_OPS",
            Skip::Datatype => "datatype not MPI_FLOAT or MPI_DOUBLE",
            Skip::Operator => "operator not a predefined MPI_SUM, MPI_MIN, MPI_MAX or MPI_PROD",
            Skip::InterCommunicator => "inter-communicator",
            Skip::OneRank => "one rank",
            Skip::Empty => "no data",
            Skip::Small => "below CCOLL_MIN_BYTES",
            Skip::Agreement => "the ranks' arguments did not agree; passed to MPI on every rank",
        })
    }
}

/// The message size of a call with `count` values per block of `elem`.
fn message_bytes(coll: Collective, elem: Elem, count: usize, ranks: usize) -> usize {
    let blocks = if coll == Collective::ReduceScatterBlock { ranks } else { 1 };
    count.saturating_mul(blocks).saturating_mul(elem.size())
}

fn decide(d: &Desc) -> Result<Plan, Skip> {
    let active = active().ok_or(Skip::NoCodec)?;
    active.cfg.ok_or(Skip::NoCodec)?;
    let elem = Elem::of(d.datatype).ok_or(Skip::Datatype)?;
    let op = d.op.map(|op| Operator::of(op).ok_or(Skip::Operator)).transpose()?;
    if !active.settings.enabled(d.coll, op) {
        return Err(Skip::Disabled);
    }
    let count = usize::try_from(d.count).ok().filter(|&c| c > 0).ok_or(Skip::Empty)?;
    if !is_intra(d.comm) {
        return Err(Skip::InterCommunicator);
    }
    let (rank, ranks) = rank_and_size(d.comm);
    let (rank, ranks) = (rank as usize, ranks as usize);
    if ranks < 2 {
        return Err(Skip::OneRank);
    }
    let message_bytes = message_bytes(d.coll, elem, count, ranks);
    if message_bytes < active.settings.min_bytes {
        return Err(Skip::Small);
    }
    Ok(Plan { elem, count, op, ranks, rank, message_bytes, active })
}

/// What a compressed attempt came to on this rank.
// One a call, moved once: boxing the larger variant would allocate for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Ran {
    /// The collectives ran the call (or failed).
    Done(collectives::Result<CollStats>),
    /// This rank's other arguments do not fit the compressed call (another datatype on
    /// the other side of the message, overlapping or misaligned buffers): it ran the call
    /// with no data, which fails every rank's agreement, and MPI runs it.
    Vetoed,
}

/// True for the errors the agreement returns, before any data moved.
fn before_any_data(e: &CollError) -> bool {
    matches!(
        e,
        CollError::Mismatch { .. }
            | CollError::InvalidArgument(_)
            | CollError::PeerRejected { .. }
            | CollError::Unsupported { .. }
            | CollError::Config(_)
    )
}

/// Runs an intercepted call: `pass` is the `PMPI_` call with the caller's arguments,
/// `run` the compressed call.
pub fn route(d: Desc, pass: impl FnOnce() -> i32, run: impl FnOnce(&Plan, &UserComm) -> Ran) -> i32 {
    if guard::inside() {
        return pass();
    }
    let plan = match decide(&d) {
        Ok(plan) => plan,
        Err(skip) => return passed(&d, skip, pass),
    };
    let ran = {
        let _inside = Inside::enter();
        // SAFETY: `d.comm` is a live intra-communicator (checked by `decide`).
        let comm = unsafe { UserComm::borrow(d.comm) };
        catch_unwind(AssertUnwindSafe(|| run(&plan, &comm)))
    };
    let rank = plan.active.world_rank;
    match ran {
        Ok(Ran::Done(Ok(stats))) => {
            report::record_compressed(d.coll, plan.message_bytes, &stats);
            if plan.active.settings.verbose > 0 {
                let bound = stats.error_bound.map_or("none".to_string(), |b| format!("{b:.3e}"));
                let op = plan.op.map_or(String::new(), |o| format!(" {}", o.name()));
                say!(
                    "ccoll-mpi: rank {rank}: {} {} B {}{op}: {}, sent {} B, ratio {:.2}, bound {bound}",
                    d.coll.name(),
                    plan.message_bytes,
                    plan.elem,
                    stats.algorithm,
                    stats.bytes_sent,
                    stats.compression_ratio(),
                );
            }
            ffi::MPI_SUCCESS as i32
        }
        Ok(Ran::Vetoed) => passed(&d, Skip::Agreement, pass),
        Ok(Ran::Done(Err(e))) if before_any_data(&e) => passed(&d, Skip::Agreement, pass),
        Ok(Ran::Done(Err(e))) => {
            say!("ccoll-mpi: rank {rank}: compressed {} failed: {e}", d.coll.name());
            let code = ffi::MPI_ERR_OTHER as i32;
            // SAFETY: the caller's communicator; its error handler decides (by default
            // MPI_ERRORS_ARE_FATAL aborts the job).
            unsafe { ffi::PMPI_Comm_call_errhandler(d.comm, code) };
            code
        }
        Err(_) => {
            say!("ccoll-mpi: rank {rank}: compressed {} panicked; aborting the job", d.coll.name());
            // SAFETY: aborting is valid at any point after MPI_Init; it does not return.
            unsafe { ffi::PMPI_Abort(d.comm, 101) }
        }
    }
}

/// A call MPI runs: counted, reported under `CCOLL_VERBOSE=2`, passed on.
fn passed(d: &Desc, skip: Skip, pass: impl FnOnce() -> i32) -> i32 {
    if let Some(active) = active() {
        report::record_passed(d.coll, passed_bytes(d));
        if active.settings.verbose > 1 {
            say!("ccoll-mpi: rank {}: {} count {}: passed to MPI ({skip})", active.world_rank, d.coll.name(), d.count);
        }
    }
    pass()
}

/// The message size of a call MPI runs, for the report. An empty message is not
/// measured: its datatype may be `MPI_DATATYPE_NULL`, which `PMPI_Type_size` rejects.
fn passed_bytes(d: &Desc) -> usize {
    if d.count <= 0 {
        return 0;
    }
    let (mut type_size, mut ranks) = (0, 1);
    // SAFETY: local queries on the caller's handles; a failure leaves the zero.
    unsafe {
        ffi::PMPI_Type_size(d.datatype, &mut type_size);
        if d.coll == Collective::ReduceScatterBlock {
            ffi::PMPI_Comm_size(d.comm, &mut ranks);
        }
    }
    [d.count, type_size, ranks].iter().map(|&v| usize::try_from(v).unwrap_or(0)).product()
}

/// The caller's communicator as an rsmpi communicator, without taking ownership (rsmpi
/// frees user communicators on drop; this one belongs to the application).
pub struct UserComm(ManuallyDrop<SimpleCommunicator>);

impl UserComm {
    /// # Safety
    /// `raw` must be a live intra-communicator for as long as the value lives.
    pub unsafe fn borrow(raw: ffi::MPI_Comm) -> UserComm {
        let comm = if raw == ffi::RSMPI_COMM_WORLD {
            SimpleCommunicator::world()
        } else if raw == ffi::RSMPI_COMM_SELF {
            SimpleCommunicator::self_comm()
        } else {
            SimpleCommunicator::from_raw(raw)
        };
        UserComm(ManuallyDrop::new(comm))
    }
}

impl Deref for UserComm {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

/// `n` values of the caller's buffer at `p`, if it can be viewed as a slice (not null,
/// aligned for `T`).
///
/// # Safety
/// `p` must point to `n` values of `T` that nothing else writes while the slice lives.
pub unsafe fn view<'a, T>(p: *const c_void, n: usize) -> Option<&'a [T]> {
    (!p.is_null() && p.cast::<T>().is_aligned()).then(|| std::slice::from_raw_parts(p.cast::<T>(), n))
}

/// Like [`view`], writable.
///
/// # Safety
/// `p` must point to `n` values of `T` that nothing else reads or writes while the slice
/// lives.
pub unsafe fn view_mut<'a, T>(p: *mut c_void, n: usize) -> Option<&'a mut [T]> {
    (!p.is_null() && p.cast::<T>().is_aligned()).then(|| std::slice::from_raw_parts_mut(p.cast::<T>(), n))
}

/// True if the byte ranges `[a, a + a_len)` and `[b, b + b_len)` do not overlap.
pub fn disjoint(a: *const c_void, a_len: usize, b: *const c_void, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a.saturating_add(a_len) <= b || b.saturating_add(b_len) <= a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_size_is_the_vector_or_the_block() {
        assert_eq!(message_bytes(Collective::Allreduce, Elem::F64, 10, 4), 80);
        assert_eq!(message_bytes(Collective::Alltoall, Elem::F32, 10, 4), 40);
        assert_eq!(message_bytes(Collective::ReduceScatterBlock, Elem::F32, 10, 4), 160);
    }

    #[test]
    fn overlap_is_detected() {
        let buf = [0u8; 64];
        let p = |i: usize| buf[i..].as_ptr().cast::<c_void>();
        assert!(disjoint(p(0), 16, p(16), 16));
        assert!(!disjoint(p(0), 17, p(16), 16));
        assert!(!disjoint(p(20), 4, p(16), 16));
        assert!(disjoint(p(32), 8, p(16), 16));
    }

    #[test]
    fn views_refuse_null_and_misaligned_buffers() {
        let data = [1.0f64, 2.0];
        unsafe {
            assert_eq!(view::<f64>(data.as_ptr().cast(), 2), Some(&data[..]));
            assert!(view::<f64>(core::ptr::null(), 2).is_none());
            assert!(view::<f64>(data.as_ptr().cast::<u8>().add(4).cast(), 1).is_none());
        }
    }
}
