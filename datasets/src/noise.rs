//! Deterministic fractal value noise: a hashed lattice of random values, smoothly
//! interpolated, summed over octaves. It is a pure function of position and seed, so
//! fields built from it can be generated in parallel and still be reproducible.

/// Fractal (multi-octave) value noise with values in [-1, 1].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fbm {
    /// Lattice cells per unit length in the first octave.
    pub base: u32,
    pub octaves: u32,
    /// Amplitude factor from one octave to the next (its frequency doubles).
    /// 2^(-1/3) gives the Kolmogorov k^(-5/3) energy spectrum.
    pub gain: f64,
    pub seed: u64,
    /// Make the noise periodic in x with period 1 (longitude).
    pub wrap_x: bool,
}

impl Fbm {
    /// The noise at (x, y, z); coordinates are in units where the field spans [0, 1].
    pub fn at(&self, x: f64, y: f64, z: f64) -> f64 {
        let (mut sum, mut norm, mut amp) = (0.0, 0.0, 1.0);
        let mut freq = self.base as u64;
        for o in 0..self.octaves {
            let period = self.wrap_x.then_some(freq as i64);
            let seed = self.seed ^ (o as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            sum += amp * value_noise(x * freq as f64, y * freq as f64, z * freq as f64, period, seed);
            norm += amp;
            amp *= self.gain;
            freq *= 2;
        }
        sum / norm
    }
}

/// Trilinear interpolation of lattice values with a quintic fade (continuous slope).
fn value_noise(x: f64, y: f64, z: f64, period_x: Option<i64>, seed: u64) -> f64 {
    let (fx, fy, fz) = (x.floor(), y.floor(), z.floor());
    let (ix, iy, iz) = (fx as i64, fy as i64, fz as i64);
    let (u, v, w) = (fade(x - fx), fade(y - fy), fade(z - fz));
    let wrap = |i: i64| period_x.map_or(i, |p| i.rem_euclid(p));
    let at = |dx: i64, dy: i64, dz: i64| lattice(wrap(ix + dx), iy + dy, iz + dz, seed);
    let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
    let x00 = lerp(at(0, 0, 0), at(1, 0, 0), u);
    let x10 = lerp(at(0, 1, 0), at(1, 1, 0), u);
    let x01 = lerp(at(0, 0, 1), at(1, 0, 1), u);
    let x11 = lerp(at(0, 1, 1), at(1, 1, 1), u);
    lerp(lerp(x00, x10, v), lerp(x01, x11, v), w)
}

fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// A uniform value in [-1, 1] for a lattice point (splitmix64 finaliser over the mixed
/// coordinates).
fn lattice(ix: i64, iy: i64, iz: i64, seed: u64) -> f64 {
    let mut h = seed
        ^ (ix as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (iy as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ (iz as u64).wrapping_mul(0x1656_67b1_9e37_79f9);
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_bounded_continuous_and_periodic_when_asked() {
        let f = Fbm { base: 4, octaves: 4, gain: 0.5, seed: 9, wrap_x: true };
        let mut prev = f.at(0.0, 0.3, 0.0);
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        for i in 1..=4000 {
            let x = i as f64 / 4000.0;
            let v = f.at(x, 0.3, 0.0);
            assert!((-1.0..=1.0).contains(&v));
            // Finest lattice spacing is 1/32; a step of 1/4000 moves little.
            assert!((v - prev).abs() < 0.05, "jump at {x}");
            (lo, hi) = (lo.min(v), hi.max(v));
            prev = v;
        }
        assert!(hi - lo > 0.5, "noise too flat: {lo}..{hi}");
        assert!((f.at(0.0, 0.3, 0.0) - f.at(1.0, 0.3, 0.0)).abs() < 1e-12);
        let g = Fbm { seed: 10, ..f };
        assert_ne!(f.at(0.37, 0.3, 0.0), g.at(0.37, 0.3, 0.0));
    }
}
