//! The operations: argument checks, algorithm selection, agreement, dispatch.

use core::ops::Range;

use mpi::ffi::MPI_Comm;
use mpi::raw::AsRaw;
use mpi::topology::{Color, Communicator};

use crate::accuracy::compressions_per_value;
use crate::alg::ring::{GatherStyle, StepStyle};
use crate::alg::{alltoall, baseline, cdr, direct, doubling, hier_host, p2p, ring, tree};
use crate::blocks::Blocks;
use crate::call::{begin, Call, Setup};
use crate::config::MAX_AUTO_CHUNKS;
use crate::frame::HEADER_LEN;
use crate::place::Place;
use crate::transport::{Comm, TAG_BASE};
use crate::{Algorithm, CollConfig, CollError, CollOp, CollStats, NodeGroups, ReduceOp, Result, Value};

/// A communicator the operations run on.
pub trait CommHandle: Communicator + AsRaw<Raw = MPI_Comm> {}
impl<C: Communicator + AsRaw<Raw = MPI_Comm>> CommHandle for C {}

/// Bytes one message may hold: MPI counts are C ints.
const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;

fn invalid(msg: String) -> Option<CollError> {
    Some(CollError::InvalidArgument(msg))
}

/// The first failed check of a list.
fn first_error(checks: impl IntoIterator<Item = (bool, String)>) -> Option<CollError> {
    checks.into_iter().find(|(ok, _)| !ok).and_then(|(_, msg)| invalid(msg))
}

/// Groups of `g` ranks need 1 <= g <= i32::MAX (ranks are C ints: a larger `g` would
/// truncate when the group colour is computed).
fn node_groups_check(groups: NodeGroups) -> (bool, String) {
    let ok = match groups {
        NodeGroups::SharedMemory => true,
        NodeGroups::Blocks(g) => (1..=i32::MAX as usize).contains(&g),
    };
    (ok, format!("node groups {groups:?}: a group holds 1 to {} ranks", i32::MAX))
}

fn root_check(root: usize, p: usize) -> (bool, String) {
    (root < p, format!("root {root} outside a communicator of {p} ranks"))
}

/// The largest message a call over `values` values on `ranks` ranks can send: the
/// values (a compressed frame is never larger than the raw one, see `Call::frame_at`)
/// plus a frame header per piece. A message holds at most every piece of the vector:
/// one per pipeline chunk and one more per rank's block (blocks cut chunks short).
fn max_message_bytes(values: usize, elem_size: usize, chunk_bytes: usize, ranks: usize) -> Option<usize> {
    let chunks = if chunk_bytes > 0 { values.div_ceil((chunk_bytes / elem_size).max(1)) } else { MAX_AUTO_CHUNKS };
    let headers = chunks.checked_add(ranks)?.checked_add(1)?.checked_mul(HEADER_LEN)?;
    values.checked_mul(elem_size)?.checked_add(headers)
}

fn size_check<T: Value>(values: usize, cfg: &CollConfig, ranks: usize) -> (bool, String) {
    let ok = max_message_bytes(values, T::SIZE, cfg.pipeline_chunk_bytes, ranks).is_some_and(|b| b <= MAX_MESSAGE_BYTES);
    (ok, format!("{values} values (with their frame headers) exceed what one MPI message can carry"))
}

/// Starts a collective call: resolves the algorithm and agrees with the other ranks. The
/// plain MPI baseline agrees too: a rank running it beside ranks running another
/// algorithm would post other messages than they and hang, and sizes that differ
/// between ranks can make the automatic selection differ.
fn start<T: Value, W: Place<T> + ?Sized>(comm: Comm, mut setup: Setup, input: &W, range: Range<usize>) -> Result<(Call, Algorithm)> {
    let algorithm = setup.algorithm(comm.size);
    Ok((begin(comm, setup, algorithm, input, range, true)?, algorithm))
}

