//! The cost model: LogGP-style predicted time of every algorithm of every operation.
//!
//! Pure functions of sizes, ranks, link and codec speeds (no MPI calls): the automatic
//! selection ([`crate::config::select`]) ranks the candidate algorithms with them, and
//! `cargo xtask model` validates and extrapolates them (see docs/cost-model.md).
//!
//! A message of `b` bytes costs `alpha + b / B` (per-message latency plus bytes over
//! the link's payload rate), or `b / (B e)` while the other direction of the link is busy
//! too (`e`: the duplex efficiency); a codec pass over `b` uncompressed bytes costs a
//! fixed `codec_call_s` plus `b / theta` at the codec's throughput, divided by the core
//! share a rank gets when several ranks compute on one host at once; a reduction costs
//! `b / R`, writing `b` bytes of freshly allocated memory `b / F`. Compressed messages
//! carry `b / rho` bytes. The algorithms are written as their critical paths: the time
//! until the last rank is done. Plain MPI is priced as the algorithm Open MPI 4.1's
//! `tuned` component picks for large messages ([`mpi_time_s`]).

use crate::{Algorithm, CollOp};

/// Machine, network and codec parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub ranks: usize,
    /// Payload bytes per second of one direction of a node's link.
    pub link_bytes_per_s: f64,
    /// Share of `link_bytes_per_s` each direction of a link gets while the other direction
    /// carries bulk data too, one flow each way (1 on a full-duplex network; TCP over the
    /// emulated links gets about half: acknowledgements queue behind the data). `k` flows
    /// each way get `1 - (1 - e) / k`.
    pub duplex_efficiency: f64,
    /// Per-message cost: one-way latency plus software overhead, seconds.
    pub alpha_s: f64,
    /// Codec throughputs in uncompressed bytes per second (what one rank's codec does).
    pub comp_bytes_per_s: f64,
    pub decomp_bytes_per_s: f64,
    /// Fixed cost of one codec pass, seconds (thread dispatch, or a kernel launch).
    pub codec_call_s: f64,
    /// Element-wise reduction throughput (bytes of one operand per second).
    pub reduce_bytes_per_s: f64,
    /// Bytes per second of writing freshly allocated memory (the kernel maps and zeroes
    /// each page on first touch): a call's output buffer, where the caller allocates it
    /// anew for every call (ccoll-bench does), and the root's copy of its input.
    /// Infinity: buffers are reused.
    pub fresh_bytes_per_s: f64,
    /// Bytes per second of the pass over a rank's input that finds its finite value
    /// range, which a relative error bound needs before anything is compressed (infinity:
    /// an absolute bound, no pass).
    pub scan_bytes_per_s: f64,
    /// Compression ratio (uncompressed / compressed).
    pub ratio: f64,
    /// Slowdown of CPU work while several ranks of a host compute at once, against the
    /// same work measured alone (shared caches and memory bandwidth, context switches):
    /// 1 for a rank with a node of its own.
    pub contention: f64,
    /// Cores of one host and the ranks placed on it: ranks computing at once share them.
    pub host_cores: f64,
    pub ranks_per_host: usize,
    /// Runnable threads of other work on the host (its load average), which take their
    /// share of the cores too.
    pub background_load: f64,
    /// Ranks that wait for a message keep polling (Open MPI's TCP progress loop does), so
    /// every rank of a host competes for its cores for the whole call, not only while
    /// it computes.
    pub busy_wait: bool,
    /// Bcast and Scatter pipeline their trees (issue 13, goal 2): a rank forwards chunk
    /// `i` while chunk `i + 1` is compressed or decoded, the Scatter root sends block `k`
    /// while compressing block `k + 1`. False: the whole message moves hop by hop.
    pub pipelined_trees: bool,
    /// Ranks per node group of the hierarchical allreduce (1: every rank its own group),
    /// and the link between the ranks of one group (shared memory).
    pub group_ranks: usize,
    pub intra_bytes_per_s: f64,
    pub intra_alpha_s: f64,
}

