//! Synthetic fields, defined in `shared/reference-figures.md` so that figures measured
//! on them compare with the reference C codecs' figures.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// Seed used by the named data sets.
pub const DEFAULT_SEED: u64 = 0x5eed_cc01;

/// The smooth3d field on an `n`^3 grid, x fastest: four sinusoids over `linspace(0, 1, n)`
/// on each axis, computed in f32, plus Gaussian noise of standard deviation `noise`.
pub fn smooth3d_field(n: usize, noise: f32, seed: u64) -> Vec<f32> {
    smooth3d_grid([n, n, n], noise, seed)
}

/// The smooth3d formula on a `dims` grid (x fastest), each axis sampled by its own
/// `linspace(0, 1, n)`; equal to [`smooth3d_field`] on cubes.
pub fn smooth3d_grid(dims: [usize; 3], noise: f32, seed: u64) -> Vec<f32> {
    use core::f32::consts::PI;
    let t = |i: usize, n: usize| if n > 1 { i as f32 / (n - 1) as f32 } else { 0.0 };
    let normal = Normal::new(0.0f32, noise.max(0.0)).expect("finite, non-negative sigma");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let [nx, ny, nz] = dims;
    let mut out = Vec::with_capacity(nx * ny * nz);
    for k in 0..nz {
        let z = t(k, nz);
        for j in 0..ny {
            let y = t(j, ny);
            for i in 0..nx {
                let x = t(i, nx);
                let v = 0.45 * (2.0 * PI * (x + 0.5 * y)).sin()
                    + 0.30 * (2.0 * PI * (2.0 * y - z)).cos()
                    + 0.15 * (6.0 * PI * (x + y + z)).sin()
                    + 0.05 * (14.0 * PI * x).sin() * (10.0 * PI * z).cos();
                out.push(v + normal.sample(&mut rng));
            }
        }
    }
    out
}

/// The reference data set smooth3d: 256^3 f32 (64 MiB), noise sigma 1e-3.
pub fn smooth3d() -> Vec<f32> {
    smooth3d_field(256, 1e-3, DEFAULT_SEED)
}

/// `n` gradient-like values: Laplace(0, `scale`) with a fraction `zero_fraction` of the
/// entries, chosen at random, set to exactly zero.
pub fn laplace_gradients(n: usize, scale: f32, zero_fraction: f64, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            if rng.random_bool(zero_fraction.clamp(0.0, 1.0)) {
                return 0.0;
            }
            // Inverse CDF of the Laplace distribution on u in (-1/2, 1/2).
            let u: f64 = rng.random::<f64>() - 0.5;
            let mag = -(1.0 - 2.0 * u.abs()).max(f64::MIN_POSITIVE).ln();
            (scale as f64 * u.signum() * mag) as f32
        })
        .collect()
}

/// The reference data set grad16m: 16 Mi values of Laplace(0, 1e-3) with 10% zeros.
pub fn grad16m() -> Vec<f32> {
    laplace_gradients(16 << 20, 1e-3, 0.1, DEFAULT_SEED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smooth3d_is_deterministic_and_in_range() {
        let a = smooth3d_field(32, 1e-3, 7);
        assert_eq!(a.len(), 32 * 32 * 32);
        assert_eq!(a, smooth3d_field(32, 1e-3, 7));
        assert_ne!(a, smooth3d_field(32, 1e-3, 8));
        let (lo, hi) = crate::value_range(&a);
        assert!(lo > -1.05 && hi < 1.05 && hi - lo > 1.0, "range {lo}..{hi}");
        // Noise-free corner: x = y = z = 0 gives 0.30 * cos(0) = 0.30.
        assert!((smooth3d_field(8, 0.0, 1)[0] - 0.30).abs() < 1e-6);
    }

    #[test]
    fn laplace_gradients_have_the_requested_statistics() {
        let g = laplace_gradients(200_000, 1e-3, 0.1, 3);
        let zeros = g.iter().filter(|&&v| v == 0.0).count() as f64 / g.len() as f64;
        assert!((zeros - 0.1).abs() < 0.005, "zero fraction {zeros}");
        let nz: Vec<f64> = g.iter().filter(|&&v| v != 0.0).map(|&v| v as f64).collect();
        // Laplace(0, b): mean |x| = b, and the sign is symmetric.
        let mean_abs = nz.iter().map(|v| v.abs()).sum::<f64>() / nz.len() as f64;
        assert!((mean_abs - 1e-3).abs() < 2e-5, "mean |x| {mean_abs}");
        let pos = nz.iter().filter(|&&v| v > 0.0).count() as f64 / nz.len() as f64;
        assert!((pos - 0.5).abs() < 0.01);
    }
}
