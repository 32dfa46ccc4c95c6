//! The codec selector and the stream-level entry points.

use core::fmt;
use core::str::FromStr;

use crate::{zfp, CpuExecutor, ElemType, Element, Error, Result, Shape};

/// A lossy codec and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Codec {
    /// ZFP fixed rate: every block of 4^d values takes `rate * 4^d` bits (rounded as zfp
    /// rounds). Random access; the error depends on the data.
    ZfpFixedRate { rate: f64 },
    /// ZFP fixed accuracy: the absolute error stays at or below `tolerance` (zfp rounds
    /// the tolerance down to a power of two).
    ZfpFixedAccuracy { tolerance: f64 },
}

/// The textual forms [`Codec`] parses and prints, one per codec, for messages.
pub const CODEC_FORMS: &[&str] = &["zfp-rate=R", "zfp-tol=T"];

/// Prints the form [`Codec::from_str`](core::str::FromStr) parses: `zfp-rate=R`, `zfp-tol=T`.
impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Codec::ZfpFixedRate { rate } => write!(f, "zfp-rate={rate}"),
            Codec::ZfpFixedAccuracy { tolerance } => write!(f, "zfp-tol={tolerance}"),
        }
    }
}

impl FromStr for Codec {
    type Err = Error;

    /// Parses `NAME=VALUE` (see [`CODEC_FORMS`]). Only the syntax is checked here; the
    /// codec checks the value's range when it is used.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| Error::ParamOutOfRange(format!("codec {s:?}: {why} (expected one of {})", CODEC_FORMS.join(", ")));
        let (name, value) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let number = || match value.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(bad("the value is not a finite number")),
        };
        match name.trim() {
            "zfp-rate" => Ok(Codec::ZfpFixedRate { rate: number()? }),
            "zfp-tol" => Ok(Codec::ZfpFixedAccuracy { tolerance: number()? }),
            _ => Err(bad("unknown codec")),
        }
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
        }
    }
}

/// Reads the header of `stream` without decoding it.
pub fn inspect(stream: &[u8]) -> Result<StreamInfo> {
    zfp::inspect(stream)
}

/// Decodes `stream` into `out` on the shared executor; `out` must hold at least as many
/// values as the stream declares. Returns what the header said.
pub fn decompress_into<T: Element>(stream: &[u8], out: &mut [T]) -> Result<StreamInfo> {
    decompress_into_with(stream, out, CpuExecutor::global())
}

/// Decodes `stream` into `out` on `exec`.
pub fn decompress_into_with<T: Element>(stream: &[u8], out: &mut [T], exec: &CpuExecutor) -> Result<StreamInfo> {
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
        ] {
            assert_eq!(c.to_string().parse::<Codec>(), Ok(c));
        }
        assert_eq!(Codec::ZfpFixedRate { rate: 16.0 }.to_string(), "zfp-rate=16");
        assert_eq!("zfp-tol=1e-3".parse::<Codec>(), Ok(Codec::ZfpFixedAccuracy { tolerance: 1e-3 }));
        for bad in ["zfp-rate", "zfp-rate=", "zfp-rate=abc", "zfp-rate=inf", "zfp=8", "=1", ""] {
            assert!(matches!(bad.parse::<Codec>(), Err(Error::ParamOutOfRange(_))), "{bad:?}");
        }
    }
}
