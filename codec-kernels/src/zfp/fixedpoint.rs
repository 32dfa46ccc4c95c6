//! Block-floating-point conversion: a block's values as integers relative to the
//! block's largest exponent, and back.

use super::dims::Dims;
use super::scalar::Scalar;

/// zfp's common exponent of a block, or `None` if the block holds an infinity or NaN.
#[inline(always)]
pub fn block_exponent<S: Scalar, D: Dims>(block: &D::Block<S>) -> Option<i32> {
    S::block_exponent(block.as_ref())
}

/// Number of bit planes a block gets: `min(maxprec, max(0, emax - minexp + 2(d+1)))`.
/// The `2(d+1)` guard planes keep fixed-accuracy errors within the tolerance.
#[inline(always)]
pub fn precision(emax: i32, maxprec: u32, minexp: i32, dims: usize) -> u32 {
    let p = emax as i64 - minexp as i64 + 2 * (dims as i64 + 1);
    p.clamp(0, maxprec as i64) as u32
}

/// Values times `2^(PBITS - 2 - emax)`, truncated toward zero ([`Scalar::quantize`]).
#[inline(always)]
pub fn fwd_cast<S: Scalar, D: Dims>(block: &D::Block<S>, emax: i32) -> D::Block<S::Int> {
    let mut out = D::splat(<S::Int as Default>::default());
    S::quantize(block.as_ref(), emax, out.as_mut());
    out
}

/// Integers times `2^(emax - (PBITS - 2))` ([`Scalar::dequantize`]).
#[inline(always)]
pub fn inv_cast<S: Scalar, D: Dims>(block: &D::Block<S::Int>, emax: i32) -> D::Block<S> {
    let mut out = D::splat(S::ZERO);
    S::dequantize(block.as_ref(), emax, out.as_mut());
    out
}

#[cfg(test)]
mod tests {
    use super::super::dims::D1;
    use super::*;

    #[test]
    fn exponent_and_precision() {
        assert_eq!(block_exponent::<f32, D1>(&[0.0, -0.0, 0.0, 0.0]), Some(-127));
        assert_eq!(block_exponent::<f32, D1>(&[0.5, -3.0, 1.0, 0.0]), Some(2));
        assert_eq!(block_exponent::<f32, D1>(&[0.5, f32::NAN, 1.0, 0.0]), None);
        assert_eq!(block_exponent::<f64, D1>(&[f64::NEG_INFINITY, 0.0, 0.0, 0.0]), None);
        // Fixed rate (minexp -1074) always saturates at maxprec.
        assert_eq!(precision(2, 64, -1074, 3), 64);
        // Tolerance 1e-3 (minexp -10) in 1D: emax 0 -> 14 planes, emax -15 -> none.
        assert_eq!(precision(0, 64, -10, 1), 14);
        assert_eq!(precision(-15, 64, -10, 1), 0);
    }

    #[test]
    fn cast_is_exact_and_reversible() {
        let block = [0.75f32, -0.5, 0.125, 0.0];
        let q = fwd_cast::<f32, D1>(&block, 0);
        assert_eq!(q, [3 << 28, -(1 << 29), 1 << 27, 0]);
        assert_eq!(inv_cast::<f32, D1>(&q, 0), block);
    }

    #[test]
    fn tiny_blocks_overflow_to_int_min_as_in_zfp() {
        // max 2e-35 = 0.83 * 2^-115 -> emax -115, scale 2^145 overflows f32.
        let block = [1e-35f32, -2e-35, 0.0, 3e-36];
        let emax = block_exponent::<f32, D1>(&block).unwrap();
        assert_eq!(emax, -115);
        assert_eq!(fwd_cast::<f32, D1>(&block, emax), [i32::MIN; 4]);
        // Just above the edge (emax -97): the scale 2^127 is finite.
        let q = fwd_cast::<f32, D1>(&[2f32.powi(-98), 0.0, 0.0, 0.0], -97);
        assert_eq!(q, [1 << 29, 0, 0, 0]);
        assert_eq!(fwd_cast::<f64, D1>(&[1e-300, 0.0, 0.0, 0.0], -996), [i64::MIN; 4]);
    }
}
