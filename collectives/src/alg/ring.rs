//! Ring algorithms: reduce-scatter (the computation framework) and allgather (data
//! movement), each in the variants the algorithms need.
//!
//! Block `b` of the vector ends on rank `b`. In reduce-scatter step `s`, rank `r` sends
//! its partial block `r - s - 1` to `r + 1` and reduces block `r - s - 2` from `r - 1`
//! into its own; after `p - 1` steps block `r` holds every rank's contribution, having
//! crossed `p - 1` compressions. In allgather step `s`, rank `r` forwards block `r - s`
//! and receives block `r - s - 1`.

use crate::blocks::Blocks;
use crate::call::{pieces, Call, RingStage};
use crate::frame::HEADER_LEN;
use crate::place::Place;
use crate::transport::{recycle, take_arrived, test_all, wait_all, wait_any, Inbox, Pending, SharedFrame, TAG_GATHER_RING, TAG_RING};
use crate::{ReduceOp, Value};

/// How a reduce-scatter step moves its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StepStyle {
    /// Collective-level ring: the whole block as one message, its receive posted before
    /// compressing.
    Whole,
    /// CPR-P2P: compress, send, then receive and decompress (nothing overlapped).
    Blocking,
}

/// Ring reduce-scatter over `blocks` of this rank's full vector: `input`, or `work` itself
/// where that is None (in place). On return `work[blocks.range(rank)]` is reduced over all
/// ranks. Out of place, `work` needs no copy of the input first: each step decodes the
/// arriving partial block straight into `work` and reduces the input's block into it, and
/// the first step sends the input's block.
pub(crate) fn reduce_scatter<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, input: Option<&W>, blocks: &Blocks, op: ReduceOp, style: StepStyle) {
    let (p, r) = (call.comm.size, call.comm.rank);
    if p == 1 {
        // No step: the result is the input.
        if let Some(x) = input {
            call.copy(work, 0..x.len(), x, 0..x.len());
        }
        return;
    }
    // One decode buffer for every chunk of every step (in place only).
    let mut scratch = None;
    for s in 0..p - 1 {
        let send_block = (r + p - s - 1) % p;
        let recv_block = (r + 2 * p - s - 2) % p;
        // Later steps send the block the step before reduced in `work`.
        let source = Source { first: input.filter(|_| s == 0), addend: input };
        step(call, work, source, blocks, (send_block, recv_block), op, style, &mut scratch);
    }
}

/// Where a reduce-scatter step reads besides `work`, out of place: the input whose block
/// it sends (the first step only) and the input whose block it reduces into `work`.
#[derive(Clone, Copy)]
struct Source<'a, W: ?Sized> {
    first: Option<&'a W>,
    addend: Option<&'a W>,
}

/// Runs `f` on `buf[range]` where there is a buffer.
fn view_of<T: Value, W: Place<T> + ?Sized, R>(buf: Option<&W>, range: core::ops::Range<usize>, f: impl FnOnce(Option<&W>) -> R) -> R {
    match buf {
        Some(b) => b.view(range, |v| f(Some(v))),
        None => f(None),
    }
}

