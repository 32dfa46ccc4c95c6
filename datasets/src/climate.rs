//! CESM-like 2D climate fields (in the manner of the CESM-ATM surface variables).
//!
//! Surface temperature on a regular longitude-latitude grid: smooth zonal bands (warm
//! tropics, cold poles), continents from thresholded fractal noise with their own
//! heating and an elevation lapse rate, so that coastlines are sharp discontinuities;
//! sea ice that pins the ocean at the freezing point in high latitudes (flat plateaus);
//! and synoptic-scale weather noise, stronger over land. The grid wraps in longitude.
//!
//! Sea-ice fraction on the same grid: exactly 0 over land and open ocean, exactly 1 in
//! the interior of the polar packs, fractional only in a ragged marginal ice zone, the
//! mix of exact constants and short transitions that block coders meet in ICEFRAC-like
//! variables.

use crate::grid::unit_coord;
use crate::noise::Fbm;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Default grid: 3600 longitudes (fastest) by 1800 latitudes, the SDRBench CESM-ATM
/// layout (listed there as 1800x3600).
pub const CESM_DIMS: [usize; 2] = [3600, 1800];

/// Sea water freezing point, K.
const FREEZING_K: f64 = 271.35;
/// Land-noise threshold: about 30% of the globe is land.
const LAND_THRESHOLD: f64 = 0.1;

/// Surface temperature (K) on a `dims` = [longitudes, latitudes] grid, row 0 at the
/// south pole, deterministic for `seed`. Values lie roughly in [210, 320].
pub fn cesm_ts(dims: [usize; 2], seed: u64) -> Vec<f32> {
    let [nx, ny] = dims;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let land = Fbm { base: 4, octaves: 6, gain: 0.5, seed: rng.random(), wrap_x: true };
    let weather = Fbm { base: 12, octaves: 4, gain: 0.55, seed: rng.random(), wrap_x: true };
    let mut out = vec![0f32; nx * ny];
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        let yu = unit_coord(j, ny);
        let lat = (yu - 0.5) * std::f64::consts::PI;
        let s2 = lat.sin().powi(2);
        // Northern-summer snapshot: warmer north of the equator.
        let zonal = 302.0 - 48.0 * s2 - 12.0 * s2 * s2 + 5.0 * lat.sin();
        for (i, v) in row.iter_mut().enumerate() {
            let xu = unit_coord(i, nx);
            let l = land.at(xu, yu, 0.0);
            let w = weather.at(xu, yu, 0.5);
            let t = if l > LAND_THRESHOLD {
                let elevation_km = ((l - LAND_THRESHOLD) * 12.0).min(5.0);
                zonal + 6.0 * lat.cos() + 10.0 * lat.sin().max(0.0) - 6.5 * elevation_km + 3.0 * w
            } else {
                (zonal + 1.5 * w).max(FREEZING_K)
            };
            *v = t as f32;
        }
    });
    out
}

/// Latitude (degrees from the equator) where the ice edge sits on average.
const ICE_EDGE_DEG: f64 = 62.0;
/// Width (degrees) of the marginal zone over which the fraction rises from 0 to 1.
const ICE_RAMP_DEG: f64 = 8.0;

/// Sea-ice fraction in [0, 1] on a `dims` = [longitudes, latitudes] grid, row 0 at the
/// south pole, deterministic for `seed`: a ramp across the ice edge (which wanders by
/// about 6 degrees with longitude), roughened by fractal noise and clamped, so that most
/// values are exactly 0 or exactly 1; land (the `cesm` continents of the same seed
/// layout) is 0.
pub fn sea_ice_fraction(dims: [usize; 2], seed: u64) -> Vec<f32> {
    let [nx, ny] = dims;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let land = Fbm { base: 4, octaves: 6, gain: 0.5, seed: rng.random(), wrap_x: true };
    let edge = Fbm { base: 3, octaves: 3, gain: 0.5, seed: rng.random(), wrap_x: true };
    let floes = Fbm { base: 24, octaves: 4, gain: 0.6, seed: rng.random(), wrap_x: true };
    let mut out = vec![0f32; nx * ny];
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        let yu = unit_coord(j, ny);
        let lat_deg = (yu - 0.5) * 180.0;
        for (i, v) in row.iter_mut().enumerate() {
            let xu = unit_coord(i, nx);
            if land.at(xu, yu, 0.0) > LAND_THRESHOLD {
                continue;
            }
            let edge_deg = ICE_EDGE_DEG + 12.0 * edge.at(xu, yu.min(0.5) * 0.1, 0.0);
            let ramp = (lat_deg.abs() - edge_deg) / ICE_RAMP_DEG + 0.5 + 0.6 * floes.at(xu, yu, 0.25);
            *v = ramp.clamp(0.0, 1.0) as f32;
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::field_stats;

    #[test]
    fn cesm_has_bands_coasts_and_ice() {
        let dims = [360, 180];
        let t = cesm_ts(dims, 11);
        assert_eq!(t, cesm_ts(dims, 11));
        let s = field_stats(&t, 360);
        assert!(s.min > 200.0 && s.max < 330.0 && s.max - s.min > 60.0, "{s:?}");
        assert!(s.lag1_autocorr > 0.95, "{s:?}");
        // Sea ice: a good share of values sit exactly at the freezing point.
        let ice = t.iter().filter(|&&v| v == FREEZING_K as f32).count() as f64 / t.len() as f64;
        assert!(ice > 0.05 && ice < 0.3, "ice {ice}");
        // The equator row is warmer than the polar rows on average.
        let row_mean = |j: usize| t[j * 360..(j + 1) * 360].iter().map(|&v| v as f64).sum::<f64>() / 360.0;
        assert!(row_mean(90) > row_mean(2) + 30.0 && row_mean(90) > row_mean(177) + 20.0);
        // Coastlines: some neighbour pairs jump by several kelvin.
        let jumps = t.windows(2).filter(|w| (w[0] - w[1]).abs() > 4.0).count();
        assert!(jumps > 50, "jumps {jumps}");
    }

    #[test]
    fn sea_ice_is_mostly_exact_zeros_and_ones() {
        let dims = [720, 360];
        let f = sea_ice_fraction(dims, 5);
        assert_eq!(f, sea_ice_fraction(dims, 5));
        assert!(f.iter().all(|&v| (0.0..=1.0).contains(&v)));
        let share = |p: &dyn Fn(f32) -> bool| f.iter().filter(|&&v| p(v)).count() as f64 / f.len() as f64;
        let (zeros, ones) = (share(&|v| v == 0.0), share(&|v| v == 1.0));
        let partial = 1.0 - zeros - ones;
        assert!(zeros > 0.5 && ones > 0.05 && partial > 0.02 && partial < 0.3, "{zeros} {ones} {partial}");
        // No ice at the equator, some at both poles.
        assert!(f[180 * 720..181 * 720].iter().all(|&v| v == 0.0));
        assert!(f[..720].contains(&1.0) && f[359 * 720..].contains(&1.0));
    }
}
