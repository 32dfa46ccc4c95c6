//! Coefficient reordering by sequency, fused with the negabinary mapping (zfp's
//! `fwd_order` / `inv_order`).

use super::dims::Dims;
use super::scalar::{BlockInt, Scalar};

/// Reorders transformed coefficients by sequency and maps them to negabinary.
#[inline(always)]
pub fn fwd_order<S: Scalar, D: Dims>(block: &D::Block<S::Int>) -> D::Block<S::UInt> {
    // The mapping is elementwise, so it is applied first (in packed form), then the
    // values are permuted.
    let mut nb = D::splat(S::UInt::default());
    for (u, &q) in nb.as_mut().iter_mut().zip(block.as_ref()) {
        *u = q.to_negabinary();
    }
    let src = nb.as_ref();
    let mut out = D::splat(S::UInt::default());
    for (u, &p) in out.as_mut().iter_mut().zip(D::PERM.as_ref()) {
        // `& (N - 1)` proves the index in range (the tables are permutations of 0..N).
        *u = src[p as usize & (D::N - 1)];
    }
    out
}

/// Inverse of [`fwd_order`].
#[inline(always)]
pub fn inv_order<S: Scalar, D: Dims>(coef: &D::Block<S::UInt>) -> D::Block<S::Int> {
    let mut out = D::splat(<S::Int as Default>::default());
    let dst = out.as_mut();
    for (&u, &p) in coef.as_ref().iter().zip(D::PERM.as_ref()) {
        dst[p as usize & (D::N - 1)] = <S::Int as BlockInt>::from_negabinary(u);
    }
    out
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
        assert_eq!(coef[2], (-4i32).to_negabinary());
        assert_eq!(inv_order::<f32, D2>(&coef), block);
    }
}
