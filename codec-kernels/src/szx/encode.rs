//! Phase 3 of the encoder: one block's payload, written into its own byte range.

use super::coding::{codes_len, mode, BlockKind, Coding, Group, ERR_LANES, GROUP};
use super::group_ops::{GroupOps, ScalarOps};
use super::plan::BlockPlan;
use super::scalar::{exponent_of, Bits, SzxFloat};

/// Writes the payload of block `x` as planned into `out`, which must hold exactly
/// `plan.size` bytes (the range phase 2 assigned to the block). Returns false, having
/// written nothing useful, if `out` has another length or the plan is not one phase 1
/// produces for `x`.
#[inline(always)]
pub fn encode_block<T: SzxFloat>(x: &[T], plan: &BlockPlan<T>, out: &mut [u8]) -> bool {
    if out.len() != plan.size as usize {
        return false;
    }
    match BlockKind::parse::<T>(plan.state) {
        Some(BlockKind::Zero) => true,
        Some(BlockKind::Const) => {
            plan.value.to_bits().store_le(out);
            true
        }
        Some(BlockKind::Raw) if out.len() == x.len() * T::BYTES => {
            for (v, o) in x.iter().zip(out.chunks_exact_mut(T::BYTES)) {
                v.to_bits().store_le(o);
            }
            true
        }
        Some(kind @ (BlockKind::Coded { .. } | BlockKind::Quantized { .. })) => {
            // The plan's value: the reference, the flush threshold of direct coding, or
            // the unit of fixed-point coding.
            let delta_exp = exponent_of::<T>(plan.value.abs().to_bits());
            if matches!(kind, BlockKind::Quantized { .. }) && delta_exp.abs() >= T::BIAS {
                return false;
            }
            let Some(c) = Coding::from_kind(kind, plan.value, delta_exp) else { return false };
            let written = match c.mode {
                mode::OFFSET => encode_coded::<T, _, { mode::OFFSET }>(x, &c, out, false, ScalarOps),
                mode::QUANT => encode_coded::<T, _, { mode::QUANT }>(x, &c, out, false, ScalarOps),
                _ => encode_coded::<T, _, { mode::DIRECT }>(x, &c.flushing(plan.value), out, false, ScalarOps),
            };
            written.is_some_and(|(len, _)| len == out.len())
        }
        _ => false,
    }
}

/// Bytes a group's pieces are assembled in: at most `8 * GROUP` mid bytes and `GROUP`
/// residual bytes, and spare bytes for whole-word stores past their ends.
const STAGE: usize = GROUP * 9 + 16;

/// The most bytes a coded payload of `n` values can take (every pattern at most `W`
/// bytes): room enough for [`super::plan::plan_encode_block`] to write any coding.
#[inline(always)]
pub const fn max_payload_len<T: SzxFloat>(n: usize) -> usize {
    T::BYTES * (n + 1) + codes_len(n)
}

/// Writes the payload of `x` under coding `c` (`M == c.mode`) at the start of `out`,
/// with the group steps of `ops` (the same bytes whichever); returns its length and, if
/// `errors`, the largest rounded reconstruction error of offset coding (else zero), or
/// `None` if `out` is too short.
#[inline(always)]
pub(crate) fn encode_coded<T: SzxFloat, G: GroupOps, const M: u8>(x: &[T], c: &Coding<T>, out: &mut [u8], errors: bool, ops: G) -> Option<(usize, T)> {
    let head = c.head_len(x.len());
    if out.len() < head {
        return None;
    }
    c.store_reference(out);
    let (codes, body) = out[c.reference_len()..].split_at_mut(codes_len(x.len()));
    let mut pos = 0;
    let mut g = Group::new();
    let mut stage = [0u8; STAGE];
    let mut worst = [T::ZERO; ERR_LANES];
    for (xs, codes) in x.chunks(GROUP).zip(codes.chunks_mut(GROUP / 4)) {
        c.group::<M>(xs, g.last(), &mut g);
        if M == mode::OFFSET && errors {
            c.fold_offset_errors(xs, &g, &mut worst);
        }
        pack_codes(&g.lead, codes, ops);
        let mid = stage_mid(c, &g, &mut stage, ops);
        let resi = pack_residuals(c, &g, &mut stage[mid..], ops);
        body.get_mut(pos..pos + mid + resi)?.copy_from_slice(&stage[..mid + resi]);
        pos += mid + resi;
    }
    Some((head + pos, worst.iter().fold(T::ZERO, |a, &b| a.fmax(b))))
}