#[allow(clippy::too_many_arguments)]
fn step<T: Value, W: Place<T> + ?Sized>(
    call: &mut Call,
    work: &mut W,
    source: Source<'_, W>,
    blocks: &Blocks,
    (send_block, recv_block): (usize, usize),
    op: ReduceOp,
    style: StepStyle,
    scratch: &mut Option<W::Owned>,
) {
    let (next, prev) = (call.comm.peer(1), call.comm.peer(-1));
    let (send_range, recv_range) = (blocks.range(send_block), blocks.range(recv_block));
    // Each block moves whole, as one frame, counted from the block's start (the split
    // below hands each block over as a buffer of its own).
    let (send_whole, recv_whole) = (0..send_range.len(), 0..recv_range.len());
    let (send_pieces, recv_pieces) = (core::slice::from_ref(&send_whole), core::slice::from_ref(&recv_whole));
    let post = |call: &Call| -> Vec<Pending> {
        recv_pieces.iter().map(|pr| call.comm.irecv(prev, TAG_RING, HEADER_LEN + pr.len() * T::SIZE)).collect()
    };
    let absorb = |call: &mut Call, into: &mut W, addend: Option<&W>, j: usize, bytes: Vec<u8>, scratch: &mut Option<W::Owned>| {
        let range = recv_pieces[j].clone();
        let want = call.expect::<T>(Some(j), Some(recv_pieces.len()), range.len());
        // Out of place, this rank's values are the first operand.
        call.decode_reduce(&[(prev, &bytes)], &want, into, range, addend, op, scratch);
        recycle(bytes);
    };

    // The two blocks are disjoint: the arriving block is reduced into one while the
    // other is compressed, with no copy of either.
    work.split_disjoint(send_range.clone(), recv_range.clone(), |reduced, incoming| {
        view_of(source.addend, recv_range, |addend| {
            view_of(source.first, send_range, |input| {
                let outgoing = input.unwrap_or(reduced);
                let mut recvs = if style == StepStyle::Blocking { Vec::new() } else { post(call) };
                let mut sends = Vec::with_capacity(send_pieces.len());
                call.frames_each(outgoing, send_pieces, |i| i, send_pieces.len(), |call, i, frame| {
                    sends.push(call.isend::<T>(next, TAG_RING, frame, send_pieces[i].len()));
                    // Progress: test the send, take the block if it has arrived.
                    test_all(&mut sends);
                    take_arrived(&mut recvs, |j, bytes| absorb(call, incoming, addend, j, bytes, scratch));
                });
                if style == StepStyle::Blocking {
                    recvs = post(call);
                }
                while let Some(j) = wait_any(&mut recvs) {
                    absorb(call, incoming, addend, j, recvs[j].take_bytes(), scratch);
                }
                wait_all(&mut sends);
            })
        })
    });
}

/// Runs `reduce_scatter` as the first stage of a call that then compresses each reduced
/// block once more, with `p - 1` compressions per value in it (the ring's, or the direct
/// one's): the reduce-scatter at its share of the call's budget of p x E, and the call
/// left at the last compression's share ([`Call::ring_stage`]).
pub(crate) fn before_once(call: &mut Call, op: ReduceOp, reduce_scatter: impl FnOnce(&mut Call)) {
    let p = call.comm.size;
    call.ring_stage(RingStage::ReduceScatter, p, op);
    reduce_scatter(call);
    call.ring_stage(RingStage::Last, p, op);
}

/// The collective-level ring Allreduce: the reduce-scatter in whole blocks, then the
/// allgather of blocks compressed once, received into buffers of their largest size.
pub(crate) fn allreduce<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, input: Option<&W>, blocks: &Blocks, op: ReduceOp) {
    before_once(call, op, |call| reduce_scatter(call, work, input, blocks, op, StepStyle::Whole));
    allgather(call, work, blocks, GatherStyle::Bounded, false);
}

/// How the allgather moves the blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GatherStyle {
    /// C-Coll: each block travels the ring in pipeline chunks, one message per chunk and
    /// hop. A rank sends its own chunks as they are compressed, then forwards each chunk
    /// it receives as it arrives (those of the next rank's own block excepted) and
    /// decodes it while the following ones travel.
    Pipelined,
    /// Collective-level ring: whole blocks, received into buffers of the largest size a
    /// block can take.
    Bounded,
    /// CPR-P2P: every hop decompresses and recompresses.
    Recompress,
}

/// Ring allgather over `blocks` of `work`, whose block `rank` holds this rank's data.
/// Each block is compressed once by its owner and forwarded unchanged (except with
/// [`GatherStyle::Recompress`]). With `keep_own` the owner keeps its exact block, else
/// it takes the decompressed copy (so that all ranks end with identical values).
pub(crate) fn allgather<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, blocks: &Blocks, style: GatherStyle, keep_own: bool) {
    let (p, r) = (call.comm.size, call.comm.rank);
    match style {
        _ if p == 1 => return,
        GatherStyle::Recompress => return allgather_recompress(call, work, blocks),
        GatherStyle::Pipelined => return allgather_pipelined(call, work, blocks, keep_own),
        GatherStyle::Bounded => {}
    }
    let (next, prev) = (call.comm.peer(1), call.comm.peer(-1));
    let own = call.frame_at(work, blocks.range(r), r, p);
    if !keep_own {
        let want = call.expect::<T>(Some(r), Some(p), blocks.len(r));
        call.decode_at(r, &own, &want, work, blocks.range(r));
    }
    let mut frames: Vec<Option<SharedFrame>> = vec![None; p];
    frames[r] = Some(own.into());
    for s in 0..p - 1 {
        let (send_block, recv_block) = ((r + p - s) % p, (r + p - s - 1) % p);
        let mut rx = call.comm.irecv(prev, TAG_GATHER_RING, HEADER_LEN + blocks.len(recv_block) * T::SIZE);
        let outgoing = frames[send_block].clone().expect("forwarded blocks arrived in an earlier step");
        let mut tx = call.isend::<T>(next, TAG_GATHER_RING, outgoing, blocks.len(send_block));
        frames[recv_block] = Some(rx.take_bytes().into());
        tx.wait();
    }
    // Everything is decompressed at the end.
    for (b, frame) in frames.iter().enumerate().filter(|&(b, _)| b != r) {
        let want = call.expect::<T>(Some(b), Some(p), blocks.len(b));
        let bytes = frame.as_ref().expect("every block arrived");
        call.decode_at(prev, bytes, &want, work, blocks.range(b));
    }
}

