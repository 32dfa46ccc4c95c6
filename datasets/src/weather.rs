//! Hurricane-like 3D weather fields (in the manner of the Isabel simulation's wind
//! components).
//!
//! The east-west wind U of a tropical cyclone: a tilted vortex with a calm eye, the
//! strongest winds at the eyewall and a modified-Rankine decay outside, weakening with
//! height and reversing into anticyclonic outflow aloft; a vertically sheared
//! environmental flow; and fine-scale turbulence with a Kolmogorov (k^-5/3) spectrum,
//! strongest near the eyewall and in spiral rain bands. The large-scale part is smooth,
//! the turbulence is not, which puts the field between the smooth and the noisy test
//! data in compressibility.

use crate::grid::unit_coord;
use crate::noise::Fbm;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Default grid: 500 x 500 horizontal points (x fastest) on 100 levels, the layout of
/// the SDRBench Hurricane fields (listed there as 100x500x500).
pub const HURRICANE_DIMS: [usize; 3] = [500, 500, 100];

/// Peak tangential wind at the surface, m/s.
const VMAX: f64 = 65.0;
/// Radius of maximum wind as a fraction of the 2000 km domain (about 50 km).
const RMW: f64 = 0.025;

/// The U wind component (m/s) of a hurricane-like vortex on a `dims` grid (x fastest,
/// height slowest), deterministic for `seed`. Values lie roughly in [-80, 80].
pub fn hurricane_u(dims: [usize; 3], seed: u64) -> Vec<f32> {
    let [nx, ny, nz] = dims;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centre = [rng.random_range(0.4..0.6), rng.random_range(0.4..0.6)];
    let tilt = [rng.random_range(-0.03..0.03), rng.random_range(-0.03..0.03)];
    let turb = Fbm { base: 8, octaves: 5, gain: 2f64.powf(-1.0 / 3.0), seed: rng.random(), wrap_x: false };
    let mut out = vec![0f32; nx * ny * nz];
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(nx * ny).enumerate().for_each(|(k, slab)| {
        let z = unit_coord(k, nz);
        let (xc, yc) = (centre[0] + tilt[0] * z, centre[1] + tilt[1] * z);
        let rm = RMW * (1.0 + 0.5 * z);
        // Cyclonic below, anticyclonic outflow in the top fifth.
        let vmax = VMAX * (1.0 - 1.25 * z);
        let u_env = -5.0 + 20.0 * z;
        for j in 0..ny {
            let y = unit_coord(j, ny);
            for i in 0..nx {
                let x = unit_coord(i, nx);
                let (dx, dy) = (x - xc, y - yc);
                let r = (dx * dx + dy * dy).sqrt().max(1e-9);
                let v_t = if r < rm { vmax * r / rm } else { vmax * (rm / r).powf(0.6) * (-(r / 0.6).powi(2)).exp() };
                let theta = dy.atan2(dx);
                let bands = 1.0 + 0.5 * (3.0 * theta + 8.0 * (r / rm).ln()).sin();
                let sigma = 2.0 + 6.0 * (-((r - rm) / (1.5 * rm)).powi(2)).exp() * bands;
                let u = -v_t * dy / r + u_env + sigma * turb.at(x, y, z * 0.2);
                slab[j * nx + i] = u as f32;
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
    fn hurricane_has_a_strong_vortex_smooth_large_scale_and_turbulence() {
        let dims = [100, 100, 20];
        let u = hurricane_u(dims, 5);
        assert_eq!(u, hurricane_u(dims, 5));
        let s = field_stats(&u, 100);
        assert!(s.max > 40.0 && s.min < -40.0 && s.max < 100.0 && s.min > -100.0, "{s:?}");
        assert!(s.lag1_autocorr > 0.9 && s.lag1_autocorr < 0.999, "{s:?}");
        // Turbulence everywhere: almost nothing is flat at 1e-3 of the range.
        assert!(s.const_block_fraction < 0.05, "{s:?}");
        assert!(s.zero_fraction < 1e-3, "{s:?}");
    }
}
