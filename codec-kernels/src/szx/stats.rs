//! Block statistics: one pass over a block's values.

use super::scalar::{Bits, SzxFloat};

/// Independent accumulators, so the pass runs as vector min/max operations.
const LANES: usize = 16;

/// What the block decision needs to know about a block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockStats<T: SzxFloat> {
    /// Smallest and largest value (meaningless when the block is not finite).
    pub min: T,
    pub max: T,
    /// Largest and smallest magnitude, as bit patterns (ordered like the magnitudes).
    pub max_abs: T::Bits,
    pub min_abs: T::Bits,
}

impl<T: SzxFloat> BlockStats<T> {
    /// True if no value is NaN or infinite.
    #[inline]
    pub fn finite(&self) -> bool {
        self.max_abs < T::INF_BITS
    }

    /// True if some value is `+0` or `-0`.
    #[inline]
    pub fn has_zero(&self) -> bool {
        self.min_abs == T::Bits::ZERO
    }
}

/// Statistics of a non-empty block.
#[inline]
pub fn block_stats<T: SzxFloat>(x: &[T]) -> BlockStats<T> {
    let first = x.first().copied().unwrap_or(T::ZERO);
    let mut mn = [first; LANES];
    let mut mx = [first; LANES];
    let mut amax = [T::Bits::ZERO; LANES];
    let mut amin = [T::Bits::ALL; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for j in 0..LANES {
            let v = c[j];
            mn[j] = if v < mn[j] { v } else { mn[j] };
            mx[j] = if v > mx[j] { v } else { mx[j] };
            let a = v.to_bits() & T::ABS_MASK;
            amax[j] = if a > amax[j] { a } else { amax[j] };
            amin[j] = if a < amin[j] { a } else { amin[j] };
        }
    }
    for (j, &v) in rest.iter().enumerate() {
        mn[j] = if v < mn[j] { v } else { mn[j] };
        mx[j] = if v > mx[j] { v } else { mx[j] };
        let a = v.to_bits() & T::ABS_MASK;
        amax[j] = if a > amax[j] { a } else { amax[j] };
        amin[j] = if a < amin[j] { a } else { amin[j] };
    }
    let mut s = BlockStats { min: mn[0], max: mx[0], max_abs: amax[0], min_abs: amin[0] };
    for j in 1..LANES {
        s.min = if mn[j] < s.min { mn[j] } else { s.min };
        s.max = if mx[j] > s.max { mx[j] } else { s.max };
        s.max_abs = s.max_abs.max(amax[j]);
        s.min_abs = s.min_abs.min(amin[j]);
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
        assert_eq!(f32::from_bits(s.max_abs), 26.0);
        assert!(s.has_zero() && s.finite());
        let s = block_stats(&[f64::NAN, 1.0, 2.0]);
        assert!(!s.finite());
        let s = block_stats(&[1.5f64, -f64::INFINITY]);
        assert!(!s.finite());
        let s = block_stats(&[-3.0f64]);
        assert_eq!((s.min, s.max, s.has_zero()), (-3.0, -3.0, false));
    }
}
