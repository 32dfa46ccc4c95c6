//! SZx streams: error-bounded lossy compression with a strict bound, plain or cut into
//! independently decodable chunks for pipelining (module [`pipelined`]).
//!
//! Every finite value comes back within the absolute bound `E` (`|x - x'| <= E`, `E = 0`
//! is lossless); NaN and infinities come back bit for bit; exact zeros stay exact zeros
//! and signs are kept where that costs little (see `docs/formats/szx.md`). The values
//! are coded as one sequence in memory order whatever the shape.
//!
//! Streams are written by [`Codec::Szx`](crate::Codec::Szx) through
//! [`Codec::compress`](crate::Codec::compress) and read by
//! [`decompress_into`](crate::decompress_into), like every codec's; this module holds
//! the format (header, block census) and the chunk-by-chunk [`pipelined`] API.
//!
//! ```
//! use codec_host::{Backend, Codec, ErrorBound, Shape};
//! let x: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.01).sin()).collect();
//! let stream = Codec::szx(ErrorBound::Abs(1e-3)).compress(&x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
//! let mut back = vec![0f32; x.len()];
//! let info = codec_host::decompress_into(&stream, &mut back, &Backend::cpu()).unwrap();
//! assert_eq!(info.shape.len(), 1000);
//! assert_eq!(codec_host::szx::describe(&stream).unwrap().header.len(), 1000);
//! assert!(x.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 1e-3));
//! ```

mod frame;
mod header;
pub(crate) mod isa;
mod output;
pub mod pipelined;
pub mod reduce;
mod stores;

use codec_kernels::reduce::ReduceOp;
use codec_kernels::szx::{BlockKind, BlockPlan, Tolerance};

pub use isa::{active as active_isa, fast_bit_deposits, Isa, ENV_ISA};
pub use header::{SzxHeader, CHUNK_ENTRY_LEN, HEADER_LEN, MAGIC, MAX_CHUNK_VALUES, VERSION};
pub use codec_kernels::szx::MAX_BLOCK_SIZE;
pub use output::HUGE_PAGE_MIN_BYTES;
pub use stores::STREAMING_MIN_BYTES;
use stores::Stores;

use crate::{CpuExecutor, Element, Error, OutputWrites, Result, Shape, StreamInfo};

/// The error bound of an SZx stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ErrorBound {
    /// Every finite value within this absolute distance (`>= 0`, finite).
    Abs(f64),
    /// Within `R * (max - min)` of the input's finite values (`R >= 0`, finite).
    Rel(f64),
}

/// Layout parameters of an SZx stream, for the chunk-by-chunk [`pipelined`] API (the
/// codec API writes blocks of 128 values and takes its chunking from
/// [`SzxLayout`](crate::SzxLayout)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SzxOptions {
    /// Values per block, 1 to [`MAX_BLOCK_SIZE`]; default 128.
    pub block_size: usize,
    /// Values per chunk of a pipelined stream, a multiple of `block_size` up to
    /// [`MAX_CHUNK_VALUES`]; default 5120. Plain streams choose their own chunking.
    pub chunk_values: usize,
}

impl Default for SzxOptions {
    fn default() -> Self {
        SzxOptions { block_size: 128, chunk_values: crate::SzxLayout::DEFAULT_CHUNK_VALUES }
    }
}

/// Compresses `data` into a plain stream with `opts.block_size` on `exec`.
pub(crate) fn compress_with_options<T: Element>(data: &[T], shape: Shape, bound: ErrorBound, opts: &SzxOptions, exec: &CpuExecutor) -> Result<Vec<u8>> {
    let (header, tol) = prepare(data, shape, bound, opts, false, exec)?;
    encode_to_vec(data, &header, &tol, exec)
}

/// The most bytes a plain stream of `n` values of `T` can take, incompressible data
/// included.
pub fn max_compressed_len<T: Element>(n: usize, opts: &SzxOptions) -> usize {
    bound_len(n, T::TYPE.size(), opts.block_size.max(1), plain_chunk_values(n, opts.block_size.max(1)))
}

/// Decodes an SZx stream (plain or pipelined) into `out` (at least as many values as
/// it holds), written as `writes` says, on `exec`. Returns the header.
pub(crate) fn decompress_into<T: Element>(stream: &[u8], out: &mut [T], writes: OutputWrites, exec: &CpuExecutor) -> Result<SzxHeader> {
    let header = SzxHeader::read(stream)?;
    let out = check_output(&header, out)?;
    decode_frames(stream, &header, out, Stores::for_output(out, writes), exec)?;
    Ok(header)
}

