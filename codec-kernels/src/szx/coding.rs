//! Block states and the leading-byte reuse coding of one block.
//!
//! A coded block keeps, for every value `y` (the value itself, or its difference from
//! the block's reference), the top `L = 1 + EXP_BITS + k` bits of `y`'s bit pattern,
//! rounded to nearest: sign, exponent and `k` mantissa bits; or, in fixed point, the
//! value's sign and its nearest multiple of a power of two, `L = 1 + k` bits (see
//! [`Coding::quantize`]). Those `L` bits are `q = L / 8`
//! whole bytes and `r = L % 8` residual bits. SZx's leading-byte reuse: a 2-bit code per
//! value says how many leading bytes equal those of the previous value in the block, and
//! only the other whole bytes are stored; when the whole bytes leave room in the code
//! (`q < 3` and `r > 0`), code `q + 1` says the residual bits repeat too, so a repeated
//! value (a run of exact zeros, say) costs its code alone.
//!
//! Payload of a coded block of `n` values (see `docs/formats/szx.md`):
//! `[reference: W bytes (offset) or the unit's exponent: 2 bytes (fixed point)][codes:
//! ceil(n/4)]` then, per group of
//! [`GROUP`] values, `[mid bytes][residual bits of the values whose code is at most q,
//! padded to a byte]`. The codes come first, so a decoder knows every group's length
//! before it reads the group.

use super::scalar::{pow2, round_to_uint, uint_to_float, Bits, SzxFloat};

/// Largest block size: a raw block of `f64` then takes 32 KiB, so every payload size fits
/// the `u16` entries of a chunk's size table.
pub const MAX_BLOCK_SIZE: usize = 4096;

/// Values a coder handles per step, so per-value intermediates live in small fixed
/// arrays (a multiple of 8: eight residuals fill whole bytes, four codes one byte).
pub const GROUP: usize = 64;

/// Independent accumulators of the offset coder's error measurement.
pub const ERR_LANES: usize = 8;

/// Bytes of a size-table entry, paid by every coded block.
pub const SIZE_ENTRY_BYTES: usize = 2;

/// The state byte of a block.
pub mod state {
    /// Every value decodes to `+0` (all lay within `E` of zero). No payload.
    pub const ZERO: u8 = 0x00;
    /// Every value decodes to one value, stored little-endian as the payload.
    pub const CONST: u8 = 0x01;
    /// The values stored verbatim, little-endian.
    pub const RAW: u8 = 0x02;
    /// Coded values taken as they are; the low six bits give the mantissa bits kept.
    pub const DIRECT: u8 = 0x40;
    /// Coded differences from a stored reference; the low six bits give the mantissa bits.
    pub const OFFSET: u8 = 0x80;
    /// Coded multiples of a stored power of two (fixed point); the low six bits give the
    /// magnitude bits.
    pub const QUANT: u8 = 0xc0;
    /// The mantissa-bit field of a coded state.
    pub const MANT_MASK: u8 = 0x3f;
}

/// How a coded block turns values into kept patterns (the `M` of the generic coders).
pub mod mode {
    /// The value's own bit pattern, mantissa rounded.
    pub const DIRECT: u8 = 0;
    /// The bit pattern of the value's difference from the reference, mantissa rounded.
    pub const OFFSET: u8 = 1;
    /// Sign and magnitude of the nearest multiple of `delta`, a power of two.
    pub const QUANT: u8 = 2;
}

/// Fewest magnitude bits of fixed-point coding: a pattern keeps at least one whole byte.
pub const MIN_QUANT_BITS: u32 = 7;

/// Most magnitude bits of fixed-point coding for `T` (22 for f32, 51 for f64): below
/// `2^MANT_BITS / 2`, `x + 1.5 * 2^MANT_BITS - 1.5 * 2^MANT_BITS` rounds `x` to the nearest
/// integer exactly, and every magnitude converts to `T` exactly.
#[inline(always)]
pub const fn max_quant_bits(mant_bits: u32) -> u32 {
    mant_bits - 1
}

