//! Grid shapes: choosing dimensions for a requested value count, and mapping grid
//! indices to coordinates on the unit interval.

/// Dimensions (x fastest) whose product is exactly `len` and whose proportions come
/// close to `aspect` (one entry per axis, x first). Every axis but the last takes the
/// divisor of what is left that is nearest its ideal extent, so any `len >= 1` works,
/// though a prime `len` degenerates to a line. `len == 0` gives all-zero dims.
pub fn fit_dims(len: usize, aspect: &[f64]) -> Vec<usize> {
    if len == 0 || aspect.is_empty() {
        return vec![0; aspect.len()];
    }
    let mut dims = Vec::with_capacity(aspect.len());
    let mut rest = len;
    for (axis, &a) in aspect.iter().enumerate() {
        let remaining = &aspect[axis..];
        if remaining.len() == 1 {
            dims.push(rest);
            break;
        }
        // Ideal extent: rest^(1/k) scaled by this axis's share of the remaining aspect.
        let geo_mean = remaining.iter().map(|v| v.ln()).sum::<f64>() / remaining.len() as f64;
        let ideal = (rest as f64).powf(1.0 / remaining.len() as f64) * (a.ln() - geo_mean).exp();
        let d = nearest_divisor(rest, ideal);
        dims.push(d);
        rest /= d;
    }
    dims
}

/// The divisor of `n` nearest `target` on a log scale.
fn nearest_divisor(n: usize, target: f64) -> usize {
    let mut best = 1;
    let score = |d: usize| (d as f64 / target).ln().abs();
    let mut i = 1;
    while i * i <= n {
        if n.is_multiple_of(i) {
            for d in [i, n / i] {
                if score(d) < score(best) {
                    best = d;
                }
            }
        }
        i += 1;
    }
    best
}

/// Position of index `i` of `n` points spread over [0, 1] (cell centres, so any `n`
/// samples the same physical extent).
pub(crate) fn unit_coord(i: usize, n: usize) -> f64 {
    (i as f64 + 0.5) / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_dims_multiplies_to_len_and_follows_aspect() {
        assert_eq!(fit_dims(256 * 256 * 256, &[1.0, 1.0, 1.0]), vec![256, 256, 256]);
        assert_eq!(fit_dims(500 * 500 * 100, &[5.0, 5.0, 1.0]), vec![500, 500, 100]);
        assert_eq!(fit_dims(3600 * 1800, &[2.0, 1.0]), vec![3600, 1800]);
        for len in [1usize, 7, 1000, 4 << 20, 12_345_678] {
            let d = fit_dims(len, &[1.0, 1.0, 1.0]);
            assert_eq!(d.iter().product::<usize>(), len, "{len}: {d:?}");
        }
        assert_eq!(fit_dims(13, &[1.0, 1.0]), vec![1, 13]);
        assert_eq!(fit_dims(0, &[1.0, 1.0]), vec![0, 0]);
    }
}