/// [`GatherStyle::Pipelined`]. What `prev` sends is the stream of blocks `r - 1`,
/// `r - 2`, ..., `r - (p - 1)`, each in its pipeline chunks (frame index = chunk, pieces
/// = the block's chunks), which every rank derives from the agreed count and chunk size.
fn allgather_pipelined<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, blocks: &Blocks, keep_own: bool) {
    let (p, r) = (call.comm.size, call.comm.rank);
    let (next, prev) = (call.comm.peer(1), call.comm.peer(-1));
    let chunks = |call: &Call, b: usize| pieces(blocks.range(b), call.chunk_values::<T>(blocks.len(b)));
    // (block, chunk, chunks of the block, range) of every incoming frame, in order.
    let mut incoming = Vec::new();
    for s in 1..p {
        let b = (r + p - s) % p;
        let ranges = chunks(call, b);
        let n = ranges.len();
        incoming.extend(ranges.into_iter().enumerate().map(|(j, range)| (b, j, n, range)));
    }
    let mut inbox = Inbox::new(call.comm, prev, TAG_GATHER_RING, incoming.iter().map(|x| HEADER_LEN + x.3.len() * T::SIZE).collect());
    let own = chunks(call, r);
    let mut sends: Vec<Pending> = Vec::new();
    let mut own_frames: Vec<SharedFrame> = Vec::new();
    call.frames_each(&*work, &own, |j| j, own.len(), |call, j, frame| {
        let frame: SharedFrame = frame.into();
        sends.push(call.isend::<T>(next, TAG_GATHER_RING, frame.clone(), own[j].len()));
        if !keep_own {
            own_frames.push(frame);
        }
        test_all(&mut sends);
        inbox.poll();
    });
    // The own frames are decoded while the next incoming frame is still on its way (a
    // wait filled with work), the rest at the end.
    let mut own_decoded = 0;
    let decode_own = |call: &mut Call, work: &mut W, j: usize| {
        let want = call.expect::<T>(Some(j), Some(own.len()), own[j].len());
        call.decode_at(r, &own_frames[j], &want, work, own[j].clone());
        j + 1
    };
    for (b, j, n, range) in &incoming {
        while own_decoded < own_frames.len() && !inbox.ready() {
            own_decoded = decode_own(call, work, own_decoded);
            test_all(&mut sends);
        }
        let Some(bytes) = inbox.next() else { break };
        let want = call.expect::<T>(Some(*j), Some(*n), range.len());
        // The next rank's own block ends its journey here.
        if *b == next {
            call.decode_at(prev, &bytes, &want, work, range.clone());
            recycle(bytes);
        } else {
            let frame: SharedFrame = bytes.into();
            sends.push(call.isend::<T>(next, TAG_GATHER_RING, frame.clone(), range.len()));
            test_all(&mut sends);
            call.decode_at(prev, &frame, &want, work, range.clone());
        }
        test_all(&mut sends);
        inbox.poll();
    }
    while own_decoded < own_frames.len() {
        own_decoded = decode_own(call, work, own_decoded);
    }
    wait_all(&mut sends);
}

fn allgather_recompress<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, blocks: &Blocks) {
    let (p, r) = (call.comm.size, call.comm.rank);
    let (next, prev) = (call.comm.peer(1), call.comm.peer(-1));
    for s in 0..p - 1 {
        let (send_block, recv_block) = ((r + p - s) % p, (r + p - s - 1) % p);
        let frame = call.frame_at(work, blocks.range(send_block), send_block, p);
        let want = call.expect::<T>(Some(recv_block), Some(p), blocks.len(recv_block));
        call.exchange(next, prev, TAG_GATHER_RING, (frame, blocks.len(send_block)), &want, work, blocks.range(recv_block));
    }
}