/// [`start`] for the operations that reduce in a work buffer of `n` values beside their
/// buffers (C-Coll and CPR-P2P): the buffer is made before the agreement, so that a rank
/// that cannot have it (device memory) fails the call on every rank at once instead of
/// leaving its peers waiting in the schedule.
fn start_with_work<T: Value, W: Place<T> + ?Sized>(comm: Comm, mut setup: Setup, input: &W, n: usize) -> Result<(Call, Algorithm, Option<W::Owned>)> {
    let algorithm = setup.algorithm(comm.size);
    let work = match algorithm {
        Algorithm::CColl | Algorithm::CprP2p if setup.local_error.is_none() => {
            input.zeros(n).map_err(|e| setup.local_error = Some(e.into())).ok()
        }
        _ => None,
    };
    Ok((begin(comm, setup, algorithm, input, 0..input.len(), true)?, algorithm, work))
}

/// Runs `f` (the MPI library's operation) on `src` and `dst` in host memory: device
/// buffers are staged through the host whole (the library is not CUDA-aware). A staging
/// failure is recorded in `call`.
fn on_host<T: Value, W: Place<T> + ?Sized, R>(call: &mut Call, src: &W, dst: &mut W, f: impl FnOnce(&[T], &mut [T]) -> R) -> Option<R> {
    let (ns, nd) = (src.len(), dst.len());
    match src.with_host(0..ns, |s| dst.with_host_mut(0..nd, |d| f(s, d))).and_then(|r| r) {
        Ok(r) => Some(r),
        Err(e) => {
            call.fail(e.into());
            None
        }
    }
}

/// [`on_host`] for one buffer.
fn on_host_mut<T: Value, W: Place<T> + ?Sized, R>(call: &mut Call, buf: &mut W, f: impl FnOnce(&mut [T]) -> R) -> Option<R> {
    let n = buf.len();
    buf.with_host_mut(0..n, f).map_err(|e| call.fail(e.into())).ok()
}

/// Allreduce; with `send` None, `buf` is the input too (in place).
pub(crate) fn allreduce<C: CommHandle, T: Value, W: Place<T> + ?Sized>(
    comm: &C,
    send: Option<&W>,
    buf: &mut W,
    op: ReduceOp,
    cfg: &CollConfig,
) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = buf.len();
    let local_error = first_error([
        (send.is_none_or(|s| s.len() == n), format!("send holds {} values, recv {n}", send.map_or(0, |s| s.len()))),
        size_check::<T>(n, cfg, c.size),
        node_groups_check(cfg.node_groups),
    ]);
    let setup = Setup {
        op: CollOp::Allreduce,
        cfg,
        bytes: n * T::SIZE,
        count: n as u64,
        root: None,
        reduce: Some(op),
        local_error,
    };
    let input = send.unwrap_or(&*buf);
    let (mut call, algorithm) = start(c, setup, input, 0..input.len())?;
    let p = c.size;
    // The reduce-scatter algorithms read a separate input where it is; the others, and
    // every algorithm on one rank (whose result is its input), work in `buf`.
    let reads_input = p > 1 && matches!(algorithm, Algorithm::CColl | Algorithm::Ring | Algorithm::CprP2p | Algorithm::CompressedDomain);
    let blocks = Blocks::even(n, p);
    if let (Some(s), true) = (send, algorithm.compresses() && !reads_input) {
        call.copy(buf, 0..n, s, 0..n);
    }
    let src = send.filter(|_| reads_input);
    let k = match algorithm {
        Algorithm::CColl => {
            direct::allreduce(&mut call, buf, src, &blocks, op);
            compressions_per_value(CollOp::Allreduce, algorithm, p)
        }
        Algorithm::Ring => {
            ring::allreduce(&mut call, buf, src, &blocks, op);
            compressions_per_value(CollOp::Allreduce, algorithm, p)
        }
        Algorithm::CprP2p => {
            ring::reduce_scatter(&mut call, buf, src, &blocks, op, StepStyle::Blocking);
            ring::allgather(&mut call, buf, &blocks, GatherStyle::Recompress, true);
            compressions_per_value(CollOp::Allreduce, algorithm, p)
        }
        Algorithm::RecursiveDoubling => {
            doubling::allreduce(&mut call, buf, op);
            compressions_per_value(CollOp::Allreduce, algorithm, p)
        }
        Algorithm::Hierarchical => hierarchical(comm, &mut call, buf, op, cfg),
        Algorithm::CompressedDomain => cdr::allreduce(&mut call, buf, src, &blocks, op),
        Algorithm::Mpi | Algorithm::Auto => {
            // The library's allreduce on the caller's buffers (a copy only in place).
            match send {
                Some(s) => on_host(&mut call, s, buf, |s, b| baseline::allreduce(comm, s, b, op)),
                None => on_host_mut(&mut call, buf, |b| {
                    let input = b.to_vec();
                    baseline::allreduce(comm, &input, b, op)
                }),
            };
            call.count_uncompressed::<T>(n);
            0
        }
    };
    call.finish(k, Some(op))
}

