//! What a call is asked to do: the operation, the algorithm, the codec and its settings,
//! and the automatic algorithm selection (from the cost model, [`crate::model`]).

use core::fmt;
use core::str::FromStr;

use codec_host::Codec;

use crate::model::{self, Params};
use crate::CollError;

/// The operations of this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollOp {
    Allreduce,
    ReduceScatter,
    Reduce,
    Bcast,
    Scatter,
    Gather,
    Allgather,
    Alltoall,
    /// Point-to-point send/receive.
    P2p,
}

impl CollOp {
    /// Every operation, in a fixed order.
    pub const ALL: [CollOp; 9] = [
        CollOp::Allreduce,
        CollOp::ReduceScatter,
        CollOp::Reduce,
        CollOp::Bcast,
        CollOp::Scatter,
        CollOp::Gather,
        CollOp::Allgather,
        CollOp::Alltoall,
        CollOp::P2p,
    ];

    /// The name the command line and the environment variable use.
    pub const fn name(self) -> &'static str {
        match self {
            CollOp::Allreduce => "allreduce",
            CollOp::ReduceScatter => "reduce-scatter",
            CollOp::Reduce => "reduce",
            CollOp::Bcast => "bcast",
            CollOp::Scatter => "scatter",
            CollOp::Gather => "gather",
            CollOp::Allgather => "allgather",
            CollOp::Alltoall => "alltoall",
            CollOp::P2p => "p2p",
        }
    }

    /// True for the computation framework (the operations that reduce).
    pub const fn reduces(self) -> bool {
        matches!(self, CollOp::Allreduce | CollOp::ReduceScatter | CollOp::Reduce)
    }

    /// The algorithms implemented for this operation (besides [`Algorithm::Auto`]).
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            CollOp::Allreduce => &[Mpi, CprP2p, CColl, Ring, RecursiveDoubling, Hierarchical, CompressedDomain],
            _ => &[Mpi, CprP2p, CColl],
        }
    }
}

impl fmt::Display for CollOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CollOp {
    type Err = CollError;
    fn from_str(s: &str) -> Result<Self, CollError> {
        by_name(&CollOp::ALL, CollOp::name, s, "operation")
    }
}

/// The entry of `all` called `s`.
fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str, what: &str) -> Result<T, CollError> {
    all.iter().copied().find(|&x| name(x) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&x| name(x)).collect();
        CollError::Config(format!("unknown {what} {s:?} (one of {})", names.join(", ")))
    })
}

/// How a call moves its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The algorithm the cost model predicts fastest ([`select`]), unless the
    /// environment variable [`ENV_ALGORITHM`] names one.
    Auto,
    /// The MPI library's own collective (or `MPI_Send`/`MPI_Recv`), uncompressed.
    Mpi,
    /// Baseline: the same schedule as [`Algorithm::CColl`], but every point-to-point send
    /// compresses and every receive decompresses (values are recompressed per hop).
    CprP2p,
    /// The C-Coll frameworks: data movement compresses each value once at its origin and
    /// forwards compressed bytes; computation (ring reduce-scatter) compresses per step in
    /// pipelined chunks. For point-to-point: the pipelined compressed send/recv.
    CColl,
    /// Allreduce: collective-level compressed ring (receive posted before compressing;
    /// phase two compresses once and forwards).
    Ring,
    /// Allreduce: collective-level compressed recursive doubling (remainder ranks fold in
    /// before and out after).
    RecursiveDoubling,
    /// Allreduce: reduce inside node groups, compressed ring among group leaders,
    /// broadcast inside groups; below [`CollConfig::hier_host_max_bytes`] the leaders
    /// exchange and reduce their partial results uncompressed.
    Hierarchical,
    /// Allreduce: C-Coll's ring with compressed-domain reduction (the hZCCL idea, on
    /// SZx): every rank compresses its vector once, the reduce-scatter reduces the
    /// partial blocks as SZx streams without decompressing them where the blocks allow
    /// it, and the allgather forwards the reduced streams. Never chosen by
    /// [`Algorithm::Auto`] (the model does not price it).
    CompressedDomain,
}

