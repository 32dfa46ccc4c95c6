//! Chunk frames: the three encoder phases and the decoder over the blocks of one or
//! more chunks, run on the CPU executor in tiles of consecutive blocks.
//!
//! Frame of a chunk: `[state byte per block][u16 size per coded block][payloads]`.

use std::sync::{Mutex, PoisonError};

use codec_kernels::reduce::ReduceOp;
use codec_kernels::szx::coding::{is_coded, state, SIZE_ENTRY_BYTES};
use codec_kernels::szx::decode::decode_block_padded;
use codec_kernels::szx::group_ops::GroupOps;
use codec_kernels::szx::scalar::Bits;
use codec_kernels::szx::{encode_block, payload_len, plan_block, plan_encode_block, BlockError, BlockPlan, SzxFloat, Tolerance};

use super::isa::{multiversion, prefetch_ahead};
use super::stores::{Stores, Writer};
use crate::{CpuExecutor, Element, Error, Result};

/// Blocks per unit of CPU work (8192 values at the default block size).
const TILE_BLOCKS: usize = 64;

/// Runs `f` on every piece, in parallel on `exec` when there is more than one.
fn run_pieces<P: Send>(exec: &CpuExecutor, pieces: Vec<P>, f: impl Fn(P) -> Result<()> + Sync) -> Result<()> {
    if pieces.len() <= 1 || exec.threads() == 1 {
        return pieces.into_iter().try_for_each(f);
    }
    let cells: Vec<Mutex<Option<P>>> = pieces.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let take = |i: usize| cells[i].lock().unwrap_or_else(PoisonError::into_inner).take();
    exec.map_tiles(cells.len(), 1, |r| r.filter_map(take).try_for_each(&f)).into_iter().collect()
}

/// Phase 1: the plan of every block of `data` (blocks of `block` values; `plans` holds
/// one entry per block).
pub(super) fn plan_blocks<T: Element>(data: &[T], block: usize, tol: &Tolerance<T>, plans: &mut [BlockPlan<T>], exec: &CpuExecutor) {
    let tile_values = block * TILE_BLOCKS;
    exec.for_each_chunk_mut(plans, TILE_BLOCKS, |t, ps| plan_tile(data.get(t * tile_values..).unwrap_or_default(), block, tol, ps));
}

multiversion! {
    /// The plans of the blocks of `xs` (blocks of `block` values), one per entry of `ps`.
    fn plan_tile(xs: &[T], block: usize, tol: &Tolerance<T>, ps: &mut [BlockPlan<T>]) -> () = plan_tile_body;
}

#[inline(always)]
fn plan_tile_body<T: Element>(xs: &[T], block: usize, tol: &Tolerance<T>, ps: &mut [BlockPlan<T>]) {
    for (k, (x, p)) in xs.chunks(block).zip(ps).enumerate() {
        prefetch_ahead(xs, k * block, block);
        *p = plan_block(x, tol);
    }
}

/// Bytes of the frame of a chunk whose blocks have these plans.
pub(super) fn frame_len<T: Element>(plans: &[BlockPlan<T>]) -> usize {
    plans.iter().map(|p| 1 + p.size as usize + if p.is_coded() { SIZE_ENTRY_BYTES } else { 0 }).sum()
}