/// Reduce inside node groups (library); among the group leaders, C-Coll's allreduce
/// (raw frames below the compression threshold), or below the host threshold
/// ([`CollConfig::hier_on_host`]) and with a single group the uncompressed exchange of
/// `hier_host`; broadcast inside the groups (library). Returns the compressions per
/// value (the call makes it 0 where nothing was compressed).
fn hierarchical<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, call: &mut Call, buf: &mut W, op: ReduceOp, cfg: &CollConfig) -> u32 {
    let rank = comm.rank();
    let node = match cfg.node_groups {
        NodeGroups::SharedMemory => comm.split_shared(rank),
        // 1 <= g <= i32::MAX (`node_groups_check`), so the conversion is exact.
        NodeGroups::Blocks(g) => comm
            .split_by_color_with_key(Color::with_value(rank / g as i32), rank)
            .expect("a defined color always yields a communicator"),
    };
    let is_leader = node.rank() == 0;
    let leaders = comm.split_by_color_with_key(if is_leader { Color::with_value(0) } else { Color::undefined() }, rank);
    // One word per rank: whether it leads a group, and whether its settings put the call
    // on the host path (the call agreement does not cover the threshold).
    let on_host = cfg.hier_on_host(buf.len() * T::SIZE);
    let words = call.comm.allgather_u64(u64::from(is_leader) | u64::from(on_host) << 1);
    let groups = words.iter().filter(|&&w| w & 1 != 0).count();
    let hosts = words.iter().filter(|&&w| w & 2 != 0).count();
    if hosts != 0 && hosts != words.len() {
        call.fail(CollError::Mismatch { field: "hierarchical host path (hier_host_max_bytes)", local: u64::from(on_host), min: 0, max: 1 });
    }
    // Every rank takes the host path if any does, so the schedule is the same everywhere.
    let host = hosts > 0 || groups < 2;

    on_host_mut(call, buf, |b| {
        let input = b.to_vec();
        baseline::reduce(&node, &input, b, 0, op)
    });
    if node.size() > 1 {
        call.count_uncompressed::<T>(buf.len());
    }
    if let Some(leaders) = &leaders {
        if host {
            let n = buf.len();
            if let Err(e) = buf.with_host_mut(0..n, |b| hier_host::leaders_allreduce(call, leaders, b, op)) {
                call.fail(e.into());
            }
        } else {
            let whole = std::mem::replace(&mut call.comm, Comm::of(leaders));
            let blocks = Blocks::even(buf.len(), leaders.size() as usize);
            direct::allreduce(call, buf, None, &blocks, op);
            call.comm = whole;
        }
    }
    on_host_mut(call, buf, |b| baseline::bcast(&node, b, 0));
    if host {
        0
    } else {
        compressions_per_value(CollOp::Allreduce, Algorithm::Hierarchical, groups)
    }
}

