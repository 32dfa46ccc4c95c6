//! The element types the collectives move: `f32` and `f64`.

use codec_host::BackendElem;
use mpi::datatype::Equivalence;

/// An element type of the compressed collectives: a codec element and reduction operand
/// (codec-host's `BackendElem`, whose `Element` supertrait also gives the size and the
/// little-endian form) and an MPI datatype at once. Implemented for `f32` and `f64`.
pub trait Value: BackendElem + Equivalence + Into<f64> {
    /// Machine epsilon, widened.
    const EPSILON: f64;
    /// Smallest and largest finite value of `values`, if any (see [`finite_range`]).
    fn finite_range(values: &[Self]) -> Option<(f64, f64)>;
}

/// Independent running minima and maxima of [`Value::finite_range`]: enough for the
/// compiler to keep them in vector registers.
const RANGE_LANES: usize = 16;

macro_rules! value_impl {
    ($t:ty) => {
        impl Value for $t {
            const EPSILON: f64 = <$t>::EPSILON as f64;
            fn finite_range(values: &[Self]) -> Option<(f64, f64)> {
                // One branch-free pass in the element type (NaN and infinities fail the
                // magnitude test and count as the neutral infinity), so that it vectorises:
                // the range of a relative bound is taken over every input of a call.
                let mut lo = [<$t>::INFINITY; RANGE_LANES];
                let mut hi = [<$t>::NEG_INFINITY; RANGE_LANES];
                let mut fold = |lane: usize, x: $t| {
                    let finite = x.abs() < <$t>::INFINITY;
                    let (xl, xh) = if finite { (x, x) } else { (<$t>::INFINITY, <$t>::NEG_INFINITY) };
                    lo[lane] = if xl < lo[lane] { xl } else { lo[lane] };
                    hi[lane] = if xh > hi[lane] { xh } else { hi[lane] };
                };
                let lanes = values.chunks_exact(RANGE_LANES);
                let tail = lanes.remainder();
                for chunk in lanes {
                    for (lane, &x) in chunk.iter().enumerate() {
                        fold(lane, x);
                    }
                }
                for (lane, &x) in tail.iter().enumerate() {
                    fold(lane, x);
                }
                let lo = lo.iter().fold(<$t>::INFINITY, |a, &b| if b < a { b } else { a });
                let hi = hi.iter().fold(<$t>::NEG_INFINITY, |a, &b| if b > a { b } else { a });
                (lo <= hi).then(|| (lo.into(), hi.into()))
            }
        }
    };
}
value_impl!(f32);
value_impl!(f64);

/// Smallest and largest finite value of `values`, if any.
pub(crate) fn finite_range<T: Value>(values: &[T]) -> Option<(f64, f64)> {
    T::finite_range(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_skips_non_finite_values() {
        assert_eq!(finite_range(&[f64::NAN, 2.0, -1.0, f64::INFINITY]), Some((-1.0, 2.0)));
        assert_eq!(finite_range::<f32>(&[f32::NAN]), None);
        assert_eq!(finite_range::<f32>(&[]), None);
        assert_eq!(finite_range(&[f32::INFINITY, f32::NEG_INFINITY]), None);
    }

    #[test]
    fn range_agrees_with_a_plain_fold_in_every_lane_and_tail() {
        let plain = |v: &[f32]| {
            v.iter().map(|&x| f64::from(x)).filter(|x| x.is_finite()).fold(None, |acc: Option<(f64, f64)>, x| match acc {
                None => Some((x, x)),
                Some((lo, hi)) => Some((lo.min(x), hi.max(x))),
            })
        };
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, -f32::MAX, 0.0];
        for n in [1, 15, 16, 17, 33, 100] {
            for at in 0..n {
                let mut v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
                v[at] = specials[at % specials.len()];
                v[(at * 7) % n] = -3.5 - at as f32;
                assert_eq!(finite_range(&v), plain(&v), "n {n} at {at}");
            }
        }
        let wide = [1e300, f64::NAN, -1e300, 2.0];
        assert_eq!(finite_range(&wide), Some((-1e300, 1e300)));
    }
}
