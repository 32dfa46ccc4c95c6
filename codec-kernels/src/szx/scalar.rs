//! The element types the SZx coder works on, seen through their bit patterns.
//!
//! Every decision of the coder is made on the element's own type: arithmetic on `T`,
//! bit manipulation on `T::Bits`. Nothing is widened or narrowed on the way.

use core::fmt::Debug;
use core::ops::{Add, BitAnd, BitOr, BitXor, Mul, Neg, Not, Shl, Shr, Sub};

/// An unsigned integer as wide as a float's bit pattern (`u32` for `f32`, `u64` for `f64`).
pub trait Bits:
    Copy
    + Eq
    + Ord
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// Width in bits.
    const BITS: u32;
    const ZERO: Self;
    const ONE: Self;
    /// All bits set.
    const ALL: Self;
    /// The low 32 bits (or all of them).
    fn low_u32(self) -> u32;
    /// Number of leading zero bits (`BITS` for zero).
    fn lz(self) -> u32;
    /// Zero-extends a `u32`.
    fn from_u32(v: u32) -> Self;
    /// `self + o`, wrapping.
    fn wrapping_add(self, o: Self) -> Self;
    /// `self - o`, wrapping.
    fn wrapping_sub(self, o: Self) -> Self;
    /// `self + 1` and `self - 1`, wrapping.
    fn inc(self) -> Self;
    fn dec(self) -> Self;
    /// Stores the value least significant byte first into `out[..BITS / 8]`.
    fn store_le(self, out: &mut [u8]);
    /// Reads a value stored least significant byte first from `b[..BITS / 8]`.
    fn load_le(b: &[u8]) -> Self;
}

/// A binary floating-point element type (`f32` or `f64`) as the SZx coder sees it.
pub trait SzxFloat:
    Copy
    + PartialOrd
    + Debug
    + Default
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
{
    /// The bit pattern type.
    type Bits: Bits;
    /// Size in bytes (`W`).
    const BYTES: usize;
    /// Explicit mantissa bits (23, 52).
    const MANT_BITS: u32;
    /// Exponent bits (8, 11).
    const EXP_BITS: u32;
    /// Exponent bias (127, 1023).
    const BIAS: i32;
    const ZERO: Self;
    const HALF: Self;
    /// Largest finite value.
    const MAX: Self;
    /// `1.5 * 2^MANT_BITS`, whose unit in the last place is 1: for `0 <= x < 2^(MANT_BITS - 1)`,
    /// `x + ROUND` rounds `x` to the nearest integer `n` (ties to even) and its bit pattern
    /// is `ROUND`'s plus `n`.
    const ROUND: Self;
    /// Bit pattern of +infinity: a magnitude at or above it is not finite.
    const INF_BITS: Self::Bits;
    /// Mask of every bit but the sign.
    const ABS_MASK: Self::Bits;

    fn to_bits(self) -> Self::Bits;
    fn from_bits(b: Self::Bits) -> Self;
    /// The largest value of this type not above `v`, for finite `v >= 0`; saturates at
    /// [`SzxFloat::MAX`], so a bound given in f64 is never loosened by the conversion.
    fn from_f64_down(v: f64) -> Self;

    /// The smaller and the larger of two values (either, if one is NaN); these map to
    /// vector min/max instructions.
    fn fmin(self, o: Self) -> Self;
    fn fmax(self, o: Self) -> Self;

    /// `|self|`, by clearing the sign bit (exact, also for NaN and zero).
    #[inline(always)]
    fn abs(self) -> Self {
        Self::from_bits(self.to_bits() & Self::ABS_MASK)
    }
}

/// Unbiased exponent of a magnitude's bit pattern, with subnormals and zero counted as
/// the smallest normal exponent: every value with these bits is below `2^(e + 1)` and a
/// unit in its last mantissa place is `2^(e - MANT_BITS)`.
#[inline(always)]
pub fn exponent_of<T: SzxFloat>(abs_bits: T::Bits) -> i32 {
    let biased = (abs_bits >> T::MANT_BITS).low_u32() as i32;
    biased.max(1) - T::BIAS
}