/// True for the states of coded blocks, which take an entry in their chunk's size table
/// (whether or not the rest of the byte is valid).
#[inline(always)]
pub const fn is_coded(state: u8) -> bool {
    state & !state::MANT_MASK != 0
}

/// A block's state byte, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    Zero,
    Const,
    Raw,
    Coded { offset: bool, mant_bits: u32 },
    /// Fixed-point coding with `mag_bits` magnitude bits.
    Quantized { mag_bits: u32 },
}

impl BlockKind {
    /// Parses a state byte; `None` for a byte no encoder writes.
    #[inline]
    pub fn parse<T: SzxFloat>(s: u8) -> Option<Self> {
        let mant_bits = (s & state::MANT_MASK) as u32;
        match s & !state::MANT_MASK {
            0 => match s {
                state::ZERO => Some(BlockKind::Zero),
                state::CONST => Some(BlockKind::Const),
                state::RAW => Some(BlockKind::Raw),
                _ => None,
            },
            state::DIRECT if mant_bits <= T::MANT_BITS => Some(BlockKind::Coded { offset: false, mant_bits }),
            state::OFFSET if mant_bits <= T::MANT_BITS => Some(BlockKind::Coded { offset: true, mant_bits }),
            state::QUANT if (MIN_QUANT_BITS..=max_quant_bits(T::MANT_BITS)).contains(&mant_bits) => {
                Some(BlockKind::Quantized { mag_bits: mant_bits })
            }
            _ => None,
        }
    }

    /// Payload bytes of a block of `n` values, for the kinds whose size is fixed.
    #[inline]
    pub fn fixed_payload_len<T: SzxFloat>(self, n: usize) -> Option<usize> {
        match self {
            BlockKind::Zero => Some(0),
            BlockKind::Const => Some(T::BYTES),
            BlockKind::Raw => Some(T::BYTES * n),
            BlockKind::Coded { .. } | BlockKind::Quantized { .. } => None,
        }
    }
}

/// Bytes of the code section for `n` values (four 2-bit codes per byte).
#[inline(always)]
pub const fn codes_len(n: usize) -> usize {
    n.div_ceil(4)
}

/// Bytes of the residual-bit section for `n` values of `bits` bits each.
#[inline(always)]
pub const fn resi_len(n: usize, bits: u32) -> usize {
    (n * bits as usize).div_ceil(8)
}

/// One group of a coded block: kept patterns and leading-byte counts.
pub struct Group<T: SzxFloat> {
    /// Kept bit patterns (valid up to `len`).
    pub t: [T::Bits; GROUP],
    /// Leading-byte counts (zero past `len`).
    pub lead: [u8; GROUP],
    /// Values in the group.
    pub len: usize,
}

impl<T: SzxFloat> Group<T> {
    /// An empty group.
    #[inline(always)]
    pub fn new() -> Self {
        Group { t: [T::Bits::ZERO; GROUP], lead: [0; GROUP], len: 0 }
    }

    /// The last kept pattern (the `prev` of the next group).
    #[inline(always)]
    pub fn last(&self) -> T::Bits {
        self.t[self.len.saturating_sub(1)]
    }

}

impl<T: SzxFloat> Default for Group<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The parameters of a coded block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coding<T: SzxFloat> {
    /// Subtracted from every value before truncation (offset coding), else zero.
    pub reference: T,
    /// One of [`mode`].
    pub mode: u8,
    /// Mantissa bits kept, `k` (magnitude bits for fixed-point coding).
    pub mant_bits: u32,
    /// Fixed-point coding: the unit `delta = 2^delta_exp`, its inverse and exponent.
    delta: T,
    inv_delta: T,
    pub delta_exp: i32,
    /// Whole bytes per value, `q = L / 8`.
    pub req_bytes: u32,
    /// Residual bits per value, `r = L % 8`.
    pub resi_bits: u32,
    /// Mask of the `L` bits kept.
    pub mask: T::Bits,
    /// Half a unit of the last bit kept (zero when nothing is dropped): added before
    /// masking, it rounds magnitudes to nearest.
    half: T::Bits,
    /// Magnitudes (bit patterns) at or below this are kept as zeros of their sign; zero
    /// (the default) touches nothing else. Only the encoder uses it.
    flush: T::Bits,
    /// `lead(d) = sum of (d < thresholds[j])`: the leading zero bytes of `d`, capped at
    /// `min(3, q)`, plus one if `q < 3` and all `L` bits are zero while `r > 0` (a
    /// threshold of zero never counts).
    thresholds: [T::Bits; 3],
}

