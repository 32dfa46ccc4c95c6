//! Phase 3 of the encoder: one block's payload, written into its own byte range.

use super::coding::{codes_len, resi_len, BlockKind, Coding, GROUP};
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
    let mid_end = head.len();
    let mut pos = c.reference_len();
    let mut prev = T::Bits::ZERO;
    let mut t = [T::Bits::ZERO; GROUP];
    let mut lead = [0u8; GROUP];
    let r = c.resi_bits as usize;
    for (g, (xs, codes)) in x.chunks(GROUP).zip(codes.chunks_mut(GROUP / 4)).enumerate() {
        let t = &mut t[..xs.len()];
        let lead = &mut lead[..xs.len()];
        c.quantize_all::<OFFSET>(xs, t);
        c.leads(prev, t, lead);
        prev = t.last().copied().unwrap_or(prev);
        for (&v, &l) in t.iter().zip(lead.iter()) {
            pos = put_mid::<T>(head, pos, mid_end, v, l as u32, c.req_bytes);
        }
        pack_codes(lead, codes);
        if let Some(resi) = resi.get_mut(g * GROUP * r / 8..).filter(|_| r > 0) {
            pack_residuals(c, t, resi);
        }
    }
    pos == mid_end
}

/// Stores the bytes `lead..req_bytes` of `t` at `pos` and returns the next position.
/// Writes a whole `W`-byte word where it fits before `mid_end` (the extra bytes are
/// overwritten by the next value), else only the bytes that belong.
#[inline(always)]
fn put_mid<T: SzxFloat>(out: &mut [u8], pos: usize, mid_end: usize, t: T::Bits, lead: u32, req_bytes: u32) -> usize {
    let n = (req_bytes - lead) as usize;
    let word = t << (8 * lead);
    if pos + T::BYTES <= mid_end {
        word.store_be(&mut out[pos..]);
    } else {
        let mut buf = [0u8; 8];
        word.store_be(&mut buf);
        if let (Some(dst), Some(src)) = (out.get_mut(pos..pos + n), buf.get(..n)) {
            dst.copy_from_slice(src);
        }
    }
    pos + n
}

/// Four 2-bit codes per byte, the first value in the low bits.
#[inline(always)]
fn pack_codes(lead: &[u8], out: &mut [u8]) {
    for (o, l) in out.iter_mut().zip(lead.chunks(4)) {
        *o = l.iter().enumerate().fold(0u8, |acc, (i, &v)| acc | v << (2 * i));
    }
}

/// The residual bits of the values of one group, `t`, packed least significant first
/// into `out`: eight values take exactly `resi_bits` bytes.
#[inline(always)]
fn pack_residuals<T: SzxFloat>(c: &Coding<T>, t: &[T::Bits], out: &mut [u8]) {
    let r = c.resi_bits;
    // Each eight values are stored as one little-endian word at `8 * r` bits apart;
    // a store's spare high bytes are overwritten by the next store.
    let mut buf = [0u8; GROUP + 8];
    for (j, ts) in t.chunks(8).enumerate() {
        let acc = ts.iter().enumerate().fold(0u64, |acc, (i, &v)| acc | (c.residual(v) as u64) << (r * i as u32));
        let at = j * r as usize;
        buf[at..at + 8].copy_from_slice(&acc.to_le_bytes());
    }
    let used = resi_len(t.len(), r).min(out.len());
    out[..used].copy_from_slice(&buf[..used]);
}
