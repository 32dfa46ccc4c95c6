//! The header and chunk table that start every SZx stream (`docs/formats/szx.md`).

use core::ops::Range;

use codec_kernels::szx::MAX_BLOCK_SIZE;

use super::ErrorBound;
use crate::{Codec, ElemType, Error, Result, Shape, SzxLayout};

/// The first four bytes of every SZx stream (zfp streams start with `zfp`).
pub const MAGIC: [u8; 4] = *b"cSZx";
/// The format version this library writes and reads.
pub const VERSION: u8 = 2;
/// Bytes of the fixed header; the chunk table follows it.
pub const HEADER_LEN: usize = 64;
/// Bytes of one chunk-table entry (a `u32` chunk length).
pub const CHUNK_ENTRY_LEN: usize = 4;
/// Most values per chunk: a chunk of raw `f64` blocks then stays well below 4 GiB, so
/// chunk lengths fit their `u32` table entries.
pub const MAX_CHUNK_VALUES: usize = 1 << 28;

const FLAG_PIPELINED: u8 = 1;
const FLAG_RELATIVE: u8 = 2;
const CHECKSUM_AT: usize = 60;

/// Everything the fixed header of an SZx stream says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SzxHeader {
    /// Element type of the values.
    pub elem: ElemType,
    /// Shape given to the encoder (the values are coded as one sequence, x fastest).
    pub shape: Shape,
    /// The absolute bound every finite value was kept within.
    pub abs_error: f64,
    /// For a relative bound, the factor `R` with `abs_error = R * (max - min)`.
    pub rel_error: Option<f64>,
    /// The stream was written chunk by chunk for pipelining.
    pub pipelined: bool,
    /// Values per block.
    pub block_size: usize,
    /// Values per chunk (the last chunk may hold fewer).
    pub chunk_values: usize,
    /// Number of chunks, `ceil(len / chunk_values)`.
    pub chunk_count: usize,
}