/// Phases 2 and 3: writes the frames of consecutive chunks into `out`, which holds
/// exactly their total length. `data` and `plans` cover those chunks, `chunk_values`
/// values (a multiple of `block`) per chunk.
pub(super) fn write_frames<T: Element>(
    data: &[T],
    block: usize,
    chunk_values: usize,
    plans: &[BlockPlan<T>],
    out: &mut [u8],
    exec: &CpuExecutor,
) -> Result<()> {
    let chunk_blocks = chunk_values / block;
    let mut pieces = Vec::new();
    let mut rest = out;
    for (xs, ps) in data.chunks(chunk_values).zip(plans.chunks(chunk_blocks)) {
        let (frame, tail) = rest.split_at_mut(frame_len(ps));
        rest = tail;
        let (states, tail) = frame.split_at_mut(ps.len());
        let coded = ps.iter().filter(|p| p.is_coded()).count();
        let (sizes, mut payloads) = tail.split_at_mut(coded * SIZE_ENTRY_BYTES);
        for (s, p) in states.iter_mut().zip(ps) {
            *s = p.state;
        }
        for (s, p) in sizes.chunks_exact_mut(SIZE_ENTRY_BYTES).zip(ps.iter().filter(|p| p.is_coded())) {
            s.copy_from_slice(&(p.size as u16).to_le_bytes());
        }
        // Phase 2: each tile's payload range is the sum of its blocks' sizes.
        for (tx, tp) in xs.chunks(block * TILE_BLOCKS).zip(ps.chunks(TILE_BLOCKS)) {
            let (region, tail) = payloads.split_at_mut(tp.iter().map(|p| p.size as usize).sum());
            payloads = tail;
            pieces.push((tx, tp, region));
        }
    }
    run_pieces(exec, pieces, |(xs, ps, region)| encode_tile(xs, block, ps, region))
}

multiversion! {
    /// Phase 3 for one tile: the payloads of the blocks of `xs`, back to back in `region`.
    fn encode_tile(xs: &[T], block: usize, ps: &[BlockPlan<T>], region: &mut [u8]) -> Result<()> = encode_tile_body;
}

#[inline(always)]
fn encode_tile_body<T: Element>(xs: &[T], block: usize, ps: &[BlockPlan<T>], mut region: &mut [u8]) -> Result<()> {
    for (x, p) in xs.chunks(block).zip(ps) {
        let (payload, tail) = region.split_at_mut(p.size as usize);
        region = tail;
        if !encode_block(x, p, payload) {
            return Err(Error::Corrupt(format!("SZx encoder: block plan {p:?} does not fit its block")));
        }
    }
    Ok(())
}

/// All three phases in one pass over `xs` (one chunk), for a single thread: each
/// block's payload is written while it is planned (`plan_encode_block`), so the input
/// is read from memory once and quantized once. The payloads go after room for a size entry per
/// block, and are moved down over the unused entries at the end (no move when every
/// block is coded; the payloads are small when many are not). Returns the frame's
/// length, or `None` if `out` ran out of room for that layout (room for any payload
/// at the next block's place; the two-pass writer needs less); the bytes equal the
/// two-pass writer's.
pub(super) fn write_frame_fused<T: Element>(xs: &[T], block: usize, tol: &Tolerance<T>, out: &mut [u8]) -> Result<Option<usize>> {
    let blocks = xs.len().div_ceil(block);
    let Some(body_at) = blocks.checked_mul(1 + SIZE_ENTRY_BYTES).filter(|&at| at <= out.len()) else { return Ok(None) };
    let Some((coded, payload)) = fuse_frame(xs, block, tol, out, body_at)? else { return Ok(None) };
    let sizes_end = blocks + coded * SIZE_ENTRY_BYTES;
    out.copy_within(body_at..body_at + payload, sizes_end);
    Ok(Some(sizes_end + payload))
}

multiversion! {
    /// The fused pass of [`write_frame_fused`]: states at the start of `out`, size
    /// entries after them, payloads from `body_at` on; returns the coded blocks and the
    /// payload bytes, or `None` when the room left is short.
    fn fuse_frame(xs: &[T], block: usize, tol: &Tolerance<T>, out: &mut [u8], body_at: usize) -> Result<Option<(usize, usize)>> = fuse_frame_body, with ops;
}

