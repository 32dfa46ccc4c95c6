//! Direct reduce-scatter (C-Coll's Allreduce, Reduce-scatter and Reduce): every rank
//! streams each block of its input straight to the block's owner, in pipeline chunks,
//! and the owner reduces what arrives into its own block.
//!
//! Against the ring's `p - 1` steps, each of which waits for the step before: every value
//! still crosses one compression per contribution (the same `p - 1` as the ring's partial
//! sums, so the same stage bounds), but what is compressed is each rank's own input,
//! not partial sums, which vary wherever any of their terms does and so compress
//! less; and no rank waits for another's reduction before it compresses.
//!
//! Each chunk of the own block waits, compressed, until every source's has arrived, and
//! then all are reduced at once (where the codec reduces as it decodes, in one pass over
//! the chunk, not one per source), in one order on every call: the owner's value first,
//! then the sources `rank - 1`, `rank - 2`, ..., so that equal inputs give equal results
//! (as MPI recommends).

use core::ops::Range;

use crate::alg::alltoall::{plan, Chunk};
use crate::alg::ring::{self, GatherStyle};
use crate::blocks::Blocks;
use crate::call::Call;
use crate::frame::HEADER_LEN;
use crate::place::Place;
use crate::transport::{recycle, take_arrived, test_all, wait_all, wait_any, Pending, TAG_REDUCE_SCATTER};
use crate::{ReduceOp, Value};

/// C-Coll's Allreduce: the direct reduce-scatter at the ring's stage bounds, then the
/// pipelined ring allgather, which compresses each reduced block once.
pub(crate) fn allreduce<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, input: Option<&W>, blocks: &Blocks, op: ReduceOp) {
    ring::before_once(call, op, |call| reduce_scatter(call, work, input, blocks, op));
    ring::allgather(call, work, blocks, GatherStyle::Pipelined, false);
}

/// Reduce-scatter over `blocks` of this rank's full vector: `input`, or `work` itself
/// where that is None (in place). On return `work[blocks.range(rank)]` is reduced over
/// all ranks; the rest of `work` is left as it was.
pub(crate) fn reduce_scatter<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, input: Option<&W>, blocks: &Blocks, op: ReduceOp) {
    let (p, me) = (call.comm.size, call.comm.rank);
    let own = blocks.range(me);
    if p == 1 {
        if let Some(x) = input {
            call.copy(work, 0..x.len(), x, 0..x.len());
        }
        return;
    }
    // The own block's chunks from every source (ranges within the block), and every
    // other block's chunks for its owner, destinations in turn as Alltoall sends them.
    let incoming = plan::<T>(call, -1, |_| 0..own.len());
    let outgoing = plan::<T>(call, 1, |dest| blocks.range(dest));
    let recvs = incoming.iter().map(|(src, _, _, range)| call.comm.irecv(*src, TAG_REDUCE_SCATTER, HEADER_LEN + range.len() * T::SIZE)).collect();
    let mut flow = Flow::<W::Owned> {
        recvs,
        sends: Vec::with_capacity(outgoing.len()),
        held: vec![None; incoming.len()],
        chunks: incoming.len() / (p - 1),
        scratch: None,
    };
    let n = work.len();
    match input {
        Some(x) => x.view(own.clone(), |addend| {
            work.split_disjoint(0..0, own.clone(), |_, dst| {
                flow.send(call, x, (0..n, |_| true), &outgoing, (dst, Some(addend)), &incoming, op);
                flow.finish(call, (dst, Some(addend)), &incoming, op);
            })
        }),
        None => {
            // In place the other blocks lie on both sides of the own one: those after it
            // (destinations `rank + 1`, ...) first, then those before.
            let after = |d: usize| d > me;
            let before = |d: usize| d < me;
            work.split_disjoint(own.end..n, own.clone(), |src, dst| flow.send(call, src, (own.end..n, after), &outgoing, (dst, None), &incoming, op));
            work.split_disjoint(0..own.start, own.clone(), |src, dst| flow.send(call, src, (0..own.start, before), &outgoing, (dst, None), &incoming, op));
            work.split_disjoint(0..0, own, |_, dst| flow.finish(call, (dst, None), &incoming, op));
        }
    }
}

