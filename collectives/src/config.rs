//! What a call is asked to do: the operation, the algorithm, the codec and its settings,
//! and the default algorithm selection.

use core::fmt;
use core::str::FromStr;

use codec_host::Codec;

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
            CollOp::Allreduce => &[Mpi, CprP2p, CColl, Ring, RecursiveDoubling, Hierarchical],
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
    /// Pick by operation, message size and rank count ([`select`]), unless the
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
    /// broadcast inside groups.
    Hierarchical,
}

impl Algorithm {
    /// Every algorithm, in a fixed order.
    pub const ALL: [Algorithm; 7] = [
        Algorithm::Auto,
        Algorithm::Mpi,
        Algorithm::CprP2p,
        Algorithm::CColl,
        Algorithm::Ring,
        Algorithm::RecursiveDoubling,
        Algorithm::Hierarchical,
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
    /// The codec. [`Codec::SzxRelative`] is turned into an absolute bound per call:
    /// `rel_error` times the value range of all ranks' input.
    pub codec: Codec,
    /// The algorithm, or [`Algorithm::Auto`].
    pub algorithm: Algorithm,
    /// Bytes of one pipeline chunk; 0 chooses from the message size ([`pipeline_chunk_values`]).
    pub pipeline_chunk_bytes: usize,
    /// Messages (and pipeline chunks) smaller than this are sent uncompressed; under
    /// [`Algorithm::Auto`], calls smaller than this use the MPI library's collective.
    pub min_bytes_to_compress: usize,
    /// Node groups of the hierarchical allreduce.
    pub node_groups: NodeGroups,
    /// Where compression, decompression and reduction run (default: the CPU).
    pub backend: crate::CodecBackend,
    /// Device buffers: compressions kept in flight, one per stream, while earlier
    /// chunks are copied out and sent (default [`DEFAULT_DEVICE_STREAMS`]; 0 counts as
    /// 1). Results do not depend on it. The chunk size is `pipeline_chunk_bytes`.
    pub device_streams: usize,
}

/// Default of [`CollConfig::device_streams`]: see docs/collectives.md, "Device buffers".
pub const DEFAULT_DEVICE_STREAMS: usize = 4;

impl CollConfig {
    /// The defaults for `codec`: automatic algorithm and chunking, compression from
    /// [`DEFAULT_MIN_BYTES_TO_COMPRESS`], shared-memory node groups.
    pub fn new(codec: Codec) -> Self {
        CollConfig {
            codec,
            algorithm: Algorithm::Auto,
            pipeline_chunk_bytes: 0,
            min_bytes_to_compress: DEFAULT_MIN_BYTES_TO_COMPRESS,
            node_groups: NodeGroups::SharedMemory,
            backend: crate::CodecBackend::Cpu,
            device_streams: DEFAULT_DEVICE_STREAMS,
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

/// Under [`Algorithm::Auto`], allreduce calls below this many bytes use recursive
/// doubling (log2(p) latency terms), larger ones the pipelined ring (bandwidth-optimal).
pub const RD_MAX_BYTES: usize = 1 << 20;

/// The environment variable that overrides [`Algorithm::Auto`]: either one algorithm
/// name, used for every operation it applies to (`CCOLL_ALGORITHM=ring`), or a
/// comma-separated list of `op=algorithm` (`CCOLL_ALGORITHM=allreduce=rd,bcast=mpi`).
pub const ENV_ALGORITHM: &str = "CCOLL_ALGORITHM";

/// The algorithm a call runs: the caller's choice if it is not [`Algorithm::Auto`], else
/// the environment's (`env`, the value of [`ENV_ALGORITHM`]) if it names one for `op`,
/// else the default:
///
/// - calls below `min_bytes_to_compress` bytes: `mpi` (nothing to gain from compression);
/// - allreduce: `rd` on 2 ranks or below [`RD_MAX_BYTES`], else `c-coll` (pipelined ring);
/// - every other operation, point-to-point included: `c-coll`.
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
    Ok(if bytes < cfg.min_bytes_to_compress {
        Algorithm::Mpi
    } else if op == CollOp::Allreduce && (ranks <= 2 || bytes < RD_MAX_BYTES) {
        Algorithm::RecursiveDoubling
    } else {
        Algorithm::CColl
    })
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
pub const MAX_AUTO_CHUNKS: usize = 8;
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

    fn cfg() -> CollConfig {
        CollConfig::new(Codec::ZfpFixedAccuracy { tolerance: 1e-3 })
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

    #[test]
    fn default_selection_follows_size_and_ranks() {
        let c = cfg();
        assert_eq!(select(CollOp::Allreduce, 1000, 8, &c, None).unwrap(), Algorithm::Mpi);
        assert_eq!(select(CollOp::Allreduce, 256 << 10, 8, &c, None).unwrap(), Algorithm::RecursiveDoubling);
        assert_eq!(select(CollOp::Allreduce, 16 << 20, 2, &c, None).unwrap(), Algorithm::RecursiveDoubling);
        assert_eq!(select(CollOp::Allreduce, 16 << 20, 8, &c, None).unwrap(), Algorithm::CColl);
        assert_eq!(select(CollOp::Bcast, 16 << 20, 8, &c, None).unwrap(), Algorithm::CColl);
        assert_eq!(select(CollOp::Gather, 100, 8, &c, None).unwrap(), Algorithm::Mpi);
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
        assert_eq!(parse_codec("zfp-acc:1e-3").unwrap(), Codec::ZfpFixedAccuracy { tolerance: 1e-3 });
        assert_eq!(parse_codec("zfp-rate:8").unwrap(), Codec::ZfpFixedRate { rate: 8.0 });
        assert_eq!(parse_codec("szx:1e-3").unwrap(), Codec::Szx { abs_error: 1e-3 });
        assert_eq!(parse_codec("szx-rel:1e-4").unwrap(), Codec::SzxRelative { rel_error: 1e-4 });
        assert_eq!(parse_codec("szx-rel=1e-3").unwrap(), Codec::SzxRelative { rel_error: 1e-3 });
        assert_eq!(parse_codec("zfp-tol=1e-3").unwrap(), Codec::ZfpFixedAccuracy { tolerance: 1e-3 });
        assert!(parse_codec("zfp-acc").is_err());
        assert!(parse_codec("zfp-acc:x").is_err());
        assert!(parse_codec("lz4:1").is_err());
    }

    #[test]
    fn chunking_is_bounded_and_aligned() {
        assert_eq!(pipeline_chunk_values(0, 4, 0), 1);
        assert_eq!(pipeline_chunk_values(1000, 4, 0), 1024);
        // 16 MiB of f32: 8 chunks of 512 Ki values.
        assert_eq!(pipeline_chunk_values(4 << 20, 4, 0), 512 << 10);
        // 1 MiB: 4 chunks of 256 KiB.
        assert_eq!(pipeline_chunk_values(256 << 10, 4, 0), 64 << 10);
        assert_eq!(pipeline_chunk_values(4 << 20, 4, 4096), 1024);
        assert_eq!(pipeline_chunk_values(10, 8, 3), 1);
    }
}
