//! Block states and the leading-byte reuse coding of one block.
//!
//! A coded block keeps, for every value `y` (the value itself, or its difference from
//! the block's reference), the top `L = 1 + EXP_BITS + k` bits of `y`'s bit pattern,
//! rounded to nearest: sign, exponent and `k` mantissa bits. Of those `L` bits the first `L / 8` whole bytes
//! go through SZx's leading-byte reuse: a 2-bit code per value says how many leading
//! bytes (0 to 3) equal those of the previous value in the block, and only the others
//! are stored. The remaining `L % 8` bits of every value go to a packed bit section.
//!
//! Payload of a coded block of `n` values (see `docs/formats/szx.md`):
//! `[reference: W bytes, offset coding only][mid bytes][codes: ceil(n/4)][residual bits:
//! ceil(n * (L % 8) / 8)]`. The mid bytes (each value's whole bytes not reused, least
//! significant first) come first so that their variable length ends where the
//! fixed-size sections, located from the payload's end, begin.

use super::scalar::{Bits, SzxFloat};

/// Largest block size: a raw block of `f64` then takes 32 KiB, so every payload size fits
/// the `u16` entries of a chunk's size table.
pub const MAX_BLOCK_SIZE: usize = 4096;

/// Values a coder handles per step, so per-value intermediates live in small fixed
/// arrays (a multiple of 8: eight residuals fill whole bytes, four codes one byte).
pub const GROUP: usize = 64;

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
    /// The mantissa-bit field of a coded state.
    pub const MANT_MASK: u8 = 0x3f;
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
            BlockKind::Coded { .. } => None,
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

    /// Sum of the leading-byte counts: the whole bytes the reuse saves.
    #[inline(always)]
    pub fn reused(&self) -> u32 {
        self.lead.iter().map(|&l| l as u32).sum()
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
    /// Offset coding (reference stored) or direct coding.
    pub offset: bool,
    /// Mantissa bits kept, `k`.
    pub mant_bits: u32,
    /// Whole bytes per value before reuse, `L / 8`.
    pub req_bytes: u32,
    /// Residual bits per value, `L % 8`.
    pub resi_bits: u32,
    /// Mask of the `L` bits kept.
    pub mask: T::Bits,
    /// Half a unit of the last bit kept (zero when nothing is dropped): added before
    /// masking, it rounds magnitudes to nearest.
    half: T::Bits,
    /// `lead(d) = sum of (d < thresholds[j])`: the leading zero bytes of `d`, capped at
    /// `min(3, req_bytes)` (a threshold of zero never counts).
    thresholds: [T::Bits; 3],
}

impl<T: SzxFloat> Coding<T> {
    /// Coding that keeps `mant_bits` mantissa bits (at most `T::MANT_BITS`) of each
    /// value minus `reference` (`offset`), or of each value.
    #[inline]
    pub fn new(offset: bool, mant_bits: u32, reference: T) -> Self {
        let width = T::Bits::BITS;
        let keep = 1 + T::EXP_BITS + mant_bits;
        let req_bytes = keep / 8;
        let max_lead = req_bytes.min(3);
        let thresholds =
            core::array::from_fn(|j| if (j as u32) < max_lead { T::Bits::ONE << (width - 8 * (j as u32 + 1)) } else { T::Bits::ZERO });
        Coding {
            reference: if offset { reference } else { T::ZERO },
            offset,
            mant_bits,
            req_bytes,
            resi_bits: keep % 8,
            mask: T::Bits::ALL << (width - keep),
            half: if keep < width { T::Bits::ONE << (width - keep - 1) } else { T::Bits::ZERO },
            thresholds,
        }
    }

    /// The coding a parsed coded state describes, with its reference.
    #[inline]
    pub fn from_kind(kind: BlockKind, reference: T) -> Option<Self> {
        match kind {
            BlockKind::Coded { offset, mant_bits } => Some(Self::new(offset, mant_bits, reference)),
            _ => None,
        }
    }

    /// The state byte.
    #[inline]
    pub fn state(&self) -> u8 {
        (if self.offset { state::OFFSET } else { state::DIRECT }) | self.mant_bits as u8
    }

