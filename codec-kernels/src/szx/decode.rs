//! The decoder: one block's values from its state byte and payload.
//!
//! Every length and code is checked, a coded block's group by group as its values are
//! rebuilt (a block that fails may leave the values of its first groups written), so
//! no bytes, however corrupt, make the decoder read outside the payload or panic, and
//! a block is decoded exactly when [`check_block`] accepts it.

use super::coding::{codes_len, mode, BlockKind, Coding, GROUP};
use super::group_ops::{Counts, GroupOps, ScalarOps};
use super::scalar::{Bits, SzxFloat};

/// Why a block cannot be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// The state byte is not one an encoder writes.
    BadState,
    /// The payload length does not match the state.
    BadLength,
    /// The 2-bit codes or residual padding contradict the state or the payload length.
    BadCodes,
}

/// Bodies (the groups of a coded block) up to this length are decoded from a padded copy.
const SHORT_BODY: usize = 64;

/// Payload bytes of a block of `n` values with state `state` whose size-table entry (for
/// coded blocks) is `coded_size`.
#[inline]
pub fn payload_len<T: SzxFloat>(state: u8, n: usize, coded_size: usize) -> Result<usize, BlockError> {
    let kind = BlockKind::parse::<T>(state).ok_or(BlockError::BadState)?;
    Ok(kind.fixed_payload_len::<T>(n).unwrap_or(coded_size))
}

/// Decodes the block with state byte `state` and payload `payload` into `out` (the
/// block's values; its length is the block's length).
#[inline(always)]
pub fn decode_block<T: SzxFloat>(state: u8, payload: &[u8], out: &mut [T]) -> Result<(), BlockError> {
    decode_block_with(state, payload, out, ScalarOps)
}

/// [`decode_block`] with the group steps of `ops` (the same values whichever).
#[inline(always)]
pub fn decode_block_with<T: SzxFloat, G: GroupOps>(state: u8, payload: &[u8], out: &mut [T], ops: G) -> Result<(), BlockError> {
    decode_block_padded(state, payload, payload.len(), out, ops)
}

/// [`decode_block_with`] for the payload `bytes[..len]`, followed in memory by bytes that
/// are not its own (the next blocks' payloads, say): the decoder reads its windows of
/// [`GROUP`] bytes across the payload's end from there, where it would otherwise copy
/// them, and their values never reach the output (the checks bound every byte the
/// values use to the payload). The same values and errors as on `bytes[..len]` alone.
#[inline(always)]
pub fn decode_block_padded<T: SzxFloat, G: GroupOps>(state: u8, bytes: &[u8], len: usize, out: &mut [T], ops: G) -> Result<(), BlockError> {
    let payload = bytes.get(..len).ok_or(BlockError::BadLength)?;
    let kind = checked_kind::<T>(state, payload, out.len())?;
    match kind {
        BlockKind::Zero => out.fill(T::ZERO),
        BlockKind::Const => out.fill(T::from_bits(T::Bits::load_le(payload))),
        BlockKind::Raw => {
            for (o, b) in out.iter_mut().zip(payload.chunks_exact(T::BYTES)) {
                *o = T::from_bits(T::Bits::load_le(b));
            }
        }
        BlockKind::Coded { .. } | BlockKind::Quantized { .. } => {
            let (c, codes, body) = coded_sections::<T>(kind, payload, out.len())?;
            let (body_at, body_len) = (len - body.len(), body.len());
            // The groups are read with their padding (`bytes` past the payload) when
            // that holds a whole window past their end; a short body without it is
            // read from a zero-padded copy (a block of mostly repeats), so that no
            // window or word load runs past its end.
            let mut padded = [0u8; SHORT_BODY + GROUP + 8];
            let body = if bytes.len() - len >= GROUP + 8 {
                &bytes[body_at..]
            } else if body_len <= SHORT_BODY {
                padded[..body_len].copy_from_slice(body);
                &padded[..]
            } else {
                body
            };
            return match c.mode {
                mode::OFFSET => decode_coded::<T, G, { mode::OFFSET }>(&c, codes, body, body_len, out, ops),
                mode::QUANT => decode_coded::<T, G, { mode::QUANT }>(&c, codes, body, body_len, out, ops),
                _ => decode_coded::<T, G, { mode::DIRECT }>(&c, codes, body, body_len, out, ops),
            };
        }
    }
    Ok(())
}

