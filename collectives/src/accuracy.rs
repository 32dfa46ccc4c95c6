//! Accuracy accounting: how many compressions lie on a value's path, per algorithm.
//!
//! Every compression adds at most E (the codec's absolute bound) to the values it
//! encodes, and the reduction operators SUM, MIN and MAX are 1-Lipschitz in each
//! operand, so a result value whose path crosses k compressions is off by at most k x E
//! (floating-point rounding of the reduction aside). `docs/collectives.md` derives k for
//! every algorithm.

use core::cmp::Ordering;

use crate::{Algorithm, CollOp, Value};

/// k for `algorithm` running `op` on `ranks` ranks: the largest number of compressions on
/// the path of any value of any rank's result. For [`Algorithm::Hierarchical`], `ranks`
/// is the number of node groups (compression happens among group leaders only).
pub fn compressions_per_value(op: CollOp, algorithm: Algorithm, ranks: usize) -> u32 {
    use Algorithm::*;
    use CollOp::*;
    let p = ranks as u32;
    if algorithm == Mpi || algorithm == Auto || (ranks <= 1 && op != P2p) {
        return 0;
    }
    match (op, algorithm) {
        (P2p | Alltoall, _) => 1,
        (Bcast | Scatter | Gather | Allgather, CColl) => 1,
        (Bcast | Scatter | Gather, _) => binomial_depth(ranks),
        (Allgather, _) => p - 1,
        (ReduceScatter, _) => p - 1,
        // Ring reduce-scatter, then the owner's block compressed once on its way to the root.
        (Reduce, CColl) => p,
        // Ring reduce-scatter, then recompressed at every hop of the binomial gather.
        (Reduce, _) => p - 1 + binomial_depth(ranks),
        // Ring reduce-scatter (p - 1), allgather compressing once (1).
        (Allreduce, CColl | Ring | Hierarchical) => p,
        // Every input compressed once; the hops that code blocks again add one each
        // for those blocks, counted as the call runs (see `alg::cdr`).
        (Allreduce, CompressedDomain) => p,
        // Ring reduce-scatter, then an allgather that recompresses at every hop.
        (Allreduce, CprP2p) => 2 * (p - 1),
        // p' - 1 exchanges feed each result (p' the largest power of two <= p), plus one
        // compression per folded-in remainder rank, plus one to fold the result out.
        (Allreduce, RecursiveDoubling) => p - 1 + u32::from(!ranks.is_power_of_two()),
        (Allreduce, Mpi | Auto) => 0,
    }
}

/// What one result value may differ from MPI's own result: the stated `bound` plus
/// floating-point rounding, scaled by the value's own `magnitude` (not the array's
/// largest value, which would hide errors in small values). For a reduction the
/// magnitude is the same reduction of the operands' absolute values (sum of |x| for SUM,
/// product of |x| for PROD), else |exact value|. SUM and PROD, combined in another order
/// than MPI's, differ by a few units in the last place per operation:
/// `4 (p + k + 2) eps (magnitude + bound)`; other values only by the rounding of decoded
/// values: `4 eps (magnitude + bound)`. `eps` is the element type's machine epsilon.
/// This is what `ccoll-bench --check` and the self-test hold every value to.
pub fn value_allowance(op: CollOp, accumulates: bool, ranks: usize, k: u32, eps: f64, bound: f64, magnitude: f64) -> f64 {
    let ulps = if op.reduces() && accumulates { 4.0 * (ranks + k as usize + 2) as f64 } else { 4.0 };
    bound + ulps * eps * (magnitude + bound)
}

/// A result value outside its allowance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Excess {
    pub index: usize,
    /// |got - want|; infinite for a non-finite value where the other is not the same
    /// non-finite value.
    pub error: f64,
    pub allowed: f64,
}

/// The first value of `got` whose difference from `want` exceeds `allowed(index)`. NaN
/// matches NaN and an infinity the same infinity; any other non-finite mismatch exceeds
/// every allowance, an infinite one included.
pub fn first_excess<T: Value>(got: &[T], want: &[T], allowed: impl Fn(usize) -> f64) -> Option<Excess> {
    if got.len() != want.len() {
        return Some(Excess { index: got.len().min(want.len()), error: f64::INFINITY, allowed: allowed(0) });
    }
    got.iter().zip(want).enumerate().find_map(|(index, (g, w))| {
        let (g, w) = (g.to_f64(), w.to_f64());
        if !w.is_finite() && (g == w || (g.is_nan() && w.is_nan())) {
            return None;
        }
        let error = if g.is_finite() && w.is_finite() { (g - w).abs() } else { f64::INFINITY };
        let allowed = allowed(index);
        // An allowance that does not compare (NaN) admits nothing.
        let within = matches!(error.partial_cmp(&allowed), Some(Ordering::Less | Ordering::Equal));
        (error.is_infinite() || !within).then_some(Excess { index, error, allowed })
    })
}

