//! Quality metrics for lossy reconstructions, computed in f64.

/// Smallest and largest finite value (`(0, 0)` for an input without finite values).
pub fn value_range<T: Copy + Into<f64>>(data: &[T]) -> (f64, f64) {
    let (lo, hi) = data
        .iter()
        .map(|&v| v.into())
        .filter(|v: &f64| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (0.0, 0.0)
    } else {
        (lo, hi)
    }
}

/// Largest |a - b| over pairs where both are finite; a pair whose non-finite values
/// differ (NaN vs NaN counts as equal) gives infinity.
pub fn max_abs_error<T: Copy + Into<f64>>(original: &[T], decoded: &[T]) -> f64 {
    assert_eq!(original.len(), decoded.len(), "max_abs_error: length mismatch");
    original.iter().zip(decoded).fold(0.0, |acc, (&a, &b)| {
        let (a, b): (f64, f64) = (a.into(), b.into());
        let e = if a.is_finite() && b.is_finite() {
            (a - b).abs()
        } else if a == b || (a.is_nan() && b.is_nan()) {
            0.0
        } else {
            f64::INFINITY
        };
        acc.max(e)
    })
}

/// Root-mean-square error over the value range.
pub fn nrmse<T: Copy + Into<f64>>(original: &[T], decoded: &[T]) -> f64 {
    let (lo, hi) = value_range(original);
    rmse(original, decoded) / (hi - lo)
}

/// Peak signal-to-noise ratio in dB: 20 log10(range / rmse).
pub fn psnr<T: Copy + Into<f64>>(original: &[T], decoded: &[T]) -> f64 {
    -20.0 * nrmse(original, decoded).log10()
}

fn rmse<T: Copy + Into<f64>>(original: &[T], decoded: &[T]) -> f64 {
    assert_eq!(original.len(), decoded.len(), "rmse: length mismatch");
    if original.is_empty() {
        return 0.0;
    }
    let sum: f64 = original.iter().zip(decoded).map(|(&a, &b)| (a.into() - b.into()).powi(2)).sum();
    (sum / original.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_on_known_values() {
        let a = [0.0f32, 1.0, 2.0, 3.0];
        let b = [0.0f32, 1.5, 2.0, 2.5];
        assert_eq!(max_abs_error(&a, &b), 0.5);
        assert_eq!(value_range(&a), (0.0, 3.0));
        // rmse = sqrt((0.25 + 0.25) / 4) = 0.35355; nrmse = rmse / 3.
        assert!((nrmse(&a, &b) - 0.353_553_39 / 3.0).abs() < 1e-8);
        assert!((psnr(&a, &b) - 18.573_325).abs() < 1e-5);
        assert_eq!(max_abs_error(&[f32::NAN], &[f32::NAN]), 0.0);
        assert_eq!(max_abs_error(&[f32::INFINITY], &[1.0]), f64::INFINITY);
    }
}
