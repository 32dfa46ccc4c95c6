//! Decompression: decodes the blocks of a parsed stream into the caller's slice.

use core::sync::atomic::{AtomicBool, Ordering};

use codec_kernels::bitstream::{BitReader, Word};
use codec_kernels::zfp::fixed_rate::decode_fixed_rate_block;
use codec_kernels::zfp::variable::{decode_blocks, skip_blocks};
use codec_kernels::zfp::{Dims, FixedRate};

use super::header::Header;
use super::layout::{field_of, parallel_variable_decode, Slabs};
use super::words::words_from_bytes;
use crate::{CpuExecutor, Element, Error, Result};

/// The error for a stream that ends before its blocks do.
fn truncated(needed_bits: usize, got: usize) -> Error {
    Error::Truncated { needed: needed_bits.div_ceil(8), got }
}

/// Bytes a stream of `bits` occupies as zfp 1.0 writes it (whole 64-bit words), or
/// fewer if the stream given is shorter but still holds every bit (8-bit-word builds).
pub(super) fn stream_bytes(bits: usize, len: usize) -> usize {
    (bits.div_ceil(64) * 8).min(len)
}

/// The layout of a fixed-rate stream (its length checked by [`check_length`]).
pub(super) fn fixed_rate_layout(header: &Header, header_bits: usize) -> FixedRate {
    FixedRate { field: field_of(&header.shape), params: header.params, header_bits }
}

/// Checks, before anything is allocated or decoded, that a stream of `len` bytes can
/// hold the blocks its header declares: exactly `maxbits` bits each at a fixed rate, at
/// least one bit each otherwise (a block of zeros). A 12-byte header claiming 65536^3
/// values fails here.
pub(super) fn check_length(header: &Header, header_bits: usize, len: usize) -> Result<()> {
    let nblocks = field_of(&header.shape).block_count();
    let per_block = if header.params.minbits == header.params.maxbits { header.params.maxbits as usize } else { 1 };
    let bits = per_block.checked_mul(nblocks).and_then(|b| b.checked_add(header_bits)).unwrap_or(usize::MAX);
    if bits > len.saturating_mul(8) {
        return Err(truncated(bits, len));
    }
    Ok(())
}

/// Decodes `stream` (header of `header_bits` included, its length checked by
/// [`check_length`]) into `out`, which holds at least the array's values; returns the
/// stream bytes consumed.
pub(super) fn decompress<T: Element, D: Dims>(
    stream: &[u8],
    header: &Header,
    header_bits: usize,
    out: &mut [T],
    exec: &CpuExecutor,
) -> Result<usize> {
    // Whole words are read in place; a stream ending mid-word (8-bit-word builds) is
    // copied into zero-padded words first.
    match stream.as_chunks::<8>() {
        (words, []) => decompress_words::<T, D, [u8; 8]>(words, stream.len(), header, header_bits, out, exec),
        _ => decompress_words::<T, D, u64>(&words_from_bytes(stream), stream.len(), header, header_bits, out, exec),
    }
}

/// [`decompress`] on the stream's words; `len` is its length in bytes.
fn decompress_words<T: Element, D: Dims, R: Word + Sync>(
    words: &[R],
    len: usize,
    header: &Header,
    header_bits: usize,
    out: &mut [T],
    exec: &CpuExecutor,
) -> Result<usize> {
    let field = field_of(&header.shape);
    let out = &mut out[..field.len()];
    if header.params.minbits == header.params.maxbits {
        let layout = fixed_rate_layout(header, header_bits);
        let slabs = Slabs::new::<D>(&field);
        let nblocks = field.block_count();
        let ok = AtomicBool::new(true);
        exec.for_each_chunk_mut(out, slabs.values, |i, chunk| {
            let first = i * slabs.blocks;
            for b in first..(first + slabs.blocks).min(nblocks) {
                if !decode_fixed_rate_block::<T, D, R>(b, words, &layout, chunk, i * slabs.values) {
                    ok.store(false, Ordering::Relaxed);
                    return;
                }
            }
        });
        // The stream length was checked, so a failure here is an internal inconsistency.
        if !ok.into_inner() {
            return Err(Error::Corrupt("fixed-rate block outside the stream or the array".into()));
        }
        return Ok(stream_bytes(layout.total_bits(), len));
    }
    let nblocks = field.block_count();
    let slabs = Slabs::new::<D>(&field);
    let nslabs = nblocks.div_ceil(slabs.blocks);
    if nslabs == 1 || !parallel_variable_decode::<D>(exec.threads()) {
        let mut r = BitReader::new(words, header_bits);
        let ok = decode_blocks::<T, D, R>(&mut r, &field, &header.params, 0..nblocks, out, 0);
        if !ok || r.position() > len * 8 {
            return Err(truncated(r.position(), len));
        }
        return Ok(stream_bytes(r.position(), len));
    }
    // Block lengths vary, so a first, sequential pass only parses the blocks to find
    // where each slab starts; then the slabs are decoded in parallel.
    let mut starts = Vec::with_capacity(nslabs);
    let mut r = BitReader::new(words, header_bits);
    for s in 0..nslabs {
        starts.push(r.position());
        let count = slabs.blocks.min(nblocks - s * slabs.blocks);
        if !skip_blocks::<T, D, R>(&mut r, &header.params, count) || r.position() > len * 8 {
            return Err(truncated(r.position(), len));
        }
    }
    let ok = AtomicBool::new(true);
    exec.for_each_chunk_mut(out, slabs.values, |i, chunk| {
        let first = i * slabs.blocks;
        let blocks = first..(first + slabs.blocks).min(nblocks);
        let mut r = BitReader::new(words, starts[i]);
        if !decode_blocks::<T, D, R>(&mut r, &field, &header.params, blocks, chunk, i * slabs.values) {
            ok.store(false, Ordering::Relaxed);
        }
    });
    if !ok.into_inner() {
        return Err(Error::Corrupt("variable-length block outside the stream or the array".into()));
    }
    Ok(stream_bytes(r.position(), len))
}
