//! The codec selector and the stream-level entry points.

use core::fmt;
use core::str::FromStr;

use crate::elementwise::ReduceOp;
use crate::szx::{self, ErrorBound, SzxOptions};
use crate::{zfp, Backend, BackendElem, CpuExecutor, ElemType, Element, Error, Result, Shape};

/// A lossy codec and its parameters: one variant per codec family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Codec {
    /// ZFP (zfp 1.0's stream format) in a [`ZfpMode`].
    ///
    /// Both modes code finite values only, and only below [`zfp::overflow_limit`]
    /// (2^126 for f32): zfp itself may decode larger ones as infinities, so compressing
    /// them fails with [`Error::NearOverflow`] (NaN and infinities with
    /// [`Error::NonFinite`]).
    Zfp { mode: ZfpMode },
    /// SZx: every finite value within `bound` (an absolute bound of `0` is lossless);
    /// NaN and infinities exact. Blocks of 128 values, laid out as `layout` says.
    Szx { bound: ErrorBound, layout: SzxLayout },
}

/// How ZFP spends its bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ZfpMode {
    /// Every block of 4^d values takes `rate * 4^d` bits (rounded as zfp rounds).
    /// Random access; no error bound: the error depends on the data.
    FixedRate { rate: f64 },
    /// zfp's tolerance (rounded down to a power of two). Not a strict bound: a block is
    /// coded relative to its largest value, so values much smaller than their block's
    /// largest can lose more (see `docs/guarantees.md`).
    FixedAccuracy { tolerance: f64 },
}

/// How an SZx stream is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SzxLayout {
    /// One stream, chunked as the encoder likes.
    Plain,
    /// Chunks of `chunk_values` values (a multiple of 128), each decodable on its own,
    /// behind a table of their lengths (see [`szx::pipelined`]).
    Pipelined { chunk_values: usize },
}

impl SzxLayout {
    /// Values per chunk of a pipelined stream when nobody says otherwise (the CLI's
    /// `--pipelined`).
    pub const DEFAULT_CHUNK_VALUES: usize = 5120;
}

impl Codec {
    /// ZFP fixed rate, `rate` bits per value.
    pub const fn zfp_rate(rate: f64) -> Codec {
        Codec::Zfp { mode: ZfpMode::FixedRate { rate } }
    }

    /// ZFP fixed accuracy with zfp's `tolerance`.
    pub const fn zfp_accuracy(tolerance: f64) -> Codec {
        Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } }
    }

    /// Plain SZx within `bound`.
    pub const fn szx(bound: ErrorBound) -> Codec {
        Codec::Szx { bound, layout: SzxLayout::Plain }
    }
}

/// The textual forms [`Codec`] parses and prints, one per codec, for messages.
pub const CODEC_FORMS: &[&str] =
    &["zfp-rate=R", "zfp-tol=T", "szx=E", "szx-rel=R", "szx-pipelined=E,CHUNK", "szx-rel-pipelined=R,CHUNK"];

/// Prints the form [`Codec::from_str`](core::str::FromStr) parses (see [`CODEC_FORMS`]).
impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Codec::Zfp { mode: ZfpMode::FixedRate { rate } } => write!(f, "zfp-rate={rate}"),
            Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => write!(f, "zfp-tol={tolerance}"),
            Codec::Szx { bound: ErrorBound::Abs(e), layout: SzxLayout::Plain } => write!(f, "szx={e}"),
            Codec::Szx { bound: ErrorBound::Rel(r), layout: SzxLayout::Plain } => write!(f, "szx-rel={r}"),
            Codec::Szx { bound: ErrorBound::Abs(e), layout: SzxLayout::Pipelined { chunk_values } } => write!(f, "szx-pipelined={e},{chunk_values}"),
            Codec::Szx { bound: ErrorBound::Rel(r), layout: SzxLayout::Pipelined { chunk_values } } => {
                write!(f, "szx-rel-pipelined={r},{chunk_values}")
            }
        }
    }
}

impl FromStr for Codec {
    type Err = Error;

