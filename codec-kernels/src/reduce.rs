//! Element-wise reduction operators, as the collectives apply them after decoding a
//! received piece (`acc[i] = acc[i] op x[i]`).
//!
//! NaN handling: SUM and PROD follow IEEE arithmetic (a NaN operand gives NaN);
//! MIN and MAX return NaN when either operand is NaN (IEEE 754-2019 `minimum`/`maximum`),
//! so a NaN anywhere in the inputs reaches the result whatever the reduction order.

use core::ops::{Add, Mul};

/// A reduction operator, as MPI's predefined `MPI_SUM`, `MPI_PROD`, `MPI_MIN`, `MPI_MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Min,
    Max,
}

/// A scalar the reduction operators apply to (`f32`, `f64`).
pub trait Reducible: Copy + PartialOrd + Add<Output = Self> + Mul<Output = Self> {
    /// True for NaN.
    fn is_nan_value(self) -> bool;
}

impl Reducible for f32 {
    #[inline(always)]
    fn is_nan_value(self) -> bool {
        self.is_nan()
    }
}

impl Reducible for f64 {
    #[inline(always)]
    fn is_nan_value(self) -> bool {
        self.is_nan()
    }
}

impl ReduceOp {
    /// `a op b`.
    #[inline(always)]
    pub fn apply<T: Reducible>(self, a: T, b: T) -> T {
        match self {
            ReduceOp::Sum => a + b,
            ReduceOp::Prod => a * b,
            ReduceOp::Min => pick(a, b, b < a),
            ReduceOp::Max => pick(a, b, b > a),
        }
    }
}

/// `b` if `take_b`, else `a`; a NaN operand wins either way.
#[inline(always)]
fn pick<T: Reducible>(a: T, b: T, take_b: bool) -> T {
    if a.is_nan_value() {
        a
    } else if take_b || b.is_nan_value() {
        b
    } else {
        a
    }
}

/// Reduces one tile: `acc[i] = acc[i] op x[i]` for `i < min(acc.len(), x.len())`.
///
/// The body of the reduction kernel: a launch hands each thread its own tile (on the GPU
/// one element, on the CPU a contiguous range), so tiles never overlap.
#[inline]
pub fn reduce_tile<T: Reducible>(op: ReduceOp, acc: &mut [T], x: &[T]) {
    for (a, &b) in acc.iter_mut().zip(x) {
        *a = op.apply(*a, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_on_finite_values() {
        let mut acc = [1.0f32, -2.0, 3.0, 0.5];
        reduce_tile(ReduceOp::Sum, &mut acc, &[1.0, 1.0, -3.0, 0.25]);
        assert_eq!(acc, [2.0, -1.0, 0.0, 0.75]);
        reduce_tile(ReduceOp::Prod, &mut acc, &[3.0, -2.0, 5.0, 4.0]);
        assert_eq!(acc, [6.0, 2.0, 0.0, 3.0]);
        reduce_tile(ReduceOp::Min, &mut acc, &[7.0, 1.0, -1.0, 3.0]);
        assert_eq!(acc, [6.0, 1.0, -1.0, 3.0]);
        reduce_tile(ReduceOp::Max, &mut acc, &[7.0, 1.0, -2.0, 2.0]);
        assert_eq!(acc, [7.0, 1.0, -1.0, 3.0]);
    }

    #[test]
    fn nan_wins_in_every_operator_and_order() {
        for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max] {
            assert!(op.apply(f64::NAN, 1.0).is_nan(), "{op:?}");
            assert!(op.apply(1.0, f64::NAN).is_nan(), "{op:?}");
        }
        assert_eq!(ReduceOp::Max.apply(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(ReduceOp::Min.apply(1.0, f32::NEG_INFINITY), f32::NEG_INFINITY);
        assert!(ReduceOp::Sum.apply(f32::INFINITY, f32::NEG_INFINITY).is_nan());
    }

    #[test]
    fn a_shorter_operand_reduces_only_the_common_prefix() {
        let mut acc = [1.0f64, 2.0, 3.0];
        reduce_tile(ReduceOp::Sum, &mut acc, &[1.0]);
        assert_eq!(acc, [2.0, 2.0, 3.0]);
    }
}