impl<T: SzxFloat> Coding<T> {
    /// Coding that keeps `mant_bits` mantissa bits (at most `T::MANT_BITS`) of each
    /// value minus `reference` (`offset`), or of each value.
    #[inline]
    pub fn new(offset: bool, mant_bits: u32, reference: T) -> Self {
        let m = if offset { mode::OFFSET } else { mode::DIRECT };
        let mut c = Self::with_keep(m, 1 + T::EXP_BITS + mant_bits, mant_bits);
        c.reference = if offset { reference } else { T::ZERO };
        c
    }

    /// Fixed-point coding of multiples of `2^delta_exp` (`|delta_exp| < BIAS`) with
    /// `mag_bits` magnitude bits (within [`MIN_QUANT_BITS`] and [`max_quant_bits`]).
    #[inline]
    pub fn quantized(mag_bits: u32, delta_exp: i32) -> Self {
        let mut c = Self::with_keep(mode::QUANT, 1 + mag_bits, mag_bits);
        c.delta = pow2(delta_exp);
        c.inv_delta = pow2(-delta_exp);
        c.delta_exp = delta_exp;
        c
    }

    /// The layout of `keep` kept bits per value, in mode `m`.
    #[inline]
    fn with_keep(m: u8, keep: u32, mant_bits: u32) -> Self {
        let width = T::Bits::BITS;
        let (q, r) = (keep / 8, keep % 8);
        let max_lead = (q + (r > 0) as u32).min(3);
        let thresholds = core::array::from_fn(|j| {
            let j = j as u32;
            if j >= max_lead {
                T::Bits::ZERO
            } else if j < q {
                T::Bits::ONE << (width - 8 * (j + 1))
            } else {
                // The repeat code: every kept bit equal.
                T::Bits::ONE << (width - keep)
            }
        });
        Coding {
            reference: T::ZERO,
            mode: m,
            mant_bits,
            delta: T::ZERO,
            inv_delta: T::ZERO,
            delta_exp: 0,
            req_bytes: q,
            resi_bits: r,
            mask: T::Bits::ALL << (width - keep),
            half: if keep < width { T::Bits::ONE << (width - keep - 1) } else { T::Bits::ZERO },
            flush: T::Bits::ZERO,
            thresholds,
        }
    }

    /// The same coding, keeping every value of magnitude at most `e` (finite, `>= 0`)
    /// as a zero of its sign. Sound for direct coding only, where the kept value is the
    /// value itself and `|v - 0| <= e` is exact.
    #[inline]
    pub fn flushing(self, e: T) -> Self {
        Coding { flush: e.abs().to_bits(), ..self }
    }

    /// The coding a parsed coded state describes, with its reference (offset coding)
    /// or the exponent of its unit (fixed-point coding, `|delta_exp| < BIAS`).
    #[inline(always)]
    pub fn from_kind(kind: BlockKind, reference: T, delta_exp: i32) -> Option<Self> {
        match kind {
            BlockKind::Coded { offset, mant_bits } => Some(Self::new(offset, mant_bits, reference)),
            BlockKind::Quantized { mag_bits } => Some(Self::quantized(mag_bits, delta_exp)),
            _ => None,
        }
    }

    /// The state byte.
    #[inline]
    pub fn state(&self) -> u8 {
        let base = match self.mode {
            mode::DIRECT => state::DIRECT,
            mode::OFFSET => state::OFFSET,
            _ => state::QUANT,
        };
        base | self.mant_bits as u8
    }

