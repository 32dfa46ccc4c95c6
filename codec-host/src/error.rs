//! The one error type of the codec API.

use crate::ElemType;

/// Why a codec call failed. Nothing is partially written on error except the caller's
/// output slice, whose contents are then unspecified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The shape has too many or too few dimensions, or does not match the data.
    #[error("bad dimensions: {0}")]
    BadDims(String),
    /// A dimension is zero where the codec needs at least one value.
    #[error("empty array: every dimension must be at least 1")]
    ZeroSize,
    /// The caller's output buffer cannot hold the result.
    #[error("buffer too small: need {needed}, got {got}")]
    BufferTooSmall { needed: usize, got: usize },
    /// The stream ends before the data it declares.
    #[error("truncated stream: need at least {needed} bytes, got {got}")]
    Truncated { needed: usize, got: usize },
    /// The stream contradicts itself or its format.
    #[error("corrupt stream: {0}")]
    Corrupt(String),
    /// The stream is well formed but uses a feature this library does not decode.
    #[error("unsupported header: {0}")]
    UnsupportedHeader(String),
    /// A codec parameter is outside the range the codec defines.
    #[error("parameter out of range: {0}")]
    ParamOutOfRange(String),
    /// The stream holds another element type than the caller asked for.
    #[error("type mismatch: stream holds {stream}, caller asked for {requested}")]
    TypeMismatch { stream: ElemType, requested: ElemType },
    /// The codec cannot represent NaN or infinity (ZFP); the index of the first one.
    #[error("non-finite value at index {index}: this codec encodes finite values only")]
    NonFinite { index: usize },
    /// ZFP only: a finite value so close to the largest one that zfp may decode it (or
    /// its block) as an infinity; the index of the first one. Values below
    /// [`zfp::overflow_limit`](crate::zfp::overflow_limit) never overflow. Callers that
    /// must move such data send it uncompressed.
    #[error("value {value:e} at index {index} is at or above {limit:e}: zfp may decode it as infinity")]
    NearOverflow { index: usize, value: f64, limit: f64 },
    /// A buffer of this many bytes, sized by a stream the caller asked to decode into a
    /// new vector, could not be allocated (a valid stream can declare far more values
    /// than memory holds: a 1 MiB SZx stream of zero blocks declares 32 GiB).
    #[error("cannot allocate {bytes} bytes for the decoded values")]
    OutOfMemory { bytes: usize },
    /// The executor could not be set up (e.g. a thread pool failed to start).
    #[error("executor: {0}")]
    Executor(String),
    /// No CUDA device answered: no GPU, no driver, or a build without the `cuda` feature.
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    /// A CUDA driver call, module load or kernel launch failed.
    #[error("CUDA: {0}")]
    Gpu(String),
}

/// Result with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