/// Checks block `state` of `n` values with payload `payload` as [`decode_block`] does,
/// without rebuilding the values (for a block passed on as it is).
#[inline(always)]
pub fn check_block<T: SzxFloat>(state: u8, payload: &[u8], n: usize) -> Result<(), BlockError> {
    match checked_kind::<T>(state, payload, n)? {
        kind @ (BlockKind::Coded { .. } | BlockKind::Quantized { .. }) => {
            let (c, codes, body) = coded_sections::<T>(kind, payload, n)?;
            for_each_group(&c, n, codes, body, body.len(), |_, _| {})
        }
        _ => Ok(()),
    }
}

/// The block's kind, its payload length checked for the kinds of fixed size.
#[inline(always)]
fn checked_kind<T: SzxFloat>(state: u8, payload: &[u8], n: usize) -> Result<BlockKind, BlockError> {
    let kind = BlockKind::parse::<T>(state).ok_or(BlockError::BadState)?;
    match kind.fixed_payload_len::<T>(n) {
        Some(len) if payload.len() != len => Err(BlockError::BadLength),
        _ => Ok(kind),
    }
}

/// A coded block's coding, its codes and its groups.
type Sections<'p, T> = (Coding<T>, &'p [u8], &'p [u8]);

/// A coded block's sections: its coding (its unit's exponent checked) and where its
/// codes and groups lie in the payload (the groups are checked as they are walked,
/// [`for_each_group`]).
#[inline(always)]
fn coded_sections<T: SzxFloat>(kind: BlockKind, payload: &[u8], n: usize) -> Result<Sections<'_, T>, BlockError> {
    let (reference, delta_exp) = match kind {
        BlockKind::Coded { offset: true, .. } if payload.len() >= T::BYTES => (T::from_bits(T::Bits::load_le(payload)), 0),
        BlockKind::Quantized { .. } if payload.len() >= 2 => (T::ZERO, i16::from_le_bytes([payload[0], payload[1]]) as i32),
        _ => (T::ZERO, 0),
    };
    if delta_exp.abs() >= T::BIAS {
        return Err(BlockError::BadCodes);
    }
    let c = Coding::from_kind(kind, reference, delta_exp).ok_or(BlockError::BadState)?;
    if payload.len() < c.head_len(n) {
        return Err(BlockError::BadLength);
    }
    let (codes, body) = payload[c.reference_len()..].split_at(codes_len(n));
    Ok((c, codes, body))
}

/// Where one group of a coded block lies in the block's body, from its codes.
#[derive(Clone, Copy, Debug)]
struct GroupAt {
    /// The group's code bytes, little-endian (zero past the block's codes).
    words: [u64; 2],
    /// Values in the group.
    len: usize,
    /// Where its whole bytes start in the body, and how many there are.
    mid_at: usize,
    mids: usize,
    /// How many values store their residual bits (all but the repeats); the residuals
    /// start at `mid_at + mids`.
    resis: usize,
}

