//! Errors of the loaders and the name registry.

use std::path::PathBuf;

/// Why a data set could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No generator has this name.
    #[error("unknown data set {name:?} (known: {known}, or raw:PATH:DIMS[:f32|f64])")]
    UnknownName { name: String, known: String },
    /// A `raw:PATH:DIMS[:TYPE]` spec that does not parse.
    #[error("bad data set spec {spec:?}: {why}")]
    BadSpec { spec: String, why: String },
    /// The file's size differs from what the dimensions and element type require.
    #[error("{path}: dims {dims:?} of {elem} need {expected} bytes, the file has {actual}", path = .path.display())]
    SizeMismatch { path: PathBuf, dims: Vec<usize>, elem: &'static str, expected: u64, actual: u64 },
    /// Dimensions with a zero extent, or whose product overflows.
    #[error("bad dimensions {dims:?}: {why}")]
    BadDims { dims: Vec<usize>, why: &'static str },
    /// The file could not be read or written.
    #[error("{path}: {source}", path = .path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// Result with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