/// A bound on the error of a PROD reduction whose values cross `k` compressions of
/// absolute error `abs_error` each, on `ranks` ranks whose inputs are at most `max_abs`
/// in magnitude. A compression error is multiplied by the factors combined after it (at
/// most `ranks - 1` of them, each at most `max_abs` plus the errors already in it), so
/// the result is within `k E max(1, max_abs + k E)^(ranks - 1)`. [`crate::CollStats`]
/// states no PROD bound, because it depends on the data's magnitude.
pub fn prod_error_bound(k: u32, abs_error: f64, ranks: usize, max_abs: f64) -> f64 {
    let ke = f64::from(k) * abs_error;
    let growth = (max_abs + ke).max(1.0).powi(i32::try_from(ranks.saturating_sub(1)).unwrap_or(i32::MAX));
    ke * growth
}

/// The absolute bounds of the two stages of a call whose values cross a reduce-scatter
/// (`ranks - 1` compressions: of partial blocks in a ring, of the other ranks'
/// contributions in the direct one) and then one more compression of each reduced
/// block (k = `ranks`: Allreduce over `c-coll`, `ring` and the leaders of `hier`,
/// Reduce over `c-coll`), out of the budget `ranks x e` the
/// call states: (each reduce-scatter compression's bound, the last compression's).
///
/// SZx codes a block to the power of two at or below its bound (`delta = 2^(floor(log2
/// E) + 1)`, docs/formats/szx.md), so bounds just above that power and `e` code the
/// blocks alike; only the zero and constant tests see the difference. The reduce-scatter
/// takes the bound just above the power (1 + 2^-10 times it: data sitting on a binary
/// grid, such as exact zeros beside small integers times a power of two, would lose
/// constant blocks at the power itself), and the last compression the rest of the
/// budget, at least `e`: where the rest reaches the next power of two, every block of
/// the last stage, which the allgather moves `ranks - 1` times, codes one bit coarser.
/// The sum of the stages never exceeds `ranks x e`; 1-Lipschitz operations only (SUM,
/// MIN, MAX: [`prod_error_bound`] assumes `e` per compression).
pub fn ring_stage_bounds(e: f64, ranks: usize) -> (f64, f64) {
    if ranks < 2 || !(e > 0.0 && e.is_finite()) {
        return (e, e);
    }
    let power = 2f64.powi(e.log2().floor() as i32);
    // log2 of a value just below a power of two can round up to it: no split then.
    if power >= e {
        return (e, e);
    }
    let first = (power * (1.0 + 1.0 / 1024.0)).min(e);
    let k = ranks as f64;
    // The subtraction's rounding must not lift the sum above k x e.
    let last = (k * e - (k - 1.0) * first) * (1.0 - 1e-12);
    (first, last.max(first))
}