/// The transfers of one reduce-scatter and the chunks waiting for their turn; `O` is the
/// decode scratch's buffer type.
struct Flow<O> {
    recvs: Vec<Pending>,
    sends: Vec<Pending>,
    /// Arrived chunks (by index into the incoming plan: source by source, each the
    /// chunks of the own block in order) not reduced yet.
    held: Vec<Option<Vec<u8>>>,
    /// Chunks of the own block.
    chunks: usize,
    scratch: Option<O>,
}

/// The own block being reduced, and the owner's values where they are not in it already.
type Target<'a, W> = (&'a mut W, Option<&'a W>);

impl<O> Flow<O> {
    /// Compresses and sends the outgoing chunks for the destinations `dests` accepts,
    /// whose blocks lie in `segment` of the vector (`src` holds that segment, indexed
    /// from 0), reducing the chunks that arrived between compressions.
    #[allow(clippy::too_many_arguments)]
    fn send<T: Value, W: Place<T, Owned = O> + ?Sized>(
        &mut self,
        call: &mut Call,
        src: &W,
        (segment, dests): (Range<usize>, impl Fn(usize) -> bool),
        outgoing: &[Chunk],
        (dst, addend): Target<'_, W>,
        incoming: &[Chunk],
        op: ReduceOp,
    ) {
        let mine: Vec<&Chunk> = outgoing.iter().filter(|c| dests(c.0)).collect();
        let ranges: Vec<Range<usize>> = mine.iter().map(|c| c.3.start - segment.start..c.3.end - segment.start).collect();
        call.frames_labeled(src, &ranges, |i| (mine[i].1, mine[i].2), |call, i, frame| {
            self.sends.push(call.isend::<T>(mine[i].0, TAG_REDUCE_SCATTER, frame, ranges[i].len()));
            test_all(&mut self.sends);
            let mut arrived = Vec::new();
            take_arrived(&mut self.recvs, |k, bytes| arrived.push((k, bytes)));
            for (k, bytes) in arrived {
                self.reduce(call, (&mut *dst, addend), incoming, op, k, bytes);
            }
        });
    }

    /// Reduces every chunk still to come as it arrives, and waits for the sends.
    fn finish<T: Value, W: Place<T, Owned = O> + ?Sized>(&mut self, call: &mut Call, (dst, addend): Target<'_, W>, incoming: &[Chunk], op: ReduceOp) {
        while let Some(k) = wait_any(&mut self.recvs) {
            let bytes = self.recvs[k].take_bytes();
            self.reduce(call, (&mut *dst, addend), incoming, op, k, bytes);
        }
        wait_all(&mut self.sends);
    }

    /// Holds the arrived chunk `k`; once every source's chunk of that piece of the own
    /// block has arrived, reduces them all, in the order of the plan.
    fn reduce<T: Value, W: Place<T, Owned = O> + ?Sized>(&mut self, call: &mut Call, (dst, addend): Target<'_, W>, incoming: &[Chunk], op: ReduceOp, k: usize, bytes: Vec<u8>) {
        self.held[k] = Some(bytes);
        let j = k % self.chunks;
        let sources: Vec<usize> = (j..incoming.len()).step_by(self.chunks).collect();
        if sources.iter().any(|&i| self.held[i].is_none()) {
            return;
        }
        let arrived: Vec<Vec<u8>> = sources.iter().filter_map(|&i| self.held[i].take()).collect();
        let (_, _, pieces, range) = &incoming[j];
        let want = call.expect::<T>(Some(j), Some(*pieces), range.len());
        let frames: Vec<(usize, &[u8])> = sources.iter().zip(&arrived).map(|(&i, b)| (incoming[i].0, b.as_slice())).collect();
        // Out of place, the owner's values are the first operand.
        call.decode_reduce(&frames, &want, dst, range.clone(), addend, op, &mut self.scratch);
        arrived.into_iter().for_each(recycle);
    }
}
