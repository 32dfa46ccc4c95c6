//! The cost model: LogGP-style predicted time of every algorithm of every operation.
//!
//! Pure functions of sizes, ranks, link and codec speeds (no MPI calls): the automatic
//! selection ([`crate::config::select`]) ranks the candidate algorithms with them, and
//! `cargo xtask model` validates and extrapolates them (see docs/cost-model.md).
//!
//! A message of `b` bytes costs `alpha + b / B` (per-message latency plus bytes over
//! the link's payload rate); a codec pass over `b` uncompressed bytes costs a fixed
//! `codec_call_s` plus `b / theta` at the codec's throughput, divided by the core share
//! a rank gets when several ranks compute on one host at once; a reduction costs
//! `b / R`. Compressed messages carry `b / rho` bytes. The algorithms are written as
//! their critical paths.

use crate::{Algorithm, CollOp};

/// Machine, network and codec parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub ranks: usize,
    /// Payload bytes per second of one direction of a node's link.
    pub link_bytes_per_s: f64,
    /// Per-message cost: one-way latency plus software overhead, seconds.
    pub alpha_s: f64,
    /// Codec throughputs in uncompressed bytes per second (what one rank's codec does).
    pub comp_bytes_per_s: f64,
    pub decomp_bytes_per_s: f64,
    /// Fixed cost of one codec pass, seconds (thread dispatch, or a kernel launch).
    pub codec_call_s: f64,
    /// Element-wise reduction throughput (bytes of one operand per second).
    pub reduce_bytes_per_s: f64,
    /// Compression ratio (uncompressed / compressed).
    pub ratio: f64,
    /// Cores of one host and the ranks placed on it: ranks computing at once share them.
    pub host_cores: f64,
    pub ranks_per_host: usize,
    /// Runnable threads of other work on the host (its load average), which take their
    /// share of the cores too.
    pub background_load: f64,
    /// Ranks per node group of the hierarchical allreduce (1: every rank its own group),
    /// and the link between the ranks of one group (shared memory).
    pub group_ranks: usize,
    pub intra_bytes_per_s: f64,
    pub intra_alpha_s: f64,
}

impl Params {
    /// Core share of one rank when `active` ranks of its host compute at once.
    fn share(&self, active: usize) -> f64 {
        let competing = active.clamp(1, self.ranks_per_host.max(1)) as f64 + self.background_load.max(0.0);
        (self.host_cores / competing).min(1.0)
    }

    /// The same parameters on a link of `bits_per_s` (payload efficiency kept).
    pub fn with_link_bits(&self, bits_per_s: f64, efficiency: f64) -> Params {
        Params { link_bytes_per_s: bits_per_s / 8.0 * efficiency, ..*self }
    }

    /// Node groups of `group_ranks` ranks (the last one may be smaller): how many, and
    /// the ranks of the largest.
    pub fn groups(&self) -> (usize, usize) {
        let g = self.group_ranks.clamp(1, self.ranks.max(1));
        (self.ranks.max(1).div_ceil(g), g)
    }
}

/// Cost terms for one parameter set.
struct Terms<'a> {
    p: &'a Params,
}

impl Terms<'_> {
    fn msg(&self, b: f64) -> f64 {
        self.p.alpha_s + b / self.p.link_bytes_per_s
    }
    fn cmsg(&self, b: f64) -> f64 {
        self.msg(b / self.p.ratio)
    }
    fn comp(&self, b: f64, active: usize) -> f64 {
        self.p.codec_call_s + b / (self.p.comp_bytes_per_s * self.p.share(active))
    }
    fn decomp(&self, b: f64, active: usize) -> f64 {
        self.p.codec_call_s + b / (self.p.decomp_bytes_per_s * self.p.share(active))
    }
    fn reduce(&self, b: f64, active: usize) -> f64 {
        b / (self.p.reduce_bytes_per_s * self.p.share(active))
    }
    /// A message inside a node group.
    fn intra(&self, b: f64) -> f64 {
        self.p.intra_alpha_s + b / self.p.intra_bytes_per_s
    }
}