/// Walks the groups of a coded block of `n` values with coding `c`, code section
/// `codes` and a body of `body_len` bytes (`body` holds them, maybe followed by
/// padding), calling `f` with each group's index and place once that group is checked;
/// fails as soon as a check fails. The checks: every code at most the coding's cap,
/// the groups the codes describe filling the body exactly, and the padding bits of the
/// codes and of every group's residuals zero. Every byte `f` is told of lies in the
/// body.
#[inline(always)]
fn for_each_group<T: SzxFloat>(c: &Coding<T>, n: usize, codes: &[u8], body: &[u8], body_len: usize, mut f: impl FnMut(usize, &GroupAt)) -> Result<(), BlockError> {
    const LOW: u64 = 0x5555_5555_5555_5555;
    let tail_codes = n % 4;
    let pad_mask = if tail_codes == 0 { 0 } else { 0xffu8 << (2 * tail_codes) };
    if codes.last().is_some_and(|&b| b & pad_mask != 0) {
        return Err(BlockError::BadCodes);
    }
    let (q, r) = (c.req_bytes as usize, c.resi_bits as usize);
    // Whole bytes a code of 1, 2, 3 saves; which code is the repeat code (none: 4).
    let saved = [1.min(q), 2.min(q), 3.min(q)];
    let repeat = if c.max_lead() as usize > q { q + 1 } else { 4 };
    let mut pos = 0usize;
    for g in 0..n.div_ceil(GROUP) {
        let len = (n - g * GROUP).min(GROUP);
        let group_codes = codes.get(g * (GROUP / 4)..).unwrap_or_default();
        let words = [load_le_u64(group_codes, 0), load_le_u64(group_codes, 8)];
        // Counts of the codes 1, 2 and 3 (the padding codes are zeros).
        let mut count = [0usize; 3];
        let mut over_cap = 0u64;
        for w in words {
            let (hi, lo) = ((w >> 1) & LOW, w & LOW);
            count[0] += (lo & !hi).count_ones() as usize;
            count[1] += (hi & !lo).count_ones() as usize;
            count[2] += (hi & lo).count_ones() as usize;
            over_cap |= match c.max_lead() {
                1 => hi,
                2 => hi & lo,
                _ => 0,
            };
        }
        let mids = len * q - (0..3).map(|i| saved[i] * count[i]).sum::<usize>();
        let resis = len - count.get(repeat.wrapping_sub(1)).copied().unwrap_or(0);
        let resi_bits = resis * r;
        let end = pos + mids + resi_bits.div_ceil(8);
        if over_cap != 0 || end > body_len || (!resi_bits.is_multiple_of(8) && body.get(end - 1).is_some_and(|&b| b >> (resi_bits % 8) != 0)) {
            return Err(BlockError::BadCodes);
        }
        f(g, &GroupAt { words, len, mid_at: pos, mids, resis });
        pos = end;
    }
    if pos != body_len {
        return Err(BlockError::BadCodes);
    }
    Ok(())
}

