//! Deep-learning-gradient-like data: the concatenated gradients of a model's layers.
//!
//! Real gradient buffers (what data-parallel training allreduces) are heavy-tailed and
//! full of near-zero values: each layer has its own scale, spread over orders of
//! magnitude; within a layer the values follow a peaked, heavy-tailed law; embedding
//! tables receive gradients only for the rows a batch touched, leaving long runs of
//! exact zeros; and dead activations zero scattered entries. Here: layers of
//! log-uniform size and scale, Student-t (3 degrees of freedom) values, embedding
//! layers whose 512-value rows are 90% zero, and 5% scattered zeros elsewhere.

use half::bf16;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StudentT};

/// Default length: 16 Mi values (64 MiB of f32).
pub const GRAD_LEN: usize = 16 << 20;

const EMBED_ROW: usize = 512;

/// `n` gradient-like f32 values, deterministic for `seed`.
pub fn dl_gradients(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let t = StudentT::new(3.0f64).expect("3 degrees of freedom is valid");
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let kind: f64 = rng.random();
        let left = n - out.len();
        // Layer size log-uniform: biases 2^8..2^12, weights and embeddings 2^14..2^20.
        let (lo, hi) = if kind < 0.3 { (8.0, 12.0) } else { (14.0, 20.0) };
        let size = (2f64.powf(rng.random_range(lo..hi)) as usize).clamp(1, left);
        let scale = 10f64.powf(rng.random_range(-5.0..-2.0));
        let embedding = kind > 0.85;
        let mut row_live = true;
        for idx in 0..size {
            if embedding && idx % EMBED_ROW == 0 {
                row_live = rng.random_bool(0.1);
            }
            let zero = if embedding { !row_live } else { rng.random_bool(0.05) };
            // Student-t(3) has variance 3; scale it to unit variance first.
            let v = if zero { 0.0 } else { scale * t.sample(&mut rng) / 3f64.sqrt() };
            out.push(v as f32);
        }
    }
    out
}

/// The same values rounded to bfloat16 (round to nearest even), as mixed-precision
/// training communicates them.
pub fn to_bf16(values: &[f32]) -> Vec<bf16> {
    values.iter().map(|&v| bf16::from_f32(v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::field_stats;

    #[test]
    fn gradients_are_heavy_tailed_sparse_and_multi_scale() {
        let g = dl_gradients(1 << 20, 4);
        assert_eq!(g.len(), 1 << 20);
        assert_eq!(g, dl_gradients(1 << 20, 4));
        let s = field_stats(&g, g.len());
        assert!(s.zero_fraction > 0.05 && s.zero_fraction < 0.6, "{s:?}");
        assert!(s.excess_kurtosis > 20.0, "{s:?}");
        assert!(s.near_zero_fraction > 0.3, "{s:?}");
        assert!(s.mean.abs() < 0.1 * s.std, "{s:?}");
        // Uncorrelated neighbours, unlike the simulation fields.
        assert!(s.lag1_autocorr.abs() < 0.2, "{s:?}");
        // Magnitudes spread over several decades.
        let mags: Vec<f64> = g.iter().filter(|v| **v != 0.0).map(|v| (v.abs() as f64).log10()).collect();
        let (lo, hi) = mags.iter().fold((f64::MAX, f64::MIN), |(a, b), &m| (a.min(m), b.max(m)));
        assert!(hi - lo > 5.0, "decades {lo}..{hi}");
    }

    #[test]
    fn bf16_rounds_to_nearest() {
        let b = to_bf16(&[1.0, 1.0 + 1.0 / 256.0, -3.0e-5, 0.0]);
        assert_eq!(b[0].to_f32(), 1.0);
        // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even (1).
        assert_eq!(b[1].to_f32(), 1.0);
        assert!((b[2].to_f32() + 3.0e-5).abs() < 3.0e-5 / 128.0);
        assert_eq!(b[3].to_f32(), 0.0);
    }
}
