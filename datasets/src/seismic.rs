//! RTM-like seismic wavefield snapshots.
//!
//! Reverse-time-migration data are snapshots of a wave equation solved in a layered
//! earth for one shot at a time: a source fired near the surface, its expanding
//! Ricker-wavelet front bent by the velocity layers, weaker fronts reflected from the
//! layer interfaces, a faint scattered coda behind the fronts, and exact zeros wherever
//! no wave has arrived yet. That last part, a mostly zero background, is what makes such snapshots very
//! compressible with an error-bounded codec, while the fronts themselves are smooth
//! oscillations sampled at about eight points per wavelength.
//!
//! The field is built from ray-style travel times instead of a finite-difference solver:
//! travel time along the straight ray uses the mean slowness of the layers it crosses,
//! and reflections come from image sources mirrored in each interface below the shot.
//! Each value is a pure function of its position, so generation runs in parallel and is
//! deterministic for a seed.

use crate::grid::unit_coord;
use crate::noise::Fbm;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Default grid: 256^3 values (64 MiB of f32) over a 3 km cube, 11.7 m spacing.
pub const RTM_DIMS: [usize; 3] = [256, 256, 256];

const EXTENT_M: f64 = 3000.0;
/// Ricker peak frequency: with the 1500 m/s top layer this gives 100 m wavelengths.
const PEAK_HZ: f64 = 15.0;
/// Beyond (pi f tau)^2 = 20 the wavelet is below 1e-7 of its peak and is left at zero.
const RICKER_CUTOFF: f64 = 20.0;
const CODA_LEVEL: f64 = 0.03;
/// RTM propagates one shot per run, so a snapshot holds one source's wavefield.
const SHOTS: usize = 1;
const CODA_DECAY_S: f64 = 0.15;

struct Layer {
    /// Depth of the top of the layer in metres.
    top: f64,
    velocity: f64,
}

struct Shot {
    pos: [f64; 3],
    /// Seconds since the shot fired.
    age: f64,
    amplitude: f64,
}

struct Model {
    layers: Vec<Layer>,
    shots: Vec<Shot>,
}

impl Model {
    fn new(seed: u64) -> Model {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let base = [(0.0, 1500.0), (0.15, 2000.0), (0.35, 2600.0), (0.55, 3200.0), (0.8, 4000.0)];
        let layers = base
            .iter()
            .enumerate()
            .map(|(i, &(frac, v))| Layer {
                top: if i == 0 { 0.0 } else { (frac + rng.random_range(-0.04..0.04)) * EXTENT_M },
                velocity: v * rng.random_range(0.95..1.05),
            })
            .collect();
        let shots = (0..SHOTS)
            .map(|_| Shot {
                pos: [
                    rng.random_range(0.2..0.8) * EXTENT_M,
                    rng.random_range(0.2..0.8) * EXTENT_M,
                    30.0,
                ],
                age: rng.random_range(0.5..0.9),
                amplitude: 1000.0 * rng.random_range(0.6..1.0),
            })
            .collect();
        Model { layers, shots }
    }

    /// Integral of slowness (1/v) from the surface down to depth `z`.
    fn slowness_integral(&self, z: f64) -> f64 {
        let mut s = 0.0;
        for (i, l) in self.layers.iter().enumerate() {
            let bottom = self.layers.get(i + 1).map_or(f64::INFINITY, |n| n.top);
            if z <= l.top {
                break;
            }
            s += (z.min(bottom) - l.top) / l.velocity;
        }
        s
    }

    fn slowness_at(&self, z: f64) -> f64 {
        let l = self.layers.iter().rev().find(|l| l.top <= z).unwrap_or(&self.layers[0]);
        1.0 / l.velocity
    }

    /// Straight-ray travel time between depths za and zb over distance `dist`, given the
    /// slowness integrals at both ends.
    fn travel(&self, dist: f64, za: f64, sa: f64, zb: f64, sb: f64) -> f64 {
        let dz = (zb - za).abs();
        let mean_slowness = if dz > 1e-6 { (sb - sa).abs() / dz } else { self.slowness_at(za) };
        dist * mean_slowness
    }
}

fn ricker(tau: f64) -> f64 {
    let a = (std::f64::consts::PI * PEAK_HZ * tau).powi(2);
    if a > RICKER_CUTOFF {
        0.0
    } else {
        (1.0 - 2.0 * a) * (-a).exp()
    }
}