/// `round(x)` (ties to even) as an integer, for `0 <= x < 2^(MANT_BITS - 1)`: no float
/// to integer conversion, so it runs as vector integer code.
#[inline(always)]
pub fn round_to_uint<T: SzxFloat>(x: T) -> T::Bits {
    (x + T::ROUND).to_bits().wrapping_sub(T::ROUND.to_bits())
}

/// The integer `n < 2^(MANT_BITS - 1)` as a value of `T` (exact), the inverse of
/// [`round_to_uint`].
#[inline(always)]
pub fn uint_to_float<T: SzxFloat>(n: T::Bits) -> T {
    T::from_bits(T::ROUND.to_bits().wrapping_add(n)) - T::ROUND
}

/// `2^e` for `|e| < BIAS` (a normal power of two).
#[inline(always)]
pub fn pow2<T: SzxFloat>(e: i32) -> T {
    T::from_bits(T::Bits::from_u32((e + T::BIAS) as u32) << T::MANT_BITS)
}

/// `floor(log2 v)` for a finite `v > 0`, subnormals included.
#[inline]
pub fn floor_log2<T: SzxFloat>(v: T) -> i32 {
    let bits = v.to_bits() & T::ABS_MASK;
    let biased = (bits >> T::MANT_BITS).low_u32() as i32;
    if biased > 0 {
        return biased - T::BIAS;
    }
    // Subnormal: the value is `mantissa * 2^(1 - BIAS - MANT_BITS)`.
    let msb = (T::Bits::BITS - 1 - bits.lz()) as i32;
    msb + 1 - T::BIAS - T::MANT_BITS as i32
}

/// The neighbour of a finite `v` one unit in the last place towards +infinity (`up`) or
/// -infinity.
#[inline]
pub fn next_toward<T: SzxFloat>(v: T, up: bool) -> T {
    let bits = v.to_bits();
    if bits & T::ABS_MASK == T::Bits::ZERO {
        let tiny = T::from_bits(T::Bits::ONE);
        return if up { tiny } else { -tiny };
    }
    // Positive values grow with their bit pattern, negative ones shrink.
    if (v > T::ZERO) == up {
        T::from_bits(bits.inc())
    } else {
        T::from_bits(bits.dec())
    }
}

macro_rules! bits_impl {
    ($u:ty) => {
        impl Bits for $u {
            const BITS: u32 = <$u>::BITS;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const ALL: Self = <$u>::MAX;
            #[inline(always)]
            fn low_u32(self) -> u32 {
                self as u32
            }
            #[inline(always)]
            fn lz(self) -> u32 {
                self.leading_zeros()
            }
            #[inline(always)]
            fn from_u32(v: u32) -> Self {
                v as $u
            }
            #[inline(always)]
            fn wrapping_add(self, o: Self) -> Self {
                <$u>::wrapping_add(self, o)
            }
            #[inline(always)]
            fn wrapping_sub(self, o: Self) -> Self {
                <$u>::wrapping_sub(self, o)
            }
            #[inline(always)]
            fn inc(self) -> Self {
                self.wrapping_add(1)
            }
            #[inline(always)]
            fn dec(self) -> Self {
                self.wrapping_sub(1)
            }
            #[inline(always)]
            fn store_le(self, out: &mut [u8]) {
                out[..core::mem::size_of::<$u>()].copy_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn load_le(b: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$u>()];
                a.copy_from_slice(&b[..core::mem::size_of::<$u>()]);
                <$u>::from_le_bytes(a)
            }
        }
    };
}

bits_impl!(u32);
bits_impl!(u64);