/// Reduce-scatter with per-rank result counts.
pub(crate) fn reduce_scatter<C: CommHandle, T: Value, W: Place<T> + ?Sized>(
    comm: &C,
    send: &W,
    recv: &mut W,
    counts: &[usize],
    op: ReduceOp,
    cfg: &CollConfig,
) -> Result<CollStats> {
    let c = Comm::of(comm);
    let total: usize = counts.iter().sum();
    let mine = counts.get(c.rank).copied().unwrap_or(0);
    let local_error = first_error([
        (counts.len() == c.size, format!("{} counts for {} ranks", counts.len(), c.size)),
        (send.len() == total, format!("send holds {} values, the counts add up to {total}", send.len())),
        (recv.len() == mine, format!("recv holds {} values, this rank's count is {mine}", recv.len())),
        size_check::<T>(total, cfg, c.size),
    ]);
    let setup = Setup {
        op: CollOp::ReduceScatter,
        cfg,
        bytes: total * T::SIZE,
        count: counts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &n| (h ^ n as u64).wrapping_mul(0x0100_0000_01b3)),
        root: None,
        reduce: Some(op),
        local_error,
    };
    let (mut call, algorithm, work) = start_with_work(c, setup, send, total)?;
    let blocks = Blocks::from_counts(counts.iter().copied());
    // A compressing algorithm has its work buffer here (a rank without one failed the
    // agreement). C-Coll reduces directly (only the own block of `work` is written, so
    // only its pages are touched); CPR-P2P runs the ring with compressed messages.
    match (algorithm, work) {
        (Algorithm::CColl | Algorithm::CprP2p, Some(mut work)) => {
            if algorithm == Algorithm::CColl {
                direct::reduce_scatter(&mut call, &mut *work, Some(send), &blocks, op);
            } else {
                ring::reduce_scatter(&mut call, &mut *work, Some(send), &blocks, op, StepStyle::Blocking);
            }
            call.copy(recv, 0..mine, &work, blocks.range(c.rank));
        }
        _ => {
            on_host(&mut call, send, recv, |s, r| baseline::reduce_scatter(comm, s, r, counts, op));
            call.count_uncompressed::<T>(total);
        }
    }
    call.finish(compressions_per_value(CollOp::ReduceScatter, algorithm, c.size), Some(op))
}

/// Reduce to `root`; `recv` (as long as `send`) is written at the root only.
pub(crate) fn reduce<C: CommHandle, T: Value, W: Place<T> + ?Sized>(
    comm: &C,
    send: &W,
    recv: &mut W,
    root: usize,
    op: ReduceOp,
    cfg: &CollConfig,
) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = send.len();
    let local_error = first_error([
        root_check(root, c.size),
        (c.rank != root || recv.len() == n, format!("root's recv holds {} values, send {n}", recv.len())),
        size_check::<T>(n, cfg, c.size),
    ]);
    let setup = Setup { op: CollOp::Reduce, cfg, bytes: n * T::SIZE, count: n as u64, root: Some(root), reduce: Some(op), local_error };
    let (mut call, algorithm, work) = start_with_work(c, setup, send, n)?;
    // As in `reduce_scatter`.
    match (algorithm, work) {
        (Algorithm::CColl | Algorithm::CprP2p, Some(mut work)) => {
            let compressed_once = algorithm == Algorithm::CColl;
            let blocks = Blocks::even(n, c.size);
            // C-Coll compresses each reduced block once more, on its way to the root.
            if compressed_once {
                ring::before_once(&mut call, op, |call| direct::reduce_scatter(call, &mut *work, Some(send), &blocks, op));
            } else {
                ring::reduce_scatter(&mut call, &mut *work, Some(send), &blocks, op, StepStyle::Blocking);
            }
            work.view(blocks.range(c.rank), |own| tree::gather(&mut call, own, recv, &blocks, root, !compressed_once));
        }
        _ => {
            on_host(&mut call, send, recv, |s, r| baseline::reduce(comm, s, r, root, op));
            call.count_uncompressed::<T>(n);
        }
    }
    call.finish(compressions_per_value(CollOp::Reduce, algorithm, c.size), Some(op))
}

