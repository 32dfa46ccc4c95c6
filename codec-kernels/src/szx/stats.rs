//! Block statistics: one pass over a block's values.

use super::scalar::{Bits, SzxFloat};

/// Independent accumulators, so the pass runs as vector min/max/compare operations.
const LANES: usize = 8;

/// What the block decision needs to know about a block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockStats<T: SzxFloat> {
    /// Smallest and largest value (meaningless when the block is not finite).
    pub min: T,
    pub max: T,
    /// No value is NaN or infinite.
    pub finite: bool,
    /// Some value is `+0` or `-0`.
    pub has_zero: bool,
}

impl<T: SzxFloat> BlockStats<T> {
    /// Bit pattern of the largest magnitude (of a finite block).
    #[inline]
    pub fn max_abs(&self) -> T::Bits {
        self.min.abs().to_bits().max(self.max.abs().to_bits())
    }
}

/// Statistics of a non-empty block.
#[inline(always)]
pub fn block_stats<T: SzxFloat>(x: &[T]) -> BlockStats<T> {
    let first = x.first().copied().unwrap_or(T::ZERO);
    let mut mn = [first; LANES];
    let mut mx = [first; LANES];
    // Per lane: an exponent field of all ones (NaN, infinity) seen; a zero magnitude seen.
    let mut special = [T::Bits::ZERO; LANES];
    let mut zero = [T::Bits::ZERO; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    // Separate loops per accumulator vectorise best.
    for c in chunks {
        let Ok(c) = <&[T; LANES]>::try_from(c) else { continue };
        for j in 0..LANES {
            mn[j] = mn[j].fmin(c[j]);
        }
        for j in 0..LANES {
            mx[j] = mx[j].fmax(c[j]);
        }
        for j in 0..LANES {
            let b = c[j].to_bits();
            special[j] = special[j] | if b & T::INF_BITS == T::INF_BITS { T::Bits::ONE } else { T::Bits::ZERO };
            zero[j] = zero[j] | if b & T::ABS_MASK == T::Bits::ZERO { T::Bits::ONE } else { T::Bits::ZERO };
        }
    }
    // The tail, folded into the first lanes.
    for (j, &v) in rest.iter().enumerate() {
        mn[j] = mn[j].fmin(v);
        mx[j] = mx[j].fmax(v);
        let b = v.to_bits();
        special[j] = special[j] | if b & T::INF_BITS == T::INF_BITS { T::Bits::ONE } else { T::Bits::ZERO };
        zero[j] = zero[j] | if b & T::ABS_MASK == T::Bits::ZERO { T::Bits::ONE } else { T::Bits::ZERO };
    }
    let mut s = BlockStats { min: mn[0], max: mx[0], finite: true, has_zero: false };
    for j in 0..LANES {
        s.min = s.min.fmin(mn[j]);
        s.max = s.max.fmax(mx[j]);
        s.finite &= special[j] == T::Bits::ZERO;
        s.has_zero |= zero[j] != T::Bits::ZERO;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_mixed_values() {
        let mut x: [f32; 37] = core::array::from_fn(|i| i as f32 - 10.0);
        x[20] = -0.0;
        let s = block_stats(&x);
        assert_eq!((s.min, s.max), (-10.0, 26.0));
        assert_eq!(f32::from_bits(s.max_abs()), 26.0);
        assert!(s.has_zero && s.finite);
        assert!(!block_stats(&[f64::NAN, 1.0, 2.0]).finite);
        assert!(!block_stats(&[1.5f64, -f64::INFINITY]).finite);
        assert!(!block_stats(&[1.5f32; 9].map(|v| if v > 0.0 { f32::NAN } else { v })).finite);
        let s = block_stats(&[-3.0f64]);
        assert_eq!((s.min, s.max, s.has_zero, s.max_abs()), (-3.0, -3.0, false, 3f64.to_bits()));
    }
}