impl Algorithm {
    /// Every algorithm, in a fixed order.
    pub const ALL: [Algorithm; 8] = [
        Algorithm::Auto,
        Algorithm::Mpi,
        Algorithm::CprP2p,
        Algorithm::CColl,
        Algorithm::Ring,
        Algorithm::RecursiveDoubling,
        Algorithm::Hierarchical,
        Algorithm::CompressedDomain,
    ];

    /// The name the command line and the environment variable use.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Mpi => "mpi",
            Algorithm::CprP2p => "cpr-p2p",
            Algorithm::CColl => "c-coll",
            Algorithm::Ring => "ring",
            Algorithm::RecursiveDoubling => "rd",
            Algorithm::Hierarchical => "hier",
            Algorithm::CompressedDomain => "cdr",
        }
    }

    /// True if this algorithm is implemented for `op`.
    pub fn applies_to(self, op: CollOp) -> bool {
        self == Algorithm::Auto || op.algorithms().contains(&self)
    }

    /// True for the algorithms that send compressed messages.
    pub const fn compresses(self) -> bool {
        !matches!(self, Algorithm::Auto | Algorithm::Mpi)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = CollError;
    fn from_str(s: &str) -> Result<Self, CollError> {
        by_name(&Algorithm::ALL, Algorithm::name, s, "algorithm")
    }
}

/// How the hierarchical allreduce forms its node groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NodeGroups {
    /// Ranks that share memory (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`).
    #[default]
    SharedMemory,
    /// Consecutive blocks of this many ranks (emulates nodes on one machine).
    Blocks(usize),
}

/// The settings of one call. Every rank must pass the same settings; a call checks that
/// they do (see the crate documentation) and fails on every rank if not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollConfig {
    /// The codec. A relative SZx bound ([`codec_host::ErrorBound::Rel`]) is turned into
    /// an absolute bound per call: `rel_error` times the value range of all ranks' input.
    pub codec: Codec,
    /// The algorithm, or [`Algorithm::Auto`].
    pub algorithm: Algorithm,
    /// Bytes of one pipeline chunk; 0 chooses from the message size ([`pipeline_chunk_values`]).
    pub pipeline_chunk_bytes: usize,
    /// Messages (and pipeline chunks) smaller than this are sent uncompressed; under
    /// [`Algorithm::Auto`], calls smaller than this choose among the uncompressed
    /// algorithms only.
    pub min_bytes_to_compress: usize,
    /// Node groups of the hierarchical allreduce.
    pub node_groups: NodeGroups,
    /// The hierarchical allreduce of fewer bytes than this takes its small-message path
    /// (NV-Group's): the leaders exchange their partial results uncompressed and reduce
    /// them in a fixed order; no codec latency, an exact result.
    pub hier_host_max_bytes: usize,
    /// What the automatic selection assumes about the machine (see [`ModelParams`];
    /// [`ENV_MODEL`] overrides single figures).
    pub model: ModelParams,
    /// Where compression, decompression and reduction run (default: the CPU).
    pub backend: crate::CodecBackend,
    /// Device buffers: compressions kept in flight, one per stream, while earlier
    /// chunks are copied out and sent (default [`DEFAULT_DEVICE_STREAMS`]; 0 counts as
    /// 1). Results do not depend on it. The chunk size is `pipeline_chunk_bytes`.
    pub device_streams: usize,
    /// Time the codec's passes on the CPU backend ([`crate::CollStats::codec_cpu`];
    /// default false: two clock reads and two `getrusage` calls a pass, about 2.5 us on
    /// the development machine, as long as decoding a 32 KiB piece).
    pub time_codec: bool,
}

/// Default of [`CollConfig::device_streams`]: see docs/collectives.md, "Device buffers".
pub const DEFAULT_DEVICE_STREAMS: usize = 4;

impl CollConfig {
    /// The defaults for `codec`: automatic algorithm and chunking, compression from
    /// [`DEFAULT_MIN_BYTES_TO_COMPRESS`], shared-memory node groups, the hierarchical
    /// allreduce uncompressed below [`DEFAULT_HIER_HOST_MAX_BYTES`], the default model.
    pub fn new(codec: Codec) -> Self {
        CollConfig {
            codec,
            algorithm: Algorithm::Auto,
            pipeline_chunk_bytes: 0,
            min_bytes_to_compress: DEFAULT_MIN_BYTES_TO_COMPRESS,
            node_groups: NodeGroups::SharedMemory,
            backend: crate::CodecBackend::Cpu,
            device_streams: DEFAULT_DEVICE_STREAMS,
            hier_host_max_bytes: DEFAULT_HIER_HOST_MAX_BYTES,
            model: ModelParams::DEFAULT,
            time_codec: false,
        }
    }

