//! Elementwise reduction for the collectives: `acc[i] = acc[i] op src[i]`.
//!
//! MPI's predefined operations on floating point: sum and product are plain IEEE
//! arithmetic, so NaN and infinities propagate as the hardware gives them. Min and max
//! follow IEEE 754-2019 `minimum`/`maximum`: a NaN operand gives NaN, and -0 orders
//! below +0. That makes every operation commutative, so a reduction's result does not
//! depend on which rank's buffer is the accumulator (which NaN payload survives when
//! both operands are NaN is unspecified, as it is for IEEE arithmetic).

use core::ops::{Add, Mul};

use crate::grid::Grid;
use crate::shared::{Cell, SharedOut};

/// The reduction operation, as the `op` argument of the reduce entry points encodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReduceOp {
    Sum = 0,
    Min = 1,
    Max = 2,
    Prod = 3,
}

impl ReduceOp {
    /// Every operation, in encoding order.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Prod];

    /// Lower-case name, as it appears in kernel names (`reduce_sum_f32`).
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Prod => "prod",
        }
    }
}

/// A floating-point element the reductions accept (`f32`, `f64`).
pub trait ReduceElem: Cell + PartialOrd + Add<Output = Self> + Mul<Output = Self> {
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

impl ReduceElem for f32 {
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn is_sign_negative(self) -> bool {
        f32::is_sign_negative(self)
    }
}

impl ReduceElem for f64 {
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn is_sign_negative(self) -> bool {
        f64::is_sign_negative(self)
    }
}

/// IEEE 754-2019 `minimum` (`want_min`) or `maximum`.
#[inline(always)]
fn min_or_max<T: ReduceElem>(a: T, b: T, want_min: bool) -> T {
    if a.is_nan() {
        return a;
    }
    if b.is_nan() {
        return b;
    }
    if a < b {
        return if want_min { a } else { b };
    }
    if b < a {
        return if want_min { b } else { a };
    }
    // Equal: only the signs of zeros can differ.
    if a.is_sign_negative() == want_min {
        a
    } else {
        b
    }
}

/// Combines two values with `op`.
#[inline(always)]
pub fn combine<T: ReduceElem>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Prod => a * b,
        ReduceOp::Min => min_or_max(a, b, true),
        ReduceOp::Max => min_or_max(a, b, false),
    }
}

/// Kernel body: `acc[i] = combine(op, acc[i], src[i])` for `i < min(acc.len(), src.len())`,
/// grid-stride over the elements.
#[inline(always)]
pub fn reduce_body<T: ReduceElem>(g: Grid, op: ReduceOp, acc: &SharedOut<'_, T>, src: &[T]) {
    let n = acc.len().min(src.len());
    for i in g.stride_iter(n) {
        if let (Some(a), Some(&b)) = (acc.get(i), src.get(i)) {
            acc.set(i, combine(op, a, b));
        }
    }
}

/// [`reduce_body`]'s work on a tile the caller owns outright (the CPU executor's, where
/// the GPU's threads share one output): `op` is matched once, so that each arm is a
/// plain loop over the tile, which the compiler vectorises.
#[inline(always)]
pub fn reduce_tile<T: ReduceElem>(op: ReduceOp, acc: &mut [T], src: &[T]) {
    reduce_each(op, acc, src.iter().copied());
}

/// `acc[i] = combine(op, acc[i], v)` for every `i`: [`reduce_tile`] against one value
/// (a decoder's constant block).
#[inline(always)]
pub fn reduce_tile_const<T: ReduceElem>(op: ReduceOp, acc: &mut [T], v: T) {
    reduce_each(op, acc, core::iter::repeat(v));
}

