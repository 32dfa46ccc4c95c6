//! Statistics that characterise a field for compression: value range and spread,
//! sparsity, smoothness and a block-constancy measure of error-bounded compressibility.

/// Block length used by [`FieldStats::const_block_fraction`]: SZx's default block.
pub const STATS_BLOCK: usize = 128;
/// Relative error bound used by the sparsity and constancy measures.
pub const STATS_REL_BOUND: f64 = 1e-3;

/// Summary statistics of one field, computed in f64 over its finite values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldStats {
    pub len: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub std: f64,
    /// Fraction of values that are exactly zero.
    pub zero_fraction: f64,
    /// Fraction of values with |v| <= 1e-3 of the value range.
    pub near_zero_fraction: f64,
    /// Lag-1 autocorrelation along the fastest axis (pairs inside a row only): near 1
    /// for smooth fields, near 0 for noise.
    pub lag1_autocorr: f64,
    /// Fraction of consecutive 128-value blocks whose values all lie within 1e-3 of the
    /// range of their mid-range: what an SZx-style coder stores as a single value.
    pub const_block_fraction: f64,
    /// Excess kurtosis (0 for a Gaussian; large for heavy tails).
    pub excess_kurtosis: f64,
}

/// Statistics of `data`, whose rows (fastest axis) are `row_len` values long.
pub fn field_stats<T: Copy + Into<f64>>(data: &[T], row_len: usize) -> FieldStats {
    let vals: Vec<f64> = data.iter().map(|&v| v.into()).filter(|v: &f64| v.is_finite()).collect();
    let n = vals.len().max(1) as f64;
    let (min, max) = crate::value_range(data);
    let range = max - min;
    let mean = vals.iter().sum::<f64>() / n;
    let m2 = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let m4 = vals.iter().map(|v| (v - mean).powi(4)).sum::<f64>() / n;
    let eps = STATS_REL_BOUND * range;
    let frac = |count: usize| count as f64 / n;
    FieldStats {
        len: data.len(),
        min,
        max,
        mean,
        std: m2.sqrt(),
        zero_fraction: frac(vals.iter().filter(|&&v| v == 0.0).count()),
        near_zero_fraction: frac(vals.iter().filter(|v| v.abs() <= eps).count()),
        lag1_autocorr: lag1_autocorr(&vals, row_len.max(1)),
        const_block_fraction: const_block_fraction(&vals, eps),
        excess_kurtosis: if m2 > 0.0 { m4 / (m2 * m2) - 3.0 } else { 0.0 },
    }
}

/// Pearson correlation of each value with its right neighbour, over pairs inside rows.
fn lag1_autocorr(vals: &[f64], row_len: usize) -> f64 {
    let (mut n, mut sa, mut sb, mut saa, mut sbb, mut sab) = (0.0f64, 0.0, 0.0, 0.0, 0.0, 0.0);
    for row in vals.chunks(row_len) {
        for w in row.windows(2) {
            let (a, b) = (w[0], w[1]);
            n += 1.0;
            sa += a;
            sb += b;
            saa += a * a;
            sbb += b * b;
            sab += a * b;
        }
    }
    let cov = sab - sa * sb / n.max(1.0);
    let var = ((saa - sa * sa / n.max(1.0)) * (sbb - sb * sb / n.max(1.0))).sqrt();
    if n == 0.0 || var <= 0.0 {
        1.0
    } else {
        cov / var
    }
}

fn const_block_fraction(vals: &[f64], eps: f64) -> f64 {
    let blocks = vals.chunks(STATS_BLOCK);
    let total = blocks.len();
    if total == 0 {
        return 0.0;
    }
    let flat = blocks
        .filter(|b| {
            let (lo, hi) = b.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            (hi - lo) / 2.0 <= eps
        })
        .count();
    flat as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_known_fields() {
        // A slow ramp: smooth, no zeros except the first, range 0..1.
        let ramp: Vec<f32> = (0..1024).map(|i| i as f32 / 1023.0).collect();
        let s = field_stats(&ramp, 1024);
        assert_eq!((s.min, s.max, s.len), (0.0, 1.0, 1024));
        assert!((s.mean - 0.5).abs() < 1e-9);
        assert!(s.lag1_autocorr > 0.99);
        assert_eq!(s.zero_fraction, 1.0 / 1024.0);
        // Each 128-block of the ramp spans 0.124: never within 1e-3.
        assert_eq!(s.const_block_fraction, 0.0);
        // Alternating signs: anti-correlated, flat kurtosis of -2.
        let alt: Vec<f64> = (0..1000).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let s = field_stats(&alt, 1000);
        assert!((s.lag1_autocorr + 1.0).abs() < 1e-9);
        assert!((s.excess_kurtosis + 2.0).abs() < 1e-9);
        // Half zero blocks, half noise: constancy 0.5; rows of 1 have no pairs.
        let mut half = vec![0.0f64; 256];
        half.extend((0..256).map(|i| (i % 7) as f64));
        let s = field_stats(&half, 1);
        assert_eq!(s.const_block_fraction, 0.5);
        assert_eq!(s.lag1_autocorr, 1.0);
    }
}
