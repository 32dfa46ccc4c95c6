//! Pipelined SZx (PIPE-SZx in C-Coll): the input cut into chunks of `chunk_values`
//! values, each compressed independently, behind a table of chunk lengths, so that
//! chunks can be sent as soon as they are compressed and decoded as soon as they arrive.
//!
//! This is the one streaming API of the codecs, and a different capability from
//! [`Codec::compress`](crate::Codec::compress) (which writes the same bytes for
//! [`SzxLayout::Pipelined`](crate::SzxLayout::Pipelined) in one call): an [`Encoder`]
//! hands out each chunk as soon as it is written, into buffers the caller chooses, and a
//! [`Decoder`] decodes whatever prefix of a stream has arrived. It runs on the CPU
//! executor, and takes the full layout ([`SzxOptions`]: block size as well as chunk
//! size).
//!
//! Sender side, into one buffer, with a callback after every chunk:
//!
//! ```
//! use codec_host::szx::{pipelined, ErrorBound, SzxOptions};
//! use codec_host::{CpuExecutor, Shape};
//! let x: Vec<f64> = (0..20_000).map(|i| (i as f64 * 1e-3).cos()).collect();
//! let opts = SzxOptions::default();
//! let mut buf = vec![0u8; pipelined::max_compressed_len::<f64>(x.len(), &opts)];
//! let exec = CpuExecutor::new(1).unwrap();
//! let mut sent = Vec::new();
//! let mut enc = pipelined::Encoder::new(&x, Shape::d1(x.len()), ErrorBound::Abs(1e-6), &opts, &exec).unwrap();
//! let len = enc.compress_into(&mut buf, &exec, |done, bytes| sent.push((done.index, bytes.len()))).unwrap();
//! assert_eq!(sent.len(), 4); // ceil(20000 / 5120) chunks, reported in order
//!
//! // Receiver side: decode whatever prefix of the stream has arrived.
//! let mut back = vec![0f64; x.len()];
//! let mut dec = pipelined::Decoder::new(&buf[..len]).unwrap();
//! let first = dec.decode_available(&buf[..len / 2], &mut back, &exec, |_| {}).unwrap();
//! let rest = dec.decode_available(&buf[..len], &mut back, &exec, |_| {}).unwrap();
//! assert_eq!((first.start, rest.end), (0, 4));
//! assert!(dec.is_done() && x.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 1e-6));
//! ```

use core::ops::Range;

use codec_kernels::szx::{BlockPlan, Tolerance};

use super::header::{SzxHeader, CHUNK_ENTRY_LEN, HEADER_LEN};
use super::stores::Stores;
use super::{bound_len, check_output, empty_plan, encode_stream, encode_to_vec, frame, prepare, ErrorBound, SzxOptions};
use crate::{CpuExecutor, Element, Error, Result, Shape};

/// A chunk that has just been compressed or decompressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkDone {
    /// Chunk number, from 0.
    pub index: usize,
    /// The values it holds.
    pub values: Range<usize>,
    /// Where its bytes lie in the stream (the output buffer when compressing).
    pub bytes: Range<usize>,
}

/// The most bytes a pipelined stream of `n` values of `T` can take, incompressible data
/// included.
pub fn max_compressed_len<T: Element>(n: usize, opts: &SzxOptions) -> usize {
    bound_len(n, T::TYPE.size(), opts.block_size.max(1), opts.chunk_values)
}

/// Compresses `data` into a pipelined stream in a new vector, every chunk at once
/// (parallel over all blocks); the bytes equal those of [`Encoder::compress_into`].
pub(crate) fn compress<T: Element>(data: &[T], shape: Shape, bound: ErrorBound, opts: &SzxOptions, exec: &CpuExecutor) -> Result<Vec<u8>> {
    let (header, tol) = prepare(data, shape, bound, opts, true, exec)?;
    encode_to_vec(data, &header, &tol, exec)
}

/// Compresses one array chunk by chunk, into buffers the caller chooses.
///
/// The stream is [`Encoder::write_prefix`] (header and chunk table) followed by the
/// chunks from [`Encoder::compress_chunk`] in order. The scratch space for one chunk's
/// block plans is allocated once, here.
pub struct Encoder<'a, T: Element> {
    data: &'a [T],
    header: SzxHeader,
    tol: Tolerance<T>,
    plans: Vec<BlockPlan<T>>,
}

impl<'a, T: Element> Encoder<'a, T> {
    /// Prepares to compress `data` of `shape` within `bound` (a relative bound reads the
    /// data's range now, on `exec`).
    pub fn new(data: &'a [T], shape: Shape, bound: ErrorBound, opts: &SzxOptions, exec: &CpuExecutor) -> Result<Self> {
        Self::with_layout(data, shape, bound, opts, true, exec)
    }

