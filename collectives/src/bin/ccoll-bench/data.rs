//! The input fields of `--dataset`.

use collectives::Value;

/// `len` values of the data set `spec`: a generator name (`datasets::Named`: smooth3d,
/// grad16m, rtm, hurricane, cesm, grad, grad-bf16) or `raw:PATH:DIMS[:f32|f64]` (see
/// `datasets::parse_spec`), seeded by `seed` (each rank passes its own).
pub fn field<T: Value>(spec: &str, len: usize, seed: u64) -> Result<Vec<T>, String> {
    let seed = datasets::DEFAULT_SEED ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let data = datasets::parse_spec(spec).and_then(|s| s.load_len(len, seed)).map_err(|e| e.to_string())?;
    Ok(data.values.to_f64().into_iter().map(T::from_f64).collect())
}