    /// Bits kept per value, `L`.
    #[inline(always)]
    pub fn keep_bits(&self) -> u32 {
        self.req_bytes * 8 + self.resi_bits
    }

    /// Largest code: `min(3, q)` leading bytes, or the repeat code `q + 1`.
    #[inline(always)]
    pub fn max_lead(&self) -> u32 {
        (self.req_bytes + (self.resi_bits > 0) as u32).min(3)
    }

    /// Whole bytes stored for a value with code `lead`.
    #[inline(always)]
    pub fn mid_len(&self, lead: u32) -> u32 {
        self.req_bytes.saturating_sub(lead)
    }

    /// True if a value with code `lead` stores its residual bits (all but the repeat code).
    #[inline(always)]
    pub fn stores_residual(&self, lead: u32) -> bool {
        lead <= self.req_bytes
    }

    /// Payload bytes of group `g`: its mid bytes and its residual bytes.
    #[inline(always)]
    pub fn group_len(&self, g: &Group<T>) -> usize {
        let (mut mid, mut resi) = (0u32, 0u32);
        for &l in &g.lead[..g.len] {
            mid += self.mid_len(l as u32);
            resi += self.stores_residual(l as u32) as u32;
        }
        mid as usize + resi_len(resi as usize, self.resi_bits)
    }

    /// Bytes of the field before the codes: the reference (offset coding), the unit's
    /// exponent as an `i16` (fixed-point coding), or nothing.
    #[inline(always)]
    pub fn reference_len(&self) -> usize {
        match self.mode {
            mode::OFFSET => T::BYTES,
            mode::QUANT => 2,
            _ => 0,
        }
    }

    /// Writes the field before the codes into `out[..reference_len()]`.
    #[inline]
    pub fn store_reference(&self, out: &mut [u8]) {
        match self.mode {
            mode::OFFSET => self.reference.to_bits().store_le(out),
            mode::QUANT => out[..2].copy_from_slice(&(self.delta_exp as i16).to_le_bytes()),
            _ => {}
        }
    }

    /// Payload bytes of a block of `n` values before its groups: reference and codes.
    #[inline]
    pub fn head_len(&self, n: usize) -> usize {
        self.reference_len() + codes_len(n)
    }

    /// The kept bits of `v` (`M` must equal `self.mode`).
    ///
    /// Direct and offset coding: the bits of `v` (or of `fl(v - reference)`), magnitude
    /// rounded to nearest at `L` bits (a carry may raise the exponent), or cut off where
    /// rounding would reach the exponent of infinity, or zero if it is at most the flush
    /// threshold. The sign bit is never touched: no carry out of a finite magnitude
    /// reaches it.
    ///
    /// Fixed-point coding: the sign of `v`, then `round(|v| / delta)` (to nearest, ties
    /// to even) in the next `L - 1` bits. `|v| * 2^-delta_exp` is exact (the planner
    /// keeps it below `2^(L - 1)`; a result too small to be exact rounds to 0 either
    /// way), and so is the rounding ([`round_to_uint`]).
    #[inline(always)]
    pub fn quantize<const M: u8>(&self, v: T) -> T::Bits {
        let b = v.to_bits();
        if M == mode::QUANT {
            let n = round_to_uint(v.abs() * self.inv_delta);
            return (b & !T::ABS_MASK) | n << (T::Bits::BITS - 1 - self.mant_bits);
        }
        let y = if M == mode::OFFSET { v - self.reference } else { v };
        let b = y.to_bits();
        let rounded = b.wrapping_add(self.half) & self.mask;
        let kept = if rounded & T::ABS_MASK >= T::INF_BITS { b & self.mask } else { rounded };
        if b & T::ABS_MASK <= self.flush {
            b & !T::ABS_MASK
        } else {
            kept
        }
    }