#[inline(always)]
fn fuse_frame_body<T: Element>(xs: &[T], block: usize, tol: &Tolerance<T>, out: &mut [u8], body_at: usize, ops: impl GroupOps) -> Result<Option<(usize, usize)>> {
    let blocks = xs.len().div_ceil(block);
    let (head, body) = out.split_at_mut(body_at);
    let (states, sizes) = head.split_at_mut(blocks);
    let (mut coded, mut pos) = (0usize, 0usize);
    for (k, (x, s)) in xs.chunks(block).zip(states.iter_mut()).enumerate() {
        prefetch_ahead(xs, k * block, block);
        let Some(plan) = plan_encode_block(x, tol, body.get_mut(pos..).unwrap_or_default(), ops) else { return Ok(None) };
        let size = plan.size as usize;
        *s = plan.state;
        if plan.is_coded() {
            sizes[coded * SIZE_ENTRY_BYTES..(coded + 1) * SIZE_ENTRY_BYTES].copy_from_slice(&(size as u16).to_le_bytes());
            coded += 1;
        }
        pos += size;
    }
    Ok(Some((coded, pos)))
}

/// Where the blocks of one tile of a frame are.
struct DecodeTile<'a, T> {
    chunk: usize,
    first_block: usize,
    states: &'a [u8],
    /// The size-table entries from the tile's first coded block on.
    sizes: &'a [u8],
    /// The tile's payloads, back to back, then the rest of the frame (read past a
    /// payload's end as padding, see `decode_block_padded`).
    payloads: &'a [u8],
    /// Bytes of the tile's own payloads.
    payload_len: usize,
    out: &'a mut [T],
    stores: Stores,
}

/// The payload length of a block and, for a coded block, the advance in the size table.
pub(super) fn block_len<T: Element>(state: u8, n: usize, sizes: &[u8], rank: &mut usize) -> Result<usize, BlockError> {
    let entry = sizes.get(*rank * SIZE_ENTRY_BYTES..(*rank + 1) * SIZE_ENTRY_BYTES);
    let coded_size = entry.map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let len = payload_len::<T>(state, n, coded_size)?;
    if is_coded(state) {
        if entry.is_none() {
            return Err(BlockError::BadLength);
        }
        *rank += 1;
    }
    Ok(len)
}

fn corrupt(chunk: usize, block: usize, e: BlockError) -> Error {
    Error::Corrupt(format!("SZx chunk {chunk}, block {block}: {e:?}"))
}

/// The block states and the size table of a frame of `blocks` blocks, and where its
/// payloads start.
fn frame_head(chunk: usize, frame: &[u8], blocks: usize) -> Result<(&[u8], &[u8], usize)> {
    let states = frame.get(..blocks).ok_or_else(|| Error::Corrupt(format!("SZx chunk {chunk}: shorter than its block states")))?;
    let coded = states.iter().filter(|&&s| is_coded(s)).count();
    let payload_at = blocks + coded * SIZE_ENTRY_BYTES;
    let sizes = frame.get(blocks..payload_at).ok_or_else(|| Error::Corrupt(format!("SZx chunk {chunk}: shorter than its size table")))?;
    Ok((states, sizes, payload_at))
}

/// The frame of chunk `chunk` (whose values are `out`) as one tile, for one thread:
/// no pass over its blocks first, the decoder checks every state byte, and that the
/// blocks fill the frame exactly, as it goes.
fn frame_tile<'a, T: Element>(chunk: usize, frame: &'a [u8], block: usize, out: &'a mut [T], stores: Stores) -> Result<DecodeTile<'a, T>> {
    let (states, sizes, payload_at) = frame_head(chunk, frame, out.len().div_ceil(block))?;
    Ok(DecodeTile { chunk, first_block: 0, states, sizes, payloads: &frame[payload_at..], payload_len: frame.len() - payload_at, out, stores })
}

/// Where the blocks of one tile of a frame are: its first block, its blocks, its first
/// entry in the size table and its payload bytes.
struct TileSpan {
    first: usize,
    blocks: usize,
    rank: usize,
    payloads: core::ops::Range<usize>,
}

