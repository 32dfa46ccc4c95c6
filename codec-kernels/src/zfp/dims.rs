//! Block dimensionality: 1D, 2D and 3D blocks of 4^d values, x fastest.
//!
//! A block is a fixed-size array (`[E; 4]`, `[E; 16]`, `[E; 64]`) chosen by the
//! [`Dims`] implementor, so that every loop over a block has a compile-time length and
//! indexing needs no bounds checks once the code is instantiated.

/// A block shape: `D` axes of 4 values each.
pub trait Dims: Copy + Default + Send + Sync + 'static {
    /// Number of axes (1 to 3).
    const D: usize;
    /// Values per block, `4^D`.
    const N: usize;
    /// A block of `N` elements.
    type Block<E: Copy>: Copy + AsRef<[E]> + AsMut<[E]>;
    /// A block with every element `e`.
    fn splat<E: Copy>(e: E) -> Self::Block<E>;
    /// Coefficient order by increasing sequency: output position `p` takes coefficient
    /// `PERM[p]` (zfp's tables; index `i + 4j + 16k`).
    const PERM: Self::Block<u8>;
}

/// One-dimensional blocks of 4 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct D1;
/// Two-dimensional blocks of 4x4 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct D2;
/// Three-dimensional blocks of 4x4x4 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct D3;

macro_rules! dims {
    ($t:ty, $d:expr, $n:expr, $perm:expr) => {
        impl Dims for $t {
            const D: usize = $d;
            const N: usize = $n;
            type Block<E: Copy> = [E; $n];
            #[inline(always)]
            fn splat<E: Copy>(e: E) -> [E; $n] {
                [e; $n]
            }
            const PERM: [u8; $n] = $perm;
        }
    };
}

dims!(D1, 1, 4, [0, 1, 2, 3]);
dims!(D2, 2, 16, [0, 1, 4, 5, 2, 8, 6, 9, 3, 12, 10, 7, 13, 11, 14, 15]);
#[rustfmt::skip]
dims!(D3, 3, 64, [
    0, 1, 4, 16, 20, 17, 5, 2, 8, 32, 21, 6, 18, 24, 9, 33,
    36, 3, 12, 48, 22, 25, 37, 40, 34, 10, 7, 19, 28, 13, 49, 52,
    41, 38, 26, 23, 29, 53, 11, 35, 44, 14, 50, 56, 42, 27, 39, 45,
    30, 54, 57, 60, 51, 15, 43, 46, 58, 61, 55, 31, 62, 59, 47, 63,
]);

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables are permutations ordered by total sequency i + j + k (zfp's rule; ties
    /// follow its hand-written order, which the tables fix).
    fn check<D: Dims>() {
        let perm = D::PERM;
        let perm = perm.as_ref();
        let mut seen = [false; 64];
        let mut last = 0;
        for &p in perm {
            let p = p as usize;
            assert!(p < D::N && !seen[p]);
            seen[p] = true;
            let sequency = (p & 3) + ((p >> 2) & 3) + (p >> 4);
            assert!(sequency >= last, "{:?}", perm);
            last = sequency;
        }
    }

    #[test]
    fn tables_are_sequency_ordered_permutations() {
        check::<D1>();
        check::<D2>();
        check::<D3>();
    }
}