/// Reduces the values of an SZx stream into the first of `acc` as they are decoded,
/// `acc[i] = acc[i] op v[i]`, on `exec`. Returns the header.
pub(crate) fn decompress_reduce<T: Element>(stream: &[u8], acc: &mut [T], op: ReduceOp, exec: &CpuExecutor) -> Result<SzxHeader> {
    let header = SzxHeader::read(stream)?;
    let acc = check_output(&header, acc)?;
    decode_frames(stream, &header, acc, Stores::Reduce(op), exec)?;
    Ok(header)
}

/// Reduces the values of several SZx streams of one layout (element type, count,
/// block size, chunking) into the first of `acc` together, tile by tile
/// ([`frame::reduce_frames_in_turn`]), on one thread: `acc[i] = ((init[i] op v0[i]) op
/// v1[i]) ...`, with `init` the values of `acc` where it is None, bit for bit
/// [`decompress_reduce`] of each stream in turn, but `acc` read and written once, not
/// once per stream. Returns false, touching nothing, where that does not apply (fewer
/// than two streams, layouts that differ, several threads): the caller reduces them in
/// turn.
pub(crate) fn decompress_reduce_all<T: Element>(streams: &[&[u8]], init: Option<&[T]>, acc: &mut [T], op: ReduceOp, exec: &CpuExecutor) -> Result<bool> {
    let headers = streams.iter().map(|s| SzxHeader::read(s)).collect::<Result<Vec<_>>>()?;
    let Some(header) = headers.first() else { return Ok(false) };
    let layout = |h: &SzxHeader| (h.elem, h.len(), h.block_size, h.chunk_values);
    if exec.threads() > 1 || streams.len() < 2 || headers.iter().any(|h| layout(h) != layout(header)) {
        return Ok(false);
    }
    let acc = check_output(header, acc)?;
    let n = acc.len();
    let init = init.map(|x| x.get(..n).ok_or(Error::BufferTooSmall { needed: n, got: x.len() })).transpose()?;
    let chunks = streams.iter().zip(&headers).map(|(s, h)| chunk_frames(s, h).map(Iterator::collect)).collect::<Result<Vec<Vec<&[u8]>>>>()?;
    for (c, values) in acc.chunks_mut(header.chunk_values).enumerate() {
        let frames: Vec<&[u8]> = chunks.iter().map(|f| f[c]).collect();
        let first = init.map(|x| &x[c * header.chunk_values..c * header.chunk_values + values.len()]);
        frame::reduce_frames_in_turn(c, &frames, first, values, header.block_size, op)?;
    }
    Ok(true)
}

/// The frames of the chunks of `stream` (whose header is `header`), in order, the
/// chunk table checked ([`SzxHeader::chunk_lens`]).
fn chunk_frames<'s>(stream: &'s [u8], header: &SzxHeader) -> Result<impl Iterator<Item = &'s [u8]> + 's> {
    let (lens, _) = header.chunk_lens(stream)?;
    let mut at = header.prefix_len();
    Ok(lens.map(move |len| {
        at += len;
        &stream[at - len..at]
    }))
}

/// Decodes the chunks of `stream` (whose header is `header`) into `out`, its values,
/// written with `stores`.
fn decode_frames<T: Element>(stream: &[u8], header: &SzxHeader, out: &mut [T], stores: Stores, exec: &CpuExecutor) -> Result<()> {
    let frames = chunk_frames(stream, header)?.zip(out.chunks_mut(header.chunk_values)).enumerate().map(|(i, (frame, values))| (i, frame, values));
    frame::read_frames(frames, header.block_size, stores, exec)
}

/// Decodes an SZx stream into a new vector, on the shared executor (see
/// [`decompress_with`]).
pub fn decompress<T: Element>(stream: &[u8]) -> Result<(Vec<T>, SzxHeader)> {
    decompress_with(stream, CpuExecutor::global())
}

