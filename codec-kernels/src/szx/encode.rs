//! Phase 3 of the encoder: one block's payload, written into its own byte range.

use super::coding::{codes_len, mode, BlockKind, Coding, Group, ERR_LANES, GROUP};
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
                mode::OFFSET => encode_coded::<T, { mode::OFFSET }>(x, &c, out, false),
                mode::QUANT => encode_coded::<T, { mode::QUANT }>(x, &c, out, false),
                _ => encode_coded::<T, { mode::DIRECT }>(x, &c.flushing(plan.value), out, false),
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

/// Writes the payload of `x` under coding `c` (`M == c.mode`) at the start of `out`;
/// returns its length and, if `errors`, the largest rounded reconstruction error of
/// offset coding (else zero), or `None` if `out` is too short.
#[inline(always)]
pub(crate) fn encode_coded<T: SzxFloat, const M: u8>(x: &[T], c: &Coding<T>, out: &mut [u8], errors: bool) -> Option<(usize, T)> {
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
        pack_codes(&g.lead, codes);
        let mid = stage_mid::<T>(c, &g, &mut stage);
        let resi = pack_residuals(c, &g, &mut stage[mid..]);
        body.get_mut(pos..pos + mid + resi)?.copy_from_slice(&stage[..mid + resi]);
        pos += mid + resi;
    }
    Some((head + pos, worst.iter().fold(T::ZERO, |a, &b| a.fmax(b))))
}

/// The mid bytes of a group, assembled in `stage`; returns their length. Of a value's
/// `q` whole bytes, read as an integer `u` (its top byte is the pattern's first), the
/// low `q - min(lead, q)` bytes are stored, least significant first: one whole-word
/// store per value, whose spare bytes the next value overwrites, and no shift by `lead`.
/// The words and lengths are computed first over the whole group (vector code); the
/// stores follow.
#[inline(always)]
fn stage_mid<T: SzxFloat>(c: &Coding<T>, g: &Group<T>, stage: &mut [u8; STAGE]) -> usize {
    let shift = T::Bits::BITS - 8 * c.req_bytes;
    let q = c.req_bytes as u8;
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

/// Four 2-bit codes per byte, the first value in the low bits.
#[inline(always)]
fn pack_codes(lead: &[u8; GROUP], out: &mut [u8]) {
    let mut packed = [0u8; GROUP / 4];
    for (j, p) in packed.iter_mut().enumerate() {
        *p = lead[4 * j] | lead[4 * j + 1] << 2 | lead[4 * j + 2] << 4 | lead[4 * j + 3] << 6;
    }
    let n = out.len().min(GROUP / 4);
    out[..n].copy_from_slice(&packed[..n]);
}

/// The residual bits of a group's values that store them (every code but the repeat
/// code), packed least significant first into `stage` and padded to a byte; returns
/// their length. The residuals and their widths (0 for a repeat) are computed first
/// over the whole group (vector code); then eight at a time go into a word, whose whole
/// bytes are stored and whose leftover bits carry into the next eight.
#[inline(always)]
fn pack_residuals<T: SzxFloat>(c: &Coding<T>, g: &Group<T>, stage: &mut [u8]) -> usize {
    let r = c.resi_bits;
    if r == 0 {
        return 0;
    }
    let q = c.req_bytes as u8;
    let mut res = [0u64; GROUP];
    let mut width = [0u8; GROUP];
    for i in 0..GROUP {
        let keep = g.lead[i] <= q;
        res[i] = if keep { c.residual(g.t[i]) as u64 } else { 0 };
        width[i] = if keep { r as u8 } else { 0 };
    }
    let (mut acc, mut bits, mut at) = (0u64, 0u32, 0usize);
    for (res, width) in res[..g.len].chunks(8).zip(width.chunks(8)) {
        for (&v, &w) in res.iter().zip(width) {
            acc |= v << bits;
            bits += w as u32;
        }
        // At most 7 carried + 8 * 7 new bits: the word holds them.
        if let Some(dst) = stage.get_mut(at..at + 8) {
            dst.copy_from_slice(&acc.to_le_bytes());
        }
        let whole = bits / 8;
        at += whole as usize;
        acc >>= 8 * whole;
        bits -= 8 * whole;
    }
    at + (bits > 0) as usize
}