/// Broadcast of `buf` from `root`.
pub(crate) fn bcast<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, buf: &mut W, root: usize, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = buf.len();
    let local_error = first_error([root_check(root, c.size), size_check::<T>(n, cfg, c.size)]);
    let setup = Setup { op: CollOp::Bcast, cfg, bytes: n * T::SIZE, count: n as u64, root: Some(root), reduce: None, local_error };
    let input = if c.rank == root { 0..n } else { 0..0 };
    let (mut call, algorithm) = start(c, setup, &*buf, input)?;
    match algorithm {
        Algorithm::CColl | Algorithm::CprP2p => tree::bcast(&mut call, buf, root, algorithm == Algorithm::CprP2p),
        _ => {
            on_host_mut(&mut call, buf, |b| baseline::bcast(comm, b, root));
            if c.rank == root {
                call.count_uncompressed::<T>(n);
            }
        }
    }
    call.finish(compressions_per_value(CollOp::Bcast, algorithm, c.size), None)
}

/// `count` values for each of `p` ranks.
fn uniform(count: usize, p: usize) -> Blocks {
    Blocks::from_counts(std::iter::repeat_n(count, p))
}

/// Scatter from `root`: `send` (p blocks of `recv.len()`) is read at the root only.
pub(crate) fn scatter<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, send: &W, recv: &mut W, root: usize, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = recv.len();
    let local_error = first_error([
        root_check(root, c.size),
        (c.rank != root || send.len() == n * c.size, format!("root's send holds {} values, not {} x {n}", send.len(), c.size)),
        size_check::<T>(n.saturating_mul(c.size), cfg, c.size),
    ]);
    let setup = Setup { op: CollOp::Scatter, cfg, bytes: n * T::SIZE, count: n as u64, root: Some(root), reduce: None, local_error };
    let input = if c.rank == root { 0..send.len() } else { 0..0 };
    let (mut call, algorithm) = start(c, setup, send, input)?;
    match algorithm {
        Algorithm::CColl | Algorithm::CprP2p => {
            tree::scatter(&mut call, send, recv, &uniform(n, c.size), root, algorithm == Algorithm::CprP2p)
        }
        _ => {
            on_host(&mut call, send, recv, |s, r| baseline::scatter(comm, s, r, root));
            if c.rank == root {
                call.count_uncompressed::<T>(n * (c.size - 1));
            }
        }
    }
    call.finish(compressions_per_value(CollOp::Scatter, algorithm, c.size), None)
}

/// Gather to `root`: `recv` (p blocks of `send.len()`) is written at the root only.
pub(crate) fn gather<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, send: &W, recv: &mut W, root: usize, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = send.len();
    let local_error = first_error([
        root_check(root, c.size),
        (c.rank != root || recv.len() == n * c.size, format!("root's recv holds {} values, not {} x {n}", recv.len(), c.size)),
        size_check::<T>(n.saturating_mul(c.size), cfg, c.size),
    ]);
    let setup = Setup { op: CollOp::Gather, cfg, bytes: n * T::SIZE, count: n as u64, root: Some(root), reduce: None, local_error };
    let (mut call, algorithm) = start(c, setup, send, 0..n)?;
    match algorithm {
        Algorithm::CColl | Algorithm::CprP2p => {
            tree::gather(&mut call, send, recv, &uniform(n, c.size), root, algorithm == Algorithm::CprP2p)
        }
        _ => {
            on_host(&mut call, send, recv, |s, r| baseline::gather(comm, s, r, root));
            if c.rank != root {
                call.count_uncompressed::<T>(n);
            }
        }
    }
    call.finish(compressions_per_value(CollOp::Gather, algorithm, c.size), None)
}

