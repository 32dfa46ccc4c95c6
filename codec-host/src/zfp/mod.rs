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

use crate::{Codec, CpuExecutor, ElemType, Element, Error, Result, Shape, StreamInfo};

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

/// Compresses `data` (shape `shape`, x fastest) into a zfp stream with full header.
pub(crate) fn compress<T: Element>(codec: &Codec, data: &[T], shape: Shape, exec: &CpuExecutor) -> Result<Vec<u8>> {
    check_shape(&shape, data.len())?;
    let header = Header { elem: T::TYPE, shape, params: params_for(codec, T::TYPE, shape.ndims())? };
    match shape.ndims() {
        1 => encode::compress::<T, D1>(data, &header, exec),
        2 => encode::compress::<T, D2>(data, &header, exec),
        _ => encode::compress::<T, D3>(data, &header, exec),
    }
}

/// The header of `stream`, its length in bits and the codec it describes.
fn parse(stream: &[u8]) -> Result<(Header, usize, Codec)> {
    let (header, bits) = Header::parse(stream)?;
    let codec = mode::codec_of(&header.params, header.shape.ndims())?;
    let ebits = match header.elem {
        ElemType::F32 => 8,
        ElemType::F64 => 11,
    };
    if matches!(codec, Codec::ZfpFixedRate { .. }) && header.params.maxbits <= ebits {
        // zfp itself mis-sizes such streams (its budget underflows); no writer that
        // passes the element type produces them.
        return Err(Error::UnsupportedHeader(format!(
            "zfp fixed rate of {} bits per block, below the {} an {} exponent needs",
            header.params.maxbits,
            ebits + 1,
            header.elem
        )));
    }
    Ok((header, bits, codec))
}

/// Reads what `stream` holds from its header. For fixed-rate streams the length is
/// checked and `stream_bytes` is exact; for fixed-accuracy streams, whose length is only
/// known after decoding, `stream_bytes` is the length of `stream`.
pub(crate) fn inspect(stream: &[u8]) -> Result<StreamInfo> {
    let (header, bits, codec) = parse(stream)?;
    let stream_bytes = match codec {
        Codec::ZfpFixedRate { .. } => {
            let layout = decode::fixed_rate_layout(&header, bits, stream.len())?;
            decode::stream_bytes(layout.total_bits(), stream.len())
        }
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