    /// The value the decoder rebuilds from kept bits `t` (for fixed-point coding
    /// `n * delta` with the sign of `t`, exact: `n < 2^MANT_BITS` and `delta` a normal
    /// power of two).
    #[inline(always)]
    pub fn reconstruct<const M: u8>(&self, t: T::Bits) -> T {
        if M == mode::QUANT {
            let n = (t & T::ABS_MASK) >> (T::Bits::BITS - 1 - self.mant_bits);
            let y = uint_to_float::<T>(n) * self.delta;
            return T::from_bits(y.to_bits() | (t & !T::ABS_MASK));
        }
        let y = T::from_bits(t);
        if M == mode::OFFSET {
            self.reference + y
        } else {
            y
        }
    }

    /// The code of a kept pattern from its xor with the previous one: leading bytes
    /// shared (capped), or the repeat code.
    #[inline(always)]
    pub fn lead(&self, diff: T::Bits) -> u32 {
        (diff < self.thresholds[0]) as u32 + (diff < self.thresholds[1]) as u32 + (diff < self.thresholds[2]) as u32
    }

    /// The residual bits of kept pattern `t`, in the low bits.
    #[inline(always)]
    pub fn residual(&self, t: T::Bits) -> u32 {
        (t >> (T::Bits::BITS - self.keep_bits())).low_u32() & ((1u32 << self.resi_bits) - 1)
    }

    /// Folds the rounded reconstruction errors `|x - x'|` of offset-coded group `g` (of
    /// the values `xs`) into `worst`, lane by lane.
    #[inline(always)]
    pub fn fold_offset_errors(&self, xs: &[T], g: &Group<T>, worst: &mut [T; ERR_LANES]) {
        for (vs, ts) in xs.chunks(ERR_LANES).zip(g.t.chunks(ERR_LANES)) {
            for ((w, &v), &tv) in worst.iter_mut().zip(vs).zip(ts) {
                *w = w.fmax((v - self.reconstruct::<{ mode::OFFSET }>(tv)).abs());
            }
        }
    }

