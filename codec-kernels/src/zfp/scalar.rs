//! The scalar types zfp codes (f32, f64) and the integer types of their blocks.
//!
//! One trait per role, implemented for both widths by a macro, so that every coding step
//! is written once and instantiated per type.

/// Signed integer holding a block's fixed-point values (`i32` for f32, `i64` for f64).
///
/// All arithmetic wraps, as zfp's C code does in practice: the only values that can
/// overflow come from the tiny-value edge case (every value `MIN`), and those must
/// reproduce the library's wrapped results bit for bit.
pub trait BlockInt: Copy + Default + PartialEq + core::fmt::Debug {
    /// The unsigned (negabinary) coefficient type of the same width.
    type U: Coefficient;
    /// The most negative value (what C's float-to-int conversion yields on overflow).
    const MIN: Self;
    /// Wrapping `self + o`.
    fn add(self, o: Self) -> Self;
    /// Wrapping `self - o`.
    fn sub(self, o: Self) -> Self;
    /// Arithmetic right shift by one (floor division by two).
    fn half(self) -> Self;
    /// Wrapping left shift by one.
    fn twice(self) -> Self;
    /// Two's complement to negabinary: `(x + M) ^ M` with `M = 0xaa..aa`.
    fn to_negabinary(self) -> Self::U;
    /// Negabinary to two's complement: `(u ^ M) - M`.
    fn from_negabinary(u: Self::U) -> Self;
}

/// Unsigned negabinary coefficient whose bits are coded plane by plane.
pub trait Coefficient: Copy + Default + PartialEq + core::fmt::Debug {
    /// Bits per coefficient, zfp's `intprec`.
    const BITS: u32;
    /// Zero-extends to 64 bits.
    fn to_u64(self) -> u64;
    /// Keeps the low `BITS` bits.
    fn from_u64(v: u64) -> Self;
}

/// A floating-point type zfp codes.
pub trait Scalar: Copy + Default + PartialOrd + core::fmt::Debug + Send + Sync + 'static {
    /// Fixed-point block values.
    type Int: BlockInt<U = Self::UInt>;
    /// Negabinary coefficients.
    type UInt: Coefficient;
    /// Exponent bits (8 or 11).
    const EBITS: u32;
    /// Exponent bias (127 or 1023).
    const EBIAS: i32;
    /// Bit width of the fixed-point values, zfp's `intprec` (32 or 64).
    const PBITS: u32;
    /// zfp's type code in the stream header metadata, minus one (2 for float, 3 for double).
    const HEADER_TYPE: u64;
    /// Zero.
    const ZERO: Self;
    /// `|self|` as raw bits (sign cleared); orders like the magnitudes for finite values.
    fn abs_bits(self) -> u64;
    /// True if `abs_bits` belongs to an infinity or a NaN.
    fn abs_bits_non_finite(abs_bits: u64) -> bool;
    /// zfp's block exponent from the largest `abs_bits` of a block: the `frexp` exponent
    /// of the maximum, clamped to `1 - EBIAS` for subnormals, `-EBIAS` for zero.
    fn exponent_of_abs_bits(abs_bits: u64) -> i32;
    /// `2^e` as C's `ldexp(1, e)` returns it: exact, subnormal, zero or infinity.
    fn pow2(e: i32) -> Self;
    /// C's `(Int)(scale * self)`, where `scale` is finite.
    fn quantize(self, scale: Self) -> Self::Int;
    /// C's `(Scalar)q * scale`: round to nearest even, then an exact product.
    fn dequantize(q: Self::Int, scale: Self) -> Self;
    /// True unless infinite or NaN.
    fn finite(self) -> bool;
}

macro_rules! block_int {
    ($int:ty, $uint:ty, $mask:expr) => {
        impl BlockInt for $int {
            type U = $uint;
            const MIN: Self = <$int>::MIN;
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn half(self) -> Self {
                self >> 1
            }
            #[inline(always)]
            fn twice(self) -> Self {
                self.wrapping_shl(1)
            }
            #[inline(always)]
            fn to_negabinary(self) -> $uint {
                (self as $uint).wrapping_add($mask) ^ $mask
            }
            #[inline(always)]
            fn from_negabinary(u: $uint) -> Self {
                (u ^ $mask).wrapping_sub($mask) as $int
            }
        }

        impl Coefficient for $uint {
            const BITS: u32 = <$uint>::BITS;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $uint
            }
        }
    };
}

block_int!(i32, u32, 0xaaaa_aaaau32);
block_int!(i64, u64, 0xaaaa_aaaa_aaaa_aaaau64);