/// Predicted seconds of `algo` running `op` on `bytes`, or `None` where the algorithm
/// does not implement the operation. `bytes` is what the selection looks at: the vector
/// each rank contributes for the reductions, Bcast and point-to-point, the piece each
/// rank receives for Scatter (sends for Gather), the contribution of each rank for
/// Allgather, and the block for each destination for Alltoall. Hierarchical is priced
/// with its compressed ring among the group leaders ([`hier_host_time_s`]: the
/// uncompressed path).
pub fn time_s(op: CollOp, algo: Algorithm, bytes: f64, p: &Params) -> Option<f64> {
    if algo == Algorithm::Auto || !algo.applies_to(op) {
        return None;
    }
    let t = Terms { p };
    let np = p.ranks.max(1);
    if np == 1 && op != CollOp::P2p {
        return Some(0.0);
    }
    let n = np as f64;
    let all = np;
    let levels = n.log2().ceil();
    let steps = n - 1.0;
    // Reduce-scatter building block on blocks of b = bytes / p.
    let b = bytes / n;
    let rs_plain = steps * (t.msg(b) + t.reduce(b, all));
    let rs_cpr = steps * (t.cmsg(b) + t.comp(b, all) + t.decomp(b, all) + t.reduce(b, all));
    // Pipelined: the transfer hides inside the chunked codec work, or the reverse.
    let rs_ccoll = steps * (p.alpha_s + (b / p.ratio / p.link_bytes_per_s).max(t.comp(b, all) + t.decomp(b, all) + t.reduce(b, all)));
    let ag_once = |m: f64| t.comp(m, all) + steps * t.cmsg(m) + t.decomp(steps * m, all);
    use Algorithm::*;
    use CollOp::*;
    let time = match (op, algo) {
        (Allreduce, Mpi) => rs_plain + steps * t.msg(b),
        (Allreduce, CprP2p) => rs_cpr + steps * (t.cmsg(b) + t.comp(b, all) + t.decomp(b, all)),
        (Allreduce, CColl) => rs_ccoll + ag_once(b),
        (Allreduce, Ring) => {
            // The next receive is posted before compressing: it overlaps the compression.
            steps * (p.alpha_s + (b / p.ratio / p.link_bytes_per_s).max(t.comp(b, all)) + t.decomp(b, all) + t.reduce(b, all)) + ag_once(b)
        }
        (Allreduce, RecursiveDoubling) => {
            let step = t.comp(bytes, all) + t.cmsg(bytes) + t.decomp(bytes, all) + t.reduce(bytes, all);
            let pow2 = np.is_power_of_two();
            (levels - if pow2 { 0.0 } else { 1.0 }) * step + if pow2 { 0.0 } else { 2.0 * step }
        }
        (Allreduce, Hierarchical) => hier_time_s(bytes, p, CColl),
        (ReduceScatter, Mpi) => rs_plain,
        (ReduceScatter, CprP2p) => rs_cpr,
        (ReduceScatter, CColl) => rs_ccoll,
        // Reduce = reduce-scatter + gather of the reduced blocks at the root.
        (Reduce, Mpi) => rs_plain + steps * t.msg(b),
        (Reduce, CprP2p) => rs_cpr + steps * (t.cmsg(b) + t.decomp(b, 1)) + t.comp(b, all),
        (Reduce, CColl) => rs_ccoll + t.comp(b, all) + steps * t.cmsg(b) + t.decomp(steps * b, 1),
        // Open MPI's large-message Bcast on few ranks: a segmented binomial tree, whose
        // root sends the whole message to each of its children.
        (Bcast, Mpi) => levels * t.msg(bytes),
        (Bcast, CprP2p) => levels * (t.comp(bytes, 1) + t.cmsg(bytes) + t.decomp(bytes, 1)),
        (Bcast, CColl) => t.comp(bytes, 1) + levels * t.cmsg(bytes) + t.decomp(bytes, all),
        (Scatter | Gather, Mpi) => (levels - 1.0) * p.alpha_s + t.msg(steps * bytes),
        (Scatter | Gather, CprP2p) => {
            // Binomial tree: the deepest branch forwards halves, recompressing per hop.
            (1..=levels as u32)
                .map(|k| {
                    let m = n * bytes / 2f64.powi(k as i32);
                    t.comp(m, 1) + t.cmsg(m) + t.decomp(m, 1)
                })
                .sum()
        }
        (Scatter, CColl) => t.comp(steps * bytes, 1) + (levels - 1.0) * p.alpha_s + t.cmsg(steps * bytes) + t.decomp(bytes, all),
        (Gather, CColl) => t.comp(bytes, all) + (levels - 1.0) * p.alpha_s + t.cmsg(steps * bytes) + t.decomp(steps * bytes, 1),
        (Allgather | Alltoall, Mpi) => steps * t.msg(bytes),
        (Allgather | Alltoall, CprP2p) => steps * (t.cmsg(bytes) + t.comp(bytes, all) + t.decomp(bytes, all)),
        (Allgather, CColl) => ag_once(bytes),
        // Pieces decompress as they arrive: the last one is left after the transfers.
        (Alltoall, CColl) => t.comp(steps * bytes, all) + (steps * t.cmsg(bytes)).max(t.decomp(steps * bytes, all)) + t.decomp(bytes, all),
        (P2p, Mpi) => t.msg(bytes),
        (P2p, CprP2p) => t.comp(bytes, 1) + t.cmsg(bytes) + t.decomp(bytes, 1),
        // Pipelined chunks: the transfer hides inside the codec work, or the reverse.
        (P2p, CColl) => p.alpha_s + (bytes / p.ratio / p.link_bytes_per_s).max(t.comp(bytes, 1) + t.decomp(bytes, 1)),
        _ => return None,
    };
    Some(time)
}

