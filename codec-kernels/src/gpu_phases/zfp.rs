//! ZFP bodies in the form a GPU runs them: one thread per block, every output either a
//! zeroed word buffer OR-ed into ([`AtomicU64`] sink) or a [`SharedOut`], never a
//! per-thread `&mut` slice. Built from the block coder in `crate::zfp`.
//!
//! Fixed rate encodes with `zfp::fixed_rate::encode_fixed_rate_body` directly; decoding
//! needs [`decode_fixed_rate_body`] here, which scatters into a shared output.
//! Fixed accuracy runs in phases: [`encode_slots_body`] codes each block into its own
//! worst-case slot and records its length; an exclusive scan of the lengths
//! (`crate::scan`) gives each block its stream offset; [`compact_body`] copies every
//! slot's bits to its offset. The result is the CPU's stream bit for bit. Decoding goes
//! through a per-block offset index ([`decode_indexed_body`]), which the encoder's scan
//! provides, or [`block_offsets_body`] recovers from a stream alone.

use core::sync::atomic::AtomicU64;

use crate::bitstream::{BitReader, BitWriter};
use crate::grid::Grid;
use crate::shared::{Cell, SharedOut};
use crate::zfp::block::{decode_block, skip_block};
use crate::zfp::variable::{copy_bits, encode_blocks};
use crate::zfp::{Dims, Field, FixedRate, Params, Scalar};

/// Writes the values of block `b` that lie inside field `f` into `out` (the whole array).
#[inline(always)]
pub fn scatter_shared<S: Scalar + Cell, D: Dims>(block: &D::Block<S>, out: &SharedOut<'_, S>, f: &Field, b: usize) {
    let o = f.block_origin::<D>(b);
    let valid: [usize; 3] = core::array::from_fn(|a| f.n[a].saturating_sub(o[a]).min(4));
    for (i, &v) in block.as_ref().iter().enumerate() {
        let (x, y, z) = (i % 4, (i / 4) % 4, i / 16);
        if x < valid[0] && y < valid[1] && z < valid[2] {
            out.set(o[0] + x + f.n[0] * (o[1] + y + f.n[1] * (o[2] + z)), v);
        }
    }
}

/// Decodes the block at `bit` of `words` into `out`; false if the stream ends inside it.
#[inline(always)]
fn decode_at<S: Scalar + Cell, D: Dims>(words: &[u64], bit: usize, p: &Params, f: &Field, b: usize, out: &SharedOut<'_, S>) -> bool {
    let mut r = BitReader::new(words, bit);
    let (block, _) = decode_block::<S, D, u64>(&mut r, p);
    if r.overrun() {
        return false;
    }
    scatter_shared::<S, D>(&block, out, f, b);
    true
}

/// Fixed-rate decode, grid-stride over blocks. False if a block lies past the stream.
#[inline(always)]
pub fn decode_fixed_rate_body<S: Scalar + Cell, D: Dims>(g: Grid, words: &[u64], layout: &FixedRate, out: &SharedOut<'_, S>) -> bool {
    let mut ok = true;
    for b in g.stride_iter(layout.field.block_count()) {
        ok &= decode_at::<S, D>(words, layout.block_offset(b), &layout.params, &layout.field, b, out);
    }
    ok
}

/// Fixed-accuracy phase 1: block `b` is coded into the zeroed slot starting at bit
/// `b * slot_bits` of `slots` and its length goes to `lens[b]`. `slot_bits` must be at
/// least `zfp::variable::max_block_bits` (a multiple of 64 keeps slots word-aligned).
/// False if a block holds a non-finite value or its slot lies outside `slots`.
#[inline(always)]
pub fn encode_slots_body<S: Scalar, D: Dims>(
    g: Grid,
    data: &[S],
    field: &Field,
    p: &Params,
    slot_bits: usize,
    slots: &[AtomicU64],
    lens: &SharedOut<'_, u32>,
) -> bool {
    let mut ok = true;
    for b in g.stride_iter(field.block_count().min(lens.len())) {
        let start = b * slot_bits;
        let mut w = BitWriter::new(slots, start);
        ok &= encode_blocks::<S, D, _>(&mut w, data, field, p, b..b + 1);
        let len = w.position() - start;
        ok &= len <= slot_bits;
        lens.set(b, len as u32);
        ok &= !w.flush().1;
    }
    ok
}

/// Fixed-accuracy phase 3: copies the `lens[b]` bits of slot `b` to bit `offsets[b]` of
/// the zeroed stream `out` (neighbouring blocks share words, hence the OR-ing sink).
#[inline(always)]
pub fn compact_body(g: Grid, slots: &[u64], slot_bits: usize, lens: &[u32], offsets: &[u64], out: &[AtomicU64]) {
    let slot_words = slot_bits.div_ceil(64);
    for b in g.stride_iter(lens.len().min(offsets.len())) {
        let (Some(&len), Some(&at)) = (lens.get(b), offsets.get(b)) else { continue };
        let src = slots.get(b * slot_words..).unwrap_or(&[]);
        let mut w = BitWriter::new(out, at as usize);
        copy_bits(src, len as usize, &mut w);
        w.flush();
    }
}

/// Fixed-accuracy decode: block `b` starts at bit `offsets[b]` of `words`. False if a
/// block runs past the stream.
#[inline(always)]
pub fn decode_indexed_body<S: Scalar + Cell, D: Dims>(
    g: Grid,
    words: &[u64],
    offsets: &[u64],
    field: &Field,
    p: &Params,
    out: &SharedOut<'_, S>,
) -> bool {
    let mut ok = true;
    for b in g.stride_iter(field.block_count().min(offsets.len())) {
        ok &= offsets.get(b).is_some_and(|&at| decode_at::<S, D>(words, at as usize, p, field, b, out));
    }
    ok
}

/// The offset index of a variable-length stream whose first block starts at `start`:
/// `offsets[b]` for every block, and the end of the last in `end[0]`. Sequential (each
/// block's start is the previous one's end), so only grid position 0 works: the host
/// runs it for streams that arrive without their index. False if the stream ends early.
#[inline(always)]
pub fn block_offsets_body<S: Scalar, D: Dims>(
    g: Grid,
    words: &[u64],
    start: usize,
    p: &Params,
    offsets: &SharedOut<'_, u64>,
    end: &SharedOut<'_, u64>,
) -> bool {
    if g.global_index() != 0 {
        return true;
    }
    let mut r = BitReader::new(words, start);
    for b in 0..offsets.len() {
        offsets.set(b, r.position() as u64);
        skip_block::<S, D, u64>(&mut r, p);
        if r.overrun() {
            return false;
        }
    }
    end.set(0, r.position() as u64);
    true
}
