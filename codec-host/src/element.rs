//! The element types the codecs accept, and their little-endian byte form (files,
//! messages).

use core::fmt;

/// Runtime tag of an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    F32,
    F64,
}

impl ElemType {
    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            ElemType::F32 => 4,
            ElemType::F64 => 8,
        }
    }

    /// `f32` or `f64`.
    pub const fn name(self) -> &'static str {
        match self {
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for ElemType {
    type Err = crate::Error;
    /// Parses `f32` or `f64`.
    fn from_str(s: &str) -> crate::Result<Self> {
        match s.trim() {
            "f32" => Ok(ElemType::F32),
            "f64" => Ok(ElemType::F64),
            _ => Err(crate::Error::ParamOutOfRange(format!("element type {s:?}: expected f32 or f64"))),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A floating-point element type: `f32` or `f64`. The kernels' scalar traits are
/// supertraits, so generic host code can hand its data to the kernel bodies.
pub trait Element:
    Copy
    + Default
    + PartialOrd
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + sealed::Sealed
    + codec_kernels::zfp::Scalar
    + codec_kernels::szx::SzxFloat
    + codec_kernels::reduce::ReduceElem
{
    /// The runtime tag.
    const TYPE: ElemType;
    /// Bytes per value.
    const SIZE: usize = Self::TYPE.size();
    /// Widens to f64 (exact).
    fn to_f64(self) -> f64;
    /// Narrows from f64 (rounds to nearest).
    fn from_f64(v: f64) -> Self;
    /// Writes the little-endian bytes of `self` into `out[..SIZE]`.
    fn put_le(self, out: &mut [u8]);
    /// Reads a value from the little-endian `bytes[..SIZE]`.
    fn get_le(bytes: &[u8]) -> Self;
    /// Smallest and largest finite value of `values`, widened, if any (NaN and
    /// infinities skipped): the range a relative bound is taken over.
    fn finite_range(values: &[Self]) -> Option<(f64, f64)>;
}

/// Independent running minima and maxima of [`Element::finite_range`]: enough for the
/// compiler to keep them in vector registers.
const RANGE_LANES: usize = 16;

crate::szx::isa::multiversion! {
    /// [`Element::finite_range`], in the best copy the CPU runs: compiled for the
    /// baseline (SSE2), a standalone copy scanned a 64 MiB field at 6.0 to 6.2 GB/s on
    /// a Xeon (2026-11-28, one thread, out of the caches, medians of 7), for AVX-512
    /// and with the prefetch at 8.9 to 9.0.
    fn range_of(values: &[T]) -> Option<(f64, f64)> = finite_range_body;
}

/// One branch-free pass in the element type (NaN and infinities fail the magnitude test
/// and count as the neutral infinity), so that it vectorises: a relative bound's range is
/// taken over every value compressed.
#[inline(always)]
fn finite_range_body<T: Element>(values: &[T]) -> Option<(f64, f64)> {
    let inf = T::from_bits(T::INF_BITS);
    let neg_inf = T::from_bits(T::INF_BITS | !T::ABS_MASK);
    let mut lo = [inf; RANGE_LANES];
    let mut hi = [neg_inf; RANGE_LANES];
    let mut fold = |lane: usize, x: T| {
        let finite = (x.to_bits() & T::ABS_MASK) < T::INF_BITS;
        let (xl, xh) = if finite { (x, x) } else { (inf, neg_inf) };
        lo[lane] = if xl < lo[lane] { xl } else { lo[lane] };
        hi[lane] = if xh > hi[lane] { xh } else { hi[lane] };
    };
    let lanes = values.chunks_exact(RANGE_LANES);
    let tail = lanes.remainder();
    for (k, chunk) in lanes.enumerate() {
        crate::szx::isa::prefetch_ahead(values, k * RANGE_LANES, RANGE_LANES);
        for (lane, &x) in chunk.iter().enumerate() {
            fold(lane, x);
        }
    }
    for (lane, &x) in tail.iter().enumerate() {
        fold(lane, x);
    }
    let lo = lo.iter().fold(inf, |a, &b| if b < a { b } else { a });
    let hi = hi.iter().fold(neg_inf, |a, &b| if b > a { b } else { a });
    (lo <= hi).then(|| (lo.to_f64(), hi.to_f64()))
}

macro_rules! element_impl {
    ($t:ty, $tag:expr) => {
        impl Element for $t {
            const TYPE: ElemType = $tag;
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            // The identity for f64.
            #[allow(clippy::unnecessary_cast)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
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
            fn finite_range(values: &[Self]) -> Option<(f64, f64)> {
                range_of(values)
            }
        }
    };
}
element_impl!(f32, ElemType::F32);
element_impl!(f64, ElemType::F64);

/// Appends `values` to `out` as little-endian bytes.
pub fn extend_le<T: Element>(values: &[T], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + values.len() * T::SIZE, 0);
    for (v, chunk) in values.iter().zip(out[start..].chunks_exact_mut(T::SIZE)) {
        v.put_le(chunk);
    }
}

/// Fills `out` from little-endian `bytes`, which hold exactly `out.len()` values.
pub fn read_le<T: Element>(bytes: &[u8], out: &mut [T]) {
    debug_assert_eq!(bytes.len(), out.len() * T::SIZE);
    for (v, chunk) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
        *v = T::get_le(chunk);
    }
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
        // Little-endian: -3.0f32 is 0xc0400000, 1.0f64 0x3ff0000000000000.
        let mut b = [0u8; 8];
        (-3.0f32).put_le(&mut b);
        assert_eq!(b[..4], [0, 0, 0x40, 0xc0]);
        1.0f64.put_le(&mut b);
        assert_eq!(b, [0, 0, 0, 0, 0, 0, 0xf0, 0x3f]);
        assert_eq!(f64::get_le(&b), 1.0);
        let mut back = [0f32; 5];
        read_le(&bytes[1..], &mut back);
        assert!(vals.iter().zip(&back).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!((f32::SIZE, f64::SIZE), (4, 8));
    }

    #[test]
    fn range_skips_non_finite_values() {
        assert_eq!(f64::finite_range(&[f64::NAN, 2.0, -1.0, f64::INFINITY]), Some((-1.0, 2.0)));
        assert_eq!(f32::finite_range(&[f32::NAN]), None);
        assert_eq!(f32::finite_range(&[]), None);
        assert_eq!(f32::finite_range(&[f32::INFINITY, f32::NEG_INFINITY]), None);
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
                assert_eq!(f32::finite_range(&v), plain(&v), "n {n} at {at}");
            }
        }
        let wide = [1e300, f64::NAN, -1e300, 2.0];
        assert_eq!(f64::finite_range(&wide), Some((-1e300, 1e300)));
    }
}