macro_rules! scalar {
    ($float:ty, $int:ty, $uint:ty, ebits: $ebits:expr, header_type: $ht:expr) => {
        impl Scalar for $float {
            type Int = $int;
            type UInt = $uint;
            const EBITS: u32 = $ebits;
            const EBIAS: i32 = (1 << ($ebits - 1)) - 1;
            const PBITS: u32 = <$uint>::BITS;
            const HEADER_TYPE: u64 = $ht;
            const ZERO: Self = 0.0;

            #[inline(always)]
            fn abs_bits(self) -> u64 {
                (self.to_bits() & (<$uint>::MAX >> 1)) as u64
            }

            #[inline(always)]
            fn abs_bits_non_finite(abs_bits: u64) -> bool {
                abs_bits >= <$float>::INFINITY.to_bits() as u64
            }

            #[inline(always)]
            fn exponent_of_abs_bits(abs_bits: u64) -> i32 {
                // A positive value with biased exponent field `be` has frexp exponent
                // `be - EBIAS + 1`; subnormals (be = 0) land exactly on the clamp 1 - EBIAS.
                if abs_bits == 0 {
                    -Self::EBIAS
                } else {
                    (abs_bits >> (<$uint>::BITS - 1 - $ebits)) as i32 - Self::EBIAS + 1
                }
            }

            #[inline(always)]
            fn pow2(e: i32) -> Self {
                const MANT: i32 = <$float>::MANTISSA_DIGITS as i32 - 1;
                let ebias = Self::EBIAS;
                if e > ebias {
                    <$float>::INFINITY
                } else if e >= 1 - ebias {
                    <$float>::from_bits(((e + ebias) as $uint) << MANT)
                } else if e >= 1 - ebias - MANT {
                    <$float>::from_bits((1 as $uint) << (e - (1 - ebias - MANT)))
                } else {
                    // 2^(emin - 1) and below round to zero (a tie goes to the even zero).
                    0.0
                }
            }

            #[inline(always)]
            fn quantize(self, scale: Self) -> $int {
                // |scale * self| < 2^(PBITS - 2) whenever scale is finite, so the
                // truncating conversion is exact and never saturates.
                (scale * self) as $int
            }

            #[inline(always)]
            fn dequantize(q: $int, scale: Self) -> Self {
                (q as $float) * scale
            }

            #[inline(always)]
            fn finite(self) -> bool {
                self.is_finite()
            }
        }
    };
}

scalar!(f32, i32, u32, ebits: 8, header_type: 2);
scalar!(f64, i64, u64, ebits: 11, header_type: 3);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_matches_frexp() {
        // frexp(x) = f * 2^e with 0.5 <= f < 1.
        let cases: [(f64, i32); 6] = [(1.0, 1), (0.75, 0), (0.5, 0), (3.0, 2), (1e-300, -996), (f64::MAX, 1024)];
        for (x, e) in cases {
            assert_eq!(f64::exponent_of_abs_bits(x.abs_bits()), e, "{x}");
        }
        assert_eq!(f32::exponent_of_abs_bits(0.0f32.abs_bits()), -127);
        assert_eq!(f32::exponent_of_abs_bits(1e-40f32.abs_bits()), -126);
        assert_eq!(f32::exponent_of_abs_bits((-6.0f32).abs_bits()), 3);
        assert_eq!(f64::exponent_of_abs_bits(5e-324f64.abs_bits()), -1022);
    }

    #[test]
    fn pow2_is_ldexp_of_one() {
        assert_eq!(f32::pow2(0), 1.0);
        assert_eq!(f32::pow2(127), 2f32.powi(127));
        assert_eq!(f32::pow2(128), f32::INFINITY);
        assert_eq!(f32::pow2(-126), f32::MIN_POSITIVE);
        assert_eq!(f32::pow2(-149), f32::from_bits(1));
        assert_eq!(f32::pow2(-150), 0.0);
        assert_eq!(f64::pow2(-1074), f64::from_bits(1));
        assert_eq!(f64::pow2(-1075), 0.0);
        assert_eq!(f64::pow2(1023), 2f64.powi(1023));
        assert_eq!(f64::pow2(1024), f64::INFINITY);
        for e in -1022..1024 {
            assert_eq!(f64::pow2(e), 2f64.powi(e), "2^{e}");
        }
        for e in -1074..-1022 {
            assert_eq!(f64::pow2(e), f64::from_bits(1 << (e + 1074)), "2^{e}");
        }
    }

    #[test]
    fn negabinary_round_trips_and_orders_bits() {
        for q in [0i32, 1, -1, 2, -2, i32::MAX, i32::MIN, 123_456_789, -987_654_321] {
            assert_eq!(i32::from_negabinary(q.to_negabinary()), q);
        }
        for q in [0i64, 1, -1, i64::MAX, i64::MIN, -5_000_000_000] {
            assert_eq!(i64::from_negabinary(q.to_negabinary()), q);
        }
        // Negabinary digits: 1 -> 1, -1 -> 11 (-2 + 1), 2 -> 110 (4 - 2).
        assert_eq!(1i32.to_negabinary(), 1);
        assert_eq!((-1i32).to_negabinary(), 3);
        assert_eq!(2i32.to_negabinary(), 6);
    }

    #[test]
    fn integer_helpers_wrap_like_c() {
        assert_eq!(i32::MIN.add(i32::MIN), 0);
        assert_eq!((-3i32).half(), -2);
        assert_eq!(i32::MIN.twice(), 0);
        assert_eq!(<f32 as Scalar>::EBIAS, 127);
        assert_eq!(<f64 as Scalar>::EBIAS, 1023);
        assert!(f32::abs_bits_non_finite(f32::NAN.abs_bits()));
        assert!(f64::abs_bits_non_finite(f64::NEG_INFINITY.abs_bits()));
        assert!(!f64::abs_bits_non_finite(f64::MAX.abs_bits()));
    }
}