    /// Bits kept per value, `L`.
    #[inline(always)]
    pub fn keep_bits(&self) -> u32 {
        self.req_bytes * 8 + self.resi_bits
    }

    /// Largest leading-byte count a code may hold.
    #[inline(always)]
    pub fn max_lead(&self) -> u32 {
        self.req_bytes.min(3)
    }

    /// Bytes of the reference field.
    #[inline(always)]
    pub fn reference_len(&self) -> usize {
        if self.offset {
            T::BYTES
        } else {
            0
        }
    }

    /// Payload bytes of a block of `n` values apart from the mid bytes.
    #[inline]
    pub fn fixed_len(&self, n: usize) -> usize {
        self.reference_len() + codes_len(n) + resi_len(n, self.resi_bits)
    }

    /// The kept bits of `v` (`OFFSET` must equal `self.offset`): its magnitude rounded
    /// to nearest at `L` bits (a carry may raise the exponent), or cut off where
    /// rounding would reach the exponent of infinity. The sign bit is never touched:
    /// no carry out of a finite magnitude reaches it.
    #[inline(always)]
    pub fn quantize<const OFFSET: bool>(&self, v: T) -> T::Bits {
        let y = if OFFSET { v - self.reference } else { v };
        let b = y.to_bits();
        let rounded = b.wrapping_add(self.half) & self.mask;
        if rounded & T::ABS_MASK >= T::INF_BITS {
            b & self.mask
        } else {
            rounded
        }
    }

    /// The value the decoder rebuilds from kept bits `t`.
    #[inline(always)]
    pub fn reconstruct<const OFFSET: bool>(&self, t: T::Bits) -> T {
        let y = T::from_bits(t);
        if OFFSET {
            self.reference + y
        } else {
            y
        }
    }

    /// Number of leading bytes (capped) that two kept patterns share, from their xor.
    #[inline(always)]
    pub fn lead(&self, diff: T::Bits) -> u32 {
        (diff < self.thresholds[0]) as u32 + (diff < self.thresholds[1]) as u32 + (diff < self.thresholds[2]) as u32
    }

    /// The residual bits of kept pattern `t`, in the low bits.
    #[inline(always)]
    pub fn residual(&self, t: T::Bits) -> u32 {
        (t >> (T::Bits::BITS - self.keep_bits())).low_u32() & ((1u32 << self.resi_bits) - 1)
    }

    /// Quantizes one group `xs` (at most [`GROUP`] values) into `g`: kept patterns and
    /// leading-byte counts, the first against `prev` (the last pattern before the group).
    /// Counts past `xs.len()` are zero. The loops run over whole fixed-size arrays, so
    /// they compile to vector code.
    #[inline(always)]
    pub fn group<const OFFSET: bool>(&self, xs: &[T], prev: T::Bits, g: &mut Group<T>) {
        let m = xs.len().min(GROUP);
        match <&[T; GROUP]>::try_from(xs) {
            Ok(full) => {
                for (t, &v) in g.t.iter_mut().zip(full) {
                    *t = self.quantize::<OFFSET>(v);
                }
            }
            Err(_) => {
                for (t, &v) in g.t.iter_mut().zip(xs) {
                    *t = self.quantize::<OFFSET>(v);
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
                if let Some(c) = Coding::<f32>::from_kind(kind, 0.0) {
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
        // k = 2: L = 11 bits, one whole byte and 3 residual bits; at most one byte reused.
        let c = Coding::<f32>::new(false, 2, 0.0);
        assert_eq!((c.req_bytes, c.resi_bits, c.max_lead(), c.mask), (1, 3, 1, 0xffe0_0000));
        assert_eq!(c.lead(0), 1);
        assert_eq!(c.lead(0x0020_0000), 1);
        assert_eq!(c.residual(0x3fe0_0000), 0b111);
        let c = Coding::<f64>::new(true, 52, 1.0);
        assert_eq!((c.req_bytes, c.resi_bits, c.max_lead(), c.mask), (8, 0, 3, u64::MAX));
    }
}