/// Allgather; with `send` None, `buf` holds this rank's block at its place (in place).
pub(crate) fn allgather<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, send: Option<&W>, buf: &mut W, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = send.map_or(buf.len() / c.size, |s| s.len());
    let local_error = first_error([
        (buf.len() == n * c.size, format!("recv holds {} values, not {} x {n}", buf.len(), c.size)),
        size_check::<T>(n.saturating_mul(c.size), cfg, c.size),
    ]);
    let setup = Setup { op: CollOp::Allgather, cfg, bytes: n * T::SIZE, count: n as u64, root: None, reduce: None, local_error };
    let blocks = uniform(n, c.size);
    let own = if buf.len() == n * c.size { blocks.range(c.rank) } else { 0..0 };
    let (input, range) = match send {
        Some(s) => (s, 0..s.len()),
        None => (&*buf, own.clone()),
    };
    let (mut call, algorithm) = start(c, setup, input, range)?;
    if let (Some(s), true) = (send, algorithm.compresses()) {
        call.copy(buf, own.clone(), s, 0..n);
    }
    match algorithm {
        Algorithm::CColl => ring::allgather(&mut call, buf, &blocks, GatherStyle::Pipelined, true),
        Algorithm::CprP2p => ring::allgather(&mut call, buf, &blocks, GatherStyle::Recompress, true),
        _ => {
            match send {
                Some(s) => on_host(&mut call, s, buf, |s, b| baseline::allgather(comm, s, b)),
                None => on_host_mut(&mut call, buf, |b| {
                    let mine = b[own].to_vec();
                    baseline::allgather(comm, &mine, b)
                }),
            };
            call.count_uncompressed::<T>(n);
        }
    }
    call.finish(compressions_per_value(CollOp::Allgather, algorithm, c.size), None)
}

/// Alltoall of `p` blocks each way.
pub(crate) fn alltoall<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, send: &W, recv: &mut W, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let n = send.len() / c.size;
    let local_error = first_error([
        (send.len() == n * c.size, format!("send holds {} values, not a multiple of {} ranks", send.len(), c.size)),
        (recv.len() == send.len(), format!("recv holds {} values, send {}", recv.len(), send.len())),
        size_check::<T>(send.len(), cfg, c.size),
    ]);
    let setup = Setup { op: CollOp::Alltoall, cfg, bytes: n * T::SIZE, count: n as u64, root: None, reduce: None, local_error };
    let (mut call, algorithm) = start(c, setup, send, 0..send.len())?;
    match algorithm {
        Algorithm::CColl | Algorithm::CprP2p => {
            alltoall::alltoall(&mut call, send, recv, &uniform(n, c.size), algorithm == Algorithm::CprP2p)
        }
        _ => {
            on_host(&mut call, send, recv, |s, r| baseline::alltoall(comm, s, r));
            call.count_uncompressed::<T>(n * (c.size - 1));
        }
    }
    call.finish(compressions_per_value(CollOp::Alltoall, algorithm, c.size), None)
}

/// A point-to-point call's setup. A peer or tag that names no transfer ends the call at
/// once (there is no one to tell); this rank's other argument errors go through the
/// handshake, so that its peer fails too instead of waiting for it.
fn p2p_setup<'a, T: Value>(c: Comm, peer: usize, tag: i32, n: usize, cfg: &'a CollConfig) -> Result<Setup<'a>> {
    if let Some(e) = first_error([
        (peer < c.size && peer != c.rank, format!("peer {peer} is not another rank of {} ranks", c.size)),
        ((0..TAG_BASE).contains(&tag), format!("tag {tag} outside 0..{TAG_BASE}")),
    ]) {
        return Err(e);
    }
    let local_error = first_error([size_check::<T>(n, cfg, 1)]);
    Ok(Setup { op: CollOp::P2p, cfg, bytes: n * T::SIZE, count: n as u64, root: None, reduce: None, local_error })
}