    /// True if the hierarchical allreduce of `bytes` takes its small-message path.
    pub fn hier_on_host(&self, bytes: usize) -> bool {
        bytes < self.hier_host_max_bytes
    }

    /// Ranks per node group as the model sees them: the blocks' size, or for
    /// shared-memory groups the model's [`ModelParams::node_ranks`] (the layout is
    /// known only after splitting the communicator).
    fn model_group_ranks(&self, model: &ModelParams) -> usize {
        match self.node_groups {
            NodeGroups::Blocks(g) => g,
            NodeGroups::SharedMemory => model.node_ranks,
        }
    }

    /// The same settings with another algorithm.
    pub fn with_algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }
}

/// Default of [`CollConfig::min_bytes_to_compress`].
pub const DEFAULT_MIN_BYTES_TO_COMPRESS: usize = 32 << 10;

/// Default of [`CollConfig::hier_host_max_bytes`]: the model's uncompressed and
/// compressed hierarchical allreduce cross at 7.4 to 14.0 KB with the default
/// [`ModelParams`] (2 to 16 groups of 2 to 8 ranks): the power of two within a factor
/// of two of all of them. The unit tests check that the host path is faster at half of
/// it and slower at twice.
pub const DEFAULT_HIER_HOST_MAX_BYTES: usize = 8 << 10;

/// The machine the automatic selection models (see docs/cost-model.md for the terms).
/// Every rank must see the same figures: they decide the algorithm, which the call
/// agreement then checks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelParams {
    /// Payload bytes per second of one direction of a node's link.
    pub link_bytes_per_s: f64,
    /// Per-message cost between nodes (latency plus software overhead), seconds.
    pub latency_s: f64,
    /// The link between ranks of one node group (shared memory).
    pub intra_bytes_per_s: f64,
    pub intra_latency_s: f64,
    /// Codec throughput per rank, uncompressed bytes per second.
    pub compress_bytes_per_s: f64,
    pub decompress_bytes_per_s: f64,
    /// Fixed cost of one codec pass, seconds.
    pub codec_call_s: f64,
    /// Element-wise reduction, bytes of one operand per second.
    pub reduce_bytes_per_s: f64,
    /// Expected compression ratio.
    pub ratio: f64,
    /// Ranks per node the model assumes for [`NodeGroups::SharedMemory`].
    pub node_ranks: usize,
}

impl ModelParams {
    /// The emulated cluster of docs/cluster-results.md (1 Gbit/s links, 96% TCP payload,
    /// 50 us per message) and the codec measured there (SZx: 1077 MB/s compression,
    /// 2358 MB/s decompression, reduction 6374 MB/s, one core), with a ratio of 10 (the
    /// run measured 19 at a relative bound of 1e-3; tighter bounds give less), 10 us per
    /// codec pass, shared memory at 5 GB/s and 1 us, one rank per node.
    pub const DEFAULT: ModelParams = ModelParams {
        link_bytes_per_s: 120e6,
        latency_s: 50e-6,
        intra_bytes_per_s: 5e9,
        intra_latency_s: 1e-6,
        compress_bytes_per_s: 1077e6,
        decompress_bytes_per_s: 2358e6,
        codec_call_s: 10e-6,
        reduce_bytes_per_s: 6374e6,
        ratio: 10.0,
        node_ranks: 1,
    };