/// Decodes an SZx stream into a new vector, on `exec`, for streams of unknown origin:
/// the chunk table vouches for the values before anything is allocated (the codec API,
/// [`decompress_into`](crate::decompress_into), decodes into the caller's buffer).
///
/// The vector comes zeroed from the allocator (for a large output, a fresh mapping whose
/// pages the kernel provides as zeros when first touched) and zero blocks are not
/// written: pages that hold only zero blocks are never touched by the decoder. Their
/// cost is deferred, not gone: the first write to such a page later faults it in (a
/// read maps the shared zero page). Outputs of at least [`HUGE_PAGE_MIN_BYTES`] with
/// few zero blocks are advised to use transparent huge pages (`MADV_HUGEPAGE`), where
/// the system allows them, for fewer page faults.
pub fn decompress_with<T: Element>(stream: &[u8], exec: &CpuExecutor) -> Result<(Vec<T>, SzxHeader)> {
    let header = SzxHeader::read(stream)?;
    if header.elem != T::TYPE {
        return Err(Error::TypeMismatch { stream: header.elem, requested: T::TYPE });
    }
    // The chunk table vouches for at least one byte per block before anything is
    // allocated, and the allocation itself may fail without aborting.
    header.stream_len(stream)?;
    let mut out = output::zeroed_vec::<T>(header.len())?;
    if output::dense(stream) {
        output::advise_huge_pages(&mut out);
    }
    decode_frames(stream, &header, &mut out, Stores::Zeroed, exec)?;
    Ok((out, header))
}

/// What an SZx stream is, from its header and chunk table.
pub fn inspect(stream: &[u8]) -> Result<StreamInfo> {
    let header = SzxHeader::read(stream)?;
    let stream_bytes = header.stream_len(stream)?;
    Ok(StreamInfo { codec: header.codec(), elem: header.elem, shape: header.shape, stream_bytes })
}

/// True if `stream` starts like an SZx stream.
pub fn is_szx(stream: &[u8]) -> bool {
    stream.starts_with(&MAGIC)
}

/// How many blocks of each kind a stream holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCensus {
    /// Blocks decoded as zeros.
    pub zero: usize,
    /// Blocks decoded as one value.
    pub constant: usize,
    /// Blocks stored verbatim.
    pub raw: usize,
    /// Coded blocks of values.
    pub direct: usize,
    /// Coded blocks of differences from a reference.
    pub offset: usize,
    /// Coded blocks of multiples of a power of two (fixed point).
    pub quantized: usize,
}

impl BlockCensus {
    /// Blocks of every kind.
    pub fn total(&self) -> usize {
        self.zero + self.constant + self.raw + self.direct + self.offset + self.quantized
    }
}

/// Header, chunk lengths and block census of an SZx stream (for tools).
#[derive(Clone, Debug, PartialEq)]
pub struct SzxInfo {
    pub header: SzxHeader,
    /// Bytes of the stream (header, table and chunks).
    pub stream_bytes: usize,
    /// Length of every chunk.
    pub chunk_lens: Vec<usize>,
    pub blocks: BlockCensus,
}

/// Reads the header, the chunk table and every block state of `stream`.
pub fn describe(stream: &[u8]) -> Result<SzxInfo> {
    let header = SzxHeader::read(stream)?;
    let (lens, stream_bytes) = header.chunk_lens(stream)?;
    let chunk_lens: Vec<usize> = lens.collect();
    let mut blocks = BlockCensus::default();
    let mut at = header.prefix_len();
    for (i, &len) in chunk_lens.iter().enumerate() {
        let nb = header.chunk_values(i).len().div_ceil(header.block_size);
        for &s in &stream[at..at + nb] {
            let kind = match header.elem {
                crate::ElemType::F32 => BlockKind::parse::<f32>(s),
                crate::ElemType::F64 => BlockKind::parse::<f64>(s),
            };
            match kind.ok_or_else(|| Error::Corrupt(format!("SZx chunk {i}: block state {s:#x}")))? {
                BlockKind::Zero => blocks.zero += 1,
                BlockKind::Const => blocks.constant += 1,
                BlockKind::Raw => blocks.raw += 1,
                BlockKind::Coded { offset: false, .. } => blocks.direct += 1,
                BlockKind::Coded { offset: true, .. } => blocks.offset += 1,
                BlockKind::Quantized { .. } => blocks.quantized += 1,
            }
        }
        at += len;
    }
    Ok(SzxInfo { header, stream_bytes, chunk_lens, blocks })
}

/// Chunk size of plain streams: everything in one chunk, up to the table's limit.
fn plain_chunk_values(n: usize, block: usize) -> usize {
    let cap = MAX_CHUNK_VALUES / block * block;
    n.div_ceil(block).max(1).saturating_mul(block).min(cap)
}

/// Worst-case stream length: per block one state byte plus its raw values (a coded block
/// is chosen only when it and its size entry take fewer bytes than raw).
pub(crate) fn bound_len(n: usize, elem_size: usize, block: usize, chunk_values: usize) -> usize {
    HEADER_LEN + CHUNK_ENTRY_LEN * n.div_ceil(chunk_values.max(1)) + n.div_ceil(block) + elem_size * n
}