impl Params {
    /// One rank per host with a core of its own on a full-duplex network, buffers
    /// reused, nothing else running; no link, codec or reduction figures yet (1 byte/s).
    pub const IDEAL: Params = Params {
        ranks: 1,
        link_bytes_per_s: 1.0,
        duplex_efficiency: 1.0,
        alpha_s: 0.0,
        comp_bytes_per_s: 1.0,
        decomp_bytes_per_s: 1.0,
        codec_call_s: 0.0,
        reduce_bytes_per_s: 1.0,
        fresh_bytes_per_s: f64::INFINITY,
        scan_bytes_per_s: f64::INFINITY,
        ratio: 1.0,
        contention: 1.0,
        host_cores: 1.0,
        ranks_per_host: 1,
        background_load: 0.0,
        busy_wait: false,
        pipelined_trees: false,
        group_ranks: 1,
        intra_bytes_per_s: f64::INFINITY,
        intra_alpha_s: 0.0,
    };

    /// Core share of one rank when `active` ranks of its host compute at once (all of
    /// them compete where waiting ranks poll), less the contention of several computing
    /// ranks for caches and memory.
    fn share(&self, active: usize) -> f64 {
        let computing = active.clamp(1, self.ranks_per_host.max(1));
        let competing = if self.busy_wait { self.ranks_per_host.max(1) } else { computing } as f64 + self.background_load.max(0.0);
        let contention = if computing > 1 { self.contention.max(1.0) } else { 1.0 };
        (self.host_cores / competing).min(1.0) / contention
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
    /// A message while the link's other direction is idle.
    fn msg(&self, b: f64) -> f64 {
        self.p.alpha_s + b / self.p.link_bytes_per_s
    }
    /// A message while the other direction carries `flows` flows of bulk data.
    fn duplex(&self, b: f64, flows: f64) -> f64 {
        self.p.alpha_s + self.wire_duplex(b, flows)
    }
    /// The bytes of [`Terms::duplex`] without the per-message cost.
    fn wire_duplex(&self, b: f64, flows: f64) -> f64 {
        let e = 1.0 - (1.0 - self.p.duplex_efficiency.clamp(1e-3, 1.0)) / flows.max(1.0);
        b / (self.p.link_bytes_per_s * e)
    }
    fn cmsg(&self, b: f64) -> f64 {
        self.msg(b / self.p.ratio)
    }
    fn cduplex(&self, b: f64) -> f64 {
        self.duplex(b / self.p.ratio, 1.0)
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
    fn fresh(&self, b: f64, active: usize) -> f64 {
        b / (self.p.fresh_bytes_per_s * self.p.share(active))
    }
    fn scan(&self, b: f64, active: usize) -> f64 {
        b / (self.p.scan_bytes_per_s * self.p.share(active))
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
    if algo == Algorithm::Mpi {
        return Some(mpi_time_s(op, bytes, p));
    }
    let n = np as f64;
    let all = np;
    let levels = n.log2().ceil();
    let steps = n - 1.0;
    // Reduce-scatter building block on blocks of b = bytes / p: each ring step copies the
    // outgoing block and compresses it, decodes the incoming one into scratch memory and
    // adds it, while both directions of every link carry the ring's traffic.
    let b = bytes / n;
    let rs_work = t.fresh(2.0 * b, all) + t.comp(b, all) + t.decomp(b, all) + t.reduce(b, all);
    let rs_cpr = steps * (rs_work + t.cduplex(b));
    // Pipelined: the transfer hides inside the chunked codec work, or the reverse.
    let rs_ccoll = steps * (p.alpha_s + t.wire_duplex(b / p.ratio, 1.0).max(rs_work));
    // Compress-once ring allgather of blocks of m: own block compressed (and decoded, so
    // that every rank holds the same values), forwarded p - 1 times, decoded at the end.
    let ag_once = |m: f64, own_decoded: bool| {
        t.comp(m, all) + if own_decoded { t.decomp(m, all) } else { 0.0 } + steps * t.cduplex(m) + t.decomp(steps * m, all)
    };
    let ag_cpr = |m: f64| steps * (t.comp(m, all) + t.cduplex(m) + t.decomp(m, all));
    use Algorithm::*;
    use CollOp::*;
    let time = match (op, algo) {
        // The output buffer is written once (the input copied into it) before the rounds.
        (Allreduce, CprP2p) => t.fresh(bytes, all) + rs_cpr + ag_cpr(b),
        (Allreduce, CColl) => t.fresh(bytes, all) + rs_ccoll + ag_once(b, true),
        (Allreduce, Ring) => {
            // The next receive is posted before compressing: it overlaps the compression.
            t.fresh(bytes, all)
                + steps * (p.alpha_s + t.wire_duplex(b / p.ratio, 1.0).max(t.fresh(b, all) + t.comp(b, all)) + t.decomp(b, all) + t.reduce(b, all))
                + ag_once(b, true)
        }
        (Allreduce, RecursiveDoubling) => {
            let step = t.comp(bytes, all) + t.cduplex(bytes) + t.decomp(bytes, all) + t.reduce(bytes, all);
            let pow2 = np.is_power_of_two();
            t.fresh(bytes, all) + (levels - if pow2 { 0.0 } else { 1.0 }) * step + if pow2 { 0.0 } else { 2.0 * step }
        }
        (Allreduce, Hierarchical) => hier_time_s(bytes, p, CColl),
        (ReduceScatter, CprP2p) => rs_cpr,
        (ReduceScatter, CColl) => rs_ccoll,
        // Reduce = reduce-scatter + gather of the reduced blocks at the root.
        (Reduce, CprP2p) => rs_cpr + steps * (t.cmsg(b) + t.decomp(b, 1)) + t.comp(b, all),
        (Reduce, CColl) => rs_ccoll + t.comp(b, all) + steps * t.cmsg(b) + t.decomp(steps * b, 1),
        (Bcast, CprP2p | CColl) => tree_bcast(&t, bytes, algo == CprP2p),
        (Scatter, CprP2p | CColl) => tree_scatter(&t, bytes, algo == CprP2p),
        (Gather, CprP2p) => {
            // Binomial tree: the deepest branch forwards halves, recompressing per hop.
            (1..=levels as u32)
                .map(|k| {
                    let m = n * bytes / 2f64.powi(k as i32);
                    t.comp(m, 1) + t.cmsg(m) + t.decomp(m, 1)
                })
                .sum()
        }
        (Gather, CColl) => t.comp(bytes, all) + (levels - 1.0) * p.alpha_s + t.cmsg(steps * bytes) + t.decomp(steps * bytes, 1),
        // The output holds p blocks: its pages are first written by the decodes.
        (Allgather, CprP2p) => t.fresh(n * bytes, all) + ag_cpr(bytes),
        (Allgather, CColl) => t.fresh(n * bytes, all) + ag_once(bytes, false),
        // Pairwise exchanges, one flow each way, recompressing nothing (each piece is
        // compressed once at its origin) but decoding before the next exchange.
        (Alltoall, CprP2p) => t.fresh(n * bytes, all) + steps * (t.comp(bytes, all) + t.cduplex(bytes) + t.decomp(bytes, all)),
        // All pieces compressed, then sent at once (p - 1 flows each way) and decoded as
        // they arrive: the last one is left after the transfers.
        (Alltoall, CColl) => {
            let transfers = p.alpha_s + t.wire_duplex(steps * bytes / p.ratio, steps);
            t.fresh(n * bytes, all) + t.comp(steps * bytes, all) + transfers.max(t.decomp(steps * bytes, all)) + t.decomp(bytes, all)
        }
        (P2p, CprP2p) => t.comp(bytes, 1) + t.cmsg(bytes) + t.decomp(bytes, 1),
        // Pipelined chunks: the transfer hides inside the codec work, or the reverse.
        (P2p, CColl) => p.alpha_s + (bytes / p.ratio / p.link_bytes_per_s).max(t.comp(bytes, 1) + t.decomp(bytes, 1)),
        _ => return None,
    };
    // Before the rounds, the ranks that hold input find its value range (the Bcast and
    // Scatter root alone, with the whole vector or every block).
    let scan = match op {
        Bcast => t.scan(bytes, 1),
        Scatter => t.scan(n * bytes, 1),
        Alltoall => t.scan(n * bytes, all),
        _ => t.scan(bytes, all),
    };
    Some(scan + time)
}

/// Pipeline chunks of a message of `bytes`: the collectives' automatic chunking
/// ([`crate::config::pipeline_chunk_values`]: at most 8 chunks of at least 256 KiB).
fn chunks(bytes: f64) -> f64 {
    (bytes / crate::config::MIN_AUTO_CHUNK_BYTES as f64).floor().clamp(1.0, crate::config::MAX_AUTO_CHUNKS as f64)
}

/// Binomial-tree Bcast of `n` bytes, compressed once at the root (`recompress`: decoded
/// and compressed again at every inner rank). The root copies its input into the call's
/// buffer, each receiver decodes into its own.
///
/// Whole messages: a parent sends to its children at once, so its link carries all their
/// messages before the deepest child can forward: the path to the deepest leaf crosses
/// `L + (L - 1) + ... + 1` message times. Pipelined ([`Params::pipelined_trees`], `k`
/// chunks): the first chunk crosses the `L` levels, then the slowest stage (compressing
/// a chunk, the root's link carrying it to its `L` children, decoding it, or an inner
/// rank's decode and recompression) repeats for the other `k - 1`.
fn tree_bcast(t: &Terms, n: f64, recompress: bool) -> f64 {
    let p = t.p;
    let all = p.ranks.max(1);
    let levels = (all as f64).log2().ceil();
    let ends = t.fresh(n, 1) + t.fresh(n, all);
    if p.pipelined_trees {
        let k = chunks(n);
        let c = n / k;
        let wire = c / p.ratio / p.link_bytes_per_s;
        let inner = if recompress { t.decomp(c, all) + t.comp(c, all) } else { 0.0 };
        let first = t.comp(c, 1) + levels * (p.alpha_s + wire) + (levels - 1.0) * inner + t.decomp(c, all);
        let stage = t.comp(c, 1).max(levels * wire).max(inner).max(t.decomp(c, all));
        return ends + first + (k - 1.0) * stage;
    }
    let hops = levels * (levels + 1.0) / 2.0;
    let inner = if recompress { (levels - 1.0) * (t.decomp(n, all) + t.fresh(n, all) + t.comp(n, all)) } else { 0.0 };
    // The root works alone (unless waiting ranks poll); the receivers decode at once.
    ends + t.comp(n, 1) + hops * (n / p.ratio / p.link_bytes_per_s) + levels * p.alpha_s + inner + t.decomp(n, all)
}

/// Binomial-tree Scatter of blocks of `m` bytes. C-Coll: the root compresses every block
/// once and the frames travel as bundles (a subtree's blocks), each rank decoding its
/// own. CPR-P2P: every inner rank decodes its subtree's blocks and compresses its
/// children's again. Along the deepest path a rank of subtree size `s` sends `s - 1`
/// blocks to its children at once before its last child can go on. Pipelined
/// ([`Params::pipelined_trees`], C-Coll): the root sends block `k` while compressing
/// block `k + 1`, so its link and its codec overlap.
fn tree_scatter(t: &Terms, m: f64, recompress: bool) -> f64 {
    let p = t.p;
    let all = p.ranks.max(1);
    let wire = m / p.ratio / p.link_bytes_per_s;
    if p.pipelined_trees && !recompress {
        let others = all as f64 - 1.0;
        let levels = (all as f64).log2().ceil();
        // The root's blocks: the first compressed, then compressing and sending overlap;
        // the last block then goes down the remaining levels.
        let root = t.fresh(m, 1) + t.comp(m, 1) + ((others - 1.0) * t.comp(m, 1)).max(others * wire);
        return root + levels * p.alpha_s + (levels - 1.0) * wire + t.decomp(m, all) + t.fresh(m, all);
    }
    let mut time = 0.0;
    let mut size = all as f64;
    let mut first = true;
    while size > 1.0 {
        let out = (size - 1.0) * m;
        if recompress {
            // The subtree's blocks gathered (root: copied; others: decoded) into a fresh
            // buffer, the children's compressed.
            let active = if first { 1 } else { all };
            time += t.fresh(size * m, active) + if first { 0.0 } else { t.decomp(size * m, all) } + t.comp(out, active);
        } else if first {
            // The root works alone (unless waiting ranks poll): its own block copied into
            // the call's buffer, the others compressed.
            time += t.fresh(m, 1) + t.comp(out, 1);
        }
        time += p.alpha_s + (size - 1.0) * wire;
        size = (size / 2.0).ceil();
        first = false;
    }
    // The last rank decodes its block into the call's buffer.
    time + t.decomp(m, all) + t.fresh(m, all)
}

/// Predicted seconds of plain MPI (Open MPI 4.1's `tuned` decisions for messages of 1 MiB
/// and more, commutative reductions; ccoll-bench's `bytes` convention). Every receiver
/// writes its output into fresh memory as it arrives.
/// - Allreduce: Rabenseifner (recursive-halving reduce-scatter, recursive-doubling
///   allgather: both directions busy), a fold-in step for ranks beyond a power of two.
/// - Bcast: a chain without segments below 8 ranks (`p - 1` store-and-forward hops),
///   linear (the root sends to each) below 16, scatter + allgather below 32 and from
///   1024, a radix-4 k-nomial tree (3 sends per level) in between.
/// - Scatter: linear (the root sends every block in turn).
/// - Allgather: recursive doubling below 32 ranks, then ring or neighbour exchange:
///   `(p - 1) m` each way.
/// - Alltoall: every pair at once (linear, `p - 1` flows each way), pairwise exchange
///   (one flow) from 64 to 1023 ranks.
/// - Reduce-scatter, Reduce, Gather, point-to-point: the ring, the same plus a gather,
///   the mirror of Scatter, one message.
pub fn mpi_time_s(op: CollOp, bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let np = p.ranks.max(1);
    let n = np as f64;
    let steps = n - 1.0;
    let all = np;
    let b = bytes / n;
    let rs_ring = steps * (t.duplex(b, 1.0) + t.reduce(b, all));
    match op {
        CollOp::Allreduce => {
            let pow2 = 1usize << (usize::BITS - 1 - np.leading_zeros());
            let (q, fold) = (pow2 as f64, pow2 != np);
            let halves = (q - 1.0) / q * bytes;
            let rounds = q.log2();
            let fold_in = if fold { 2.0 * t.msg(bytes) + t.reduce(bytes, all) } else { 0.0 };
            t.fresh(bytes, all) + fold_in + 2.0 * (rounds * p.alpha_s + t.wire_duplex(halves, 1.0)) + t.reduce(halves, all)
        }
        CollOp::ReduceScatter => rs_ring,
        CollOp::Reduce => rs_ring + steps * t.msg(b),
        CollOp::Bcast => {
            let levels = n.log2().ceil();
            let spread = steps / n * bytes;
            t.fresh(bytes, all)
                + match np {
                    // Chain, or the root sending to each in turn: p - 1 message times.
                    0..=15 => steps * t.msg(bytes),
                    // Binomial scatter of the pieces, recursive-doubling allgather.
                    16..=31 | 1024.. => 2.0 * levels * p.alpha_s + spread / p.link_bytes_per_s + t.wire_duplex(spread, 1.0),
                    _ => (levels / 2.0).ceil() * 3.0 * t.msg(bytes),
                }
        }
        CollOp::Scatter | CollOp::Gather => t.fresh(bytes, all) + steps * t.msg(bytes),
        CollOp::Allgather => {
            t.fresh(n * bytes, all)
                + if np < 32 {
                    n.log2().ceil() * p.alpha_s + t.wire_duplex(steps * bytes, 1.0)
                } else {
                    steps * t.duplex(bytes, 1.0)
                }
        }
        CollOp::Alltoall => {
            let flows = if (64..1024).contains(&np) { 1.0 } else { steps };
            t.fresh(n * bytes, all) + steps * p.alpha_s + t.wire_duplex(steps * bytes, flows)
        }
        CollOp::P2p => t.msg(bytes),
    }
}

/// Predicted seconds of the hierarchical allreduce whose group leaders run `leaders`
/// (an allreduce algorithm) among themselves: `c-coll` is the compressed pipelined ring,
/// `mpi` the same ring with every frame raw (below the compression threshold).
pub fn hier_time_s(bytes: f64, p: &Params, leaders: Algorithm) -> f64 {
    let (groups, _) = p.groups();
    let among = Params { ranks: groups, group_ranks: 1, ..*p };
    let exchange = if leaders == Algorithm::Mpi { raw_ring_allreduce_s(bytes, &among) } else { time_s(CollOp::Allreduce, leaders, bytes, &among).unwrap_or(f64::INFINITY) };
    intra_reduce_bcast(bytes, p) + exchange
}

/// The ring allreduce with every frame raw: reduce-scatter and allgather of `p - 1`
/// steps each on blocks of `bytes / p`.
fn raw_ring_allreduce_s(bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let n = p.ranks.max(1) as f64;
    if n <= 1.0 {
        return 0.0;
    }
    let b = bytes / n;
    (n - 1.0) * (2.0 * t.duplex(b, 1.0) + t.reduce(b, p.ranks))
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
            reduce_bytes_per_s: 2e9,
            ratio: 10.0,
            intra_bytes_per_s: 5e9,
            intra_alpha_s: 1e-6,
            ..Params::IDEAL
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn plain_mpi_is_the_algorithm_open_mpi_picks() {
        let p = params(4);
        let n = 64e6;
        // Rabenseifner: two rounds of halving, two of doubling, 3/4 of the vector each way.
        let want = 2.0 * (2.0 * 50e-6 + 0.75 * n / 125e6) + 0.75 * n / 2e9;
        assert!(close(time_s(Allreduce, Mpi, n, &p).unwrap(), want));
        // Both directions busy at half the rate: the transfers take twice as long.
        let half = Params { duplex_efficiency: 0.5, ..p };
        assert!(close(time_s(Allreduce, Mpi, n, &half).unwrap(), want + 2.0 * 0.75 * n / 125e6));
        // 6 ranks: the two beyond 4 fold in first (a message there and back, one sum).
        let six = time_s(Allreduce, Mpi, n, &params(6)).unwrap();
        assert!(close(six, want + 2.0 * (50e-6 + n / 125e6) + n / 2e9), "{six}");
        // Bcast: a chain of 3 store-and-forward hops on 4 ranks; 3 sends per level of a
        // radix-4 tree on 64 (3 levels).
        assert!(close(time_s(Bcast, Mpi, n, &p).unwrap(), 3.0 * (50e-6 + n / 125e6)));
        assert!(close(time_s(Bcast, Mpi, n, &params(64)).unwrap(), 9.0 * (50e-6 + n / 125e6)));
        // Alltoall: 3 flows each way share the duplex loss; writing fresh output costs.
        let fresh = Params { fresh_bytes_per_s: 4e9, ..half };
        let a2a = time_s(Alltoall, Mpi, n, &fresh).unwrap();
        assert!(close(a2a, 4.0 * n / 4e9 + 3.0 * 50e-6 + 3.0 * n / (125e6 * (1.0 - 0.5 / 3.0))), "{a2a}");
        assert_eq!(time_s(Bcast, RecursiveDoubling, n, &p), None);
        assert_eq!(time_s(Bcast, Hierarchical, n, &p), None);
        assert_eq!(time_s(Allreduce, Auto, n, &p), None);
        assert_eq!(time_s(Allreduce, CColl, n, &params(1)), Some(0.0));
    }

    #[test]
    fn compressed_bcast_is_compress_hops_decompress() {
        let p = params(8);
        let n = 64e6;
        // 3 levels: the root's 3 sends share its link, then 2, then 1: 6 message times
        // of 6.4 MB; one compression and one decompression.
        let want = n / 500e6 + 6.0 * n / 10.0 / 125e6 + 3.0 * 50e-6 + n / 500e6;
        assert!(close(time_s(Bcast, CColl, n, &p).unwrap(), want));
        // Each codec pass adds its fixed cost.
        let called = Params { codec_call_s: 1e-3, ..p };
        assert!(close(time_s(Bcast, CColl, n, &called).unwrap(), want + 2e-3));
        // CPR-P2P: the 2 inner ranks on the path decode into fresh memory and compress again.
        let fresh = Params { fresh_bytes_per_s: 1e9, ..p };
        let cpr = time_s(Bcast, CprP2p, n, &fresh).unwrap();
        assert!(close(cpr, want + 2.0 * (n / 500e6 + n / 1e9 + n / 500e6) + 2.0 * n / 1e9), "{cpr}");
    }

    #[test]
    fn pipelined_trees_overlap_codec_and_links() {
        let p = Params { pipelined_trees: true, ..params(8) };
        let n = 64e6;
        // 8 chunks of 8 MB: the first crosses 3 levels, then the root's link (3 children
        // x 0.8 MB) is the slowest stage for the other 7.
        let (c, wire) = (8e6, 8e6 / 10.0 / 125e6);
        let want = c / 500e6 + 3.0 * (50e-6 + wire) + c / 500e6 + 7.0 * (3.0 * wire);
        assert!(close(time_s(Bcast, CColl, n, &p).unwrap(), want), "{}", time_s(Bcast, CColl, n, &p).unwrap());
        // On 1024 ranks the whole-message tree pays 55 hops, the pipelined one 10 + 7 x 10.
        let (whole, piped) = (params(1024), Params { pipelined_trees: true, ..params(1024) });
        assert!(time_s(Bcast, CColl, n, &piped).unwrap() < 0.5 * time_s(Bcast, CColl, n, &whole).unwrap());
        // Scatter: the root's link (7 blocks) hides its compressing (6 more blocks).
        let m = 8e6;
        let scatter = m / 500e6 + (6.0 * m / 500e6f64).max(7.0 * m / 10.0 / 125e6) + 3.0 * 50e-6 + 2.0 * m / 10.0 / 125e6 + m / 500e6;
        assert!(close(time_s(Scatter, CColl, m, &p).unwrap(), scatter));
        assert!(time_s(Scatter, CColl, m, &p) < time_s(Scatter, CColl, m, &params(8)));
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
        // The Bcast root compresses alone at a whole core, unless waiting ranks poll.
        p.background_load = 0.0;
        let quiet = time_s(Bcast, CColl, 16e6, &p).unwrap();
        let polling = time_s(Bcast, CColl, 16e6, &Params { busy_wait: true, ..p }).unwrap();
        assert!((polling - quiet - 16e6 / 500e6).abs() < 1e-9, "{quiet} {polling}");
    }

    #[test]
    fn hierarchical_is_intra_group_steps_around_the_leaders_exchange() {
        // 8 ranks in 2 groups of 4: 2 levels of reduce and bcast inside a group.
        let p = Params { group_ranks: 4, ..params(8) };
        let n = 1e6;
        let intra = 2.0 * (2.0 * (1e-6 + n / 5e9) + n / 2e9);
        let leaders = time_s(Allreduce, CColl, n, &params(2)).unwrap();
        assert!((time_s(Allreduce, Hierarchical, n, &p).unwrap() - intra - leaders).abs() < 1e-12);
        // Raw among the leaders: the ring's two steps of half the vector and one sum.
        let raw = 2.0 * (50e-6 + n / 2.0 / 125e6) + n / 2.0 / 2e9;
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
