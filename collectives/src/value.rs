//! The element types the collectives move: `f32` and `f64`.

use codec_host::BackendElem;
use mpi::datatype::Equivalence;

/// An element type of the compressed collectives: a codec element and reduction operand
/// (codec-host's `BackendElem`, whose `Element` supertrait also gives the size, the
/// little-endian form and the finite range) and an MPI datatype at once. Implemented
/// for `f32` and `f64`.
pub trait Value: BackendElem + Equivalence + Into<f64> {
    /// Machine epsilon, widened.
    const EPSILON: f64;
}

macro_rules! value_impl {
    ($t:ty) => {
        impl Value for $t {
            const EPSILON: f64 = <$t>::EPSILON as f64;
        }
    };
}
value_impl!(f32);
value_impl!(f64);