/// The header of a stream of `shape` values of `T` laid out by `opts`, with no bound yet.
pub(crate) fn layout_header<T: Element>(shape: Shape, opts: &SzxOptions, pipelined: bool) -> Result<SzxHeader> {
    let n = shape.checked_len().ok_or_else(|| Error::BadDims(format!("{shape} values overflow")))?;
    let chunk_values = if pipelined { opts.chunk_values } else { plain_chunk_values(n, opts.block_size.max(1)) };
    header::check_layout(opts.block_size, chunk_values)?;
    let chunk_count = n.div_ceil(chunk_values);
    if u32::try_from(chunk_count).is_err() {
        return Err(Error::ParamOutOfRange(format!("{chunk_count} chunks (at most {})", u32::MAX)));
    }
    Ok(SzxHeader { elem: T::TYPE, shape, abs_error: 0.0, rel_error: None, pipelined, block_size: opts.block_size, chunk_values, chunk_count })
}

/// Checks the parameters and builds the header and tolerance for compressing `data`.
pub(crate) fn prepare<T: Element>(
    data: &[T],
    shape: Shape,
    bound: ErrorBound,
    opts: &SzxOptions,
    pipelined: bool,
    exec: &CpuExecutor,
) -> Result<(SzxHeader, Tolerance<T>)> {
    let mut header = layout_header::<T>(shape, opts, pipelined)?;
    if header.len() != data.len() {
        return Err(Error::BadDims(format!("shape {shape} holds {} values, data {}", header.len(), data.len())));
    }
    let tol = set_bound(&mut header, bound, || finite_range(data, exec))?;
    Ok((header, tol))
}

/// Puts `bound` into `header` and returns the tolerance; `range` gives the smallest and
/// largest finite value, asked for a relative bound only.
pub(crate) fn set_bound<T: Element>(header: &mut SzxHeader, bound: ErrorBound, range: impl FnOnce() -> (f64, f64)) -> Result<Tolerance<T>> {
    check_bound(bound)?;
    (header.abs_error, header.rel_error) = match bound {
        ErrorBound::Abs(e) => (e, None),
        ErrorBound::Rel(r) => {
            let (lo, hi) = range();
            let e = r * (hi - lo);
            (if e.is_finite() { e } else { f64::MAX }, Some(r))
        }
    };
    Ok(Tolerance::from_f64(header.abs_error))
}

/// An error bound SZx can keep: finite and not negative, absolute or relative.
pub(crate) fn check_bound(bound: ErrorBound) -> Result<()> {
    match bound {
        ErrorBound::Abs(v) | ErrorBound::Rel(v) if v.is_finite() && v >= 0.0 => Ok(()),
        b => Err(Error::ParamOutOfRange(format!("SZx error bound {b:?} (finite, >= 0)"))),
    }
}

/// Smallest and largest finite value, widened to f64 (`(0, 0)` if there is none).
pub(crate) fn finite_range<T: Element>(data: &[T], exec: &CpuExecutor) -> (f64, f64) {
    let parts = exec.map_tiles(data.len(), 1 << 16, |r| T::finite_range(&data[r]));
    parts.into_iter().flatten().reduce(|a, b| (a.0.min(b.0), a.1.max(b.1))).unwrap_or((0.0, 0.0))
}

/// Checks the caller's output for a stream with `header`; returns the part to fill.
fn check_output<'o, T: Element>(header: &SzxHeader, out: &'o mut [T]) -> Result<&'o mut [T]> {
    if header.elem != T::TYPE {
        return Err(Error::TypeMismatch { stream: header.elem, requested: T::TYPE });
    }
    let n = header.len();
    let got = out.len();
    out.get_mut(..n).ok_or(Error::BufferTooSmall { needed: n, got })
}

fn empty_plan<T: Element>() -> BlockPlan<T> {
    BlockPlan { state: 0, value: <T as codec_kernels::szx::SzxFloat>::ZERO, size: 0 }
}

/// Phase 1 for a whole stream: every block's plan and every chunk's frame length.
fn plan_stream<T: Element>(data: &[T], header: &SzxHeader, tol: &Tolerance<T>, exec: &CpuExecutor) -> (Vec<BlockPlan<T>>, Vec<usize>) {
    let block = header.block_size;
    let mut plans = vec![empty_plan::<T>(); data.len().div_ceil(block)];
    frame::plan_blocks(data, block, tol, &mut plans, exec);
    let lens = plans.chunks(header.chunk_values / block).map(frame::frame_len).collect();
    (plans, lens)
}