/// Predicted seconds of the hierarchical allreduce whose group leaders run `leaders`
/// (an allreduce algorithm) among themselves: `c-coll` is the compressed pipelined ring,
/// `mpi` the same ring with every frame raw (below the compression threshold).
pub fn hier_time_s(bytes: f64, p: &Params, leaders: Algorithm) -> f64 {
    let (groups, _) = p.groups();
    let among = Params { ranks: groups, group_ranks: 1, ..*p };
    intra_reduce_bcast(bytes, p) + time_s(CollOp::Allreduce, leaders, bytes, &among).unwrap_or(f64::INFINITY)
}

/// Predicted seconds of the hierarchical allreduce's uncompressed path (NV-Group's small-
/// message path): reduce inside the groups, every leader receives every other leader's
/// partial result and reduces them all, broadcast inside the groups.
pub fn hier_host_time_s(bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let (groups, _) = p.groups();
    let others = groups as f64 - 1.0;
    let leaders = Params { ranks: groups, ..*p };
    let allgather = Terms { p: &leaders };
    intra_reduce_bcast(bytes, p) + others * allgather.msg(bytes) + others * t.reduce(bytes, 1)
}

/// The binomial reduce and broadcast inside the largest node group.
fn intra_reduce_bcast(bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let (_, g) = p.groups();
    let levels = (g as f64).log2().ceil();
    levels * (2.0 * t.intra(bytes) + t.reduce(bytes, g))
}

/// The link rate (bits/s) at which `algo` and plain MPI take the same time for `op` on
/// `bytes`; compression pays below it. `None` if the algorithm does not apply, and the
/// search range's end if one side wins everywhere in 1 Mbit/s to 10 Tbit/s.
pub fn break_even_bits(op: CollOp, algo: Algorithm, bytes: f64, p: &Params, efficiency: f64) -> Option<BreakEven> {
    let gain = |bits: f64| -> Option<f64> {
        let q = p.with_link_bits(bits, efficiency);
        Some(time_s(op, Algorithm::Mpi, bytes, &q)? - time_s(op, algo, bytes, &q)?)
    };
    let (mut lo, mut hi) = (1e6f64, 1e13f64);
    if gain(lo)? <= 0.0 {
        return Some(BreakEven::Never);
    }
    if gain(hi)? > 0.0 {
        return Some(BreakEven::Always);
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if gain(mid)? > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(BreakEven::At(lo))
}

/// Result of [`break_even_bits`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BreakEven {
    /// Compression pays below this many bits per second.
    At(f64),
    /// Compression loses even at 1 Mbit/s.
    Never,
    /// Compression wins even at 10 Tbit/s.
    Always,
}

#[cfg(test)]
mod tests {
    use super::*;
    use Algorithm::*;
    use CollOp::*;

    fn params(ranks: usize) -> Params {
        Params {
            ranks,
            link_bytes_per_s: 125e6,
            alpha_s: 50e-6,
            comp_bytes_per_s: 500e6,
            decomp_bytes_per_s: 500e6,
            codec_call_s: 0.0,
            reduce_bytes_per_s: 2e9,
            ratio: 10.0,
            host_cores: 1.0,
            ranks_per_host: 1,
            background_load: 0.0,
            group_ranks: 1,
            intra_bytes_per_s: 5e9,
            intra_alpha_s: 1e-6,
        }
    }