    /// Quantizes one group `xs` (at most [`GROUP`] values) into `g`: kept patterns and
    /// leading-byte counts, the first against `prev` (the last pattern before the group).
    /// Counts past `xs.len()` are zero. The loops run over whole fixed-size arrays, so
    /// they compile to vector code.
    #[inline(always)]
    pub fn group<const M: u8>(&self, xs: &[T], prev: T::Bits, g: &mut Group<T>) {
        let m = xs.len().min(GROUP);
        match <&[T; GROUP]>::try_from(xs) {
            Ok(full) => {
                for (t, &v) in g.t.iter_mut().zip(full) {
                    *t = self.quantize::<M>(v);
                }
            }
            Err(_) => {
                for (t, &v) in g.t.iter_mut().zip(xs) {
                    *t = self.quantize::<M>(v);
                }
            }
        }
        g.lead[0] = self.lead(g.t[0] ^ prev) as u8;
        for i in 1..GROUP {
            g.lead[i] = self.lead(g.t[i] ^ g.t[i - 1]) as u8;
        }
        g.lead[m..].fill(0);
        g.len = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip() {
        for s in 0..=255u8 {
            if let Some(kind) = BlockKind::parse::<f32>(s) {
                if let Some(c) = Coding::<f32>::from_kind(kind, 0.0, -3) {
                    assert_eq!(c.state(), s);
                    assert!(c.mant_bits <= 23);
                }
            }
        }
        assert_eq!(BlockKind::parse::<f32>(0x40 | 24), None);
        assert_eq!(BlockKind::parse::<f64>(0x80 | 52), Some(BlockKind::Coded { offset: true, mant_bits: 52 }));
        assert_eq!(BlockKind::parse::<f64>(0x03), None);
        assert_eq!(BlockKind::parse::<f64>(0xc0), None);
    }

    #[test]
    fn lead_counts_shared_bytes_up_to_the_cap() {
        let c = Coding::<f32>::new(false, 23, 0.0);
        assert_eq!((c.req_bytes, c.resi_bits, c.max_lead()), (4, 0, 3));
        assert_eq!(c.lead(0), 3);
        assert_eq!(c.lead(0x0000_00ff), 3);
        assert_eq!(c.lead(0x0000_0100), 2);
        assert_eq!(c.lead(0x00ff_ffff), 1);
        assert_eq!(c.lead(0x0100_0000), 0);
        assert!(c.stores_residual(3));
        // k = 2: L = 11 bits, one whole byte and 3 residual bits; code 1 shares the byte,
        // code 2 repeats the whole pattern.
        let c = Coding::<f32>::new(false, 2, 0.0);
        assert_eq!((c.req_bytes, c.resi_bits, c.max_lead(), c.mask), (1, 3, 2, 0xffe0_0000));
        assert_eq!(c.lead(0), 2);
        assert_eq!(c.lead(0x0020_0000), 1);
        assert_eq!(c.lead(0x0100_0000), 0);
        assert_eq!((c.mid_len(0), c.mid_len(1), c.mid_len(2)), (1, 0, 0));
        assert!(c.stores_residual(1) && !c.stores_residual(2));
        assert_eq!(c.residual(0x3fe0_0000), 0b111);
        // L = 16 (whole bytes only): lead 2 is already a repeat.
        let c = Coding::<f32>::new(false, 7, 0.0);
        assert_eq!((c.req_bytes, c.resi_bits, c.max_lead()), (2, 0, 2));
        let c = Coding::<f64>::new(true, 52, 1.0);
        assert_eq!((c.req_bytes, c.resi_bits, c.max_lead(), c.mask), (8, 0, 3, u64::MAX));
    }

    #[test]
    fn flushing_keeps_small_magnitudes_as_signed_zeros() {
        let c = Coding::<f32>::new(false, 6, 0.0).flushing(1e-2);
        assert_eq!(c.quantize::<{ mode::DIRECT }>(1e-2), 0);
        assert_eq!(c.quantize::<{ mode::DIRECT }>(-3e-3), 0x8000_0000);
        assert_ne!(c.quantize::<{ mode::DIRECT }>(1.1e-2) & 0x7fff_ffff, 0);
        assert_eq!(Coding::<f32>::new(false, 6, 0.0).quantize::<{ mode::DIRECT }>(-0.0), 0x8000_0000);
    }

    #[test]
    fn fixed_point_rounds_to_the_nearest_multiple_and_keeps_signs() {
        // delta = 2^-3; 9 magnitude bits: L = 10, one whole byte and 2 residual bits.
        let c = Coding::<f32>::quantized(9, -3);
        assert_eq!((c.req_bytes, c.resi_bits, c.reference_len()), (1, 2, 2));
        let q = |v: f32| c.quantize::<{ mode::QUANT }>(v);
        let back = |v: f32| c.reconstruct::<{ mode::QUANT }>(q(v));
        assert_eq!(q(1.0), 8 << 22);
        assert_eq!(q(-1.0), 0x8000_0000 | 8 << 22);
        assert_eq!(back(1.06), 1.0);
        assert_eq!(back(1.0625), 1.0, "ties to even");
        assert_eq!(back(1.1875), 1.25, "ties to even");
        assert_eq!(back(-63.9), -63.875);
        assert_eq!(back(-0.01).to_bits(), (-0.0f32).to_bits());
        for i in 0..10_000 {
            let v = (i as f32 * 0.0063).sin() * 60.0;
            assert!(((v - back(v)) as f64).abs() <= 0.0625, "{v}");
        }
        let mut st = [0u8; 2];
        c.store_reference(&mut st);
        assert_eq!(i16::from_le_bytes(st), -3);
        assert_eq!(BlockKind::parse::<f32>(0xc0 | 9), Some(BlockKind::Quantized { mag_bits: 9 }));
        assert_eq!(BlockKind::parse::<f32>(0xc0 | 6), None);
        assert_eq!(BlockKind::parse::<f32>(0xc0 | 23), None);
        assert_eq!(BlockKind::parse::<f64>(0xc0 | 51), Some(BlockKind::Quantized { mag_bits: 51 }));
    }
}