/// The block states and the size table of the frame of chunk `chunk` (of `values`
/// values), and where the blocks of each of its tiles are, checking every state byte and
/// that the blocks fill the frame exactly.
fn tile_spans<T: Element>(chunk: usize, frame: &[u8], block: usize, values: usize) -> Result<(&[u8], &[u8], Vec<TileSpan>)> {
    let blocks = values.div_ceil(block);
    let (states, sizes, payload_at) = frame_head(chunk, frame, blocks)?;
    let (mut rank, mut pos) = (0usize, payload_at);
    let mut spans = Vec::with_capacity(blocks.div_ceil(TILE_BLOCKS));
    for first in (0..blocks).step_by(TILE_BLOCKS) {
        let (tile_rank, start) = (rank, pos);
        let end = (first + TILE_BLOCKS).min(blocks);
        for (b, &s) in (first..end).zip(&states[first..end]) {
            // Zero blocks (most of a sparse field's) have no payload and no size entry.
            if s != state::ZERO {
                let n = block.min(values - b * block);
                pos += block_len::<T>(s, n, sizes, &mut rank).map_err(|e| corrupt(chunk, b, e))?;
            }
        }
        if pos > frame.len() {
            return Err(Error::Corrupt(format!("SZx chunk {chunk}: blocks run past the chunk's end")));
        }
        spans.push(TileSpan { first, blocks: end - first, rank: tile_rank, payloads: start..pos });
    }
    if pos != frame.len() {
        return Err(Error::Corrupt(format!("SZx chunk {chunk}: blocks take {pos} bytes of {}", frame.len())));
    }
    Ok((states, sizes, spans))
}

impl<'a, T: Element> DecodeTile<'a, T> {
    /// The tile `span` of the frame of chunk `chunk` (`states` and `sizes` its head), its
    /// values `out`.
    fn of_span(chunk: usize, frame: &'a [u8], (states, sizes): (&'a [u8], &'a [u8]), span: &TileSpan, out: &'a mut [T], stores: Stores) -> Self {
        DecodeTile {
            chunk,
            first_block: span.first,
            states: &states[span.first..span.first + span.blocks],
            sizes: &sizes[span.rank * SIZE_ENTRY_BYTES..],
            payloads: &frame[span.payloads.start..],
            payload_len: span.payloads.len(),
            out,
            stores,
        }
    }
}

/// Cuts the frame of chunk `chunk` (whose values are `out`) into decode tiles for
/// several threads (see [`tile_spans`]).
fn frame_tiles<'a, T: Element>(chunk: usize, frame: &'a [u8], block: usize, out: &'a mut [T], stores: Stores, tiles: &mut Vec<DecodeTile<'a, T>>) -> Result<()> {
    let (states, sizes, spans) = tile_spans::<T>(chunk, frame, block, out.len())?;
    for (span, tile_out) in spans.iter().zip(out.chunks_mut(block * TILE_BLOCKS)) {
        tiles.push(DecodeTile::of_span(chunk, frame, (states, sizes), span, tile_out, stores));
    }
    Ok(())
}

/// Reduces the frames of several streams of one layout into the chunk `acc` (chunk
/// `chunk`; `frames[s]` is stream `s`'s frame of it), in order, `acc[i] = ((init[i] op
/// v0[i]) op v1[i]) ...`, `init` being `acc` itself where it is None: bit for bit the
/// reductions one stream after the other, but tile by tile, each tile's values kept in
/// a buffer that stays in L1 while every stream is reduced into it, so that `acc` is
/// read and written once.
pub(super) fn reduce_frames_in_turn<T: Element>(chunk: usize, frames: &[&[u8]], init: Option<&[T]>, acc: &mut [T], block: usize, op: ReduceOp) -> Result<()> {
    let heads = frames.iter().map(|f| tile_spans::<T>(chunk, f, block, acc.len())).collect::<Result<Vec<_>>>()?;
    let tile = block * TILE_BLOCKS;
    let mut buf = vec![T::default(); tile.min(acc.len())];
    for (t, out) in acc.chunks_mut(tile).enumerate() {
        let values = &mut buf[..out.len()];
        values.copy_from_slice(init.map_or(&*out, |x| &x[t * tile..t * tile + out.len()]));
        for (frame, (states, sizes, spans)) in frames.iter().zip(&heads) {
            decode_tile(DecodeTile::of_span(chunk, frame, (states, sizes), &spans[t], &mut *values, Stores::Reduce(op)), block)?;
        }
        out.copy_from_slice(values);
    }
    Ok(())
}

