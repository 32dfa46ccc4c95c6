//! Point-to-point send and receive, for every algorithm.
//!
//! The sender announces the transfer in a header-only frame (count, element type, codec,
//! algorithm, chunk size, number of chunks). The receiver checks the announcement against
//! its own call, its buffer length first, and answers accept or reject; nothing else moves
//! until it has accepted, so a rejected transfer leaves no message behind and every
//! receive is sized from the receiver's own buffer. While the answer is on its way, a
//! compressing sender already compresses its first chunks (queued, sent once accepted);
//! after that it starts each chunk's send as soon as the chunk is compressed, and the
//! receiver decompresses each chunk while the next is in flight. The plain `mpi` baseline
//! runs the same handshake before its one `MPI_Send`/`MPI_Recv`, so ranks that chose
//! different algorithms (or counts) both fail instead of misreading each other. A side
//! whose own arguments were refused (a codec bound no codec keeps, a message over the
//! size limit) still takes part in the handshake: a sender announces with `FAILED` set,
//! a receiver answers with a rejection of its own, and the peer returns `PeerRejected`.

use crate::call::{algorithm_code, pieces, Call, ANNOUNCE_PAYLOAD};
use crate::frame::{Header, ANNOUNCE, FAILED, HEADER_LEN};
use crate::place::Place;
use crate::transport::{test_all, wait_all, wait_any, TAG_P2P_ACK};
use crate::{CollError, Value};

/// Reasons a receiver rejects an announced transfer as a mismatch; the reply's code
/// indexes this.
const REJECT_FIELDS: [&str; 6] = ["", "count", "element type", "codec", "algorithm", "pipeline chunking"];
/// The reply's code when the transfer is off because of one side's own arguments: the
/// sender's (its announcement carried `FAILED`) or the receiver's.
const REJECT_SENDER_FAILED: usize = REJECT_FIELDS.len();
const REJECT_RECEIVER_FAILED: usize = REJECT_SENDER_FAILED + 1;
/// The reply: the code, then the receiver's own value of the rejected field (u64 each).
const REPLY_LEN: usize = 16;

/// Announces `data` to `dest` and, once the receiver accepts, sends it in frames of
/// `chunk` values (the whole message in one frame for CPR-P2P). With `chunk` None (the
/// library baseline) only the handshake runs. Returns true if the receiver accepted;
/// a rejection is recorded in `call`. A call already failed (its own arguments)
/// announces the failure and sends nothing.
pub(crate) fn send<T: Value, W: Place<T> + ?Sized>(call: &mut Call, dest: usize, tag: i32, data: &W, chunk: Option<usize>) -> bool {
    let chunk_len = chunk.unwrap_or(data.len()).max(1);
    let ranges = pieces(0..data.len(), chunk_len);
    let announce = call.announce::<T>(data.len(), chunk_len, ranges.len());
    call.send::<T>(dest, tag, &announce, 0);
    let mut ack = call.comm.irecv(dest, TAG_P2P_ACK, REPLY_LEN);
    if call.failed() {
        // The receiver rejects a failed announcement; its reply is taken so that no
        // later transfer reads it.
        ack.take_bytes();
        return false;
    }
    let mut verdict = None;
    let mut queued = Vec::new();
    let mut sends = Vec::new();
    if chunk.is_some() {
        // After a rejection the remaining pieces are still made (the codec's pipeline
        // runs to its end) but neither queued nor sent.
        call.frames_each(data, &ranges, |i| i, ranges.len(), |call, i, frame| {
            if verdict.is_none() && ack.test() {
                verdict = Some(read_reply(&ack.take_bytes()));
            }
            if matches!(verdict, Some(Err(_))) {
                return;
            }
            queued.push((frame, ranges[i].len()));
            if verdict.is_some() {
                for (frame, values) in queued.drain(..) {
                    sends.push(call.isend::<T>(dest, tag, frame, values));
                }
            }
            // Progress between chunks.
            test_all(&mut sends);
        });
    }
    match verdict.unwrap_or_else(|| read_reply(&ack.take_bytes())) {
        Ok(()) => {
            for (frame, values) in queued {
                sends.push(call.isend::<T>(dest, tag, frame, values));
            }
            wait_all(&mut sends);
            true
        }
        Err((REJECT_RECEIVER_FAILED, _)) => {
            call.fail(CollError::PeerRejected { rank: dest });
            false
        }
        Err((code, theirs)) => {
            let local = match code {
                1 => data.len() as u64,
                2 => T::TYPE as u64,
                3 => u64::from(call.expect::<T>(None, None, 0).codec),
                4 => algorithm_code(call.stats.algorithm),
                _ => ranges.len() as u64,
            };
            let field = REJECT_FIELDS.get(code).copied().unwrap_or("transfer");
            call.fail(CollError::Mismatch { field, local, min: local.min(theirs), max: local.max(theirs) });
            false
        }
    }
}

