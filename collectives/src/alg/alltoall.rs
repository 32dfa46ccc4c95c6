//! Compressed alltoall.
//!
//! C-Coll: compress the p - 1 outgoing pieces, exchange their compressed sizes with an
//! alltoall of counts, post every receive at its exact size and every send, and
//! decompress each piece as it arrives. CPR-P2P: the pairwise exchange (step i: send to
//! rank + i, receive from rank - i), compressing each send and decompressing each receive.

use crate::blocks::Blocks;
use crate::call::Call;
use crate::place::Place;
use crate::transport::{wait_all, wait_any, TAG_ALLTOALL};
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
    // Every outgoing piece, compressed back to back (on the device, several at once).
    let dests: Vec<usize> = (0..p).filter(|&d| d != me).collect();
    let ranges: Vec<_> = dests.iter().map(|&d| blocks.range(d)).collect();
    let mut frames: Vec<Vec<u8>> = vec![Vec::new(); p];
    call.frames_each(send, &ranges, |_| me, p, |_, j, frame| frames[dests[j]] = frame);
    let sizes: Vec<u64> = frames.iter().map(|f| f.len() as u64).collect();
    let incoming = call.comm.alltoall_u64(&sizes);
    let sources: Vec<usize> = (1..p).map(|i| call.comm.peer(-(i as isize))).collect();
    let mut recvs: Vec<_> = sources
        .iter()
        .map(|&s| {
            let capacity = call.frame_capacity::<T>(s, incoming[s], blocks.len(s));
            call.comm.irecv(s, TAG_ALLTOALL, capacity)
        })
        .collect();
    let mut sends: Vec<_> = (1..p)
        .map(|i| {
            let dest = call.comm.peer(i as isize);
            let frame = std::mem::take(&mut frames[dest]);
            call.isend::<T>(dest, TAG_ALLTOALL, frame, blocks.len(dest))
        })
        .collect();
    while let Some(j) = wait_any(&mut recvs) {
        let src = sources[j];
        let bytes = recvs[j].take_bytes();
        let want = call.expect::<T>(Some(src), Some(p), blocks.len(src));
        call.decode_at(src, &bytes, &want, recv, blocks.range(src));
    }
    wait_all(&mut sends);
}