macro_rules! float_impl {
    ($f:ty, $u:ty, $exp:expr, $from_f64_down:expr) => {
        impl SzxFloat for $f {
            type Bits = $u;
            const BYTES: usize = core::mem::size_of::<$f>();
            const MANT_BITS: u32 = <$f>::MANTISSA_DIGITS - 1;
            const EXP_BITS: u32 = $exp;
            const BIAS: i32 = <$f>::MAX_EXP - 1;
            const ZERO: Self = 0.0;
            const HALF: Self = 0.5;
            const MAX: Self = <$f>::MAX;
            const ROUND: Self = 1.5 * (1u64 << (<$f>::MANTISSA_DIGITS - 1)) as $f;
            const INF_BITS: $u = <$f>::INFINITY.to_bits();
            const ABS_MASK: $u = !(1 << (<$u>::BITS - 1));
            #[inline(always)]
            fn to_bits(self) -> $u {
                <$f>::to_bits(self)
            }
            #[inline(always)]
            fn from_bits(b: $u) -> Self {
                <$f>::from_bits(b)
            }

            #[inline]
            fn from_f64_down(v: f64) -> Self {
                $from_f64_down(v)
            }
            // Plain compare-and-select: one vector min/max instruction (the NaN-aware
            // `f32::min` takes three more).
            #[inline(always)]
            fn fmin(self, o: Self) -> Self {
                if o < self { o } else { self }
            }
            #[inline(always)]
            fn fmax(self, o: Self) -> Self {
                if o > self { o } else { self }
            }
        }
    };
}

float_impl!(f32, u32, 8, |v: f64| {
    if v >= f32::MAX as f64 {
        return f32::MAX;
    }
    let r = v as f32;
    // `as` rounds to nearest; step down one unit if that went above `v`.
    if r as f64 > v {
        next_toward(r, false)
    } else {
        r
    }
});
float_impl!(f64, u64, 11, |v: f64| v.min(f64::MAX));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponents_cover_normals_and_subnormals() {
        assert_eq!(exponent_of::<f32>(1.0f32.to_bits()), 0);
        assert_eq!(exponent_of::<f32>(1.99f32.to_bits()), 0);
        assert_eq!(exponent_of::<f32>(0.5f32.to_bits()), -1);
        assert_eq!(exponent_of::<f32>(0), -126);
        assert_eq!(exponent_of::<f32>(1), -126);
        assert_eq!(exponent_of::<f64>(f64::MAX.to_bits()), 1023);
        assert_eq!(floor_log2(1e-3f32), -10);
        assert_eq!(floor_log2(1e-3f64), -10);
        assert_eq!(floor_log2(f32::from_bits(1)), -149);
        assert_eq!(floor_log2(f32::from_bits(3)), -148);
        assert_eq!(floor_log2(f64::from_bits(1)), -1074);
        assert_eq!(floor_log2(f32::MIN_POSITIVE), -126);
        for e in -149..128 {
            let v = 2f64.powi(e);
            assert_eq!(floor_log2(v as f32), e, "2^{e}");
        }
    }

    #[test]
    fn conversion_from_f64_never_rounds_up() {
        for v in [1e-3, 0.1, 1.0 / 3.0, 1e-45, 1e-50, 3.4e38, 1e300, 0.0, 16777217.0] {
            let r = f32::from_f64_down(v);
            assert!((r as f64) <= v, "{v}");
            assert!(next_toward(r, true) as f64 > v || r == f32::MAX, "{v} -> {r} not the largest");
        }
        assert_eq!(f64::from_f64_down(0.1), 0.1);
    }

    #[test]
    fn neighbours_step_one_unit() {
        assert_eq!(next_toward(1.0f32, true), 1.0 + f32::EPSILON);
        assert_eq!(next_toward(-1.0f32, true), -1.0 + f32::EPSILON / 2.0);
        assert_eq!(next_toward(0.0f64, false), -f64::from_bits(1));
        assert_eq!(next_toward(-0.0f32, true), f32::from_bits(1));
    }
}
