//! Compressed alltoall.
//!
//! C-Coll: post every receive at the largest size its piece can take, send each
//! outgoing piece as soon as it is compressed, and decompress each arriving piece
//! between compressions or after them. CPR-P2P: the pairwise exchange (step i: send to
//! rank + i, receive from rank - i), compressing each send and decompressing each receive.

use crate::blocks::Blocks;
use crate::call::Call;
use crate::place::Place;
use crate::frame::HEADER_LEN;
use crate::transport::{test_all, wait_all, wait_any, TAG_ALLTOALL};
use crate::Value;

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
    // Every receive first, each at the largest frame its piece can take (its values
    // raw): no exchange of the compressed sizes, so each piece leaves as soon as it is
    // compressed, and the pieces that arrive meanwhile are decoded between compressions.
    let sources: Vec<usize> = (1..p).map(|i| call.comm.peer(-(i as isize))).collect();
    let mut recvs: Vec<_> = sources.iter().map(|&s| call.comm.irecv(s, TAG_ALLTOALL, HEADER_LEN + blocks.len(s) * T::SIZE)).collect();
    let absorb = |call: &mut Call, recv: &mut W, j: usize, bytes: Vec<u8>| {
        let src = sources[j];
        let want = call.expect::<T>(Some(src), Some(p), blocks.len(src));
        call.decode_at(src, &bytes, &want, recv, blocks.range(src));
    };
    // Destinations staggered (rank + 1 first), so that no rank receives from all at once.
    let dests: Vec<usize> = (1..p).map(|i| call.comm.peer(i as isize)).collect();
    let ranges: Vec<_> = dests.iter().map(|&d| blocks.range(d)).collect();
    let mut sends = Vec::with_capacity(dests.len());
    call.frames_each(send, &ranges, |_| me, p, |call, j, frame| {
        sends.push(call.isend::<T>(dests[j], TAG_ALLTOALL, frame, ranges[j].len()));
        test_all(&mut sends);
        test_all(&mut recvs);
        for (k, rx) in recvs.iter_mut().enumerate() {
            if !rx.consumed() && rx.done() {
                absorb(call, recv, k, rx.take_bytes());
            }
        }
    });
    while let Some(j) = wait_any(&mut recvs) {
        absorb(call, recv, j, recvs[j].take_bytes());
    }
    wait_all(&mut sends);
}