    /// These figures with those that `env` (the value of [`ENV_MODEL`]) sets.
    pub fn with_env(mut self, env: Option<&str>) -> Result<ModelParams, CollError> {
        for item in env.unwrap_or("").split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = |why: &str| CollError::Config(format!("{ENV_MODEL}: {item:?}: {why}"));
            let (key, value) = item.split_once('=').ok_or_else(|| bad("not key=value"))?;
            let (key, value) = (key.trim(), value.trim());
            if key == "node_ranks" {
                self.node_ranks = value.parse().ok().filter(|&n| n >= 1).ok_or_else(|| bad("not a whole number >= 1"))?;
                continue;
            }
            let v: f64 = value.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0).ok_or_else(|| bad("not a finite number >= 0"))?;
            let positive = || if v > 0.0 { Ok(v) } else { Err(bad("must be above 0")) };
            match key {
                "link_gbit" => self.link_bytes_per_s = positive()? * 1e9 / 8.0,
                "latency_us" => self.latency_s = v * 1e-6,
                "intra_gbit" => self.intra_bytes_per_s = positive()? * 1e9 / 8.0,
                "intra_latency_us" => self.intra_latency_s = v * 1e-6,
                "compress_mbps" => self.compress_bytes_per_s = positive()? * 1e6,
                "decompress_mbps" => self.decompress_bytes_per_s = positive()? * 1e6,
                "codec_call_us" => self.codec_call_s = v * 1e-6,
                "reduce_mbps" => self.reduce_bytes_per_s = positive()? * 1e6,
                "ratio" => self.ratio = positive()?,
                _ => return Err(bad(&format!("unknown key (one of {})", MODEL_KEYS.join(", ")))),
            }
        }
        Ok(self)
    }

    /// The cost model's parameters for `ranks` ranks in groups of `group_ranks`, each
    /// rank with a core of its own.
    pub fn params(&self, ranks: usize, group_ranks: usize) -> Params {
        Params {
            ranks,
            link_bytes_per_s: self.link_bytes_per_s,
            alpha_s: self.latency_s,
            comp_bytes_per_s: self.compress_bytes_per_s,
            decomp_bytes_per_s: self.decompress_bytes_per_s,
            codec_call_s: self.codec_call_s,
            reduce_bytes_per_s: self.reduce_bytes_per_s,
            ratio: self.ratio,
            group_ranks: group_ranks.max(1),
            intra_bytes_per_s: self.intra_bytes_per_s,
            intra_alpha_s: self.intra_latency_s,
            ..Params::IDEAL
        }
    }
}

/// The keys of [`ENV_MODEL`].
const MODEL_KEYS: [&str; 10] = [
    "link_gbit",
    "latency_us",
    "intra_gbit",
    "intra_latency_us",
    "compress_mbps",
    "decompress_mbps",
    "codec_call_us",
    "reduce_mbps",
    "ratio",
    "node_ranks",
];

/// The environment variable that overrides figures of [`CollConfig::model`]: a
/// comma-separated list of `key=value` (`CCOLL_MODEL=link_gbit=100,latency_us=2`), keys
/// `link_gbit`, `latency_us`, `intra_gbit`, `intra_latency_us`, `compress_mbps`,
/// `decompress_mbps`, `codec_call_us`, `reduce_mbps`, `ratio`, `node_ranks`.
pub const ENV_MODEL: &str = "CCOLL_MODEL";

/// The environment variable that overrides [`Algorithm::Auto`]: either one algorithm
/// name, used for every operation it applies to (`CCOLL_ALGORITHM=ring`), or a
/// comma-separated list of `op=algorithm` (`CCOLL_ALGORITHM=allreduce=rd,bcast=mpi`).
pub const ENV_ALGORITHM: &str = "CCOLL_ALGORITHM";

/// The algorithm a call runs: the caller's choice if it is not [`Algorithm::Auto`], else
/// the environment's (`env`, the value of [`ENV_ALGORITHM`]) if it names one for `op`,
/// else [`fastest`] with the configured model and the figures [`ENV_MODEL`] sets.
///
/// `bytes` is the size of the call's vector (per rank block for scatter, gather,
/// allgather and alltoall).
pub fn select(op: CollOp, bytes: usize, ranks: usize, cfg: &CollConfig, env: Option<&str>) -> Result<Algorithm, CollError> {
    if cfg.algorithm != Algorithm::Auto {
        return if cfg.algorithm.applies_to(op) {
            Ok(cfg.algorithm)
        } else {
            Err(CollError::Unsupported { op, algorithm: cfg.algorithm })
        };
    }
    if let Some(algo) = env.map(|e| env_choice(op, e)).transpose()?.flatten() {
        return Ok(algo);
    }
    let model = cfg.model.with_env(std::env::var(ENV_MODEL).ok().as_deref())?;
    Ok(fastest(op, bytes, ranks, cfg, &model))
}

