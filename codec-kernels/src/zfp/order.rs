//! Coefficient reordering by sequency, fused with the negabinary mapping (zfp's
//! `fwd_order` / `inv_order`). Both are handed to the bit-plane coder as accessors, so
//! the reordered block is never stored.

use super::dims::Dims;
use super::scalar::{BlockInt, Scalar};

/// The coefficient at sequency position `p` of a transformed block, in negabinary:
/// output position `p` takes coefficient `PERM[p]`.
#[inline(always)]
pub fn fwd_order<S: Scalar, D: Dims>(block: &D::Block<S::Int>) -> impl Fn(usize) -> S::UInt + '_ {
    let src = block.as_ref();
    let perm = D::PERM;
    // `& (N - 1)` proves the indices in range (the tables are permutations of 0..N).
    move |p| src[perm.as_ref()[p & (D::N - 1)] as usize & (D::N - 1)].to_negabinary()
}

/// Inverse of [`fwd_order`]: stores the coefficient decoded for sequency position `p`.
#[inline(always)]
pub fn inv_order<S: Scalar, D: Dims>(block: &mut D::Block<S::Int>) -> impl FnMut(usize, S::UInt) + '_ {
    let dst = block.as_mut();
    let perm = D::PERM;
    move |p, u| dst[perm.as_ref()[p & (D::N - 1)] as usize & (D::N - 1)] = <S::Int as BlockInt>::from_negabinary(u)
}

#[cfg(test)]
mod tests {
    use super::super::dims::D2;
    use super::*;

    #[test]
    fn order_round_trips_and_follows_the_table() {
        let block: [i32; 16] = core::array::from_fn(|i| i as i32 - 8);
        let coef = fwd_order::<f32, D2>(&block);
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