/// Hops from the root to the deepest rank of a binomial tree on `ranks` ranks: the
/// largest number of one bits among the relative ranks `0..ranks`.
pub fn binomial_depth(ranks: usize) -> u32 {
    (0..ranks).map(|v| v.count_ones()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_depth_matches_the_tree() {
        let depths: Vec<u32> = (1..=9).map(binomial_depth).collect();
        assert_eq!(depths, [0, 1, 1, 2, 2, 2, 2, 3, 3]);
    }

    #[test]
    fn c_coll_data_movement_compresses_once() {
        for p in 2..=16 {
            for op in [CollOp::Bcast, CollOp::Scatter, CollOp::Gather, CollOp::Allgather, CollOp::Alltoall] {
                assert_eq!(compressions_per_value(op, Algorithm::CColl, p), 1);
                assert!(compressions_per_value(op, Algorithm::CprP2p, p) >= 1);
            }
        }
        assert_eq!(compressions_per_value(CollOp::Allgather, Algorithm::CprP2p, 8), 7);
        assert_eq!(compressions_per_value(CollOp::Bcast, Algorithm::CprP2p, 8), 3);
    }

    #[test]
    fn computation_counts() {
        use Algorithm::*;
        let k = |a, p| compressions_per_value(CollOp::Allreduce, a, p);
        assert_eq!([k(CColl, 4), k(Ring, 4), k(CprP2p, 4), k(RecursiveDoubling, 4)], [4, 4, 6, 3]);
        assert_eq!([k(RecursiveDoubling, 5), k(RecursiveDoubling, 7), k(RecursiveDoubling, 8)], [5, 7, 7]);
        assert_eq!(k(CColl, 1), 0);
        assert_eq!(k(Mpi, 8), 0);
        assert_eq!(compressions_per_value(CollOp::ReduceScatter, CColl, 5), 4);
        assert_eq!(compressions_per_value(CollOp::Reduce, CColl, 5), 5);
        assert_eq!(compressions_per_value(CollOp::Reduce, CprP2p, 5), 6);
        assert_eq!(compressions_per_value(CollOp::P2p, CColl, 1), 1);
    }

    #[test]
    fn each_value_is_held_to_its_own_magnitude() {
        // The zfp case of issue 12: values near 1 and near 1e-4, tolerance 1e-9. An error
        // of 5.6e-9 at a value of 1e-4 exceeds its allowance (the array's largest value
        // would have allowed 4.8e-7).
        let allowed = |m: f64| value_allowance(CollOp::Bcast, false, 4, 1, f32::EPSILON as f64, 1e-9, m);
        assert!(allowed(1e-4) < 1.1e-9);
        let want = [1.0f32, 1e-4];
        let got = [1.0f32 + f32::EPSILON, 1e-4 + 5.6e-9];
        let e = first_excess(&got, &want, |i| allowed(f64::from(want[i]))).expect("the small value is out");
        assert_eq!(e.index, 1);
        assert!((e.error - 5.6e-9).abs() < 1e-11);
        assert_eq!(first_excess(&got[..1], &want[..1], |i| allowed(f64::from(want[i]))), None);
    }

    #[test]
    fn a_non_finite_mismatch_exceeds_even_an_infinite_allowance() {
        let inf = |_| f64::INFINITY;
        assert!(first_excess(&[f32::INFINITY], &[1.0], inf).is_some());
        assert!(first_excess(&[f32::NAN], &[1.0], inf).is_some());
        assert!(first_excess(&[1.0f32], &[f32::NAN], inf).is_some());
        assert!(first_excess(&[f32::NEG_INFINITY], &[f32::INFINITY], inf).is_some());
        assert_eq!(first_excess(&[f32::NAN, f32::INFINITY], &[f32::NAN, f32::INFINITY], |_| 0.0), None);
        assert!(first_excess(&[1.0f32], &[1.0, 2.0], inf).is_some());
    }

    #[test]
    fn ring_stages_spend_the_budget_on_the_last_compression() {
        // E = 1.9 x 2^-10 on 4 ranks: the reduce-scatter at (1 + 2^-10) 2^-10, the last
        // stage 7.6 - 3.003 = 4.597 x 2^-10, past the power 4 x 2^-10.
        let q = 2f64.powi(-10);
        let (first, last) = ring_stage_bounds(1.9 * q, 4);
        assert_eq!(first, q * (1.0 + 1.0 / 1024.0));
        assert!(last >= 4.0 * q && last < 1.9 * q * 4.0 - 3.0 * q, "{last}");
        for (e, p) in [(1.9 * q, 4), (1e-3, 2), (0.3, 7), (123.456, 64), (f64::MIN_POSITIVE * 3.0, 5), (1.0 - 1e-16, 4)] {
            let (first, last) = ring_stage_bounds(e, p);
            let k = p as f64;
            assert!(first <= e && last >= e * (1.0 - 1e-9), "{e} {p}: {first} {last}");
            assert!((k - 1.0) * first + last <= k * e, "{e} {p}: {first} {last}");
        }
        // A power of two itself, one rank, no bound: nothing to split.
        assert_eq!(ring_stage_bounds(0.25, 4), (0.25, 0.25));
        assert_eq!(ring_stage_bounds(1.5, 1), (1.5, 1.5));
        assert_eq!(ring_stage_bounds(0.0, 4), (0.0, 0.0));
    }

    #[test]
    fn the_prod_bound_grows_with_the_factors() {
        assert_eq!(prod_error_bound(4, 1e-3, 4, 0.5), 4e-3);
        let b = prod_error_bound(4, 1e-3, 4, 2.0);
        assert!((b - 4e-3 * 2.004f64.powi(3)).abs() < 1e-12, "{b}");
    }
}
