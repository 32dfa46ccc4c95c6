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
///
/// The per-value loops of block-floating-point conversion are methods here, written
/// once in a macro with the concrete types, so that they compile to packed
/// instructions where the target has them.
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
    /// Zero.
    const ZERO: Self;
    /// True unless infinite or NaN.
    fn finite(self) -> bool;
    /// `2^e` as C's `ldexp(1, e)` returns it: exact, subnormal, zero or infinity.
    fn pow2(e: i32) -> Self;
    /// zfp's common exponent of a block: the `frexp` exponent of the largest magnitude,
    /// clamped to `1 - EBIAS` for subnormals, `-EBIAS` if all are zero; `None` if a
    /// value is infinite or NaN.
    fn block_exponent(values: &[Self]) -> Option<i32>;
    /// C's `(Int)(s * x)` for every value, `s = 2^(PBITS - 2 - emax)`.
    ///
    /// When `s` overflows (block maximum below about 2^-98 for f32 or 2^-962 for f64,
    /// zfp issue #119), the C code converts infinities and NaNs, which x86 turns into
    /// `Int::MIN` for every value; this reproduces that stream.
    fn quantize(values: &[Self], emax: i32, out: &mut [Self::Int]);
    /// C's `(Scalar)q * s` for every value, `s = 2^(emax - (PBITS - 2))`: the conversion
    /// rounds to nearest even, then the product is exact or underflows.
    fn dequantize(ints: &[Self::Int], emax: i32, out: &mut [Self]);
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
    ($float:ty, $int:ty, $uint:ty, ebits: $ebits:expr) => {
        impl Scalar for $float {
            type Int = $int;
            type UInt = $uint;
            const EBITS: u32 = $ebits;
            const EBIAS: i32 = (1 << ($ebits - 1)) - 1;
            const PBITS: u32 = <$uint>::BITS;
            const ZERO: Self = 0.0;

            #[inline(always)]
            fn finite(self) -> bool {
                self.is_finite()
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
            fn block_exponent(values: &[Self]) -> Option<i32> {
                // The exponent field decides; it sits in the high 32 bits of |v|, whose
                // maximum (an i32 reduction) is cheap. Zero and subnormal blocks both
                // have field 0 and differ in whether any bit is set.
                const HI_SHIFT: u32 = <$uint>::BITS - 32;
                const FIELD_SHIFT: u32 = <$float>::MANTISSA_DIGITS - 1 - HI_SHIFT;
                let mut hi_max = 0i32;
                let mut any: $uint = 0;
                for &v in values {
                    let bits = v.to_bits() & (<$uint>::MAX >> 1);
                    hi_max = hi_max.max((bits >> HI_SHIFT) as i32);
                    any |= bits;
                }
                let field = hi_max >> FIELD_SHIFT;
                if field > 2 * Self::EBIAS {
                    return None;
                }
                // A positive value with biased exponent field `be` has frexp exponent
                // `be - EBIAS + 1`; subnormals (be = 0) land exactly on the clamp 1 - EBIAS.
                Some(if any == 0 { -Self::EBIAS } else { field - Self::EBIAS + 1 })
            }

            #[inline(always)]
            fn quantize(values: &[Self], emax: i32, out: &mut [$int]) {
                // 2^(PBITS - 1): the first magnitude the integer type cannot hold.
                const LIMIT: $float = (1u64 << (<$uint>::BITS - 1)) as $float;
                let scale = Self::pow2(Self::PBITS as i32 - 2 - emax);
                for (q, &v) in out.iter_mut().zip(values) {
                    let p = scale * v;
                    // zfp's C cast compiles to cvtts?2si, which yields MIN for NaN and
                    // out-of-range values: exactly what an overflowing scale produces.
                    *q = if p.abs() < LIMIT {
                        // SAFETY: p is finite and |p| < 2^(PBITS-1), so its truncation
                        // is representable.
                        unsafe { p.to_int_unchecked::<$int>() }
                    } else {
                        <$int>::MIN
                    };
                }
            }

            #[inline(always)]
            fn dequantize(ints: &[$int], emax: i32, out: &mut [Self]) {
                let scale = Self::pow2(emax - (Self::PBITS as i32 - 2));
                for (v, &q) in out.iter_mut().zip(ints) {
                    *v = (q as $float) * scale;
                }
            }
        }
    };
}

scalar!(f32, i32, u32, ebits: 8);
scalar!(f64, i64, u64, ebits: 11);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_matches_frexp() {
        // frexp(x) = f * 2^e with 0.5 <= f < 1.
        let cases: [(f64, i32); 6] = [(1.0, 1), (0.75, 0), (0.5, 0), (3.0, 2), (1e-300, -996), (f64::MAX, 1024)];
        for (x, e) in cases {
            assert_eq!(f64::block_exponent(&[0.0, -x, x / 2.0]), Some(e), "{x}");
        }
        assert_eq!(f32::block_exponent(&[0.0, -0.0]), Some(-127));
        assert_eq!(f32::block_exponent(&[1e-40, 0.0]), Some(-126));
        assert_eq!(f32::block_exponent(&[-6.0, 1.0]), Some(3));
        assert_eq!(f64::block_exponent(&[5e-324]), Some(-1022));
        assert_eq!(f32::block_exponent(&[1.0, f32::NAN, 2.0]), None);
        assert_eq!(f32::block_exponent(&[f32::NAN, 1.0]), None);
        assert_eq!(f64::block_exponent(&[f64::NEG_INFINITY, 0.0]), None);
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
    }

    #[test]
    fn quantize_is_exact_and_dequantize_reverses_it() {
        let values = [0.75f32, -0.5, 0.125, 0.0];
        let mut q = [0i32; 4];
        f32::quantize(&values, 0, &mut q);
        assert_eq!(q, [3 << 28, -(1 << 29), 1 << 27, 0]);
        let mut back = [1f32; 4];
        f32::dequantize(&q, 0, &mut back);
        assert_eq!(back, values);
        // Truncation toward zero, as C's conversion.
        let mut q = [0i64; 2];
        f64::quantize(&[1.5 * 2f64.powi(-62), -2.5 * 2f64.powi(-62)], 0, &mut q);
        assert_eq!(q, [1, -2]);
    }
}