/// Point-to-point send: the handshake of `p2p`, then the frames (pipelined with
/// `c-coll`) or the library's send.
pub(crate) fn send<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, dest: usize, data: &W, tag: i32, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let mut setup = p2p_setup::<T>(c, dest, tag, data.len(), cfg)?;
    let algorithm = setup.algorithm(c.size);
    let mut call = begin(c, setup, algorithm, data, 0..data.len(), false)?;
    let chunk = match algorithm {
        Algorithm::CColl => Some(call.chunk_values::<T>(data.len())),
        Algorithm::CprP2p => Some(data.len().max(1)),
        _ => None,
    };
    if p2p::send(&mut call, dest, tag, data, chunk) && chunk.is_none() {
        data.with_host(0..data.len(), |d| baseline::send(comm, dest, d, tag)).map_err(|e| call.fail(e.into())).ok();
        call.count_uncompressed::<T>(data.len());
    }
    call.finish(compressions_per_value(CollOp::P2p, algorithm, c.size), None)
}

/// Point-to-point receive of exactly `buf.len()` values.
pub(crate) fn recv<C: CommHandle, T: Value, W: Place<T> + ?Sized>(comm: &C, src: usize, buf: &mut W, tag: i32, cfg: &CollConfig) -> Result<CollStats> {
    let c = Comm::of(comm);
    let mut setup = p2p_setup::<T>(c, src, tag, buf.len(), cfg)?;
    let algorithm = setup.algorithm(c.size);
    let mut call = begin(c, setup, algorithm, &*buf, 0..0, false)?;
    if let Some(chunk) = p2p::accept::<T>(&mut call, src, tag, buf.len()) {
        if algorithm.compresses() {
            p2p::recv_frames(&mut call, src, tag, buf, chunk);
        } else {
            let got = on_host_mut(&mut call, buf, |b| baseline::recv(comm, src, b, tag)).unwrap_or(buf.len());
            if got != buf.len() {
                let (a, b) = (buf.len() as u64, got as u64);
                call.fail(CollError::Mismatch { field: "count", local: a, min: a.min(b), max: a.max(b) });
            }
        }
    }
    call.finish(compressions_per_value(CollOp::P2p, algorithm, c.size), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_sizes_count_the_frame_headers() {
        // 100 M f32 (400 MB) is far below the count limit, but in 4-byte chunks its frame
        // headers take 3.2 GB: refused before anything is sent (it used to panic in the
        // transport when the bundle was handed to MPI).
        let tiny_chunks = max_message_bytes(100_000_000, 4, 4, 4).unwrap();
        assert_eq!(tiny_chunks, 400_000_000 + (100_000_000 + 5) * HEADER_LEN);
        assert!(tiny_chunks > MAX_MESSAGE_BYTES);
        // Just under the limit with automatic chunks: the headers push it over.
        let values = (MAX_MESSAGE_BYTES - 4 * HEADER_LEN) / 4;
        assert!(values * 4 <= MAX_MESSAGE_BYTES);
        assert!(max_message_bytes(values, 4, 0, 4).unwrap() > MAX_MESSAGE_BYTES);
        let fits = (MAX_MESSAGE_BYTES - (MAX_AUTO_CHUNKS + 5) * HEADER_LEN) / 4;
        assert!(max_message_bytes(fits, 4, 0, 4).unwrap() <= MAX_MESSAGE_BYTES);
        assert_eq!(max_message_bytes(usize::MAX / 2, 4, 0, 4), None);
    }

    #[test]
    fn node_groups_must_fit_a_rank_number() {
        assert!(node_groups_check(NodeGroups::SharedMemory).0);
        assert!(node_groups_check(NodeGroups::Blocks(1)).0);
        assert!(node_groups_check(NodeGroups::Blocks(i32::MAX as usize)).0);
        assert!(!node_groups_check(NodeGroups::Blocks(0)).0);
        assert!(!node_groups_check(NodeGroups::Blocks(1 << 31)).0);
    }
}
