//! Collective-level compressed recursive-doubling allreduce.
//!
//! With p' the largest power of two not above p and r = p - p', the first 2r ranks pair
//! up: each even one sends its vector (compressed) to the odd one above it and sits out.
//! The remaining p' ranks run log2(p') exchange steps with partner `rank xor mask`:
//! compress the whole partial vector, exchange, decompress the partner's and reduce. The
//! odd ranks finally send the result (compressed) back to their even partners.

use crate::call::Call;
use crate::frame::HEADER_LEN;
use crate::place::Place;
use crate::transport::{TAG_DOUBLING, TAG_FOLD};
use crate::{ReduceOp, Value};

/// Recursive-doubling allreduce of `buf` (this rank's input on entry, the result on exit).
pub(crate) fn allreduce<T: Value, W: Place<T> + ?Sized>(call: &mut Call, buf: &mut W, op: ReduceOp) {
    let (p, rank) = (call.comm.size, call.comm.rank);
    let pof2 = if p == 0 { 1 } else { 1 << p.ilog2() };
    let rem = p - pof2;
    let all = 0..buf.len();
    let mut scratch = None;

    // Fold in: even ranks below 2r hand their vector to the odd rank above.
    let virtual_rank = if rank < 2 * rem {
        if rank % 2 == 0 {
            let frame = call.frame_at(buf, all.clone(), rank, 1);
            call.send::<T>(rank + 1, TAG_FOLD, &frame, buf.len());
            None
        } else {
            let bytes = call.comm.recv(rank - 1, TAG_FOLD);
            absorb(call, rank - 1, &bytes, buf, op, &mut scratch);
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    };

    if let Some(vr) = virtual_rank {
        let mut mask = 1;
        while mask < pof2 {
            let partner_v = vr ^ mask;
            let partner = if partner_v < rem { partner_v * 2 + 1 } else { partner_v + rem };
            // Post the receive before compressing, so the partner's data can land meanwhile.
            let mut rx = call.comm.irecv(partner, TAG_DOUBLING, HEADER_LEN + buf.len() * T::SIZE);
            let frame = call.frame_at(buf, all.clone(), rank, 1);
            let mut tx = call.isend::<T>(partner, TAG_DOUBLING, frame, buf.len());
            let bytes = rx.take_bytes();
            absorb(call, partner, &bytes, buf, op, &mut scratch);
            tx.wait();
            mask <<= 1;
        }
    }

    // Fold out: the odd ranks return the result to their even partners.
    if rank < 2 * rem {
        if rank % 2 == 1 {
            let frame = call.frame_at(buf, all.clone(), rank, 1);
            call.send::<T>(rank - 1, TAG_FOLD, &frame, buf.len());
        } else {
            let bytes = call.comm.recv(rank + 1, TAG_FOLD);
            let want = call.expect::<T>(Some(rank + 1), Some(1), buf.len());
            call.decode_at(rank + 1, &bytes, &want, buf, all);
        }
    }
}

fn absorb<T: Value, W: Place<T> + ?Sized>(call: &mut Call, src: usize, bytes: &[u8], buf: &mut W, op: ReduceOp, scratch: &mut Option<W::Owned>) {
    let want = call.expect::<T>(Some(src), Some(1), buf.len());
    call.decode_reduce(&[(src, bytes)], &want, buf, 0..buf.len(), None, op, scratch);
}
