//! LogGP-style time of every collective algorithm.
//!
//! A message of `b` bytes costs `alpha + b / B` (per-message latency plus bytes over
//! the link's payload rate); a codec pass over `b` uncompressed bytes costs
//! `b / theta` at the codec's single-core throughput, divided by the core share a
//! rank gets when several ranks compute on one host at once; a reduction costs
//! `b / R`. Compressed messages carry `b / rho` bytes. The algorithms are written as
//! their critical paths (see docs/cost-model.md for the derivations).

/// Collective operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Allreduce,
    ReduceScatter,
    Reduce,
    Bcast,
    Scatter,
    Gather,
    Allgather,
    Alltoall,
}

impl Op {
    pub const ALL: [Op; 8] = [Op::Allreduce, Op::ReduceScatter, Op::Reduce, Op::Bcast, Op::Scatter, Op::Gather, Op::Allgather, Op::Alltoall];

    /// The name ccoll-bench uses.
    pub fn name(self) -> &'static str {
        match self {
            Op::Allreduce => "allreduce",
            Op::ReduceScatter => "reduce-scatter",
            Op::Reduce => "reduce",
            Op::Bcast => "bcast",
            Op::Scatter => "scatter",
            Op::Gather => "gather",
            Op::Allgather => "allgather",
            Op::Alltoall => "alltoall",
        }
    }

    pub fn from_name(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// Algorithms, as ccoll-bench names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// The MPI library's own collective, uncompressed.
    Mpi,
    /// The same schedule with every point-to-point message compressed and decompressed.
    CprP2p,
    /// The C-Coll frameworks (compress once for data movement; pipelined for reductions).
    CColl,
    /// Collective-level compressed ring Allreduce.
    Ring,
    /// Compressed recursive-doubling Allreduce.
    Rd,
}

impl Algo {
    pub const ALL: [Algo; 5] = [Algo::Mpi, Algo::CprP2p, Algo::CColl, Algo::Ring, Algo::Rd];

    pub fn name(self) -> &'static str {
        match self {
            Algo::Mpi => "mpi",
            Algo::CprP2p => "cpr-p2p",
            Algo::CColl => "c-coll",
            Algo::Ring => "ring",
            Algo::Rd => "rd",
        }
    }

    pub fn from_name(s: &str) -> Option<Algo> {
        Algo::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// Machine, network and codec parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub ranks: usize,
    /// Payload bytes per second of one direction of a node's link.
    pub link_bytes_per_s: f64,
    /// Per-message cost: one-way latency plus software overhead, seconds.
    pub alpha_s: f64,
    /// Single-core codec throughputs in uncompressed bytes per second.
    pub comp_bytes_per_s: f64,
    pub decomp_bytes_per_s: f64,
    /// Single-core element-wise reduction throughput (bytes of one operand per second).
    pub reduce_bytes_per_s: f64,
    /// Compression ratio (uncompressed / compressed).
    pub ratio: f64,
    /// Cores of one host and the ranks placed on it: ranks computing at once share them.
    pub host_cores: f64,
    pub ranks_per_host: usize,
}

impl Params {
    /// Core share of one rank when `active` ranks of its host compute at once.
    fn share(&self, active: usize) -> f64 {
        (self.host_cores / active.clamp(1, self.ranks_per_host.max(1)) as f64).min(1.0)
    }

    /// The same parameters on a link of `bits_per_s` (payload efficiency kept).
    pub fn with_link_bits(&self, bits_per_s: f64, efficiency: f64) -> Params {
        Params { link_bytes_per_s: bits_per_s / 8.0 * efficiency, ..*self }
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
        b / (self.p.comp_bytes_per_s * self.p.share(active))
    }
    fn decomp(&self, b: f64, active: usize) -> f64 {
        b / (self.p.decomp_bytes_per_s * self.p.share(active))
    }
    fn reduce(&self, b: f64, active: usize) -> f64 {
        b / (self.p.reduce_bytes_per_s * self.p.share(active))
    }
}

