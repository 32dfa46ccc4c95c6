//! The error bound as the coder uses it: a value of the element type and its binary
//! exponent, plus the exact test `|a - b| <= E`.

use super::scalar::{floor_log2, SzxFloat};

/// Exponent standing for `E = 0`: far enough below every representable exponent that
/// the mantissa-bit computation saturates at "keep everything".
const EXP_OF_ZERO: i32 = -(1 << 20);

/// An absolute error bound `E` in the element type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance<T: SzxFloat> {
    /// `E` itself; `0` asks for lossless coding.
    pub e: T,
    /// `floor(log2 E)`, or a huge negative number for `E = 0`.
    pub e_exp: i32,
}

impl<T: SzxFloat> Tolerance<T> {
    /// The bound `e`, for a finite `e >= 0`.
    pub fn new(e: T) -> Self {
        let e_exp = if e > T::ZERO { floor_log2(e) } else { EXP_OF_ZERO };
        Tolerance { e, e_exp }
    }

    /// The largest bound of type `T` not above `e` (finite, `>= 0`): a value within it
    /// is within `e` too.
    pub fn from_f64(e: f64) -> Self {
        Self::new(T::from_f64_down(e))
    }

    /// How many explicit mantissa bits a value of exponent at most `exp` must keep so
    /// that it moves by at most `E`: rounded to nearest at `k` bits (`rounded`), or cut
    /// off there.
    ///
    /// A value `v` of exponent `e <= exp` rounded to `k` mantissa bits moves by at most
    /// half a unit in its new last place, `2^(e - k - 1) <= 2^(exp - k - 1)`; with
    /// `k = exp - floor(log2 E) - 1` that is at most `2^floor(log2 E) <= E`. Cut off
    /// instead, it moves by less than a whole unit, `2^(e - k)`, and needs one bit more.
    /// Either way the whole budget `E` is used, not `E / 2` as in the reference coder.
    #[inline]
    pub fn mantissa_bits(&self, exp: i32, rounded: bool) -> u32 {
        (exp - self.e_exp - rounded as i32).clamp(0, T::MANT_BITS as i32) as u32
    }

    /// True iff `|a - b| <= E` exactly, for finite `a` and `b`.
    ///
    /// The rounded difference decides unless it equals `E`: rounding is monotonic and
    /// `E` is representable, so `fl|a - b| < E` implies `|a - b| < E` and `fl|a - b| > E`
    /// implies `|a - b| > E`. At equality the rounding error of the subtraction, recovered
    /// exactly by Knuth's two-sum, tells on which side the exact difference lies.
    #[inline]
    pub fn within(&self, a: T, b: T) -> bool {
        let s = a - b;
        let mag = s.abs();
        if mag < self.e {
            return true;
        }
        if mag != self.e {
            // Above E, or NaN.
            return false;
        }
        // a - b = s + err exactly.
        let nb = -b;
        let bv = s - a;
        let av = s - bv;
        let err = (a - av) + (nb - bv);
        if s > T::ZERO {
            err <= T::ZERO
        } else if s < T::ZERO {
            err >= T::ZERO
        } else {
            err == T::ZERO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mantissa_bits_use_the_whole_budget() {
        let t = Tolerance::<f32>::new(1e-3);
        assert_eq!(t.e_exp, -10);
        // Values below 1 (exponent -1) cut at 9 bits move by less than 2^(-1 - 9) = 2^-10
        // <= 1e-3; rounded at 8 bits, by at most 2^(-1 - 8 - 1).
        assert_eq!(t.mantissa_bits(-1, false), 9);
        assert_eq!(t.mantissa_bits(-1, true), 8);
        assert_eq!(t.mantissa_bits(-20, true), 0);
        assert_eq!(t.mantissa_bits(100, true), 23);
        assert_eq!(Tolerance::<f64>::new(0.0).mantissa_bits(-1074, true), 52);
    }

    #[test]
    fn within_is_exact_at_the_boundary() {
        // 1 + 2^-23 and 2^-24: the difference 1 + 2^-23 - 2^-24 rounds to 1 + 2^-23 (tie to even
        // would go either way); compare with exact f64 arithmetic.
        let cases: [(f32, f32, f32); 6] = [
            (1.0 + f32::EPSILON, 2f32.powi(-25), 1.0 + f32::EPSILON),
            (1.0 + f32::EPSILON, -(2f32.powi(-25)), 1.0 + f32::EPSILON),
            (1.0, 0.0, 1.0),
            (0.0, 1.0, 1.0),
            (3.0, 1.0, 2.0),
            (16777216.0, -0.5, 16777216.0),
        ];
        for (a, b, e) in cases {
            let exact = ((a as f64) - (b as f64)).abs() <= e as f64;
            assert_eq!(Tolerance::new(e).within(a, b), exact, "{a} - {b} vs {e}");
        }
        assert!(!Tolerance::new(f32::MAX).within(f32::MAX, -f32::MAX));
        assert!(Tolerance::new(0.0f64).within(-0.0, 0.0));
        assert!(!Tolerance::new(0.0f64).within(f64::from_bits(1), 0.0));
    }
}
