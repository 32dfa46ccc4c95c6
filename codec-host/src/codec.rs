//! The codec selector and the stream-level entry points.

use crate::szx::{self, ErrorBound, SzxOptions};
use crate::{zfp, CpuExecutor, ElemType, Element, Result, Shape};

/// A lossy codec and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Codec {
    /// ZFP fixed rate: every block of 4^d values takes `rate * 4^d` bits (rounded as zfp
    /// rounds). Random access; the error depends on the data.
    ZfpFixedRate { rate: f64 },
    /// ZFP fixed accuracy: the absolute error stays at or below `tolerance` (zfp rounds
    /// the tolerance down to a power of two).
    ZfpFixedAccuracy { tolerance: f64 },
    /// SZx with an absolute bound: every finite value within `abs_error`; NaN and
    /// infinities exact; `0` is lossless. Blocks of 128 values, one stream.
    Szx { abs_error: f64 },
    /// SZx with a bound relative to the value range: `abs_error = rel_error * (max - min)`.
    SzxRelative { rel_error: f64 },
    /// Pipelined SZx: chunks of `chunk_values` values (a multiple of 128), each decodable
    /// on its own, behind a table of their lengths (see [`szx::pipelined`]).
    SzxPipelined { bound: ErrorBound, chunk_values: usize },
}

/// What a stream holds, read from its header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamInfo {
    pub codec: Codec,
    pub elem: ElemType,
    pub shape: Shape,
    /// Bytes of the stream the decoder consumes (header included).
    pub stream_bytes: usize,
}

impl StreamInfo {
    /// Uncompressed size over stream size.
    pub fn ratio(&self) -> f64 {
        (self.shape.len() * self.elem.size()) as f64 / self.stream_bytes.max(1) as f64
    }
}

impl Codec {
    /// Compresses `data` of the given shape on the shared executor.
    pub fn compress<T: Element>(&self, data: &[T], shape: Shape) -> Result<Vec<u8>> {
        self.compress_with(data, shape, CpuExecutor::global())
    }

    /// Compresses `data` of the given shape on `exec`.
    pub fn compress_with<T: Element>(&self, data: &[T], shape: Shape, exec: &CpuExecutor) -> Result<Vec<u8>> {
        match *self {
            Codec::ZfpFixedRate { .. } | Codec::ZfpFixedAccuracy { .. } => zfp::compress(self, data, shape, exec),
            Codec::Szx { abs_error } => szx::compress_with_options(data, shape, ErrorBound::Abs(abs_error), &SzxOptions::default(), exec),
            Codec::SzxRelative { rel_error } => {
                szx::compress_with_options(data, shape, ErrorBound::Rel(rel_error), &SzxOptions::default(), exec)
            }
            Codec::SzxPipelined { bound, chunk_values } => {
                szx::pipelined::compress(data, shape, bound, &SzxOptions { chunk_values, ..SzxOptions::default() }, exec)
            }
        }
    }
}

/// Reads the header of `stream` without decoding it.
pub fn inspect(stream: &[u8]) -> Result<StreamInfo> {
    if szx::is_szx(stream) {
        return szx::inspect(stream);
    }
    zfp::inspect(stream)
}

/// Decodes `stream` into `out` on the shared executor; `out` must hold at least as many
/// values as the stream declares. Returns what the header said.
pub fn decompress_into<T: Element>(stream: &[u8], out: &mut [T]) -> Result<StreamInfo> {
    decompress_into_with(stream, out, CpuExecutor::global())
}

/// Decodes `stream` into `out` on `exec`.
pub fn decompress_into_with<T: Element>(stream: &[u8], out: &mut [T], exec: &CpuExecutor) -> Result<StreamInfo> {
    if szx::is_szx(stream) {
        let info = szx::inspect(stream)?;
        szx::decompress_into(stream, out, exec)?;
        return Ok(info);
    }
    zfp::decompress_into(stream, out, exec)
}
