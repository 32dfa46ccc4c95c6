//! Accuracy accounting: how many compressions lie on a value's path, per algorithm.
//!
//! Every compression adds at most E (the codec's absolute bound) to the values it
//! encodes, and the reduction operators SUM, MIN and MAX are 1-Lipschitz in each
//! operand, so a result value whose path crosses k compressions is off by at most k x E
//! (floating-point rounding of the reduction aside). `docs/collectives.md` derives k for
//! every algorithm.

use crate::{Algorithm, CollOp};

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
        // Ring reduce-scatter, then an allgather that recompresses at every hop.
        (Allreduce, CprP2p) => 2 * (p - 1),
        // p' - 1 exchanges feed each result (p' the largest power of two <= p), plus one
        // compression per folded-in remainder rank, plus one to fold the result out.
        (Allreduce, RecursiveDoubling) => p - 1 + u32::from(!ranks.is_power_of_two()),
        (Allreduce, Mpi | Auto) => 0,
    }
}

/// Allowance for floating-point rounding when a result is compared with MPI's own:
/// reductions that sum in another order differ by a few units in the last place of the
/// partial sums (`4 (p + k + 2) p eps scale` for SUM, `scale` the largest input
/// magnitude and `eps` the element type's machine epsilon); other operations only by
/// the rounding of decoded values (`4 eps scale`). [`CollStats::error_bound`] plus this
/// is what `ccoll-bench --check` holds every value to.
///
/// [`CollStats::error_bound`]: crate::CollStats::error_bound
pub fn rounding_slack(op: CollOp, sum: bool, ranks: usize, k: u32, eps: f64, scale: f64) -> f64 {
    if op.reduces() && sum {
        4.0 * (ranks + k as usize + 2) as f64 * ranks as f64 * eps * scale
    } else {
        4.0 * eps * scale
    }
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
}