/// An RTM-like wavefield snapshot on a `dims` grid (x fastest, z = depth slowest),
/// deterministic for `seed`. Values are in arbitrary units, peaks of order 1.
pub fn rtm_wavefield(dims: [usize; 3], seed: u64) -> Vec<f32> {
    let [nx, ny, nz] = dims;
    let model = Model::new(seed);
    let coda = Fbm { base: 24, octaves: 2, gain: 0.5, seed: seed ^ 0xc0da, wrap_x: false };
    let wave_half_width = RICKER_CUTOFF.sqrt() / (std::f64::consts::PI * PEAK_HZ);
    let shot_s: Vec<f64> = model.shots.iter().map(|s| model.slowness_integral(s.pos[2])).collect();
    let mut out = vec![0f32; nx * ny * nz];
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(nx * ny).enumerate().for_each(|(k, slab)| {
        let zu = unit_coord(k, nz);
        let z = zu * EXTENT_M;
        let sz = model.slowness_integral(z);
        for j in 0..ny {
            let yu = unit_coord(j, ny);
            let y = yu * EXTENT_M;
            for i in 0..nx {
                let xu = unit_coord(i, nx);
                let x = xu * EXTENT_M;
                let (mut v, mut coda_weight) = (0.0, 0.0);
                for (shot, &ss) in model.shots.iter().zip(&shot_s) {
                    let [sx, sy, szs] = shot.pos;
                    let h2 = (x - sx).powi(2) + (y - sy).powi(2);
                    let dist = (h2 + (z - szs).powi(2)).sqrt();
                    let tau = shot.age - model.travel(dist, szs, ss, z, sz);
                    let spread = shot.amplitude / dist.max(50.0);
                    v += spread * ricker(tau);
                    if tau > wave_half_width {
                        coda_weight += spread * (-(tau - wave_half_width) / CODA_DECAY_S).exp();
                    }
                    // Reflections from interfaces below the shot reach points above them.
                    for (l, lower) in model.layers.iter().zip(&model.layers[1..]) {
                        let zi = lower.top;
                        if zi <= szs || z >= zi {
                            continue;
                        }
                        let img_dist = (h2 + (2.0 * zi - szs - z).powi(2)).sqrt();
                        let si = model.slowness_integral(zi);
                        let path_s = (si - ss) + (si - sz);
                        let t_ref = img_dist * path_s / ((zi - szs) + (zi - z));
                        let r = (lower.velocity - l.velocity) / (lower.velocity + l.velocity);
                        v += r * shot.amplitude / img_dist.max(50.0) * ricker(shot.age - t_ref);
                    }
                }
                if coda_weight > 0.0 {
                    v += CODA_LEVEL * coda_weight * coda.at(xu, yu, zu);
                }
                slab[j * nx + i] = v as f32;
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::field_stats;

    #[test]
    fn rtm_is_deterministic_mostly_zero_with_smooth_fronts() {
        let dims = [64, 64, 64];
        let a = rtm_wavefield(dims, 1);
        assert_eq!(a.len(), 64 * 64 * 64);
        assert_eq!(a, rtm_wavefield(dims, 1));
        assert_ne!(a, rtm_wavefield(dims, 2));
        let s = field_stats(&a, 64);
        // Mostly untouched background, but fronts present.
        assert!(s.zero_fraction > 0.3 && s.zero_fraction < 0.9, "{s:?}");
        assert!(s.max > 0.3 && s.min < -0.3 && s.max < 20.0, "{s:?}");
        // Many 128-value blocks are flat within 1e-3 of the range.
        assert!(s.const_block_fraction > 0.3, "{s:?}");
    }

    #[test]
    fn rtm_fronts_are_smooth_at_the_default_spacing() {
        // Default x-y spacing (256 across), coarse in depth: slice 2 lies ~470 m down.
        let g = rtm_wavefield([256, 256, 16], 3);
        let slice = &g[2 * 256 * 256..3 * 256 * 256];
        let s = field_stats(slice, 256);
        assert!(s.lag1_autocorr > 0.8, "{s:?}");
        assert!(s.zero_fraction < 0.95, "slice must cut fronts: {s:?}");
    }
}
