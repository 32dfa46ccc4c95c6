//! Allreduce with compressed-domain reduction (the hZCCL idea on SZx streams).
//!
//! Every rank compresses each block of its vector once, in pipeline pieces, when the
//! ring first needs it. In reduce-scatter step `s` rank `r` receives the pieces of the
//! partial block `r - s - 2` and reduces each with its own compressed piece of that block
//! (`Call::reduce_frames`: SZx streams are summed block by block without decoding
//! where the format allows, see `codec_host::szx::reduce`); the reduced piece is at once
//! sent on as a piece of step `s + 1`. After `p - 1` steps rank `r` holds block `r`,
//! reduced and still compressed; the allgather forwards those pieces unchanged, and every
//! rank decodes each piece once, as it arrives (its own block's too, so that all ranks
//! end with the same values).
//!
//! A value's path holds the `p` compressions of its inputs (their errors add, as the
//! ring's partial sums add them up), plus one for every hop that coded its block again.
//! Each rank reduces a given block at most once, so that is at most the number of ranks
//! that coded anything again; the call counts them (one word gathered at the end).

use crate::blocks::Blocks;
use crate::call::{pieces, Call};
use crate::frame::HEADER_LEN;
use crate::place::Place;
use crate::transport::{test_all, wait_all, Pending, SharedFrame, TAG_GATHER_RING, TAG_RING};
use crate::{ReduceOp, Value};

/// Allreduce over `blocks` of `input`, or of `work` where that is None (in place, and
/// always on one rank); the result goes to `work`. Returns the compressions on the path
/// of any result value.
pub(crate) fn allreduce<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, input: Option<&W>, blocks: &Blocks, op: ReduceOp) -> u32 {
    let p = call.comm.size;
    if p == 1 {
        return 0;
    }
    let (recoded, own) = reduce_scatter(call, input.unwrap_or(&*work), blocks, op);
    allgather(call, work, blocks, own);
    let ranks_recoding = call.comm.allgather_u64(u64::from(recoded)).iter().filter(|&&w| w != 0).count() as u32;
    p as u32 + ranks_recoding.min(p as u32 - 1)
}

/// The pipeline pieces of block `b`.
fn piece_ranges<T: Value>(call: &Call, blocks: &Blocks, b: usize) -> Vec<core::ops::Range<usize>> {
    pieces(blocks.range(b), call.chunk_values::<T>(blocks.len(b)))
}

/// The ring reduce-scatter on compressed pieces. Returns whether this rank coded any
/// value again, and the frames of block `rank`, reduced over all ranks.
fn reduce_scatter<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &W, blocks: &Blocks, op: ReduceOp) -> (bool, Vec<SharedFrame>) {
    let (p, r) = (call.comm.size, call.comm.rank);
    let (next, prev) = (call.comm.peer(1), call.comm.peer(-1));
    let mut sends: Vec<Pending> = Vec::new();
    // Step 0 sends this rank's own block r - 1, each piece as soon as it is compressed.
    let first = piece_ranges::<T>(call, blocks, (r + p - 1) % p);
    call.frames_each(work, &first, |j| j, first.len(), |call, j, frame| {
        sends.push(call.isend::<T>(next, TAG_RING, frame, first[j].len()));
        test_all(&mut sends);
    });
    let mut recoded = false;
    let mut reduced = Vec::new();
    for s in 0..p - 1 {
        let block = (r + 2 * p - s - 2) % p;
        let ranges = piece_ranges::<T>(call, blocks, block);
        let mut recvs: Vec<Pending> = ranges.iter().map(|x| call.comm.irecv(prev, TAG_RING, HEADER_LEN + x.len() * T::SIZE)).collect();
        reduced = Vec::with_capacity(ranges.len());
        // Each own piece of the block is compressed while the partial one is on its way,
        // then the two are reduced and the result sent on as a piece of the next step.
        call.frames_each(work, &ranges, |j| j, ranges.len(), |call, j, mine| {
            let bytes = recvs[j].take_bytes();
            let want = call.expect::<T>(Some(j), Some(ranges.len()), ranges[j].len());
            let (frame, again) = call.reduce_frames::<T>(prev, &mine, &bytes, &want, op);
            recoded |= again;
            let frame: SharedFrame = frame.into();
            if s + 2 < p {
                sends.push(call.isend::<T>(next, TAG_RING, frame.clone(), ranges[j].len()));
            }
            reduced.push(frame);
            test_all(&mut sends);
        });
    }
    wait_all(&mut sends);
    (recoded, reduced)
}

/// Ring allgather of the reduced blocks' frames (`own`: block `rank`'s), each piece
/// forwarded as soon as it arrives and then decoded into `work` while the next ones are
/// in flight; this rank's own block is decoded too, so that every rank ends with the
/// same values.
fn allgather<T: Value, W: Place<T> + ?Sized>(call: &mut Call, work: &mut W, blocks: &Blocks, own: Vec<SharedFrame>) {
    let (p, r) = (call.comm.size, call.comm.rank);
    let (next, prev) = (call.comm.peer(1), call.comm.peer(-1));
    let mut sends: Vec<Pending> = Vec::new();
    let mine = piece_ranges::<T>(call, blocks, r);
    for (frame, range) in own.iter().zip(&mine) {
        sends.push(call.isend::<T>(next, TAG_GATHER_RING, frame.clone(), range.len()));
    }
    for (j, (frame, range)) in own.iter().zip(&mine).enumerate() {
        let want = call.expect::<T>(Some(j), Some(mine.len()), range.len());
        call.decode_at(r, frame, &want, work, range.clone());
    }
    for t in 0..p - 1 {
        let block = (r + p - t - 1) % p;
        let ranges = piece_ranges::<T>(call, blocks, block);
        let mut recvs: Vec<Pending> = ranges.iter().map(|x| call.comm.irecv(prev, TAG_GATHER_RING, HEADER_LEN + x.len() * T::SIZE)).collect();
        for (j, (rx, range)) in recvs.iter_mut().zip(&ranges).enumerate() {
            let frame: SharedFrame = rx.take_bytes().into();
            // Block r + 1, the last to arrive, is the one the next rank started from.
            if t + 2 < p {
                sends.push(call.isend::<T>(next, TAG_GATHER_RING, frame.clone(), range.len()));
            }
            let want = call.expect::<T>(Some(j), Some(ranges.len()), range.len());
            call.decode_at(prev, &frame, &want, work, range.clone());
            test_all(&mut sends);
        }
    }
    wait_all(&mut sends);
}
