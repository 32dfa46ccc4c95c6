//! Block statistics: one pass over a block's values.

use super::scalar::{Bits, SzxFloat};

/// Independent accumulators, so the pass runs as vector min/max operations (two AVX2
/// registers of f32 per accumulator).
const LANES: usize = 16;

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
    /// Bit pattern of the largest magnitude.
    abs_max: T::Bits,
}

impl<T: SzxFloat> BlockStats<T> {
    /// Bit pattern of the largest magnitude (of a finite block).
    #[inline]
    pub fn max_abs(&self) -> T::Bits {
        self.abs_max
    }
}

/// Statistics of a non-empty block. Magnitudes are compared as bit patterns (unsigned
/// integers, ordered as the magnitudes are, NaN and infinity above every finite one):
/// the largest tells finiteness and the largest magnitude, the smallest whether a zero
/// is present.
#[inline(always)]
pub fn block_stats<T: SzxFloat>(x: &[T]) -> BlockStats<T> {
    let first = x.first().copied().unwrap_or(T::ZERO);
    let mut mn = [first; LANES];
    let mut mx = [first; LANES];
    let mut amax = [T::Bits::ZERO; LANES];
    let mut amin = [T::Bits::ALL; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    let mut step = |j: usize, v: T| {
        mn[j] = mn[j].fmin(v);
        mx[j] = mx[j].fmax(v);
        let a = v.to_bits() & T::ABS_MASK;
        amax[j] = amax[j].max(a);
        amin[j] = amin[j].min(a);
    };
    for c in chunks {
        let Ok(c) = <&[T; LANES]>::try_from(c) else { continue };
        for (j, &v) in c.iter().enumerate() {
            step(j, v);
        }
    }
    // The tail, folded into the first lanes.
    for (j, &v) in rest.iter().enumerate() {
        step(j, v);
    }
    let mut s = BlockStats { min: mn[0], max: mx[0], finite: true, has_zero: false, abs_max: T::Bits::ZERO };
    let mut amin_all = T::Bits::ALL;
    for j in 0..LANES {
        s.min = s.min.fmin(mn[j]);
        s.max = s.max.fmax(mx[j]);
        s.abs_max = s.abs_max.max(amax[j]);
        amin_all = amin_all.min(amin[j]);
    }
    s.finite = s.abs_max < T::INF_BITS;
    s.has_zero = amin_all == T::Bits::ZERO;
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