/// How ccoll-bench's `bytes` maps onto the quantities of each operation: the vector
/// each rank contributes for reductions and Bcast, the piece each rank receives for
/// Scatter (sends for Gather), the contribution of each rank for Allgather, and the
/// block for each destination for Alltoall.
pub fn time_s(op: Op, algo: Algo, bytes: f64, p: &Params) -> Option<f64> {
    let t = Terms { p };
    let np = p.ranks.max(1);
    let n = np as f64;
    let all = np;
    let levels = (np as f64).log2().ceil();
    let steps = n - 1.0;
    if np == 1 {
        return Some(0.0);
    }
    // Reduce-scatter building block on blocks of b = bytes / p.
    let b = bytes / n;
    let rs_plain = steps * (t.msg(b) + t.reduce(b, all));
    let rs_cpr = steps * (t.cmsg(b) + t.comp(b, all) + t.decomp(b, all) + t.reduce(b, all));
    // Pipelined: the transfer hides inside the chunked codec work, or the reverse.
    let rs_ccoll = steps * (p.alpha_s + (b / p.ratio / p.link_bytes_per_s).max(t.comp(b, all) + t.decomp(b, all) + t.reduce(b, all)));
    let ag_once = |m: f64| t.comp(m, all) + steps * t.cmsg(m) + t.decomp(steps * m, all);
    let time = match (op, algo) {
        (Op::Allreduce, Algo::Mpi) => rs_plain + steps * t.msg(b),
        (Op::Allreduce, Algo::CprP2p) => rs_cpr + steps * (t.cmsg(b) + t.comp(b, all) + t.decomp(b, all)),
        (Op::Allreduce, Algo::CColl) => rs_ccoll + ag_once(b),
        (Op::Allreduce, Algo::Ring) => {
            // The next receive is posted before compressing: it overlaps the compression.
            steps * (p.alpha_s + (b / p.ratio / p.link_bytes_per_s).max(t.comp(b, all)) + t.decomp(b, all) + t.reduce(b, all)) + ag_once(b)
        }
        (Op::Allreduce, Algo::Rd) => {
            let step = t.comp(bytes, all) + t.cmsg(bytes) + t.decomp(bytes, all) + t.reduce(bytes, all);
            let pow2 = np.is_power_of_two();
            (levels - if pow2 { 0.0 } else { 1.0 }) * step + if pow2 { 0.0 } else { 2.0 * step }
        }
        (Op::ReduceScatter, Algo::Mpi) => rs_plain,
        (Op::ReduceScatter, Algo::CprP2p) => rs_cpr,
        (Op::ReduceScatter, Algo::CColl) => rs_ccoll,
        // Reduce = reduce-scatter + gather of the reduced blocks at the root.
        (Op::Reduce, Algo::Mpi) => rs_plain + steps * t.msg(b),
        (Op::Reduce, Algo::CprP2p) => rs_cpr + steps * (t.cmsg(b) + t.decomp(b, 1)) + t.comp(b, all),
        (Op::Reduce, Algo::CColl) => rs_ccoll + t.comp(b, all) + steps * t.cmsg(b) + t.decomp(steps * b, 1),
        // Large-message MPI Bcast: a segmented chain, so about one message time.
        (Op::Bcast, Algo::Mpi) => t.msg(bytes) + (n - 2.0).max(0.0) * t.msg(BCAST_SEGMENT),
        (Op::Bcast, Algo::CprP2p) => levels * (t.comp(bytes, 1) + t.cmsg(bytes) + t.decomp(bytes, 1)),
        (Op::Bcast, Algo::CColl) => t.comp(bytes, 1) + levels * t.cmsg(bytes) + t.decomp(bytes, all),
        (Op::Scatter | Op::Gather, Algo::Mpi) => (levels - 1.0) * p.alpha_s + t.msg(steps * bytes),
        (Op::Scatter | Op::Gather, Algo::CprP2p) => {
            // Binomial tree: the deepest branch forwards halves, recompressing per hop.
            (1..=levels as u32)
                .map(|k| {
                    let m = n * bytes / 2f64.powi(k as i32);
                    t.comp(m, 1) + t.cmsg(m) + t.decomp(m, 1)
                })
                .sum()
        }
        (Op::Scatter, Algo::CColl) => t.comp(steps * bytes, 1) + (levels - 1.0) * p.alpha_s + t.cmsg(steps * bytes) + t.decomp(bytes, all),
        (Op::Gather, Algo::CColl) => t.comp(bytes, all) + (levels - 1.0) * p.alpha_s + t.cmsg(steps * bytes) + t.decomp(steps * bytes, 1),
        (Op::Allgather | Op::Alltoall, Algo::Mpi) => steps * t.msg(bytes),
        (Op::Allgather | Op::Alltoall, Algo::CprP2p) => steps * (t.cmsg(bytes) + t.comp(bytes, all) + t.decomp(bytes, all)),
        (Op::Allgather, Algo::CColl) => ag_once(bytes),
        // Pieces decompress as they arrive: the last one is left after the transfers.
        (Op::Alltoall, Algo::CColl) => t.comp(steps * bytes, all) + (steps * t.cmsg(bytes)).max(t.decomp(steps * bytes, all)) + t.decomp(bytes, all),
        _ => return None,
    };
    Some(time)
}

