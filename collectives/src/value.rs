//! The element types the collectives move: `f32` and `f64`.

use codec_host::BackendElem;
use mpi::datatype::Equivalence;

/// An element type of the compressed collectives: a codec element and reduction operand
/// (codec-host's `BackendElem`, whose `Element` supertrait also gives the size and the
/// little-endian form) and an MPI datatype at once. Implemented for `f32` and `f64`.
pub trait Value: BackendElem + Equivalence + Into<f64> {
    /// Machine epsilon, widened.
    const EPSILON: f64;
}

impl Value for f32 {
    const EPSILON: f64 = f32::EPSILON as f64;
}

impl Value for f64 {
    const EPSILON: f64 = f64::EPSILON;
}

/// Smallest and largest finite value of `values`, if any.
pub(crate) fn finite_range<T: Value>(values: &[T]) -> Option<(f64, f64)> {
    values.iter().map(|v| v.to_f64()).filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_skips_non_finite_values() {
        assert_eq!(finite_range(&[f64::NAN, 2.0, -1.0, f64::INFINITY]), Some((-1.0, 2.0)));
        assert_eq!(finite_range::<f32>(&[f32::NAN]), None);
        assert_eq!(finite_range::<f32>(&[]), None);
    }
}
