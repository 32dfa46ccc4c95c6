//! IEEE binary16 (f16) and bfloat16 (bf16) to and from f32, bit-exact.
//!
//! Half-precision gradient buffers are widened to f32 before compression and narrowed
//! after. The conversions work on bit patterns (no hardware half support needed):
//! narrowing rounds to nearest, ties to even; subnormals, infinities and signed zeros
//! are exact; a NaN stays a NaN with its sign and top payload bits, and is made quiet.
//! These are the results of the `half` crate and of x86 F16C, bit for bit.

use crate::grid::Grid;
use crate::shared::SharedOut;

/// Rounds `man` right by `shift` bits (1..=31), to nearest with ties to even.
#[inline(always)]
const fn shift_round_even(man: u32, shift: u32) -> u32 {
    let kept = man >> shift;
    let half = 1u32 << (shift - 1);
    let rest = man & ((half << 1) - 1);
    // Round up above the halfway point, or at it when the kept part is odd.
    if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

/// f32 to the bits of the nearest f16.
#[inline(always)]
pub const fn f32_to_f16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    let sign = (x >> 16) & 0x8000;
    let exp = (x >> 23) & 0xff;
    let man = x & 0x7f_ffff;
    if exp == 0xff {
        let quiet = if man != 0 { 0x200 } else { 0 };
        return (sign | 0x7c00 | quiet | (man >> 13)) as u16;
    }
    let e = exp as i32 - 127 + 15;
    if e >= 0x1f {
        return (sign | 0x7c00) as u16;
    }
    if e <= 0 {
        // Below f16's normal range: a subnormal (or zero) with the hidden bit made
        // explicit. Values under half the smallest subnormal round to zero.
        if e < -10 {
            return sign as u16;
        }
        return (sign | shift_round_even(man | 0x80_0000, (14 - e) as u32)) as u16;
    }
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    (sign | (((e as u32) << 10) + shift_round_even(man, 13))) as u16
}

/// The f32 equal to the f16 with bits `h` (exact: every f16 is an f32).
#[inline(always)]
pub const fn f16_bits_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    let bits = if exp == 0x1f {
        if man == 0 {
            sign | 0x7f80_0000
        } else {
            sign | 0x7fc0_0000 | (man << 13)
        }
    } else if exp == 0 {
        if man == 0 {
            sign
        } else {
            // Subnormal man * 2^-24: normalise so the leading one becomes the hidden bit.
            let lz = man.leading_zeros() - 22;
            sign | ((127 - 15 - lz) << 23) | ((man << (14 + lz)) & 0x7f_ffff)
        }
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// f32 to the bits of the nearest bf16.
#[inline(always)]
pub const fn f32_to_bf16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    if x & 0x7fff_ffff > 0x7f80_0000 {
        return ((x >> 16) | 0x40) as u16;
    }
    // bf16 is the top half of f32, so rounding the low half carries correctly into the
    // exponent (and the largest finite values round up to infinity).
    ((x & 0x8000_0000) >> 16 | shift_round_even(x & 0x7fff_ffff, 16)) as u16
}

/// The f32 equal to the bf16 with bits `h`.
#[inline(always)]
pub const fn bf16_bits_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let h = if h & 0x7fff > 0x7f80 { h | 0x40 } else { h };
    f32::from_bits(h << 16)
}

/// A 16-bit floating-point format.
pub trait HalfFormat {
    /// Name as it appears in kernel names (`f16`, `bf16`).
    const NAME: &'static str;
    /// Widens the bits `h` to f32 (exact).
    fn to_f32(h: u16) -> f32;
    /// Narrows `v`, rounding to nearest even.
    fn from_f32(v: f32) -> u16;
}

/// IEEE 754 binary16.
pub struct F16;
/// bfloat16 (f32's sign and exponent, 7 mantissa bits).
pub struct Bf16;

