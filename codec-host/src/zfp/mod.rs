//! ZFP streams, byte-compatible with zfp 1.0.
//!
//! [`compress`] writes what zfp 1.0 with its default 64-bit stream words writes
//! (`zfp -h`, `zfpy.compress_numpy`): the full header, the blocks, zero padding to a
//! whole word. The decoder also reads streams from builds with 8-bit stream words
//! (Debian's), which are the same bytes without the final padding.
//!
//! Modes: fixed rate (parameters exactly as `zfp -r` computes them, including the rise
//! to `1 + EBITS` bits per block for tiny rates) and fixed accuracy (`zfp -a`). Headers
//! of other modes (fixed precision, reversible, expert) are refused with
//! [`Error::UnsupportedHeader`](crate::Error::UnsupportedHeader).

mod assemble;
mod decode;
mod encode;
mod header;
pub(crate) mod layout;
mod mode;
pub(crate) mod words;

use codec_kernels::zfp::{D1, D2, D3};

pub use header::Header;
pub use mode::params_for;

use crate::{Codec, CpuExecutor, ElemType, Element, Error, Result, Shape, StreamInfo, ZfpMode};

/// Checks that `data` fills `shape`.
fn check_shape(shape: &Shape, len: usize) -> Result<()> {
    if shape.is_empty() {
        return Err(Error::ZeroSize);
    }
    match shape.checked_len() {
        Some(n) if n == len => Ok(()),
        Some(n) => Err(Error::BadDims(format!("shape {shape} holds {n} values, the data {len}"))),
        None => Err(Error::BadDims(format!("shape {shape} overflows"))),
    }
}

/// The smallest magnitude whose block zfp may decode with an infinity: 2^126 for f32,
/// 2^1022 for f64.
///
/// zfp codes a block as integers `i = x * 2^(P - emax)` (`P` = 30 for f32, 62 for f64,
/// `emax` the block's largest `frexp` exponent) and decodes `x' = i' * 2^(emax - P)`
/// from integers `|i'| <= 2^(P + 1)`, so `|x'| <= 2^(emax + 1)`. That stays finite for
/// every stream when `emax + 1` is below the type's infinity exponent (128 or 1024),
/// i.e. when every value is below `2^(emax_max - 1)`. At `emax` = 127 (f32) it does not:
/// four values of -1.2e38 at rate 3 decode to -inf, in zfp 1.0 as here (the truncated
/// negabinary coefficient of -2^30 is -2^31).
pub fn overflow_limit(elem: ElemType) -> f64 {
    match elem {
        ElemType::F32 => 2f64.powi(126),
        ElemType::F64 => 2f64.powi(1022),
    }
}

/// Checks that every value of `data` is one zfp codes and decodes as a finite value:
/// finite ([`Error::NonFinite`]) and below [`overflow_limit`]
/// ([`Error::NearOverflow`]); the first offending index is reported.
pub fn check_codable<T: Element>(data: &[T], exec: &CpuExecutor) -> Result<()> {
    let limit = overflow_limit(T::TYPE);
    let firsts = exec.map_tiles(data.len(), 1 << 16, |r| {
        let start = r.start;
        data[r].iter().position(|v| !v.finite() || v.to_f64().abs() >= limit).map(|i| start + i)
    });
    match firsts.into_iter().flatten().next() {
        None => Ok(()),
        Some(index) if data[index].finite() => Err(Error::NearOverflow { index, value: data[index].to_f64(), limit }),
        Some(index) => Err(Error::NonFinite { index }),
    }
}

/// Compresses `data` (shape `shape`, x fastest) into a zfp stream with full header.
pub(crate) fn compress<T: Element>(mode: ZfpMode, data: &[T], shape: Shape, exec: &CpuExecutor) -> Result<Vec<u8>> {
    check_shape(&shape, data.len())?;
    check_codable(data, exec)?;
    let header = Header { elem: T::TYPE, shape, params: params_for(mode, T::TYPE, shape.ndims())? };
    match shape.ndims() {
        1 => encode::compress::<T, D1>(data, &header, exec),
        2 => encode::compress::<T, D2>(data, &header, exec),
        _ => encode::compress::<T, D3>(data, &header, exec),
    }
}

/// The header of `stream`, its length in bits and the codec it describes; fails if the
/// stream is too short for the blocks the header declares.
fn parse(stream: &[u8]) -> Result<(Header, usize, Codec)> {
    let (header, bits) = Header::parse(stream)?;
    let codec = mode::codec_of(&header.params, header.shape.ndims())?;
    let ebits = match header.elem {
        ElemType::F32 => 8,
        ElemType::F64 => 11,
    };
    if matches!(codec, Codec::Zfp { mode: ZfpMode::FixedRate { .. } }) && header.params.maxbits <= ebits {
        // zfp itself mis-sizes such streams (its budget underflows); no writer that
        // passes the element type produces them.
        return Err(Error::UnsupportedHeader(format!(
            "zfp fixed rate of {} bits per block, below the {} an {} exponent needs",
            header.params.maxbits,
            ebits + 1,
            header.elem
        )));
    }
    decode::check_length(&header, bits, stream.len())?;
    Ok((header, bits, codec))
}

/// Reads what `stream` holds from its header, after checking that the stream is long
/// enough for the blocks the header declares (so the shape it reports is one the stream
/// can hold). For fixed-rate streams `stream_bytes` is exact; for fixed-accuracy
/// streams, whose length is only known after decoding, it is the length of `stream`.
pub(crate) fn inspect(stream: &[u8]) -> Result<StreamInfo> {
    let (header, bits, codec) = parse(stream)?;
    let stream_bytes = match codec {
        Codec::Zfp { mode: ZfpMode::FixedRate { .. } } => decode::stream_bytes(decode::fixed_rate_layout(&header, bits).total_bits(), stream.len()),
        _ => stream.len(),
    };
    Ok(StreamInfo { codec, elem: header.elem, shape: header.shape, stream_bytes })
}

/// Decodes `stream` into the first values of `out`.
pub(crate) fn decompress_into<T: Element>(stream: &[u8], out: &mut [T], exec: &CpuExecutor) -> Result<StreamInfo> {
    let (header, bits, codec) = parse(stream)?;
    if header.elem != T::TYPE {
        return Err(Error::TypeMismatch { stream: header.elem, requested: T::TYPE });
    }
    let n = header.shape.checked_len().ok_or_else(|| Error::BadDims(format!("shape {} overflows", header.shape)))?;
    if out.len() < n {
        return Err(Error::BufferTooSmall { needed: n, got: out.len() });
    }
    let stream_bytes = match header.shape.ndims() {
        1 => decode::decompress::<T, D1>(stream, &header, bits, out, exec)?,
        2 => decode::decompress::<T, D2>(stream, &header, bits, out, exec)?,
        _ => decode::decompress::<T, D3>(stream, &header, bits, out, exec)?,
    };
    Ok(StreamInfo { codec, elem: header.elem, shape: header.shape, stream_bytes })
}
