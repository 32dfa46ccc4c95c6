//! The input fields of `--dataset`.

use collectives::Value;

/// Names `--dataset` accepts.
pub const DATASETS: &str = "smooth3d, grad";

/// `len` values of the named field, seeded by `seed` (each rank passes its own).
pub fn field<T: Value>(name: &str, len: usize, seed: u64) -> Result<Vec<T>, String> {
    let seed = datasets::generate::DEFAULT_SEED ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let values: Vec<f32> = match name {
        // A smooth 3D field on the smallest cube that holds `len` values.
        "smooth3d" => {
            let side = (len as f64).cbrt().ceil() as usize;
            let mut v = datasets::smooth3d_field(side.max(1), 1e-3, seed);
            v.truncate(len);
            v
        }
        // Gradient-like values: Laplace(0, 1e-3) with 10% zeros.
        "grad" => datasets::laplace_gradients(len, 1e-3, 0.1, seed),
        other => return Err(format!("unknown dataset {other:?} (known: {DATASETS})")),
    };
    Ok(values.into_iter().map(|v| T::from_f64(f64::from(v))).collect())
}
