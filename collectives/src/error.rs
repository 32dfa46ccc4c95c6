//! The error type of the collectives.

use crate::{Algorithm, CollOp};

/// Why a call failed. A call that fails on one rank fails on every rank whose result it
/// affects (see the crate documentation); the output buffer's contents are then
/// unspecified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CollError {
    /// The ranks passed different values for a setting that must agree (count, root,
    /// element type, codec, algorithm, chunking, operator). Reported on every rank.
    #[error("ranks disagree on {field}: this rank has {local}, the ranks range over {min}..={max}")]
    Mismatch { field: &'static str, local: u64, min: u64, max: u64 },
    /// This rank's arguments are unusable (buffer lengths, root out of range).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Another rank rejected its arguments, so every rank abandoned the call.
    #[error("rank {rank} rejected its arguments; the call was abandoned")]
    PeerRejected { rank: usize },
    /// The algorithm is not implemented for the operation.
    #[error("algorithm {algorithm} does not implement {op}")]
    Unsupported { op: CollOp, algorithm: Algorithm },
    /// A received message did not match what this rank expected (header fields, length,
    /// undecodable payload).
    #[error("bad message from rank {peer}: {reason}")]
    BadMessage { peer: usize, reason: String },
    /// A rank upstream failed during the call and flagged the data it forwarded.
    #[error("rank {peer} forwarded data from a failed step")]
    PeerFailed { peer: usize },
    /// The codec refused this rank's data or parameters.
    #[error("codec: {0}")]
    Codec(#[from] codec_host::Error),
    /// A setting or the environment variable cannot be used.
    #[error("configuration: {0}")]
    Config(String),
}

/// Result with [`CollError`].
pub type Result<T, E = CollError> = core::result::Result<T, E>;