impl SzxHeader {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.shape.len()
    }

    /// True if the stream holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the header and the chunk table, where chunk 0 starts.
    pub fn prefix_len(&self) -> usize {
        HEADER_LEN + CHUNK_ENTRY_LEN * self.chunk_count
    }

    /// The values chunk `index` holds.
    pub fn chunk_values(&self, index: usize) -> Range<usize> {
        let start = (index * self.chunk_values).min(self.len());
        start..(start + self.chunk_values).min(self.len())
    }

    /// The bound as the codec API names it.
    pub fn bound(&self) -> ErrorBound {
        match self.rel_error {
            Some(r) => ErrorBound::Rel(r),
            None => ErrorBound::Abs(self.abs_error),
        }
    }

    /// The codec that writes streams like this one (with the default block size).
    pub fn codec(&self) -> Codec {
        let layout = if self.pipelined { SzxLayout::Pipelined { chunk_values: self.chunk_values } } else { SzxLayout::Plain };
        Codec::Szx { bound: self.bound(), layout }
    }

    /// Writes the fixed header into `out[..HEADER_LEN]`.
    pub(crate) fn write(&self, out: &mut [u8]) {
        let h = &mut out[..HEADER_LEN];
        h.fill(0);
        h[..4].copy_from_slice(&MAGIC);
        h[4] = VERSION;
        h[5] = match self.elem {
            ElemType::F32 => 1,
            ElemType::F64 => 2,
        };
        h[6] = if self.pipelined { FLAG_PIPELINED } else { 0 } | if self.rel_error.is_some() { FLAG_RELATIVE } else { 0 };
        h[7] = self.shape.ndims() as u8;
        let mut dims = [1u64; 3];
        for (d, &v) in dims.iter_mut().zip(self.shape.dims()) {
            *d = v as u64;
        }
        for (i, d) in dims.iter().enumerate() {
            h[8 + 8 * i..16 + 8 * i].copy_from_slice(&d.to_le_bytes());
        }
        h[32..40].copy_from_slice(&self.abs_error.to_le_bytes());
        h[40..48].copy_from_slice(&self.rel_error.unwrap_or(0.0).to_le_bytes());
        h[48..52].copy_from_slice(&(self.block_size as u32).to_le_bytes());
        h[52..56].copy_from_slice(&(self.chunk_values as u32).to_le_bytes());
        h[56..60].copy_from_slice(&(self.chunk_count as u32).to_le_bytes());
        let sum = fnv1a(&h[..CHECKSUM_AT]);
        h[CHECKSUM_AT..].copy_from_slice(&sum.to_le_bytes());
    }

    /// Reads and checks the fixed header at the start of `stream`.
    pub fn read(stream: &[u8]) -> Result<Self> {
        if stream.len() < MAGIC.len() || stream[..4] != MAGIC {
            return Err(Error::Corrupt("not an SZx stream (bad magic)".into()));
        }
        let h = stream.get(..HEADER_LEN).ok_or(Error::Truncated { needed: HEADER_LEN, got: stream.len() })?;
        if h[4] != VERSION {
            return Err(Error::UnsupportedHeader(format!("SZx format version {} (this library reads {VERSION})", h[4])));
        }
        if u32::from_le_bytes(h[CHECKSUM_AT..].try_into().unwrap_or_default()) != fnv1a(&h[..CHECKSUM_AT]) {
            return Err(Error::Corrupt("SZx header checksum mismatch".into()));
        }
        let corrupt = |what: String| Error::Corrupt(format!("SZx header: {what}"));
        let elem = match h[5] {
            1 => ElemType::F32,
            2 => ElemType::F64,
            t => return Err(corrupt(format!("element type code {t}"))),
        };
        let flags = h[6];
        if flags & !(FLAG_PIPELINED | FLAG_RELATIVE) != 0 {
            return Err(corrupt(format!("unknown flags {flags:#x}")));
        }
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or_default());
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap_or_default()) as usize;
        let ndims = h[7] as usize;
        if !(1..=3).contains(&ndims) {
            return Err(corrupt(format!("{ndims} dimensions")));
        }
        let mut dims = [0usize; 3];
        for (i, d) in dims.iter_mut().enumerate() {
            let v = u64_at(8 + 8 * i);
            if i >= ndims && v != 1 {
                return Err(corrupt(format!("unused extent {i} is {v}, not 1")));
            }
            *d = usize::try_from(v).map_err(|_| corrupt(format!("extent {v} too large")))?;
        }
        let shape = Shape::from_dims(&dims[..ndims])?;
        let n = shape.checked_len().ok_or_else(|| corrupt(format!("{shape} values overflow")))?;
        let abs_error = f64::from_le_bytes(h[32..40].try_into().unwrap_or_default());
        let rel = f64::from_le_bytes(h[40..48].try_into().unwrap_or_default());
        if !(abs_error.is_finite() && abs_error >= 0.0 && rel.is_finite() && rel >= 0.0) {
            return Err(corrupt(format!("error bounds {abs_error} / {rel}")));
        }
        if flags & FLAG_RELATIVE == 0 && rel != 0.0 {
            return Err(corrupt("relative bound set on an absolute stream".into()));
        }
        let (block_size, chunk_values, chunk_count) = (u32_at(48), u32_at(52), u32_at(56));
        check_layout(block_size, chunk_values).map_err(|e| corrupt(e.to_string()))?;
        if chunk_count != n.div_ceil(chunk_values) {
            return Err(corrupt(format!("{chunk_count} chunks for {n} values of {chunk_values} per chunk")));
        }
        Ok(SzxHeader {
            elem,
            shape,
            abs_error,
            rel_error: (flags & FLAG_RELATIVE != 0).then_some(rel),
            pipelined: flags & FLAG_PIPELINED != 0,
            block_size,
            chunk_values,
            chunk_count,
        })
    }

    /// The chunk lengths from the table in `stream`, checked to fit the stream; returns
    /// them with the total length of the stream they describe.
    pub fn chunk_lens<'s>(&self, stream: &'s [u8]) -> Result<(impl Iterator<Item = usize> + Clone + 's, usize)> {
        let table = stream.get(HEADER_LEN..self.prefix_len()).ok_or(Error::Truncated { needed: self.prefix_len(), got: stream.len() })?;
        let lens = table.chunks_exact(CHUNK_ENTRY_LEN).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        let mut total = self.prefix_len();
        for (i, len) in lens.clone().enumerate() {
            // A chunk holds at least one state byte per block.
            let blocks = self.chunk_values(i).len().div_ceil(self.block_size);
            if len < blocks {
                return Err(Error::Corrupt(format!("SZx chunk {i}: {len} bytes cannot hold {blocks} blocks")));
            }
            total += len;
        }
        if total > stream.len() {
            return Err(Error::Truncated { needed: total, got: stream.len() });
        }
        Ok((lens, total))
    }

    /// Checks the chunk table of `stream` (see [`SzxHeader::chunk_lens`]) and returns the
    /// length of the stream it describes.
    pub fn stream_len(&self, stream: &[u8]) -> Result<usize> {
        self.chunk_lens(stream).map(|(_, total)| total)
    }
}

/// Checks a block size and chunk size pair.
pub(crate) fn check_layout(block_size: usize, chunk_values: usize) -> Result<()> {
    if !(1..=MAX_BLOCK_SIZE).contains(&block_size) {
        return Err(Error::ParamOutOfRange(format!("block size {block_size} (1 to {MAX_BLOCK_SIZE})")));
    }
    if chunk_values == 0 || chunk_values > MAX_CHUNK_VALUES || !chunk_values.is_multiple_of(block_size) {
        return Err(Error::ParamOutOfRange(format!(
            "{chunk_values} values per chunk (a multiple of the block size {block_size}, at most {MAX_CHUNK_VALUES})"
        )));
    }
    Ok(())
}

/// 32-bit FNV-1a, guarding the header against corruption.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}