/// `acc[i] = combine(op, acc[i], src_i)` for the values of `src` in turn.
#[inline(always)]
fn reduce_each<T: ReduceElem>(op: ReduceOp, acc: &mut [T], src: impl Iterator<Item = T>) {
    #[inline(always)]
    fn each<T: ReduceElem>(acc: &mut [T], src: impl Iterator<Item = T>, f: impl Fn(T, T) -> T) {
        for (a, b) in acc.iter_mut().zip(src) {
            *a = f(*a, b);
        }
    }
    match op {
        ReduceOp::Sum => each(acc, src, |a, b| combine(ReduceOp::Sum, a, b)),
        ReduceOp::Prod => each(acc, src, |a, b| combine(ReduceOp::Prod, a, b)),
        ReduceOp::Min => each(acc, src, |a, b| combine(ReduceOp::Min, a, b)),
        ReduceOp::Max => each(acc, src, |a, b| combine(ReduceOp::Max, a, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_propagate_nan_and_order_zeros() {
        let nan = f64::NAN;
        for (a, b) in [(nan, 1.0), (1.0, nan), (nan, nan)] {
            assert!(combine(ReduceOp::Min, a, b).is_nan());
            assert!(combine(ReduceOp::Max, a, b).is_nan());
        }
        for (a, b) in [(-0.0f32, 0.0f32), (0.0, -0.0)] {
            assert_eq!(combine(ReduceOp::Min, a, b).to_bits(), (-0.0f32).to_bits());
            assert_eq!(combine(ReduceOp::Max, a, b).to_bits(), 0.0f32.to_bits());
        }
        assert_eq!(combine(ReduceOp::Min, 2.0f32, -3.0), -3.0);
        assert_eq!(combine(ReduceOp::Max, 2.0f32, -3.0), 2.0);
        assert_eq!(combine(ReduceOp::Max, f32::NEG_INFINITY, -3.0), -3.0);
    }

    #[test]
    fn sum_and_prod_are_ieee_arithmetic() {
        assert_eq!(combine(ReduceOp::Sum, 0.1f64, 0.2), 0.1 + 0.2);
        assert_eq!(combine(ReduceOp::Prod, 1.5f32, -4.0), -6.0);
        assert!(combine(ReduceOp::Sum, f64::INFINITY, f64::NEG_INFINITY).is_nan());
        assert!(combine(ReduceOp::Prod, 0.0f32, f32::INFINITY).is_nan());
        assert!(combine(ReduceOp::Sum, f32::NAN, 1.0).is_nan());
    }

    #[test]
    fn every_operation_is_commutative() {
        let vals = [0.0f32, -0.0, 1.0, -1.5, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, 3e38];
        for op in ReduceOp::ALL {
            for &a in &vals {
                for &b in &vals {
                    let (x, y) = (combine(op, a, b), combine(op, b, a));
                    assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "{op:?} {a} {b}");
                }
            }
        }
    }

    #[test]
    fn tiles_combine_in_place() {
        for op in ReduceOp::ALL {
            let (acc, src) = ([1.5f64, -0.0, 4.0, -2.0], [2.0f64, 0.0, -8.0, -2.0]);
            let mut tile = acc;
            reduce_tile(op, &mut tile, &src);
            let want: [f64; 4] = core::array::from_fn(|i| combine(op, acc[i], src[i]));
            assert_eq!(tile.map(f64::to_bits), want.map(f64::to_bits), "{op:?}");
            let mut tile = acc;
            reduce_tile_const(op, &mut tile, -3.0);
            let want: [f64; 4] = core::array::from_fn(|i| combine(op, acc[i], -3.0));
            assert_eq!(tile, want, "{op:?}");
        }
    }

    #[test]
    fn body_covers_the_shorter_length_only() {
        let mut acc = [1.0f32, 2.0, 3.0, 4.0];
        let src = [10.0f32, 20.0, 30.0];
        let out = SharedOut::new(&mut acc[..]);
        for t in 0..2 {
            reduce_body(Grid { block_idx: 0, block_dim: 2, thread_idx: t, grid_dim: 1 }, ReduceOp::Sum, &out, &src);
        }
        assert_eq!(acc, [11.0, 22.0, 33.0, 4.0]);
    }
}