multiversion! {
    /// Decodes the blocks of one tile.
    fn decode_tile(tile: DecodeTile<'_, T>, block: usize) -> Result<()> = decode_tile_body, with ops;
}

#[inline(always)]
fn decode_tile_body<T: Element>(tile: DecodeTile<'_, T>, block: usize, ops: impl GroupOps) -> Result<()> {
    let (mut rank, mut pos) = (0usize, 0usize);
    let states = tile.states;
    let payloads = &tile.payloads[..tile.payload_len];
    let mut out = Writer::new(tile.out, tile.stores, block);
    let n = out.len();
    let mut j = 0;
    while let Some(&s) = states.get(j) {
        let at = j * block;
        // Runs of zero blocks (no payload, no size entry), the common case of sparse
        // fields: one fill each.
        if s == state::ZERO {
            let run = states[j..].iter().take_while(|&&s| s == state::ZERO).count();
            out.zeros(at, (run * block).min(n - at));
            j += run;
            continue;
        }
        let fail = |e| corrupt(tile.chunk, tile.first_block + j, e);
        // Runs of constant blocks of one value (the other common case: land or ice
        // masks): one fill each. No size entry; the payload is the value.
        if s == state::CONST {
            let w = <T as SzxFloat>::BYTES;
            let value = payloads.get(pos..pos + w).ok_or_else(|| fail(BlockError::BadLength))?;
            let run = 1 + states[j + 1..]
                .iter()
                .enumerate()
                .take_while(|&(k, &s)| s == state::CONST && payloads.get(pos + (k + 1) * w..pos + (k + 2) * w) == Some(value))
                .count();
            let v = <T as SzxFloat>::from_bits(<<T as SzxFloat>::Bits as Bits>::load_le(value));
            out.fill(at, (run * block).min(n - at), v);
            pos += run * w;
            j += run;
            continue;
        }
        let x_len = block.min(n - at);
        let len = block_len::<T>(s, x_len, tile.sizes, &mut rank).map_err(fail)?;
        if pos + len > payloads.len() {
            return Err(fail(BlockError::BadLength));
        }
        decode_block_padded(s, &tile.payloads[pos..], len, out.target(at, x_len), ops).map_err(fail)?;
        out.flush(x_len);
        pos += len;
        j += 1;
    }
    if pos != payloads.len() {
        return Err(Error::Corrupt(format!("SZx chunk {}: blocks from {} take {pos} payload bytes of {}", tile.chunk, tile.first_block, payloads.len())));
    }
    Ok(())
}

/// Decodes frames: each item is (chunk index, frame bytes, the chunk's values), written
/// with `stores`. On one thread each frame is one tile, checked as it is decoded; on
/// several, the frames are cut into tiles first (a pass over the block states and
/// sizes), decoded in parallel.
pub(super) fn read_frames<'a, T: Element>(
    frames: impl IntoIterator<Item = (usize, &'a [u8], &'a mut [T])>,
    block: usize,
    stores: Stores,
    exec: &CpuExecutor,
) -> Result<()> {
    if exec.threads() == 1 {
        return frames.into_iter().try_for_each(|(chunk, frame, out)| decode_tile(frame_tile(chunk, frame, block, out, stores)?, block));
    }
    let mut tiles = Vec::new();
    for (chunk, frame, out) in frames {
        frame_tiles(chunk, frame, block, out, stores, &mut tiles)?;
    }
    run_pieces(exec, tiles, |t| decode_tile(t, block))
}
