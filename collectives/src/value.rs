//! The element types the collectives move: `f32` and `f64`.

use codec_host::BackendElem;
use mpi::datatype::Equivalence;

/// An element type of the compressed collectives: a codec element and reduction operand
/// (codec-host's `BackendElem`) and an MPI datatype at once. Implemented for `f32` and
/// `f64`.
pub trait Value: BackendElem + Equivalence + Into<f64> {
    /// Size in bytes.
    const SIZE: usize;
    /// Machine epsilon, widened.
    const EPSILON: f64;
    /// Writes the little-endian bytes of `self` into `out[..SIZE]`.
    fn put_le(self, out: &mut [u8]);
    /// Reads a value from `bytes[..SIZE]` (little-endian).
    fn get_le(bytes: &[u8]) -> Self;
}

macro_rules! value_impl {
    ($t:ty) => {
        impl Value for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            const EPSILON: f64 = <$t>::EPSILON as f64;
            #[inline]
            fn put_le(self, out: &mut [u8]) {
                out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; core::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..Self::SIZE]);
                <$t>::from_le_bytes(b)
            }
        }
    };
}
value_impl!(f32);
value_impl!(f64);

/// Appends `values` as little-endian bytes.
pub(crate) fn extend_le<T: Value>(values: &[T], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + values.len() * T::SIZE, 0);
    for (v, chunk) in values.iter().zip(out[start..].chunks_exact_mut(T::SIZE)) {
        v.put_le(chunk);
    }
}

/// Fills `out` from little-endian bytes; `bytes` holds exactly `out.len()` values.
pub(crate) fn read_le<T: Value>(bytes: &[u8], out: &mut [T]) {
    debug_assert_eq!(bytes.len(), out.len() * T::SIZE);
    for (v, chunk) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
        *v = T::get_le(chunk);
    }
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
    fn little_endian_round_trip_keeps_every_bit() {
        let vals = [1.5f32, -0.0, f32::NAN, f32::INFINITY, f32::MIN_POSITIVE / 2.0];
        let mut bytes = vec![9u8];
        extend_le(&vals, &mut bytes);
        assert_eq!(bytes.len(), 1 + 5 * 4);
        assert_eq!(&bytes[1..5], &1.5f32.to_le_bytes());
        let mut back = [0f32; 5];
        read_le(&bytes[1..], &mut back);
        assert!(vals.iter().zip(&back).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn range_skips_non_finite_values() {
        assert_eq!(finite_range(&[f64::NAN, 2.0, -1.0, f64::INFINITY]), Some((-1.0, 2.0)));
        assert_eq!(finite_range::<f32>(&[f32::NAN]), None);
        assert_eq!(finite_range::<f32>(&[]), None);
    }
}