/// Segment size of the MPI library's pipelined Bcast.
const BCAST_SEGMENT: f64 = 128.0 * 1024.0;

/// The link rate (bits/s) at which `algo` and plain MPI take the same time for `op` on
/// `bytes`; compression pays below it. `None` if the algorithm does not apply, and the
/// search range's end if one side wins everywhere in 1 Mbit/s to 10 Tbit/s.
pub fn break_even_bits(op: Op, algo: Algo, bytes: f64, p: &Params, efficiency: f64) -> Option<BreakEven> {
    let gain = |bits: f64| -> Option<f64> {
        let q = p.with_link_bits(bits, efficiency);
        Some(time_s(op, Algo::Mpi, bytes, &q)? - time_s(op, algo, bytes, &q)?)
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

    fn params(ranks: usize) -> Params {
        Params {
            ranks,
            link_bytes_per_s: 125e6,
            alpha_s: 50e-6,
            comp_bytes_per_s: 500e6,
            decomp_bytes_per_s: 500e6,
            reduce_bytes_per_s: 2e9,
            ratio: 10.0,
            host_cores: 1.0,
            ranks_per_host: 1,
        }
    }

    #[test]
    fn plain_ring_allreduce_matches_the_textbook_formula() {
        let p = params(4);
        let n = 64e6;
        let b = n / 4.0;
        let want = 6.0 * (50e-6 + b / 125e6) + 3.0 * b / 2e9;
        assert!((time_s(Op::Allreduce, Algo::Mpi, n, &p).unwrap() - want).abs() < 1e-12);
        assert_eq!(time_s(Op::Bcast, Algo::Rd, n, &p), None);
        assert_eq!(time_s(Op::Allreduce, Algo::CColl, n, &params(1)), Some(0.0));
    }

    #[test]
    fn compressed_bcast_is_compress_hops_decompress() {
        let p = params(8);
        let n = 64e6;
        // 3 levels of a 6.4 MB message, one compression and one decompression.
        let want = n / 500e6 + 3.0 * (50e-6 + n / 10.0 / 125e6) + n / 500e6;
        assert!((time_s(Op::Bcast, Algo::CColl, n, &p).unwrap() - want).abs() < 1e-12);
    }

    #[test]
    fn sharing_cores_slows_only_the_codec_terms() {
        let mut p = params(4);
        let alone = time_s(Op::Allgather, Algo::CColl, 16e6, &p).unwrap();
        p.host_cores = 2.0;
        p.ranks_per_host = 4;
        let shared = time_s(Op::Allgather, Algo::CColl, 16e6, &p).unwrap();
        // Compress 16 MB + decompress 48 MB at half speed: +64 MB / 500 MB/s.
        assert!((shared - alone - 64e6 / 500e6).abs() < 1e-9, "{alone} {shared}");
        assert_eq!(time_s(Op::Allgather, Algo::Mpi, 16e6, &p), time_s(Op::Allgather, Algo::Mpi, 16e6, &params(4)));
    }

    #[test]
    fn break_even_lies_where_the_times_cross() {
        let p = params(16);
        let BreakEven::At(bits) = break_even_bits(Op::Bcast, Algo::CColl, 64e6, &p, 1.0).unwrap() else { panic!() };
        let q = p.with_link_bits(bits, 1.0);
        let (a, b) = (time_s(Op::Bcast, Algo::Mpi, 64e6, &q).unwrap(), time_s(Op::Bcast, Algo::CColl, 64e6, &q).unwrap());
        assert!((a - b).abs() / a < 1e-6, "{a} {b} at {bits}");
        // Faster links: plain wins; slower: compressed wins.
        let fast = p.with_link_bits(bits * 2.0, 1.0);
        assert!(time_s(Op::Bcast, Algo::Mpi, 64e6, &fast) < time_s(Op::Bcast, Algo::CColl, 64e6, &fast));
        // Ratio 1 never pays.
        let no_gain = Params { ratio: 1.0, ..p };
        assert_eq!(break_even_bits(Op::Bcast, Algo::CColl, 64e6, &no_gain, 1.0), Some(BreakEven::Never));
    }
}