    /// Parses `NAME=VALUE[,CHUNK]` (see [`CODEC_FORMS`]). Only the syntax is checked
    /// here; the codec checks the values' ranges when it is used, or
    /// [`Codec::check_params`] before.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| Error::ParamOutOfRange(format!("codec {s:?}: {why} (expected one of {})", CODEC_FORMS.join(", ")));
        let (name, args) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let number = |v: &str| match v.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(bad("the value is not a finite number")),
        };
        // The bound and, for pipelined streams, the values per chunk.
        let pipelined = |bound: fn(f64) -> ErrorBound| -> Result<Codec> {
            let (v, chunk) = args.split_once(',').ok_or_else(|| bad("expected VALUE,CHUNK"))?;
            let chunk_values = chunk.trim().parse().map_err(|_| bad("the chunk is not a count"))?;
            Ok(Codec::Szx { bound: bound(number(v)?), layout: SzxLayout::Pipelined { chunk_values } })
        };
        Ok(match name.trim() {
            "zfp-rate" => Codec::zfp_rate(number(args)?),
            "zfp-tol" => Codec::zfp_accuracy(number(args)?),
            "szx" => Codec::szx(ErrorBound::Abs(number(args)?)),
            "szx-rel" => Codec::szx(ErrorBound::Rel(number(args)?)),
            "szx-pipelined" => pipelined(ErrorBound::Abs)?,
            "szx-rel-pipelined" => pipelined(ErrorBound::Rel)?,
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
    /// Checks the parameters as compressing `elem` arrays of `dims` dimensions would,
    /// before any data: an SZx bound finite and not negative, a ZFP rate or tolerance in
    /// zfp's range ([`Error::ParamOutOfRange`] otherwise). For callers that must refuse a
    /// configuration before they start (the collectives, which turn a relative bound
    /// into an absolute one themselves).
    pub fn check_params(&self, elem: ElemType, dims: usize) -> Result<()> {
        match *self {
            Codec::Zfp { mode } => zfp::params_for(mode, elem, dims).map(drop),
            Codec::Szx { bound, .. } => szx::check_bound(bound),
        }
    }

    /// Compresses `data` of `shape` (x fastest) into a stream with a full header, on
    /// `backend`: the CPU executor with its threads, or the CUDA device (upload, encode,
    /// download). The stream is the same byte for byte on every backend.
    pub fn compress<T: BackendElem>(&self, data: &[T], shape: Shape, backend: &Backend) -> Result<Vec<u8>> {
        backend.compress(self, data, shape)
    }

    /// Queues the compression of the device array `data` (shape `shape`) on `stream` of
    /// `backend`, which must be a CUDA backend ([`Error::NoDevice`] otherwise). Several
    /// can be in flight on several streams at once; the stream is the host path's byte
    /// for byte. Values are not checked for ZFP's overflow limit (see `docs/gpu.md`).
    #[cfg(feature = "cuda")]
    pub fn compress_on<'a, T: BackendElem>(
        &self,
        data: &'a cust::memory::DeviceSlice<T>,
        shape: Shape,
        backend: &Backend,
        stream: &crate::cuda::GpuStream,
    ) -> Result<crate::cuda::PendingCompress<'a, T>> {
        backend.device()?.compress_on(stream, self, data, shape)
    }

    /// The CPU path of [`compress`](Self::compress), on `exec`.
    pub(crate) fn compress_cpu<T: Element>(&self, data: &[T], shape: Shape, exec: &CpuExecutor) -> Result<Vec<u8>> {
        match *self {
            Codec::Zfp { mode } => zfp::compress(mode, data, shape, exec),
            Codec::Szx { bound, layout: SzxLayout::Plain } => szx::compress_with_options(data, shape, bound, &SzxOptions::default(), exec),
            Codec::Szx { bound, layout: SzxLayout::Pipelined { chunk_values } } => {
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

/// Decodes `stream` (any ccoll or zfp stream) into the first values of `out` on
/// `backend`; `out` must hold at least as many values as the stream declares. Returns
/// what the header said.
pub fn decompress_into<T: BackendElem>(stream: &[u8], out: &mut [T], backend: &Backend) -> Result<StreamInfo> {
    decompress_into_with(stream, out, OutputWrites::BySize, backend)
}

/// How [`decompress_into_with`] writes its output. Only SZx on a CPU with AVX has a
/// choice; zfp and the GPU write as they always do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputWrites {
    /// By the output's size, as [`decompress_into`] does: outputs of
    /// [`szx::STREAMING_MIN_BYTES`] and more with streaming stores, smaller ones through
    /// the caches (read soon after, they are still there).
    #[default]
    BySize,
    /// Streaming stores whatever the output's size: for a piece of a larger output that
    /// is not read again soon, as when each piece of a large result is decoded as it
    /// arrives (the pieces of a 64 MiB output decoded 1 MiB at a time took 0.72x the time
    /// of ordinary stores, 2026-11-28, a Xeon with AVX-512, rtm, one thread).
    Streaming,
}

/// [`decompress_into`], writing the output as `writes` says.
pub fn decompress_into_with<T: BackendElem>(stream: &[u8], out: &mut [T], writes: OutputWrites, backend: &Backend) -> Result<StreamInfo> {
    backend.decompress_into(stream, out, writes)
}

/// Queues the decoding of the device stream `input` into the first values of the device
/// array `out` on `stream` of `backend`, a CUDA backend. `input` must be complete in
/// `stream`'s order (a waited-for [`Codec::compress_on`], or
/// [`Backend::upload_stream`] on the same stream).
#[cfg(feature = "cuda")]
pub fn decompress_on<'a, T: BackendElem>(
    input: &'a crate::cuda::DeviceStream,
    out: &'a mut cust::memory::DeviceSlice<T>,
    backend: &Backend,
    stream: &crate::cuda::GpuStream,
) -> Result<crate::cuda::PendingDecompress<'a>> {
    backend.device()?.decompress_on(stream, input, out)
}