    /// As [`Encoder::new`] for a plain stream (chunked as the codec API chunks it) of
    /// blocks of `block_size` values.
    pub fn plain(data: &'a [T], shape: Shape, bound: ErrorBound, block_size: usize, exec: &CpuExecutor) -> Result<Self> {
        Self::with_layout(data, shape, bound, &SzxOptions { block_size, ..SzxOptions::default() }, false, exec)
    }

    fn with_layout(data: &'a [T], shape: Shape, bound: ErrorBound, opts: &SzxOptions, pipelined: bool, exec: &CpuExecutor) -> Result<Self> {
        let (header, tol) = prepare(data, shape, bound, opts, pipelined, exec)?;
        let plans = vec![empty_plan::<T>(); header.chunk_values.min(data.len()).div_ceil(header.block_size)];
        Ok(Encoder { data, header, tol, plans })
    }

    /// The whole stream in a new vector, every chunk at once (parallel over all blocks;
    /// the bytes equal those of [`Encoder::compress_into`]).
    pub fn into_vec(self, exec: &CpuExecutor) -> Result<Vec<u8>> {
        encode_to_vec(self.data, &self.header, &self.tol, exec)
    }

    /// The whole stream into `out` at once, as [`Encoder::into_vec`] writes it (in one
    /// pass on a one-thread executor); returns its length.
    pub fn encode_into(self, out: &mut [u8], exec: &CpuExecutor) -> Result<usize> {
        encode_stream(self.data, &self.header, &self.tol, out, exec)
    }

    /// The header the stream will carry.
    pub fn header(&self) -> &SzxHeader {
        &self.header
    }

    /// Bytes of the header and chunk table.
    pub fn prefix_len(&self) -> usize {
        self.header.prefix_len()
    }

    /// The most bytes chunk `index` can take.
    pub fn max_chunk_len(&self, index: usize) -> usize {
        let n = self.header.chunk_values(index).len();
        n.div_ceil(self.header.block_size) + n * T::TYPE.size()
    }

    /// Writes the header and the chunk table, with the lengths in `chunk_lens` (the
    /// chunks not listed get 0 for now), into `out`; returns the prefix length.
    pub fn write_prefix(&self, out: &mut [u8], chunk_lens: &[usize]) -> Result<usize> {
        let needed = self.prefix_len();
        let got = out.len();
        let out = out.get_mut(..needed).ok_or(Error::BufferTooSmall { needed, got })?;
        self.header.write(out);
        for (i, entry) in out[HEADER_LEN..].chunks_exact_mut(CHUNK_ENTRY_LEN).enumerate() {
            entry.copy_from_slice(&(chunk_lens.get(i).copied().unwrap_or(0) as u32).to_le_bytes());
        }
        Ok(needed)
    }

    /// Compresses chunk `index` into the start of `out`; returns its length.
    pub fn compress_chunk(&mut self, index: usize, out: &mut [u8], exec: &CpuExecutor) -> Result<usize> {
        if index >= self.header.chunk_count {
            return Err(Error::ParamOutOfRange(format!("chunk {index} of {}", self.header.chunk_count)));
        }
        let xs = &self.data[self.header.chunk_values(index)];
        let block = self.header.block_size;
        if exec.threads() == 1 {
            if let Some(len) = frame::write_frame_fused(xs, block, &self.tol, out)? {
                return Ok(len);
            }
        }
        let plans = &mut self.plans[..xs.len().div_ceil(block)];
        frame::plan_blocks(xs, block, &self.tol, plans, exec);
        let needed = frame::frame_len(plans);
        let got = out.len();
        let out = out.get_mut(..needed).ok_or(Error::BufferTooSmall { needed, got })?;
        frame::write_frames(xs, block, self.header.chunk_values, plans, out, exec)?;
        Ok(needed)
    }

    /// Writes the whole stream into `out` chunk by chunk, filling in the chunk table as
    /// it goes and calling `on_chunk` after each chunk; returns the stream's length.
    pub fn compress_into(&mut self, out: &mut [u8], exec: &CpuExecutor, mut on_chunk: impl FnMut(&ChunkDone, &[u8])) -> Result<usize> {
        let mut at = self.write_prefix(out, &[])?;
        for index in 0..self.header.chunk_count {
            let len = self.compress_chunk(index, out.get_mut(at..).unwrap_or_default(), exec)?;
            let entry = HEADER_LEN + CHUNK_ENTRY_LEN * index;
            out[entry..entry + CHUNK_ENTRY_LEN].copy_from_slice(&(len as u32).to_le_bytes());
            let done = ChunkDone { index, values: self.header.chunk_values(index), bytes: at..at + len };
            on_chunk(&done, &out[at..at + len]);
            at += len;
        }
        Ok(at)
    }
}

