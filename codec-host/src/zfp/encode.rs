//! Compression: runs the kernel bodies over the blocks and assembles the stream.

use core::sync::atomic::{AtomicBool, Ordering};

use codec_kernels::bitstream::BitWriter;
use codec_kernels::zfp::variable::{copy_bits, encode_blocks, max_block_bits};
use codec_kernels::zfp::Dims;

use super::header::Header;
use super::layout::{field_of, tile_blocks};
use super::assemble::assemble;
use super::words::ByteWords;
use crate::{CpuExecutor, Element, Error, Result};

/// The error for data zfp cannot code: the index of the first infinity or NaN.
fn non_finite<T: Element>(data: &[T]) -> Error {
    Error::NonFinite { index: data.iter().position(|v| !v.finite()).unwrap_or(0) }
}

/// Encodes `data` as the stream `header` describes (header included, padded to whole
/// 64-bit words).
pub(super) fn compress<T: Element, D: Dims>(data: &[T], header: &Header, exec: &CpuExecutor) -> Result<Vec<u8>> {
    match (exec.threads() > 1, header.params.minbits == header.params.maxbits) {
        (false, _) => sequential::<T, D>(data, header),
        (true, true) => fixed_rate::<T, D>(data, header, exec),
        (true, false) => variable::<T, D>(data, header, exec),
    }
}

/// One thread: the header, then every block in order, written straight into the output
/// (fixed-rate blocks padded to `maxbits` land exactly where the parallel kernel puts
/// them).
fn sequential<T: Element, D: Dims>(data: &[T], header: &Header) -> Result<Vec<u8>> {
    let field = field_of(&header.shape);
    let nblocks = field.block_count();
    let capacity = header.bits() + nblocks * max_block_bits::<T, D>(&header.params);
    // Zeroed lazily by the allocator: pages the stream never reaches are never touched.
    let mut out = vec![0u8; capacity.div_ceil(64) * 8];
    let mut w = BitWriter::new(ByteWords(&mut out[..]), 0);
    header.write(&mut w)?;
    if !encode_blocks::<T, D, _>(&mut w, data, &field, &header.params, 0..nblocks) {
        return Err(non_finite(data));
    }
    let bits = w.position();
    w.flush();
    out.truncate(bits.div_ceil(64) * 8);
    out.shrink_to_fit();
    Ok(out)
}

/// The stream's first `bits` bits: the header, then zeros.
fn output_with_header(header: &Header, bits: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; bits.div_ceil(64) * 8];
    let mut w = BitWriter::new(ByteWords(&mut out[..]), 0);
    header.write(&mut w)?;
    w.flush();
    Ok(out)
}

/// Fixed rate, several threads: every tile of blocks knows its place in the stream, so
/// tiles are coded in parallel straight into it.
fn fixed_rate<T: Element, D: Dims>(data: &[T], header: &Header, exec: &CpuExecutor) -> Result<Vec<u8>> {
    let field = field_of(&header.shape);
    let nblocks = field.block_count();
    let maxbits = header.params.maxbits as usize;
    let start = header.bits();
    let mut out = output_with_header(header, start + nblocks * maxbits)?;
    let tile = tile_blocks(nblocks, exec.threads());
    let tiles: Vec<_> = (0..nblocks).step_by(tile).map(|b| b..(b + tile).min(nblocks)).collect();
    let ranges: Vec<_> = tiles.iter().map(|t| start + t.start * maxbits..start + t.end * maxbits).collect();
    let ok = AtomicBool::new(true);
    assemble(exec, &mut out, &ranges, |i, mut w| {
        if !encode_blocks::<T, D, _>(&mut w, data, &field, &header.params, tiles[i].clone()) {
            ok.store(false, Ordering::Relaxed);
        }
        w
    });
    if !ok.into_inner() {
        return Err(non_finite(data));
    }
    Ok(out)
}

/// A run of consecutive blocks coded into its own buffer.
struct Run<'a> {
    words: &'a [u64],
    bits: usize,
}

/// Fixed accuracy, several threads: tiles of consecutive blocks are coded in parallel,
/// each into its own buffer; once their lengths are known, they are moved behind the
/// header in parallel too.
fn variable<T: Element, D: Dims>(data: &[T], header: &Header, exec: &CpuExecutor) -> Result<Vec<u8>> {
    let field = field_of(&header.shape);
    let params = header.params;
    let nblocks = field.block_count();
    let bound = max_block_bits::<T, D>(&params);
    let tile = tile_blocks(nblocks, exec.threads());
    // One scratch allocation cut into a worst-case slot per tile: a buffer per tile
    // made the threads contend in the allocator and the page-fault path.
    let slot_words = (tile * bound).div_ceil(64);
    let mut scratch = vec![0u64; nblocks.div_ceil(tile) * slot_words];
    let slots: Vec<&mut [u64]> = scratch.chunks_mut(slot_words).collect();
    let runs = exec
        .map_items(slots, |i, words| {
            let blocks = i * tile..((i + 1) * tile).min(nblocks);
            let mut w = BitWriter::new(&mut *words, 0);
            if !encode_blocks::<T, D, _>(&mut w, data, &field, &params, blocks) {
                return Err(non_finite(data));
            }
            let bits = w.position();
            w.flush();
            Ok(Run { words: &*words, bits })
        })
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    let mut ranges = Vec::with_capacity(runs.len());
    let mut at = header.bits();
    for run in &runs {
        ranges.push(at..at + run.bits);
        at += run.bits;
    }
    let mut out = output_with_header(header, at)?;
    assemble(exec, &mut out, &ranges, |i, mut w| {
        copy_bits(runs[i].words, runs[i].bits, &mut w);
        w
    });
    Ok(out)
}
