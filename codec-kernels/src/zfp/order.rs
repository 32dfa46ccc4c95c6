//! Coefficient reordering by sequency, fused with the negabinary mapping (zfp's
//! `fwd_order` / `inv_order`). The encoder reads the reordered block through an
//! accessor, so it is never stored.

use super::dims::Dims;
use super::scalar::{BlockInt, Scalar};

/// The block's coefficients in negabinary, in natural order (an elementwise, packed
/// mapping); read them in sequency order through [`sequency`].
#[inline(always)]
pub fn fwd_order<S: Scalar, D: Dims>(block: &D::Block<S::Int>) -> D::Block<S::UInt> {
    let mut out = D::splat(S::UInt::default());
    for (u, &q) in out.as_mut().iter_mut().zip(block.as_ref()) {
        *u = q.to_negabinary();
    }
    out
}

/// Accessor for the coefficient at sequency position `p`: output position `p` takes
/// coefficient `PERM[p]`.
#[inline(always)]
pub fn sequency<'a, E: Copy + 'a, D: Dims>(block: &'a D::Block<E>) -> impl Fn(usize) -> E + 'a {
    let src = block.as_ref();
    // `& (N - 1)` proves the indices in range (the tables are permutations of 0..N).
    move |p| src[D::PERM.as_ref()[p & (D::N - 1)] as usize & (D::N - 1)]
}

/// Inverse of [`fwd_order`] and [`sequency`]: the decoder hands coefficients over in
/// sequency order; each lands at its natural position, mapped back from negabinary.
#[inline(always)]
pub fn inv_order<S: Scalar, D: Dims>(block: &mut D::Block<S::Int>) -> impl FnMut(usize, S::UInt) + '_ {
    let dst = block.as_mut();
    move |p, u| dst[D::PERM.as_ref()[p & (D::N - 1)] as usize & (D::N - 1)] = <S::Int as BlockInt>::from_negabinary(u)
}

#[cfg(test)]
mod tests {
    use super::super::dims::D2;
    use super::*;

    #[test]
    fn order_round_trips_and_follows_the_table() {
        let block: [i32; 16] = core::array::from_fn(|i| i as i32 - 8);
        let nb = fwd_order::<f32, D2>(&block);
        let coef = sequency::<u32, D2>(&nb);
        // Position 2 takes coefficient 4 (value -4).
        assert_eq!(coef(2), (-4i32).to_negabinary());
        let mut back = [0i32; 16];
        {
            let mut put = inv_order::<f32, D2>(&mut back);
            for p in 0..16 {
                put(p, coef(p));
            }
        }
        assert_eq!(back, block);
    }
}