/// Reduces the values `v` that `stream` (any ccoll or zfp stream) decodes to into the
/// first values of `acc`, `acc[i] = acc[i] op v[i]`, on `backend`: bit for bit what
/// [`decompress_into`] and [`Backend::reduce`] give. SZx streams on the CPU are reduced
/// as they are decoded, with no buffer for their values (a pass over memory fewer);
/// the others are decoded into a vector of their length first. `acc` must hold at
/// least as many values as the stream declares; on an error its values are
/// unspecified. Returns what the header said.
pub fn decompress_reduce<T: BackendElem>(stream: &[u8], acc: &mut [T], op: ReduceOp, backend: &Backend) -> Result<StreamInfo> {
    backend.decompress_reduce(stream, acc, op)
}

/// Reduces the values of several streams, which declare the same number of values
/// `n`, into the first `n` of `acc` in order, `acc[i] = ((init[i] op v0[i]) op v1[i])
/// ...` (`init`: `acc`'s own values where None), on `backend`: bit for bit copying
/// `init` into `acc`, then [`decompress_reduce`] of each stream in turn. SZx streams of
/// one layout on a one-thread CPU backend are reduced together, tile by tile, so that
/// `acc` is read and written once, not once per stream (with `init`, not copied
/// either). On an error `acc`'s values are unspecified.
pub fn decompress_reduce_all<T: BackendElem>(streams: &[&[u8]], init: Option<&[T]>, acc: &mut [T], op: ReduceOp, backend: &Backend) -> Result<()> {
    backend.decompress_reduce_all(streams, init, acc, op)
}

/// The CPU path of [`decompress_into`], on `exec`.
pub(crate) fn decompress_cpu<T: Element>(stream: &[u8], out: &mut [T], writes: OutputWrites, exec: &CpuExecutor) -> Result<StreamInfo> {
    if szx::is_szx(stream) {
        let info = szx::inspect(stream)?;
        szx::decompress_into(stream, out, writes, exec)?;
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
            Codec::zfp_rate(8.0),
            Codec::zfp_rate(2.5),
            Codec::zfp_accuracy(1e-3),
            Codec::zfp_accuracy(1e-7),
            Codec::szx(ErrorBound::Abs(1e-4)),
            Codec::szx(ErrorBound::Rel(0.01)),
            Codec::Szx { bound: ErrorBound::Abs(0.5), layout: SzxLayout::Pipelined { chunk_values: 4096 } },
            Codec::Szx { bound: ErrorBound::Rel(1e-3), layout: SzxLayout::Pipelined { chunk_values: 128 } },
        ] {
            assert_eq!(c.to_string().parse::<Codec>(), Ok(c));
        }
        assert_eq!(Codec::zfp_rate(16.0).to_string(), "zfp-rate=16");
        assert_eq!("zfp-tol=1e-3".parse::<Codec>(), Ok(Codec::zfp_accuracy(1e-3)));
        assert_eq!("szx-rel=0.5".parse::<Codec>(), Ok(Codec::Szx { bound: ErrorBound::Rel(0.5), layout: SzxLayout::Plain }));
        for bad in ["zfp-rate", "zfp-rate=", "zfp-rate=abc", "zfp-rate=inf", "zfp=8", "=1", "", "szx-pipelined=1", "szx-pipelined=1,x"] {
            assert!(matches!(bad.parse::<Codec>(), Err(Error::ParamOutOfRange(_))), "{bad:?}");
        }
    }

    #[test]
    fn parameters_are_checked_before_any_data() {
        for good in ["szx=0", "szx-rel=1e-3", "szx-rel-pipelined=0,128", "zfp-rate=8", "zfp-tol=1e-3"] {
            assert_eq!(good.parse::<Codec>().unwrap().check_params(ElemType::F32, 1), Ok(()), "{good}");
        }
        // Negative bounds parse (the syntax is right) and are refused here, as
        // compressing refuses them.
        for bad in ["szx=-1e-3", "szx-rel=-1", "szx-pipelined=-1,128", "zfp-rate=0", "zfp-rate=-8", "zfp-rate=1e6", "zfp-tol=0", "zfp-tol=-1"] {
            let codec: Codec = bad.parse().unwrap();
            assert!(matches!(codec.check_params(ElemType::F32, 1), Err(Error::ParamOutOfRange(_))), "{bad}");
            let data = [1.0f32, 2.0, 3.0, 4.0];
            let compressed = codec.compress(&data, Shape::d1(4), &Backend::cpu());
            assert!(matches!(compressed, Err(Error::ParamOutOfRange(_))), "{bad}: {compressed:?}");
        }
    }
}
