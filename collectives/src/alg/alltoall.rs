//! Compressed alltoall.
//!
//! C-Coll: every piece in pipeline chunks. Post every receive at the largest size its
//! chunk can take, send each outgoing chunk as soon as it is compressed (destinations in
//! turn), and decompress each arriving chunk between compressions or after them.
//! CPR-P2P: the pairwise exchange (step i: send to rank + i, receive from rank - i),
//! compressing each send and decompressing each receive.

use core::ops::Range;

use crate::blocks::Blocks;
use crate::call::{pieces, Call};
use crate::place::Place;
use crate::frame::HEADER_LEN;
use crate::transport::{recycle, take_arrived, test_all, wait_all, wait_any, TAG_ALLTOALL};
use crate::Value;

/// A chunk exchanged with a peer: (peer, chunk, chunks of its piece, range of values).
pub(crate) type Chunk = (usize, usize, usize, Range<usize>);

/// Every chunk exchanged with the peers `dir` away (1: the destinations, rank + 1 first;
/// -1: the sources, rank - 1 first), in order: the pipeline chunks of the piece
/// `piece(peer)` of each, which every rank derives from the agreed count and chunk size.
pub(crate) fn plan<T: Value>(call: &Call, dir: isize, piece: impl Fn(usize) -> Range<usize>) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for i in 1..call.comm.size as isize {
        let peer = call.comm.peer(dir * i);
        let range = piece(peer);
        let ranges = pieces(range.clone(), call.chunk_values::<T>(range.len()));
        let n = ranges.len();
        chunks.extend(ranges.into_iter().enumerate().map(|(j, r)| (peer, j, n, r)));
    }
    chunks
}

/// Alltoall: block `d` of `send` goes to rank `d`; block `s` of `recv` comes from rank `s`.
pub(crate) fn alltoall<T: Value, W: Place<T> + ?Sized>(call: &mut Call, send: &W, recv: &mut W, blocks: &Blocks, pairwise: bool) {
    let (p, me) = (call.comm.size, call.comm.rank);
    call.copy(recv, blocks.range(me), send, blocks.range(me));
    if pairwise {
        for i in 1..p {
            let (dest, src) = (call.comm.peer(i as isize), call.comm.peer(-(i as isize)));
            let frame = call.frame_at(send, blocks.range(dest), me, p);
            let want = call.expect::<T>(Some(src), Some(p), blocks.len(src));
            call.exchange(dest, src, TAG_ALLTOALL, (frame, blocks.len(dest)), &want, recv, blocks.range(src));
        }
        return;
    }
    // Each piece travels in pipeline chunks, one message each, as the rings' blocks do:
    // the chunks leave as they are compressed and MPI's TCP transport progresses between
    // them (it moves data only inside MPI calls), where one message per piece would wait
    // for the whole piece's compression on both sides. Every receive is posted first,
    // at the largest size its chunk can take (no exchange of compressed sizes).
    let incoming = plan::<T>(call, -1, |src| blocks.range(src));
    let mut recvs: Vec<_> = incoming.iter().map(|(src, _, _, range)| call.comm.irecv(*src, TAG_ALLTOALL, HEADER_LEN + range.len() * T::SIZE)).collect();
    let absorb = |call: &mut Call, recv: &mut W, k: usize, bytes: Vec<u8>| {
        let (src, j, n, range) = &incoming[k];
        let want = call.expect::<T>(Some(*j), Some(*n), range.len());
        call.decode_at(*src, &bytes, &want, recv, range.clone());
        recycle(bytes);
    };
    // Destinations in turn, staggered (rank + 1 first): while the ranks keep pace, each
    // node sends to one peer and receives from another, one flow each way per link.
    let outgoing = plan::<T>(call, 1, |dest| blocks.range(dest));
    let ranges: Vec<_> = outgoing.iter().map(|x| x.3.clone()).collect();
    let mut sends = Vec::with_capacity(ranges.len());
    call.frames_labeled(send, &ranges, |i| (outgoing[i].1, outgoing[i].2), |call, i, frame| {
        sends.push(call.isend::<T>(outgoing[i].0, TAG_ALLTOALL, frame, ranges[i].len()));
        test_all(&mut sends);
        take_arrived(&mut recvs, |k, bytes| absorb(call, recv, k, bytes));
    });
    while let Some(k) = wait_any(&mut recvs) {
        absorb(call, recv, k, recvs[k].take_bytes());
    }
    wait_all(&mut sends);
}
