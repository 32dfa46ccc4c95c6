//! Compression: runs the kernel bodies over the blocks and assembles the stream.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use codec_kernels::bitstream::BitWriter;
use codec_kernels::grid::LaunchConfig;
use codec_kernels::zfp::fixed_rate::encode_fixed_rate_body;
use codec_kernels::zfp::variable::{copy_bits, encode_blocks, max_block_bits};
use codec_kernels::zfp::{Dims, FixedRate};

use super::header::Header;
use super::layout::{field_of, tile_blocks, BLOCK_DIM};
use super::words::{bytes_from_words, ByteWords};
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

/// Fixed rate, several threads: one grid thread per block, each writing its bits into a
/// shared zeroed buffer at its fixed offset.
fn fixed_rate<T: Element, D: Dims>(data: &[T], header: &Header, exec: &CpuExecutor) -> Result<Vec<u8>> {
    let layout = FixedRate { field: field_of(&header.shape), params: header.params, header_bits: header.bits() };
    let words: Vec<AtomicU64> = (0..layout.total_bits().div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    let mut w = BitWriter::new(&words[..], 0);
    header.write(&mut w)?;
    w.flush();
    let ok = AtomicBool::new(true);
    exec.launch(LaunchConfig::for_items(layout.field.block_count(), BLOCK_DIM), |g| {
        if !encode_fixed_rate_body::<T, D>(g, data, &layout, &words) {
            ok.store(false, Ordering::Relaxed);
        }
    });
    if !ok.into_inner() {
        return Err(non_finite(data));
    }
    Ok(bytes_from_words(words.into_iter().map(AtomicU64::into_inner)))
}

/// A run of consecutive blocks coded into its own buffer.
struct Run {
    words: Vec<u64>,
    bits: usize,
}

/// Fixed accuracy, several threads: tiles of consecutive blocks are coded in parallel,
/// each into its own buffer, then compacted behind the header.
fn variable<T: Element, D: Dims>(data: &[T], header: &Header, exec: &CpuExecutor) -> Result<Vec<u8>> {
    let field = field_of(&header.shape);
    let params = header.params;
    let nblocks = field.block_count();
    let bound = max_block_bits::<T, D>(&params);
    let runs = exec
        .map_tiles(nblocks, tile_blocks(nblocks, exec.threads()), |blocks| {
            let mut words = vec![0u64; (blocks.len() * bound).div_ceil(64)];
            let mut w = BitWriter::new(&mut words[..], 0);
            if !encode_blocks::<T, D, _>(&mut w, data, &field, &params, blocks) {
                return Err(non_finite(data));
            }
            let bits = w.position();
            w.flush();
            Ok(Run { words, bits })
        })
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    let total = header.bits() + runs.iter().map(|r| r.bits).sum::<usize>();
    let mut out = vec![0u8; total.div_ceil(64) * 8];
    let mut w = BitWriter::new(ByteWords(&mut out[..]), 0);
    header.write(&mut w)?;
    for run in &runs {
        copy_bits(&run.words, run.bits, &mut w);
    }
    w.flush();
    Ok(out)
}