/// The mid bytes of a group, assembled in `stage`; returns their length. Of a value's
/// `q` whole bytes, read as an integer `u` (its top byte is the pattern's first), the
/// low `q - min(lead, q)` bytes are stored, least significant first. With one whole
/// byte (`q = 1`, the fixed-point blocks of every field measured) those of the values
/// with code 0 are compacted by `ops`. Otherwise one whole-word store per value, whose
/// spare bytes the next value overwrites, and no shift by `lead`; the words and lengths
/// are computed first over the whole group (vector code), the stores follow.
#[inline(always)]
fn stage_mid<T: SzxFloat, G: GroupOps>(c: &Coding<T>, g: &Group<T>, stage: &mut [u8; STAGE], ops: G) -> usize {
    let shift = T::Bits::BITS - 8 * c.req_bytes;
    let q = c.req_bytes as u8;
    if q == 1 {
        let bytes = core::array::from_fn(|i| (g.t[i] >> shift).low_u32() as u8);
        let keep = kept(g, 0, ops);
        stage[..GROUP].copy_from_slice(&ops.compact(&bytes, keep));
        return keep.count_ones() as usize;
    }
    let mut u = [T::Bits::ZERO; GROUP];
    let mut len = [0u8; GROUP];
    for i in 0..GROUP {
        u[i] = g.t[i] >> shift;
        len[i] = q.saturating_sub(g.lead[i]);
    }
    let mut at = 0usize;
    for (&u, &len) in u[..g.len].iter().zip(&len) {
        // At most 63 values of 8 bytes precede: always in range.
        let at_ = at.min(STAGE - 8);
        u.store_le(&mut stage[at_..at_ + 8]);
        at += len as usize;
    }
    at
}

/// The mask of the values of group `g` whose code is at most `code` (none past its
/// length, whose patterns are left from the group before).
#[inline(always)]
fn kept<T: SzxFloat, G: GroupOps>(g: &Group<T>, code: u8, ops: G) -> u64 {
    let mut mask = ops.at_most(&g.lead, code);
    if g.len < GROUP {
        mask &= (1u64 << g.len) - 1;
    }
    mask
}

/// Four 2-bit codes per byte, the first value in the low bits: fields of 2 bits, packed
/// by `ops`.
#[inline(always)]
fn pack_codes<G: GroupOps>(lead: &[u8; GROUP], out: &mut [u8], ops: G) {
    let mut packed = [0u8; GROUP / 4];
    for (p, word) in packed.chunks_exact_mut(2).zip(ops.pack(lead, 2)) {
        p.copy_from_slice(&word.to_le_bytes()[..2]);
    }
    let n = out.len().min(GROUP / 4);
    out[..n].copy_from_slice(&packed[..n]);
}

/// The residual bits of a group's values that store them (every code but the repeat
/// code), packed least significant first into `stage` and padded to a byte; returns
/// their length. The residuals are compacted by `ops` where some value repeats; then
/// each eight take `r` whole bytes, a word stored at a fixed place (the spare bytes of
/// each store are zeros, which the next overwrites).
#[inline(always)]
fn pack_residuals<T: SzxFloat, G: GroupOps>(c: &Coding<T>, g: &Group<T>, stage: &mut [u8], ops: G) -> usize {
    let r = c.resi_bits;
    if r == 0 {
        return 0;
    }
    let q = c.req_bytes as u8;
    let res = core::array::from_fn(|i| c.residual(g.t[i]) as u8);
    let keep = kept(g, q, ops);
    let res = if keep == u64::MAX { res } else { ops.compact(&res, keep) };
    for (j, word) in ops.pack(&res, r).into_iter().enumerate() {
        let at = j * r as usize;
        // At most 7 * 7 + 8 bytes, within the room the caller leaves.
        if let Some(dst) = stage.get_mut(at..at + 8) {
            dst.copy_from_slice(&word.to_le_bytes());
        }
    }
    (keep.count_ones() * r).div_ceil(8) as usize
}
