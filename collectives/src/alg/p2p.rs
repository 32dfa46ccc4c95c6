//! Pipelined compressed point-to-point send and receive.
//!
//! The sender announces the transfer (count, chunk size, number of chunks) in a
//! header-only frame, then compresses chunk by chunk, starting each chunk's send as soon
//! as it is compressed (so compressing chunk k + 1 overlaps sending chunk k). The
//! receiver checks the announcement against its buffer, answers accept or reject, posts
//! a receive per announced chunk and decompresses each chunk as it arrives (so chunk k
//! decodes while k + 1 is in flight). Because the receiver follows the sender's
//! announcement, a rejected transfer is still drained: neither side blocks, and both
//! report the mismatch.

use crate::call::{pieces, Call};
use crate::frame::{Header, ANNOUNCE, HEADER_LEN};
use crate::transport::{test_all, wait_all, wait_any, TAG_P2P_ACK};
use crate::{CollError, Value};

/// Reasons a receiver rejects an announced transfer, as sent back to the sender.
const REJECT_FIELDS: [&str; 4] = ["", "count", "element type", "codec"];

/// Sends `data` to `dest` in chunks of `chunk` values (the whole message in one chunk for
/// CPR-P2P). Returns once the receiver has accepted and every chunk has been sent.
pub(crate) fn send<T: Value>(call: &mut Call, dest: usize, tag: i32, data: &[T], chunk: usize) {
    let ranges = pieces(0..data.len(), chunk);
    let announce = call.announce::<T>(data.len(), chunk, ranges.len());
    call.send(dest, tag, &announce);
    let mut ack = call.comm.irecv(dest, TAG_P2P_ACK, 16);
    let mut sends = Vec::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        let frame = call.frame(&data[r.clone()], i, ranges.len());
        sends.push(call.isend(dest, tag, frame));
        // Progress between chunks.
        test_all(&mut sends);
        ack.test();
    }
    wait_all(&mut sends);
    let reply = ack.take_bytes();
    let word = |i: usize| reply.get(8 * i..8 * i + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let (code, theirs) = (word(0) as usize, word(1));
    if code != 0 {
        let field = REJECT_FIELDS.get(code).copied().unwrap_or("transfer");
        let local = match code {
            1 => data.len() as u64,
            2 => T::TYPE as u64,
            _ => u64::from(call.expect::<T>(None, None, 0).codec),
        };
        call.fail(CollError::Mismatch { field, local, min: local.min(theirs), max: local.max(theirs) });
    }
}

/// Receives into `buf` what [`send`] sends from `src`.
pub(crate) fn recv<T: Value>(call: &mut Call, src: usize, tag: i32, buf: &mut [T]) {
    let bytes = call.comm.recv(src, tag);
    let ann = match Header::read(&bytes) {
        Ok(h) if h.flags & ANNOUNCE != 0 => h,
        Ok(_) => return call.fail(CollError::BadMessage { peer: src, reason: "expected a transfer announcement".into() }),
        // Not our protocol at all: nothing can be drained safely.
        Err(reason) => return call.fail(CollError::BadMessage { peer: src, reason }),
    };
    let bound = bytes.get(HEADER_LEN..HEADER_LEN + 8).map_or(f64::NAN, |b| f64::from_le_bytes(b.try_into().expect("8 bytes")));
    call.stats.abs_error = Some(bound).filter(|b| !b.is_nan());
    let want = call.expect::<T>(None, None, buf.len());
    let (code, local, theirs) = if ann.count != buf.len() as u64 {
        (1, buf.len() as u64, ann.count)
    } else if ann.elem != T::TYPE || ann.op != call.op {
        (2, T::TYPE as u64, ann.elem as u64)
    } else if ann.codec != want.codec {
        (3, u64::from(want.codec), u64::from(ann.codec))
    } else {
        (0, 0, 0)
    };
    let mut reply = (code as u64).to_le_bytes().to_vec();
    reply.extend_from_slice(&local.to_le_bytes());
    call.comm.send(src, TAG_P2P_ACK, &reply);

    // Post every announced chunk, accepted or not, so that the sender never blocks.
    let count = ann.count as usize;
    let chunk = (ann.index as usize).max(1);
    let ranges = pieces(0..count, chunk);
    if ranges.len() != ann.pieces as usize {
        return call.fail(CollError::BadMessage {
            peer: src,
            reason: format!("announced {} chunks of {chunk} for {count} values", ann.pieces),
        });
    }
    let mut recvs: Vec<_> = ranges.iter().map(|r| call.comm.irecv(src, tag, HEADER_LEN + r.len() * ann.elem.size())).collect();
    while let Some(j) = wait_any(&mut recvs) {
        let frame = recvs[j].take_bytes();
        if code == 0 {
            let want = call.expect::<T>(Some(j), Some(ranges.len()), ranges[j].len());
            call.decode(src, &frame, &want, &mut buf[ranges[j].clone()]);
        }
    }
    if code != 0 {
        let field = REJECT_FIELDS[code];
        call.fail(CollError::Mismatch { field, local, min: local.min(theirs), max: local.max(theirs) });
    }
}
