//! The codec selector and the stream-level entry points.

use core::fmt;
use core::str::FromStr;

use crate::szx::{self, ErrorBound, SzxOptions};
use crate::{zfp, CpuExecutor, ElemType, Element, Error, Result, Shape};

/// A lossy codec and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Codec {
    /// ZFP fixed rate: every block of 4^d values takes `rate * 4^d` bits (rounded as zfp
    /// rounds). Random access; no error bound: the error depends on the data.
    ///
    /// Both ZFP modes code finite values only, and only below
    /// [`zfp::overflow_limit`] (2^126 for f32): zfp itself may decode larger ones as
    /// infinities, so compressing them fails with [`Error::NearOverflow`] (NaN and
    /// infinities with [`Error::NonFinite`]).
    ZfpFixedRate { rate: f64 },
    /// ZFP fixed accuracy: zfp's tolerance (rounded down to a power of two). Not a strict
    /// bound: a block is coded relative to its largest value, so values much smaller
    /// than their block's largest can lose more (see `docs/guarantees.md`).
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

/// The textual forms [`Codec`] parses and prints, one per codec, for messages.
pub const CODEC_FORMS: &[&str] =
    &["zfp-rate=R", "zfp-tol=T", "szx=E", "szx-rel=R", "szx-pipelined=E,CHUNK", "szx-rel-pipelined=R,CHUNK"];

/// Prints the form [`Codec::from_str`](core::str::FromStr) parses (see [`CODEC_FORMS`]).
impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Codec::ZfpFixedRate { rate } => write!(f, "zfp-rate={rate}"),
            Codec::ZfpFixedAccuracy { tolerance } => write!(f, "zfp-tol={tolerance}"),
            Codec::Szx { abs_error } => write!(f, "szx={abs_error}"),
            Codec::SzxRelative { rel_error } => write!(f, "szx-rel={rel_error}"),
            Codec::SzxPipelined { bound: ErrorBound::Abs(e), chunk_values } => write!(f, "szx-pipelined={e},{chunk_values}"),
            Codec::SzxPipelined { bound: ErrorBound::Rel(r), chunk_values } => write!(f, "szx-rel-pipelined={r},{chunk_values}"),
        }
    }
}

impl FromStr for Codec {
    type Err = Error;

    /// Parses `NAME=VALUE[,CHUNK]` (see [`CODEC_FORMS`]). Only the syntax is checked
    /// here; the codec checks the values' ranges when it is used.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| Error::ParamOutOfRange(format!("codec {s:?}: {why} (expected one of {})", CODEC_FORMS.join(", ")));
        let (name, args) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let number = |v: &str| match v.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(bad("the value is not a finite number")),
        };
        // The bound and, for pipelined streams, the values per chunk.
        let with_chunk = || -> Result<(f64, usize)> {
            let (v, chunk) = args.split_once(',').ok_or_else(|| bad("expected VALUE,CHUNK"))?;
            Ok((number(v)?, chunk.trim().parse().map_err(|_| bad("the chunk is not a count"))?))
        };
        Ok(match name.trim() {
            "zfp-rate" => Codec::ZfpFixedRate { rate: number(args)? },
            "zfp-tol" => Codec::ZfpFixedAccuracy { tolerance: number(args)? },
            "szx" => Codec::Szx { abs_error: number(args)? },
            "szx-rel" => Codec::SzxRelative { rel_error: number(args)? },
            "szx-pipelined" => {
                let (e, chunk_values) = with_chunk()?;
                Codec::SzxPipelined { bound: ErrorBound::Abs(e), chunk_values }
            }
            "szx-rel-pipelined" => {
                let (r, chunk_values) = with_chunk()?;
                Codec::SzxPipelined { bound: ErrorBound::Rel(r), chunk_values }
            }
            _ => return Err(bad("unknown codec")),
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codecs_print_and_parse_the_same_strings() {
        for c in [
            Codec::ZfpFixedRate { rate: 8.0 },
            Codec::ZfpFixedRate { rate: 2.5 },
            Codec::ZfpFixedAccuracy { tolerance: 1e-3 },
            Codec::ZfpFixedAccuracy { tolerance: 1e-7 },
            Codec::Szx { abs_error: 1e-4 },
            Codec::SzxRelative { rel_error: 0.01 },
            Codec::SzxPipelined { bound: ErrorBound::Abs(0.5), chunk_values: 4096 },
            Codec::SzxPipelined { bound: ErrorBound::Rel(1e-3), chunk_values: 128 },
        ] {
            assert_eq!(c.to_string().parse::<Codec>(), Ok(c));
        }
        assert_eq!(Codec::ZfpFixedRate { rate: 16.0 }.to_string(), "zfp-rate=16");
        assert_eq!("zfp-tol=1e-3".parse::<Codec>(), Ok(Codec::ZfpFixedAccuracy { tolerance: 1e-3 }));
        for bad in ["zfp-rate", "zfp-rate=", "zfp-rate=abc", "zfp-rate=inf", "zfp=8", "=1", "", "szx-pipelined=1", "szx-pipelined=1,x"] {
            assert!(matches!(bad.parse::<Codec>(), Err(Error::ParamOutOfRange(_))), "{bad:?}");
        }
    }
}
