//! Checks shared by the fuzz targets: every error must be one a decoder gives for bad
//! bytes, and outputs are sized from a header only when the header is small.

use std::sync::OnceLock;

use codec_host::{Backend, CpuExecutor, Element, Error};

/// Most values a target decodes; a stream declaring more gets a small buffer and must
/// fail with `BufferTooSmall` (decoding it would only measure memory speed).
pub const MAX_VALUES: usize = 1 << 20;

/// `r`'s value, or `None` for an error a decoder may give for bad bytes; any other
/// error is a finding.
pub fn typed<T>(what: &str, r: Result<T, Error>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(
            Error::Truncated { .. }
            | Error::Corrupt(_)
            | Error::UnsupportedHeader(_)
            | Error::TypeMismatch { .. }
            | Error::BufferTooSmall { .. }
            | Error::BadDims(_),
        ) => None,
        Err(e) => panic!("{what}: not a decode error: {e:?}"),
    }
}

/// A CPU backend with one thread, and one with four (zfp's parallel variable-rate
/// decode starts at three threads for 2D/3D and four for 1D).
pub fn backends() -> [&'static Backend; 2] {
    static ONE: OnceLock<Backend> = OnceLock::new();
    static FOUR: OnceLock<Backend> = OnceLock::new();
    let cpu = |threads| Backend::with_executor(CpuExecutor::new(threads).unwrap());
    [ONE.get_or_init(|| cpu(1)), FOUR.get_or_init(|| cpu(4))]
}

/// The one-thread executor, for the chunk-by-chunk SZx API.
pub fn exec() -> &'static CpuExecutor {
    backends()[0].executor().expect("a CPU backend")
}

/// A buffer for the `n` values a header declares, or a small one if that is too many.
pub fn output<T: Element>(n: usize) -> Vec<T> {
    vec![T::default(); if n <= MAX_VALUES { n } else { 16 }]
}

/// The bit patterns of `values`, for exact comparisons (NaN included).
pub fn bits<T: Element>(values: &[T]) -> Vec<u64> {
    values.iter().map(|v| v.to_f64().to_bits()).collect()
}