/// Rebuilds the values of a coded block (`body`: its `body_len` bytes of groups, then
/// any padding), checking each group as it goes ([`for_each_group`]: a block that fails
/// leaves the values of the groups before it written). Per group: the whole bytes (with
/// one whole byte, the common case of fixed-point blocks, a byte look-up per value at
/// the running count of stored ones; else a scalar pass, each value's depending on the
/// previous one), the residuals (unpacked at fixed positions, then looked up the same
/// way if the group holds a repeat code), then the patterns and values (vector code
/// over the whole group). What carries over to the next group (where it starts, the
/// last byte and residual stored) is counted from the codes and read from the payload
/// by scalar code, not taken out of the vector results: that would wait for their
/// stores to reach memory.
#[inline(always)]
fn decode_coded<T: SzxFloat, G: GroupOps, const M: u8>(c: &Coding<T>, codes: &[u8], body: &[u8], body_len: usize, out: &mut [T], ops: G) -> Result<(), BlockError> {
    let width = T::Bits::BITS;
    let (q, r) = (c.req_bytes, c.resi_bits);
    // Per code: the whole bytes stored (the low ones of the whole-byte integer `u`) and
    // their mask; the others repeat the previous value's.
    let advance: [usize; 4] = core::array::from_fn(|l| c.mid_len(l as u32) as usize);
    let fresh: [T::Bits; 4] = core::array::from_fn(|l| match advance[l] {
        0 => T::Bits::ZERO,
        n if n >= T::BYTES => T::Bits::ALL,
        n => !(T::Bits::ALL << (8 * n as u32)),
    });
    let repeat = if c.max_lead() > q { q as u8 + 1 } else { 4 };
    let whole_shift = width - 8 * q;
    let resi_shift = width - c.keep_bits();
    let (mut prev_u, mut prev_res) = (T::Bits::ZERO, 0u8);
    let mut spare = [0u8; GROUP];
    let n = out.len();
    // The per-group arrays are made afresh in each group (none carries over), so that
    // they can live in vector registers.
    for_each_group(c, n, codes, body, body_len, |g, at| {
        let m = at.len;
        let lead = unpack_codes(at.words, ops);
        let u: [T::Bits; GROUP] = if q == 1 {
            // One whole byte: value i's is the last one stored up to it (code 0), the
            // one at the running count of code-0 values.
            let src = window(body, at.mid_at, &mut spare);
            let bytes = ops.pick(src, prev_u.low_u32() as u8, &ops.running_count(&lead, 0));
            if at.mids > 0 {
                prev_u = T::Bits::from_u32(src[(at.mids - 1) % GROUP] as u32);
            }
            core::array::from_fn(|i| T::Bits::from_u32(bytes[i] as u32))
        } else {
            let mut u = [T::Bits::ZERO; GROUP];
            let mut pos = at.mid_at;
            for (u, &l) in u[..m].iter_mut().zip(&lead) {
                let l = l as usize & 3;
                prev_u = (prev_u & !fresh[l]) | (get_mid::<T>(body, pos) & fresh[l]);
                *u = prev_u;
                pos += advance[l];
            }
            u
        };
        // The residuals stored (every code but the repeat code), unpacked at fixed
        // positions (none without residual bits, `r = 0`: all zero); a repeat takes
        // the last one stored before it, the one at the running count of the others.
        let src = window(body, at.mid_at + at.mids, &mut spare);
        let packed = ops.unpack(src, r);
        let res = if at.resis == m {
            packed
        } else {
            // Value i's position among the group (1 to 64) less the repeats up to it.
            // No byte borrows: at most i + 1 of the first i + 1 codes repeat.
            let repeats = ops.running_count(&lead, repeat);
            let others: Counts = core::array::from_fn(|w| u64::from_le_bytes(core::array::from_fn(|i| (8 * w + i + 1) as u8)) - repeats[w]);
            ops.pick(&packed, prev_res, &others)
        };
        if at.resis > 0 {
            prev_res = field(src, at.resis - 1, r);
        }
        let value = |(&u, &res): (&T::Bits, &u8)| c.reconstruct::<M>(u << whole_shift | T::Bits::from_u32(res as u32) << resi_shift);
        let outs = &mut out[g * GROUP..(g * GROUP + m).min(n)];
        match <&mut [T; GROUP]>::try_from(&mut *outs) {
            Ok(full) => {
                for (o, ur) in full.iter_mut().zip(u.iter().zip(&res)) {
                    *o = value(ur);
                }
            }
            Err(_) => {
                for (o, ur) in outs.iter_mut().zip(u.iter().zip(&res)) {
                    *o = value(ur);
                }
            }
        }
    })
}

/// Field `i` (at most 63) of the `r`-bit fields (0 to 7) packed least significant first
/// in `src`.
#[inline(always)]
fn field(src: &[u8; GROUP], i: usize, r: u32) -> u8 {
    let bit = i * r as usize;
    let at = (bit / 8) % (GROUP - 1);
    let pair = u16::from_le_bytes([src[at], src[at + 1]]);
    ((pair >> (bit % 8)) & ((1u16 << r) - 1)) as u8
}

/// The [`GROUP`] bytes of `b` from `at`: in place, or copied into `spare` with zeros
/// past the end of `b`.
#[inline(always)]
fn window<'a>(b: &'a [u8], at: usize, spare: &'a mut [u8; GROUP]) -> &'a [u8; GROUP] {
    if let Some(w) = b.get(at..at + GROUP).and_then(|w| <&[u8; GROUP]>::try_from(w).ok()) {
        return w;
    }
    let w = b.get(at..).unwrap_or_default();
    spare.fill(0);
    spare[..w.len()].copy_from_slice(w);
    spare
}