/// The algorithm of `op` with the least predicted time ([`predicted_s`]) under `model`;
/// on a tie (within [`TIE`]) the first in [`PREFERENCE`] order. A function of its
/// arguments only, so ranks that agree on them agree on the algorithm.
pub fn fastest(op: CollOp, bytes: usize, ranks: usize, cfg: &CollConfig, model: &ModelParams) -> Algorithm {
    let params = model.params(ranks, cfg.model_group_ranks(model));
    let mut best = (Algorithm::Mpi, f64::INFINITY);
    for algo in PREFERENCE.into_iter().filter(|a| a.applies_to(op)) {
        if let Some(t) = predicted_s(op, algo, bytes, cfg, &params) {
            if t < best.1 * (1.0 - TIE) {
                best = (algo, t);
            }
        }
    }
    best.0
}

/// Relative difference of predicted times below which two algorithms tie: where the
/// codec is the bottleneck, `c-coll` and `ring` have the same formula, and rounding
/// alone would otherwise alternate between them from one size to the next.
pub const TIE: f64 = 1e-9;

/// The order in which ties are broken: the library first, the CPR-P2P baseline last
/// (on 2 ranks its schedule costs what C-Coll's does).
pub const PREFERENCE: [Algorithm; 7] = [
    Algorithm::Mpi,
    Algorithm::CColl,
    Algorithm::Ring,
    Algorithm::RecursiveDoubling,
    Algorithm::Hierarchical,
    Algorithm::CompressedDomain,
    Algorithm::CprP2p,
];

/// The model's time for `algo` as a call of `bytes` would run it, or `None` where it is
/// no candidate: the compressed algorithms below `min_bytes_to_compress` (they would
/// send everything raw), `hier` unless there are at least two node groups of more than
/// one rank (priced as it would run: its small-message path where
/// [`CollConfig::hier_on_host`] says so, else C-Coll's allreduce among the leaders, raw
/// below `min_bytes_to_compress`).
pub fn predicted_s(op: CollOp, algo: Algorithm, bytes: usize, cfg: &CollConfig, params: &Params) -> Option<f64> {
    let b = bytes as f64;
    match algo {
        Algorithm::Mpi => model::time_s(op, algo, b, params),
        Algorithm::Hierarchical => {
            let (groups, group_ranks) = params.groups();
            if groups < 2 || group_ranks < 2 {
                None
            } else if cfg.hier_on_host(bytes) {
                Some(model::hier_host_time_s(b, params))
            } else if bytes < cfg.min_bytes_to_compress {
                Some(model::hier_time_s(b, params, Algorithm::Mpi))
            } else {
                model::time_s(op, algo, b, params)
            }
        }
        _ if bytes < cfg.min_bytes_to_compress => None,
        _ => model::time_s(op, algo, b, params),
    }
}

/// The algorithm the environment value names for `op`, if any.
fn env_choice(op: CollOp, env: &str) -> Result<Option<Algorithm>, CollError> {
    let env = env.trim();
    if env.is_empty() {
        return Ok(None);
    }
    if !env.contains('=') {
        let algo: Algorithm = env.parse()?;
        return Ok((algo != Algorithm::Auto && algo.applies_to(op)).then_some(algo));
    }
    for item in env.split(',') {
        let (name, algo) = item
            .split_once('=')
            .ok_or_else(|| CollError::Config(format!("{ENV_ALGORITHM}: {item:?} is not op=algorithm")))?;
        let (item_op, algo): (CollOp, Algorithm) = (name.trim().parse()?, algo.trim().parse()?);
        if item_op == op {
            if !algo.applies_to(op) {
                return Err(CollError::Unsupported { op, algorithm: algo });
            }
            return Ok((algo != Algorithm::Auto).then_some(algo));
        }
    }
    Ok(None)
}