/// The receiver's verdict: accepted, or the rejected field's code and the receiver's value.
fn read_reply(reply: &[u8]) -> Result<(), (usize, u64)> {
    let word = |i: usize| reply.get(8 * i..8 * i + 8).map_or(u64::MAX, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    match word(0) {
        0 => Ok(()),
        code => Err((usize::try_from(code).unwrap_or(usize::MAX), word(1))),
    }
}

/// Receives the announcement of a transfer of `len` values from `src` and answers it.
/// Returns the announced chunk length if the transfer matches this call and was
/// accepted; else records why (a rejected sender learns it too and sends nothing). A
/// call already failed (this rank's own arguments) rejects any transfer.
pub(crate) fn accept<T: Value>(call: &mut Call, src: usize, tag: i32, len: usize) -> Option<usize> {
    let bytes = call.comm.recv(src, tag);
    let ann = match Header::read(&bytes) {
        Ok(h) if h.flags & ANNOUNCE != 0 && h.payload as usize == ANNOUNCE_PAYLOAD => h,
        // Not this protocol's announcement: the peer awaits no answer, so none is sent.
        Ok(_) => {
            call.fail(CollError::BadMessage { peer: src, reason: "expected a transfer announcement".into() });
            return None;
        }
        Err(reason) => {
            call.fail(CollError::BadMessage { peer: src, reason });
            return None;
        }
    };
    let word = |i: usize| u64::from_le_bytes(bytes[HEADER_LEN + 8 * i..HEADER_LEN + 8 * i + 8].try_into().expect("8 bytes"));
    let bound = f64::from_bits(word(0));
    call.stats.abs_error = Some(bound).filter(|b| !b.is_nan());
    let (algorithm, codec) = (algorithm_code(call.stats.algorithm), call.expect::<T>(None, None, 0).codec);
    let chunk = ann.index as usize;
    let (code, local, theirs) = if call.failed() {
        (REJECT_RECEIVER_FAILED, 0, 0)
    } else if ann.flags & FAILED != 0 {
        (REJECT_SENDER_FAILED, 0, 0)
    } else if ann.count != len as u64 {
        (1, len as u64, ann.count)
    } else if ann.elem != T::TYPE || ann.op != call.op {
        (2, T::TYPE as u64, ann.elem as u64)
    } else if ann.codec != codec {
        (3, u64::from(codec), u64::from(ann.codec))
    } else if word(1) != algorithm {
        (4, algorithm, word(1))
    } else if chunk == 0 || pieces(0..len, chunk).len() != ann.pieces as usize {
        (5, pieces(0..len, chunk.max(1)).len() as u64, u64::from(ann.pieces))
    } else {
        (0, 0, 0)
    };
    let mut reply = (code as u64).to_le_bytes().to_vec();
    reply.extend_from_slice(&local.to_le_bytes());
    call.comm.send(src, TAG_P2P_ACK, &reply);
    match code {
        0 => {}
        // This rank's own error is the call's fault already.
        REJECT_RECEIVER_FAILED => return None,
        REJECT_SENDER_FAILED => {
            call.fail(CollError::PeerRejected { rank: src });
            return None;
        }
        _ => {
            let field = REJECT_FIELDS[code];
            call.fail(CollError::Mismatch { field, local, min: local.min(theirs), max: local.max(theirs) });
            return None;
        }
    }
    Some(chunk)
}

/// Receives into `buf` the frames of an accepted transfer of `chunk`-value pieces,
/// decompressing each as it arrives.
pub(crate) fn recv_frames<T: Value, W: Place<T> + ?Sized>(call: &mut Call, src: usize, tag: i32, buf: &mut W, chunk: usize) {
    let ranges = pieces(0..buf.len(), chunk);
    let mut recvs: Vec<_> = ranges.iter().map(|r| call.comm.irecv(src, tag, HEADER_LEN + r.len() * T::SIZE)).collect();
    while let Some(j) = wait_any(&mut recvs) {
        let frame = recvs[j].take_bytes();
        let want = call.expect::<T>(Some(j), Some(ranges.len()), ranges[j].len());
        call.decode_at(src, &frame, &want, buf, ranges[j].clone());
    }
}
