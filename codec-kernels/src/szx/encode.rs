//! Phase 3 of the encoder: one block's payload, written into its own byte range.

use super::coding::{codes_len, resi_len, BlockKind, Coding, Group, GROUP};
use super::plan::BlockPlan;
use super::scalar::{Bits, SzxFloat};

/// Writes the payload of block `x` as planned into `out`, which must hold exactly
/// `plan.size` bytes (the range phase 2 assigned to the block). Returns false, having
/// written nothing useful, if `out` has another length or the plan is not one phase 1
/// produces for `x`.
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
        Some(kind @ BlockKind::Coded { offset, .. }) => {
            let Some(c) = Coding::from_kind(kind, plan.value) else { return false };
            if out.len() < c.fixed_len(x.len()) {
                return false;
            }
            if offset {
                encode_coded::<T, true>(x, &c, out)
            } else {
                encode_coded::<T, false>(x, &c, out)
            }
        }
        _ => false,
    }
}

/// Writes a coded payload; true if the mid bytes filled exactly their planned range.
fn encode_coded<T: SzxFloat, const OFFSET: bool>(x: &[T], c: &Coding<T>, out: &mut [u8]) -> bool {
    let n = x.len();
    let resi_at = out.len() - resi_len(n, c.resi_bits);
    let codes_at = resi_at - codes_len(n);
    if OFFSET {
        c.reference.to_bits().store_le(out);
    }
    let (head, tail) = out.split_at_mut(codes_at);
    let (codes, resi) = tail.split_at_mut(resi_at - codes_at);
    let mut pos = c.reference_len();
    let mut g = Group::new();
    // A group's bytes are assembled here with whole-word stores, then copied out once.
    let mut stage = [0u8; GROUP * 8 + 8];
    let r = c.resi_bits as usize;
    for (i, (xs, codes)) in x.chunks(GROUP).zip(codes.chunks_mut(GROUP / 4)).enumerate() {
        c.group::<OFFSET>(xs, g.last(), &mut g);
        let len = stage_mid::<T>(c, &g, &mut stage);
        match head.get_mut(pos..pos + len) {
            Some(dst) => dst.copy_from_slice(&stage[..len]),
            None => return false,
        }
        pos += len;
        pack_codes(&g.lead, codes);
        if let Some(resi) = resi.get_mut(i * GROUP * r / 8..).filter(|_| r > 0) {
            let len = pack_residuals(c, &g, &mut stage);
            let len = len.min(resi.len());
            resi[..len].copy_from_slice(&stage[..len]);
        }
    }
    pos == head.len()
}

/// The mid bytes of a group, assembled in `stage`; returns their length. Of a value's
/// `req_bytes` whole bytes, read as an integer `u` (its top byte is the pattern's first),
/// the low `req_bytes - lead` bytes are stored, least significant first: one whole-word
/// store per value, whose spare bytes the next value overwrites, and no shift by `lead`.
#[inline(always)]
fn stage_mid<T: SzxFloat>(c: &Coding<T>, g: &Group<T>, stage: &mut [u8; GROUP * 8 + 8]) -> usize {
    let shift = T::Bits::BITS - 8 * c.req_bytes;
    let mut at = 0usize;
    for (&t, &lead) in g.t[..g.len].iter().zip(&g.lead) {
        if let Some(dst) = stage.get_mut(at..at + T::BYTES) {
            (t >> shift).store_le(dst);
        }
        at += (c.req_bytes - lead as u32) as usize;
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

/// The residual bits of a group packed least significant first into `stage`, eight
/// values in exactly `resi_bits` bytes (each eight stored as one word whose spare bytes
/// the next word overwrites); returns their length.
#[inline(always)]
fn pack_residuals<T: SzxFloat>(c: &Coding<T>, g: &Group<T>, stage: &mut [u8; GROUP * 8 + 8]) -> usize {
    let r = c.resi_bits;
    for (j, ts) in g.t[..g.len].chunks(8).enumerate() {
        let acc = ts.iter().enumerate().fold(0u64, |acc, (i, &v)| acc | (c.residual(v) as u64) << (r * i as u32));
        let at = j * r as usize;
        stage[at..at + 8].copy_from_slice(&acc.to_le_bytes());
    }
    resi_len(g.len, r)
}