    #[test]
    fn plain_ring_allreduce_matches_the_textbook_formula() {
        let p = params(4);
        let n = 64e6;
        let b = n / 4.0;
        let want = 6.0 * (50e-6 + b / 125e6) + 3.0 * b / 2e9;
        assert!((time_s(Allreduce, Mpi, n, &p).unwrap() - want).abs() < 1e-12);
        assert_eq!(time_s(Bcast, RecursiveDoubling, n, &p), None);
        assert_eq!(time_s(Bcast, Hierarchical, n, &p), None);
        assert_eq!(time_s(Allreduce, Auto, n, &p), None);
        assert_eq!(time_s(Allreduce, CColl, n, &params(1)), Some(0.0));
    }

    #[test]
    fn compressed_bcast_is_compress_hops_decompress() {
        let p = params(8);
        let n = 64e6;
        // 3 levels of a 6.4 MB message, one compression and one decompression.
        let want = n / 500e6 + 3.0 * (50e-6 + n / 10.0 / 125e6) + n / 500e6;
        assert!((time_s(Bcast, CColl, n, &p).unwrap() - want).abs() < 1e-12);
        // Each codec pass adds its fixed cost.
        let called = Params { codec_call_s: 1e-3, ..p };
        assert!((time_s(Bcast, CColl, n, &called).unwrap() - want - 2e-3).abs() < 1e-12);
    }

    #[test]
    fn sharing_cores_slows_only_the_codec_terms() {
        let mut p = params(4);
        let alone = time_s(Allgather, CColl, 16e6, &p).unwrap();
        p.host_cores = 2.0;
        p.ranks_per_host = 4;
        let shared = time_s(Allgather, CColl, 16e6, &p).unwrap();
        // Compress 16 MB + decompress 48 MB at half speed: +64 MB / 500 MB/s.
        assert!((shared - alone - 64e6 / 500e6).abs() < 1e-9, "{alone} {shared}");
        assert_eq!(time_s(Allgather, Mpi, 16e6, &p), time_s(Allgather, Mpi, 16e6, &params(4)));
        // Two more runnable threads elsewhere: 4 + 2 compete for 2 cores, a third each.
        p.background_load = 2.0;
        let loaded = time_s(Allgather, CColl, 16e6, &p).unwrap();
        assert!((loaded - alone - 2.0 * 64e6 / 500e6).abs() < 1e-9, "{alone} {loaded}");
    }

    #[test]
    fn hierarchical_is_intra_group_steps_around_the_leaders_exchange() {
        // 8 ranks in 2 groups of 4: 2 levels of reduce and bcast inside a group.
        let p = Params { group_ranks: 4, ..params(8) };
        let n = 1e6;
        let intra = 2.0 * (2.0 * (1e-6 + n / 5e9) + n / 2e9);
        let leaders = time_s(Allreduce, CColl, n, &params(2)).unwrap();
        assert!((time_s(Allreduce, Hierarchical, n, &p).unwrap() - intra - leaders).abs() < 1e-12);
        let raw = time_s(Allreduce, Mpi, n, &params(2)).unwrap();
        assert!((hier_time_s(n, &p, Mpi) - intra - raw).abs() < 1e-12);
        // The uncompressed path: one partial from the other leader, one reduction.
        let host = intra + (50e-6 + n / 125e6) + n / 2e9;
        assert!((hier_host_time_s(n, &p) - host).abs() < 1e-12);
        // Groups of one rank: no intra-group steps, the leaders are every rank.
        let flat = params(8);
        assert_eq!(time_s(Allreduce, Hierarchical, n, &flat), time_s(Allreduce, CColl, n, &flat));
        assert_eq!(Params { group_ranks: 3, ..params(8) }.groups(), (3, 3));
    }

    #[test]
    fn break_even_lies_where_the_times_cross() {
        let p = params(16);
        let BreakEven::At(bits) = break_even_bits(Bcast, CColl, 64e6, &p, 1.0).unwrap() else { panic!() };
        let q = p.with_link_bits(bits, 1.0);
        let (a, b) = (time_s(Bcast, Mpi, 64e6, &q).unwrap(), time_s(Bcast, CColl, 64e6, &q).unwrap());
        assert!((a - b).abs() / a < 1e-6, "{a} {b} at {bits}");
        // Faster links: plain wins; slower: compressed wins.
        let fast = p.with_link_bits(bits * 2.0, 1.0);
        assert!(time_s(Bcast, Mpi, 64e6, &fast) < time_s(Bcast, CColl, 64e6, &fast));
        // Ratio 1 never pays.
        let no_gain = Params { ratio: 1.0, ..p };
        assert_eq!(break_even_bits(Bcast, CColl, 64e6, &no_gain, 1.0), Some(BreakEven::Never));
    }
}