/// The 2-bit codes of one group from its code bytes (`words`, little-endian): fields of
/// 2 bits, unpacked by `ops`.
#[inline(always)]
fn unpack_codes<G: GroupOps>(words: [u64; 2], ops: G) -> [u8; GROUP] {
    let mut bytes = [0u8; GROUP];
    bytes[..8].copy_from_slice(&words[0].to_le_bytes());
    bytes[8..16].copy_from_slice(&words[1].to_le_bytes());
    ops.unpack(&bytes, 2)
}

/// The `W` bytes at `pos` read least significant first, zero past the payload's end
/// (the bytes after a value's own are masked off by the caller).
#[inline(always)]
fn get_mid<T: SzxFloat>(payload: &[u8], pos: usize) -> T::Bits {
    match payload.get(pos..pos + T::BYTES) {
        Some(b) => T::Bits::load_le(b),
        None => tail_word::<T::Bits>(payload, pos, T::BYTES),
    }
}

/// The eight bytes at `at` as a little-endian word, zero past the end of `b`.
#[inline(always)]
pub(super) fn load_le_u64(b: &[u8], at: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(w) => u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
        None => tail_word::<u64>(b, at, 8),
    }
}

/// The `width` bytes at `at` (fewer than `width` left in `b`) as a little-endian word,
/// zero past the end: the last whole word of `b`, shifted down.
#[inline(always)]
fn tail_word<B: Bits>(b: &[u8], at: usize, width: usize) -> B {
    if at >= b.len() {
        return B::ZERO;
    }
    match b.len().checked_sub(width) {
        Some(last) => B::load_le(&b[last..]) >> (8 * (at - last) as u32),
        None => {
            let mut buf = [0u8; 8];
            buf[..b.len() - at].copy_from_slice(&b[at..]);
            B::load_le(&buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode::encode_block;
    use super::super::plan::plan_block;
    use super::super::tolerance::Tolerance;
    use super::*;

    /// Encodes and decodes one block; returns the payload length.
    fn round_trip<T: SzxFloat>(x: &[T], e: T, back: &mut [T]) -> (u8, usize) {
        let plan = plan_block(x, &Tolerance::new(e));
        let mut buf = [0u8; 8 * 300 + 16];
        let out = &mut buf[..plan.size as usize];
        assert!(encode_block(x, &plan, out));
        decode_block(plan.state, out, back).unwrap();
        (plan.state, plan.size as usize)
    }

    #[test]
    fn coded_blocks_round_trip_within_the_bound() {
        for n in [1usize, 3, 7, 8, 63, 64, 65, 128, 200] {
            for e in [0.0f32, 1e-6, 1e-3, 0.3] {
                let x: [f32; 200] = core::array::from_fn(|i| ((i * 7919 % 257) as f32 * 0.013).sin() * 3.0 + 0.01 * i as f32);
                let mut back = [0f32; 200];
                round_trip(&x[..n], e, &mut back[..n]);
                for (a, b) in x[..n].iter().zip(&back[..n]) {
                    assert!(((a - b) as f64).abs() <= e as f64, "n {n} e {e}: {a} vs {b}");
                    if e == 0.0 {
                        assert_eq!(a.to_bits(), b.to_bits());
                    }
                }
            }
        }
    }

    #[test]
    fn zeros_and_signs_survive_fixed_point_coding() {
        let x: [f64; 100] = core::array::from_fn(|i| match i % 4 {
            0 => 0.0,
            1 => -0.0,
            2 => 1e-9 * i as f64,
            _ => -0.25 * i as f64,
        });
        let mut back = [1f64; 100];
        let (state, _) = round_trip(&x, 1e-3, &mut back);
        assert_eq!(state & 0xc0, 0xc0, "fixed-point coding");
        for (a, b) in x.iter().zip(&back) {
            assert!((a - b).abs() <= 1e-3);
            assert_eq!(a.is_sign_negative(), b.is_sign_negative());
            if *a == 0.0 {
                assert_eq!(a.to_bits(), b.to_bits());
            }
        }
    }

    /// Runs of repeated values (zeros, a plateau) across group boundaries, in every kind
    /// of coded block: the repeat code carries whole bytes and residuals over.
    /// Offset coding near the largest finite values (a reference in the top binade).
    #[test]
    fn huge_values_round_trip() {
        let x: [f32; 128] = core::array::from_fn(|i| f32::MAX * (0.999 + 1e-6 * i as f32));
        for e in [0.0f32, 1e30, 1e33] {
            let mut back = [0f32; 128];
            round_trip(&x, e, &mut back);
            for (a, b) in x.iter().zip(&back) {
                assert!(((*a as f64) - (*b as f64)).abs() <= e as f64, "e {e}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn repeats_round_trip_across_groups() {
        let x: [f32; 300] = core::array::from_fn(|i| match i % 150 {
            0..=59 => 0.0,
            60..=70 => (i as f32 * 0.37).sin() * 0.8,
            71..=140 => 0.4375,
            _ => -(i as f32) * 1e-3,
        });
        let plateau: [f32; 300] = core::array::from_fn(|i| 7.0 + if (60..140).contains(&(i % 150)) { 0.0 } else { (i as f32 * 0.1).cos() * 0.01 });
        let mut kinds = [false; 3];
        for data in [&x, &plateau] {
            for e in [1e-1f32, 1e-2, 1e-3, 1e-5, 0.0] {
                for n in [63usize, 64, 65, 128, 200, 300] {
                    let mut back = [9f32; 300];
                    let (state, _) = round_trip(&data[..n], e, &mut back[..n]);
                    if let Some(k) = [0x40u8, 0x80, 0xc0].iter().position(|&s| state & 0xc0 == s) {
                        kinds[k] = true;
                    }
                    for (a, b) in data[..n].iter().zip(&back[..n]) {
                        assert!(((a - b) as f64).abs() <= e as f64, "e {e} n {n}: {a} vs {b}");
                        if *a == 0.0 {
                            assert_eq!(a.to_bits(), b.to_bits());
                        }
                    }
                }
            }
        }
        assert_eq!(kinds, [true, true, true], "direct, offset and fixed-point blocks all tried");
    }

    #[test]
    fn corrupt_payloads_are_rejected() {
        let x: [f32; 128] = core::array::from_fn(|i| 1.0 + (i as f32 * 0.1).sin());
        let plan = plan_block(&x, &Tolerance::new(1e-4f32));
        let mut buf = [0u8; 600];
        let out = &mut buf[..plan.size as usize];
        assert!(encode_block(&x, &plan, out));
        let mut back = [0f32; 128];
        // Every truncation is decoded without a panic, and nearly all are caught (a shifted
        // code section can add up to the right length by chance).
        let caught = (0..out.len()).filter(|&cut| decode_block(plan.state, &out[..cut], &mut back).is_err()).count();
        assert!(caught * 10 >= out.len() * 9, "{caught} of {}", out.len());
        assert_eq!(decode_block(0x7f, out, &mut back), Err(BlockError::BadState));
        assert_eq!(decode_block(0x01, out, &mut back), Err(BlockError::BadLength));
        assert_eq!(decode_block(plan.state, &out[..3], &mut back), Err(BlockError::BadLength));
        // A fixed-point block whose unit is not a normal power of two.
        let x: [f32; 128] = core::array::from_fn(|i| if i % 5 == 0 { 0.0 } else { (i as f32 * 0.1).sin() });
        let plan = plan_block(&x, &Tolerance::new(1e-3f32));
        assert_eq!(plan.state & 0xc0, 0xc0);
        let out = &mut buf[..plan.size as usize];
        assert!(encode_block(&x, &plan, out));
        assert_eq!(decode_block(plan.state, out, &mut back), Ok(()));
        for e in [127i16, -127, i16::MAX] {
            out[..2].copy_from_slice(&e.to_le_bytes());
            assert_eq!(decode_block(plan.state, out, &mut back), Err(BlockError::BadCodes));
        }
    }

    /// `check_block` accepts exactly what `decode_block` accepts, bytes flipped and cut.
    #[test]
    fn check_block_agrees_with_the_decoder() {
        let x: [f32; 100] = core::array::from_fn(|i| if i % 6 == 0 { 0.0 } else { (i as f32 * 0.3).sin() * 5.0 });
        let mut back = [0f32; 100];
        for e in [0.0f32, 1e-3, 1e-1] {
            let plan = plan_block(&x, &Tolerance::new(e));
            let mut buf = [0u8; 400];
            let out = &mut buf[..plan.size as usize];
            assert!(encode_block(&x, &plan, out));
            for at in 0..out.len() {
                for bit in 0..8 {
                    let mut m = [0u8; 400];
                    m[..out.len()].copy_from_slice(out);
                    m[at] ^= 1 << bit;
                    for len in [out.len(), at] {
                        let decoded = decode_block(plan.state, &m[..len], &mut back).is_ok();
                        assert_eq!(check_block::<f32>(plan.state, &m[..len], 100).is_ok(), decoded, "E {e}, byte {at}, bit {bit}, {len} bytes");
                    }
                }
            }
            for state in 0..=255u8 {
                assert_eq!(check_block::<f32>(state, out, 100).is_ok(), decode_block(state, out, &mut back).is_ok(), "state {state:#x}");
            }
        }
    }

    /// A payload decoded with bytes after it (garbage, or too few for a window) gives
    /// the values and the verdict of the payload alone, on random blocks of every
    /// coding and length, clean, cut and with flipped bits.
    #[test]
    fn padded_payloads_decode_as_the_payload_alone() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut coded, mut rejected) = (0, 0);
        for round in 0..3000 {
            let n = [1usize, 3, 63, 64, 65, 127, 128, 200, 256][round % 9];
            let plateau = (next() % 8) as f32 * 0.125;
            let x: [f32; 256] = core::array::from_fn(|i| match (round / 9 + i / 16) % 4 {
                0 => 0.0,
                1 => plateau,
                2 => ((next() % 2001) as f32 - 1000.0) * 1e-3,
                _ => (i as f32 * 0.05).sin() + plateau,
            });
            let e = [0.0f32, 1e-4, 1e-3, 1e-2, 0.3][(round / 3) % 5];
            let plan = plan_block(&x[..n], &Tolerance::new(e));
            let mut buf = [0u8; 4 * 256 + 16];
            let size = plan.size as usize;
            assert!(encode_block(&x[..n], &plan, &mut buf[..size]));
            coded += (plan.state & 0xc0 != 0) as usize;
            // Every fourth round a bit flipped, every fifth the payload cut short.
            if round % 4 == 1 && size > 0 {
                buf[(next() as usize) % size] ^= 1 << (next() % 8);
            }
            let len = if round % 5 == 2 { size - (next() as usize % (size + 1)) } else { size };
            let mut alone = [9f32; 256];
            let want = decode_block(plan.state, &buf[..len], &mut alone[..n]);
            rejected += want.is_err() as usize;
            for pad in [0usize, 5, GROUP + 7, GROUP + 8, 300] {
                let mut bytes = [0u8; 4 * 256 + 16 + 300];
                bytes[..len].copy_from_slice(&buf[..len]);
                for b in &mut bytes[len..len + pad] {
                    *b = next() as u8;
                }
                let mut padded = [9f32; 256];
                let got = decode_block_padded(plan.state, &bytes[..len + pad], len, &mut padded[..n], ScalarOps);
                assert_eq!(got, want, "round {round}, {pad} bytes of padding");
                if want.is_ok() {
                    assert_eq!(padded.map(f32::to_bits)[..n], alone.map(f32::to_bits)[..n], "round {round}, {pad} bytes of padding");
                }
            }
        }
        assert!(coded > 2000 && rejected > 300 && rejected < 2000, "{coded} coded blocks, {rejected} rejected");
    }
}