/// Writes a planned stream into `out`, which holds exactly its length.
fn write_stream<T: Element>(data: &[T], header: &SzxHeader, plans: &[BlockPlan<T>], lens: &[usize], out: &mut [u8], exec: &CpuExecutor) -> Result<()> {
    header.write(out);
    let (table, frames) = out[HEADER_LEN..].split_at_mut(header.prefix_len() - HEADER_LEN);
    for (entry, &len) in table.chunks_exact_mut(CHUNK_ENTRY_LEN).zip(lens) {
        entry.copy_from_slice(&(len as u32).to_le_bytes());
    }
    frame::write_frames(data, header.block_size, header.chunk_values, plans, frames, exec)
}

/// Encodes a whole stream into `out`: in one pass on a single thread (if `out` has room
/// for that), else all chunks at once, parallel over every block.
pub(crate) fn encode_stream<T: Element>(data: &[T], header: &SzxHeader, tol: &Tolerance<T>, out: &mut [u8], exec: &CpuExecutor) -> Result<usize> {
    if exec.threads() == 1 {
        if let Some(len) = encode_stream_fused(data, header, tol, out)? {
            return Ok(len);
        }
    }
    let (plans, lens) = plan_stream(data, header, tol, exec);
    let total = header.prefix_len() + lens.iter().sum::<usize>();
    let got = out.len();
    let out = out.get_mut(..total).ok_or(Error::BufferTooSmall { needed: total, got })?;
    write_stream(data, header, &plans, &lens, out, exec)?;
    Ok(total)
}

thread_local! {
    /// The single-thread encoder's room for a stream's worst case, kept for the next
    /// stream this thread encodes.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Worst cases up to this size are encoded in the thread's scratch. A fresh zeroed
/// vector of that size would be cleared in full by every `calloc` once glibc's adaptive
/// mmap threshold (at most 32 MiB) serves it from the heap; above it, `calloc` maps
/// fresh pages, which cost only where the stream writes.
const SCRATCH_MAX: usize = 32 << 20;

/// Runs `f` on `len` (at most [`SCRATCH_MAX`]) bytes of this thread's scratch, whose
/// contents are whatever an earlier stream left.
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    SCRATCH.with(|cell| {
        let mut buf = cell.borrow_mut();
        if buf.len() < len {
            *buf = vec![0u8; len];
        }
        f(&mut buf[..len])
    })
}

/// The single-thread encoder: every chunk in one pass (`frame::write_frame_fused`);
/// `None` if `out` lacks room for that.
fn encode_stream_fused<T: Element>(data: &[T], header: &SzxHeader, tol: &Tolerance<T>, out: &mut [u8]) -> Result<Option<usize>> {
    let mut at = header.prefix_len();
    if out.len() < at {
        return Ok(None);
    }
    for (i, xs) in data.chunks(header.chunk_values).enumerate() {
        let Some(len) = frame::write_frame_fused(xs, header.block_size, tol, &mut out[at..])? else { return Ok(None) };
        let entry = HEADER_LEN + CHUNK_ENTRY_LEN * i;
        out[entry..entry + CHUNK_ENTRY_LEN].copy_from_slice(&(len as u32).to_le_bytes());
        at += len;
    }
    header.write(out);
    Ok(Some(at))
}

/// Encodes a whole stream into a vector of exactly its length.
fn encode_to_vec<T: Element>(data: &[T], header: &SzxHeader, tol: &Tolerance<T>, exec: &CpuExecutor) -> Result<Vec<u8>> {
    if exec.threads() == 1 {
        // One pass into room for the worst case: the thread's scratch, whose stream is
        // copied out, or a fresh vector cut to the stream.
        let room = bound_len(data.len(), T::TYPE.size(), header.block_size, header.chunk_values);
        if room <= SCRATCH_MAX {
            if let Some(out) = with_scratch(room, |buf| encode_stream_fused(data, header, tol, buf).map(|len| len.map(|len| buf[..len].to_vec())))? {
                return Ok(out);
            }
        } else {
            let mut out = vec![0u8; room];
            if let Some(len) = encode_stream_fused(data, header, tol, &mut out)? {
                out.truncate(len);
                out.shrink_to_fit();
                return Ok(out);
            }
        }
    }
    let (plans, lens) = plan_stream(data, header, tol, exec);
    let mut out = vec![0u8; header.prefix_len() + lens.iter().sum::<usize>()];
    write_stream(data, header, &plans, &lens, &mut out, exec)?;
    Ok(out)
}