/// Decodes a pipelined (or plain) stream chunk by chunk, as its bytes arrive.
#[derive(Clone, Debug)]
pub struct Decoder {
    header: SzxHeader,
    /// The next chunk [`Decoder::decode_available`] will decode, and where it starts.
    next: usize,
    next_at: usize,
}

impl Decoder {
    /// Reads the header from the first [`HEADER_LEN`] bytes of a stream.
    pub fn new(prefix: &[u8]) -> Result<Self> {
        let header = SzxHeader::read(prefix)?;
        Ok(Decoder { next: 0, next_at: header.prefix_len(), header })
    }

    /// A decoder for the chunks of a pipelined stream of `shape` values of `T` written
    /// with `opts`, when both sides know the layout and only chunks travel (use
    /// [`Decoder::decode_chunk`]; the header fields that decoding does not need, the
    /// bounds, are left at zero).
    pub fn for_array<T: Element>(shape: Shape, opts: &SzxOptions) -> Result<Self> {
        let header = super::layout_header::<T>(shape, opts, true)?;
        Ok(Decoder { next: 0, next_at: header.prefix_len(), header })
    }

    /// The stream's header.
    pub fn header(&self) -> &SzxHeader {
        &self.header
    }

    /// Number of chunks decoded by [`Decoder::decode_available`] so far.
    pub fn chunks_decoded(&self) -> usize {
        self.next
    }

    /// True once [`Decoder::decode_available`] has decoded every chunk.
    pub fn is_done(&self) -> bool {
        self.next == self.header.chunk_count
    }

    /// Decodes chunk `index`, whose bytes (exactly its table entry's length) are
    /// `chunk`, into its values' place in `out` (which holds the whole array). Returns
    /// the values written.
    pub fn decode_chunk<T: Element>(&self, index: usize, chunk: &[u8], out: &mut [T], exec: &CpuExecutor) -> Result<Range<usize>> {
        if index >= self.header.chunk_count {
            return Err(Error::ParamOutOfRange(format!("chunk {index} of {}", self.header.chunk_count)));
        }
        let values = self.header.chunk_values(index);
        let out = &mut check_output(&self.header, out)?[values.clone()];
        frame::read_frames([(index, chunk, out)], self.header.block_size, Stores::Cached, exec)?;
        Ok(values)
    }

    /// Decodes every chunk not decoded yet that lies wholly in `received`, a prefix of
    /// the stream (header and chunk table included), calling `on_chunk` after each.
    /// Returns the chunks decoded by this call (empty if none has completed).
    pub fn decode_available<T: Element>(
        &mut self,
        received: &[u8],
        out: &mut [T],
        exec: &CpuExecutor,
        mut on_chunk: impl FnMut(&ChunkDone),
    ) -> Result<Range<usize>> {
        let first = self.next;
        let out = check_output(&self.header, out)?;
        let Some(table) = received.get(HEADER_LEN..self.header.prefix_len()) else { return Ok(first..first) };
        while self.next < self.header.chunk_count {
            let e = &table[CHUNK_ENTRY_LEN * self.next..CHUNK_ENTRY_LEN * (self.next + 1)];
            let len = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
            let Some(chunk) = received.get(self.next_at..self.next_at + len) else { break };
            let values = self.header.chunk_values(self.next);
            frame::read_frames([(self.next, chunk, &mut out[values.clone()])], self.header.block_size, Stores::Cached, exec)?;
            on_chunk(&ChunkDone { index: self.next, values, bytes: self.next_at..self.next_at + len });
            self.next += 1;
            self.next_at += len;
        }
        Ok(first..self.next)
    }
}

/// Decodes a whole stream chunk by chunk, calling `on_chunk` after each chunk (the
/// callers progress communication there). Returns the header.
pub fn decompress_into<T: Element>(stream: &[u8], out: &mut [T], exec: &CpuExecutor, on_chunk: impl FnMut(&ChunkDone)) -> Result<SzxHeader> {
    let mut dec = Decoder::new(stream)?;
    dec.header.stream_len(stream)?;
    dec.decode_available(stream, out, exec, on_chunk)?;
    Ok(dec.header)
}

/// Bytes of a stream's header and chunk table, once its first [`HEADER_LEN`] bytes
/// are known (for receivers that take the prefix first).
pub fn prefix_len(header_bytes: &[u8]) -> Result<usize> {
    Ok(SzxHeader::read(header_bytes)?.prefix_len())
}