/// Values per pipeline chunk for a message of `len` values of `elem_size` bytes: the
/// configured chunk size, or else about `len / n` with `n` between 1 and
/// [`MAX_AUTO_CHUNKS`] so that a chunk holds at least [`MIN_AUTO_CHUNK_BYTES`]; rounded up
/// to a multiple of 256 values so that codec blocks never straddle chunks.
pub fn pipeline_chunk_values(len: usize, elem_size: usize, chunk_bytes: usize) -> usize {
    let chunk = if chunk_bytes > 0 {
        (chunk_bytes / elem_size).max(1)
    } else {
        let chunks = (len * elem_size / MIN_AUTO_CHUNK_BYTES).clamp(1, MAX_AUTO_CHUNKS);
        len.div_ceil(chunks).next_multiple_of(256)
    };
    chunk.max(1)
}

/// Upper limit of the automatic chunk count.
pub const MAX_AUTO_CHUNKS: usize = 16;
/// Lower limit of an automatic chunk's size.
pub const MIN_AUTO_CHUNK_BYTES: usize = 256 << 10;

/// Parses a codec as the command lines write it: the codec's own spec (`szx=E`,
/// `szx-rel=R`, `zfp-tol=T`, `zfp-rate=R`, see `Codec`'s `FromStr`), also with `:` for
/// `=` and `zfp-acc` for `zfp-tol` (`szx:1e-3`, `zfp-acc:1e-3`).
pub fn parse_codec(spec: &str) -> Result<Codec, CollError> {
    let spec = spec.trim().replacen(':', "=", 1);
    let spec = spec.strip_prefix("zfp-acc=").map_or(spec.clone(), |t| format!("zfp-tol={t}"));
    spec.parse::<Codec>().map_err(|e| CollError::Config(format!("codec {spec:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use codec_host::ErrorBound;

    fn cfg() -> CollConfig {
        CollConfig::new(Codec::zfp_accuracy(1e-3))
    }

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>().unwrap(), a);
        }
        for op in CollOp::ALL {
            assert_eq!(op.name().parse::<CollOp>().unwrap(), op);
        }
        assert!("ringg".parse::<Algorithm>().is_err());
    }

    /// `cfg()` with node groups of `g` ranks.
    fn grouped(g: usize) -> CollConfig {
        CollConfig { node_groups: NodeGroups::Blocks(g), ..cfg() }
    }

    const M: ModelParams = ModelParams::DEFAULT;

    #[test]
    fn default_selection_follows_the_model() {
        use Algorithm::*;
        let c = cfg();
        let pick = |op, bytes, ranks, cfg: &CollConfig| fastest(op, bytes, ranks, cfg, &M);
        // Below the compression threshold only the uncompressed candidates remain.
        assert_eq!(pick(CollOp::Allreduce, 1000, 8, &c), Mpi);
        assert_eq!(pick(CollOp::Gather, 100, 8, &c), Mpi);
        assert_eq!(pick(CollOp::Allreduce, 16 << 20, 1, &c), Mpi);
        // Latency-bound sizes: recursive doubling; bandwidth-bound: the pipelined ring.
        assert_eq!(pick(CollOp::Allreduce, 40 << 10, 8, &c), RecursiveDoubling);
        assert_eq!(pick(CollOp::Allreduce, 1 << 20, 8, &c), CColl);
        assert_eq!(pick(CollOp::Allreduce, 16 << 20, 2, &c), CColl);
        for op in [CollOp::Bcast, CollOp::Scatter, CollOp::Alltoall, CollOp::ReduceScatter, CollOp::P2p] {
            assert_eq!(pick(op, 16 << 20, 8, &c), CColl, "{op}");
            // On 2 ranks CPR-P2P costs the same: the tie goes to C-Coll.
            assert_eq!(pick(op, 64 << 10, 2, &c), CColl, "{op}");
        }
        // Where ring and c-coll tie (the codec is the bottleneck), c-coll at every size.
        assert!((1..64).all(|m| pick(CollOp::Allreduce, m << 20, 8, &c) == CColl));
        // `select` without an override is the same choice.
        assert_eq!(select(CollOp::Allreduce, 40 << 10, 8, &c, None).unwrap(), RecursiveDoubling);
        assert_eq!(select(CollOp::Allreduce, 1000, 8, &c, None).unwrap(), Mpi);
    }

    #[test]
    fn hier_wins_with_node_groups_and_takes_its_host_path_when_small() {
        use Algorithm::*;
        let pick = |bytes, ranks, cfg: &CollConfig| fastest(CollOp::Allreduce, bytes, ranks, cfg, &M);
        // 4 groups of 4: small calls go hierarchical on the host path, exact.
        let g4 = grouped(4);
        assert_eq!(pick(1000, 16, &g4), Hierarchical);
        assert!(g4.hier_on_host(1000));
        // Mid sizes: hierarchical with C-Coll's allreduce among the leaders.
        assert_eq!(pick(256 << 10, 16, &g4), Hierarchical);
        assert!(!g4.hier_on_host(256 << 10));
        // Large: C-Coll's allreduce over every rank.
        assert_eq!(pick(16 << 20, 16, &g4), CColl);
        // One group, or groups of one rank: never.
        assert_eq!(pick(1000, 4, &g4), Mpi);
        assert_eq!(pick(1000, 16, &grouped(1)), Mpi);
        // Shared-memory groups: as many ranks per node as the model says.
        assert_eq!(pick(1000, 16, &cfg()), Mpi);
        let four_per_node = ModelParams { node_ranks: 4, ..M };
        assert_eq!(fastest(CollOp::Allreduce, 1000, 16, &cfg(), &four_per_node), Hierarchical);
        // Only allreduce has a hierarchical algorithm.
        assert_eq!(fastest(CollOp::Reduce, 1000, 16, &g4, &M), Mpi);
    }

    #[test]
    fn the_choice_is_the_least_predicted_time_over_a_grid() {
        let sizes = [0, 1, 4096, 32 << 10, 100 << 10, 1 << 20, 8 << 20, 64 << 20];
        let mut hier_host_seen = false;
        for ranks in [1, 2, 3, 4, 5, 8, 16, 64] {
            for c in [cfg(), grouped(2), grouped(4)] {
                let params = M.params(ranks, c.model_group_ranks(&M));
                for op in CollOp::ALL {
                    for bytes in sizes {
                        let chosen = fastest(op, bytes, ranks, &c, &M);
                        assert!(op.algorithms().contains(&chosen), "{op} {bytes} {ranks}: {chosen}");
                        let t = predicted_s(op, chosen, bytes, &c, &params).unwrap();
                        for &other in op.algorithms() {
                            let u = predicted_s(op, other, bytes, &c, &params);
                            assert!(u.is_none_or(|u| t * (1.0 - TIE) <= u), "{op} {bytes} B on {ranks}: {chosen} ({t}) over {other} ({u:?})");
                        }
                        // Candidates: compressed ones from the compression threshold up.
                        if bytes < c.min_bytes_to_compress {
                            assert!(matches!(chosen, Algorithm::Mpi | Algorithm::Hierarchical), "{op} {bytes}: {chosen}");
                        }
                        if chosen == Algorithm::Hierarchical {
                            let (groups, g) = params.groups();
                            assert!(groups > 1 && g > 1);
                            hier_host_seen |= c.hier_on_host(bytes);
                        }
                    }
                }
            }
        }
        assert!(hier_host_seen);
        // Ties can go to every algorithm but `Auto`.
        assert!(Algorithm::ALL.iter().all(|a| *a == Algorithm::Auto || PREFERENCE.contains(a)));
    }

    #[test]
    fn the_default_host_threshold_lies_where_the_model_crosses() {
        let t = DEFAULT_HIER_HOST_MAX_BYTES as f64;
        for (ranks, g) in [(4, 2), (8, 2), (16, 4), (32, 8), (64, 4)] {
            let p = M.params(ranks, g);
            let host = |b: f64| model::hier_host_time_s(b, &p);
            let compressed = |b: f64| model::time_s(CollOp::Allreduce, Algorithm::Hierarchical, b, &p).unwrap();
            assert!(host(t / 2.0) < compressed(t / 2.0), "{ranks} ranks in groups of {g}");
            assert!(compressed(t * 2.0) < host(t * 2.0), "{ranks} ranks in groups of {g}");
        }
    }

    #[test]
    fn the_environment_sets_model_figures() {
        let m = M.with_env(Some("link_gbit=100, latency_us=2,node_ranks=4,codec_call_us=0")).unwrap();
        assert_eq!(m.link_bytes_per_s, 12.5e9);
        assert_eq!((m.latency_s, m.node_ranks, m.codec_call_s), (2e-6, 4, 0.0));
        assert_eq!(m.compress_bytes_per_s, M.compress_bytes_per_s);
        assert_eq!(M.with_env(None).unwrap(), M);
        assert_eq!(M.with_env(Some(" ")).unwrap(), M);
        // At 100 Gbit/s a one-core codec does not pay: the library's ring wins.
        assert_eq!(fastest(CollOp::Allreduce, 64 << 20, 8, &cfg(), &m), Algorithm::Mpi);
        assert_eq!(fastest(CollOp::Allreduce, 64 << 20, 8, &cfg(), &M), Algorithm::CColl);
        for bad in ["link_gbit", "link_gbit=0", "ratio=-1", "latency_us=nan", "node_ranks=0", "node_ranks=2.5", "speed=1"] {
            assert!(matches!(M.with_env(Some(bad)), Err(CollError::Config(_))), "{bad}");
        }
    }

    #[test]
    fn explicit_choice_beats_environment_beats_default() {
        let c = cfg();
        let big = 16 << 20;
        assert_eq!(select(CollOp::Allreduce, big, 8, &c, Some("ring")).unwrap(), Algorithm::Ring);
        // An algorithm that does not apply to the op leaves the default.
        assert_eq!(select(CollOp::Bcast, big, 8, &c, Some("ring")).unwrap(), Algorithm::CColl);
        let env = "allreduce=hier, bcast=mpi";
        assert_eq!(select(CollOp::Allreduce, big, 8, &c, Some(env)).unwrap(), Algorithm::Hierarchical);
        assert_eq!(select(CollOp::Bcast, big, 8, &c, Some(env)).unwrap(), Algorithm::Mpi);
        assert_eq!(select(CollOp::Gather, big, 8, &c, Some(env)).unwrap(), Algorithm::CColl);
        let explicit = c.with_algorithm(Algorithm::CprP2p);
        assert_eq!(select(CollOp::Allreduce, big, 8, &explicit, Some("ring")).unwrap(), Algorithm::CprP2p);
        assert!(matches!(select(CollOp::Bcast, big, 8, &c, Some("bcast=rd")), Err(CollError::Unsupported { .. })));
        assert!(matches!(select(CollOp::Bcast, big, 8, &c, Some("bcast")), Err(CollError::Config(_))));
        assert!(matches!(
            select(CollOp::Bcast, big, 8, &c.with_algorithm(Algorithm::Ring), None),
            Err(CollError::Unsupported { .. })
        ));
    }

    #[test]
    fn codec_specs_parse() {
        assert_eq!(parse_codec("zfp-acc:1e-3").unwrap(), Codec::zfp_accuracy(1e-3));
        assert_eq!(parse_codec("zfp-rate:8").unwrap(), Codec::zfp_rate(8.0));
        assert_eq!(parse_codec("szx:1e-3").unwrap(), Codec::szx(ErrorBound::Abs(1e-3)));
        assert_eq!(parse_codec("szx-rel:1e-4").unwrap(), Codec::szx(ErrorBound::Rel(1e-4)));
        assert_eq!(parse_codec("szx-rel=1e-3").unwrap(), Codec::szx(ErrorBound::Rel(1e-3)));
        assert_eq!(parse_codec("zfp-tol=1e-3").unwrap(), Codec::zfp_accuracy(1e-3));
        assert!(parse_codec("zfp-acc").is_err());
        assert!(parse_codec("zfp-acc:x").is_err());
        assert!(parse_codec("lz4:1").is_err());
    }

    #[test]
    fn chunking_is_bounded_and_aligned() {
        assert_eq!(pipeline_chunk_values(0, 4, 0), 1);
        assert_eq!(pipeline_chunk_values(1000, 4, 0), 1024);
        // 16 MiB of f32: 16 chunks of 256 Ki values.
        assert_eq!(pipeline_chunk_values(4 << 20, 4, 0), 256 << 10);
        // 1 MiB: 4 chunks of 256 KiB.
        assert_eq!(pipeline_chunk_values(256 << 10, 4, 0), 64 << 10);
        assert_eq!(pipeline_chunk_values(4 << 20, 4, 4096), 1024);
        assert_eq!(pipeline_chunk_values(10, 8, 3), 1);
    }
}