impl HalfFormat for F16 {
    const NAME: &'static str = "f16";
    #[inline(always)]
    fn to_f32(h: u16) -> f32 {
        f16_bits_to_f32(h)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> u16 {
        f32_to_f16_bits(v)
    }
}

impl HalfFormat for Bf16 {
    const NAME: &'static str = "bf16";
    #[inline(always)]
    fn to_f32(h: u16) -> f32 {
        bf16_bits_to_f32(h)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> u16 {
        f32_to_bf16_bits(v)
    }
}

/// `dst[i] = f(src[i])` for `i < min(src.len(), dst.len())`, grid-stride.
#[inline(always)]
fn map_body<A: Copy, B: crate::shared::Cell>(g: Grid, src: &[A], dst: &SharedOut<'_, B>, f: impl Fn(A) -> B) {
    for i in g.stride_iter(src.len().min(dst.len())) {
        if let Some(&a) = src.get(i) {
            dst.set(i, f(a));
        }
    }
}

/// Kernel body: widens half-precision bits to f32.
#[inline(always)]
pub fn half_to_f32_body<H: HalfFormat>(g: Grid, src: &[u16], dst: &SharedOut<'_, f32>) {
    map_body(g, src, dst, H::to_f32)
}

/// Kernel body: narrows f32 to half-precision bits.
#[inline(always)]
pub fn f32_to_half_body<H: HalfFormat>(g: Grid, src: &[f32], dst: &SharedOut<'_, u16>) {
    map_body(g, src, dst, H::from_f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn every_half_widens_like_the_half_crate() {
        for h in 0..=u16::MAX {
            assert_eq!(f16_bits_to_f32(h).to_bits(), f16::from_bits(h).to_f32().to_bits(), "f16 {h:#06x}");
            assert_eq!(bf16_bits_to_f32(h).to_bits(), bf16::from_bits(h).to_f32().to_bits(), "bf16 {h:#06x}");
        }
    }

    #[test]
    fn every_half_survives_widening_and_narrowing() {
        for h in 0..=u16::MAX {
            let nan = f16::from_bits(h).is_nan();
            let back = f32_to_f16_bits(f16_bits_to_f32(h));
            assert!(back == h || (nan && back == h | 0x200), "f16 {h:#06x} -> {back:#06x}");
            let nan = bf16::from_bits(h).is_nan();
            let back = f32_to_bf16_bits(bf16_bits_to_f32(h));
            assert!(back == h || (nan && back == h | 0x40), "bf16 {h:#06x} -> {back:#06x}");
        }
    }

    fn check_narrowing(x: u32) {
        let v = f32::from_bits(x);
        assert_eq!(f32_to_f16_bits(v), f16::from_f32(v).to_bits(), "f16 from {x:#010x}");
        assert_eq!(f32_to_bf16_bits(v), bf16::from_f32(v).to_bits(), "bf16 from {x:#010x}");
    }

    #[test]
    fn narrowing_matches_the_half_crate_at_every_rounding_boundary() {
        // For every pair of neighbouring halves, the f32s at and around the midpoint (ties
        // go to even) and at the neighbours themselves; both signs.
        for h in 0..0x7c00u16 {
            for sign in [0u32, 0x8000_0000] {
                let (lo_v, hi_v) = (f16_bits_to_f32(h), f16_bits_to_f32(h + 1));
                // Midpoints are exact in f32; the last one is the overflow threshold.
                let mid = if h == 0x7bff { 65520f32 } else { (lo_v + hi_v) * 0.5 }.to_bits();
                let (lo, hi) = (lo_v.to_bits(), hi_v.to_bits());
                for x in [lo, lo + 1, mid - 1, mid, mid + 1, hi - 1] {
                    check_narrowing(x | sign);
                }
            }
        }
        for h in 0..0x7f80u32 {
            let mid = (h << 16) | 0x8000;
            for x in [mid - 1, mid, mid + 1, h << 16] {
                check_narrowing(x);
                check_narrowing(x | 0x8000_0000);
            }
        }
    }

    #[test]
    fn narrowing_matches_the_half_crate_across_all_f32() {
        // A stride coprime to 2^32 visits every exponent, subnormals, infinities and NaN
        // payloads (quiet and signalling) of both signs.
        let mut x = 0u32;
        for _ in 0..(1u32 << 20) {
            check_narrowing(x);
            x = x.wrapping_add(4093);
        }
        for x in [0x7f80_0000, 0xff80_0000, 0x7f80_0001, 0x7fc0_0000, 0xffbf_ffff, 0x7f7f_ffff, 0x0000_0001, 0x8000_0000] {
            check_narrowing(x);
        }
    }

    #[test]
    fn bodies_convert_every_index_once() {
        let src: [u16; 5] = [0x3c00, 0xc000, 0x7c00, 0x0001, 0x7e01];
        let mut wide = [0f32; 5];
        let mut narrow = [0u16; 5];
        let cfg_threads = 2;
        {
            let out = SharedOut::new(&mut wide[..]);
            for t in 0..cfg_threads {
                half_to_f32_body::<F16>(Grid { block_idx: 0, block_dim: cfg_threads, thread_idx: t, grid_dim: 1 }, &src, &out);
            }
        }
        assert_eq!(&wide[..4], &[1.0, -2.0, f32::INFINITY, 2f32.powi(-24)]);
        assert!(wide[4].is_nan());
        {
            let out = SharedOut::new(&mut narrow[..]);
            for t in 0..cfg_threads {
                f32_to_half_body::<F16>(Grid { block_idx: 0, block_dim: cfg_threads, thread_idx: t, grid_dim: 1 }, &wide, &out);
            }
        }
        assert_eq!(narrow, src);
    }
}
