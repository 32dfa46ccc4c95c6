//! Fixed-rate kernel bodies: every block takes exactly `maxbits` bits, so block `b`
//! starts at bit `header_bits + b * maxbits` and blocks are coded independently, one per
//! grid thread (the cuZFP scheme).

use core::sync::atomic::AtomicU64;

use super::block::{decode_block, encode_block, Params};
use super::dims::Dims;
use super::field::{gather, scatter, Field};
use super::scalar::Scalar;
use crate::bitstream::{BitReader, BitWriter, SharedRange, Word};
use crate::grid::Grid;

/// Where the blocks of a fixed-rate stream lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedRate {
    /// The array.
    pub field: Field,
    /// Coding parameters (`minbits == maxbits`).
    pub params: Params,
    /// Bits before the first block (the stream header).
    pub header_bits: usize,
}

impl FixedRate {
    /// First stream bit of block `b`.
    #[inline(always)]
    pub fn block_offset(&self, b: usize) -> usize {
        self.header_bits + b * self.params.maxbits as usize
    }

    /// Stream bits up to the end of the last block.
    pub fn total_bits(&self) -> usize {
        self.block_offset(self.field.block_count())
    }
}

/// Kernel body: encodes the blocks of grid thread `g` (a grid-stride loop, so any launch
/// covers every block) from `data` into `out`, which must be zeroed beyond the header
/// and shared by all threads (each block ORs only its two edge words, cuZFP style). Returns false if one of its blocks holds a non-finite
/// value (that block's bits are then left zero).
pub fn encode_fixed_rate_body<S: Scalar, D: Dims>(g: Grid, data: &[S], layout: &FixedRate, out: &[AtomicU64]) -> bool {
    let mut ok = true;
    let nblocks = layout.field.block_count();
    let mut b = g.global_index();
    while b < nblocks {
        let Some(block) = gather::<S, D>(data, &layout.field, b) else {
            return false;
        };
        let start = layout.block_offset(b);
        let end = start + layout.params.maxbits as usize;
        let mut w = BitWriter::new(SharedRange::new(out, start, end), start);
        ok &= encode_block::<S, D, _>(&mut w, &layout.params, &block).is_some();
        w.flush();
        b += g.global_count();
    }
    ok
}

/// Kernel body: decodes block `b` of the stream `words` into `out`, which holds the
/// array's values from index `out_start` on. Returns false if `out` does not cover the
/// block (nothing is written then) or the stream ends inside the block.
#[inline]
pub fn decode_fixed_rate_block<S: Scalar, D: Dims, R: Word>(
    b: usize,
    words: &[R],
    layout: &FixedRate,
    out: &mut [S],
    out_start: usize,
) -> bool {
    let mut r = BitReader::new(words, layout.block_offset(b));
    let (block, _) = decode_block::<S, D, R>(&mut r, &layout.params);
    !r.overrun() && scatter::<S, D>(&block, out, out_start, &layout.field, b)
}

#[cfg(test)]
mod tests {
    use super::super::dims::D2;
    use super::*;
    use core::sync::atomic::Ordering;

    #[test]
    fn blocks_land_at_their_offsets_whatever_the_launch_shape() {
        let field = Field::new([9, 7, 1]);
        let data: [f32; 63] = core::array::from_fn(|i| (i as f32 * 0.3).cos());
        let layout = FixedRate { field, params: Params { minbits: 301, maxbits: 301, maxprec: 64, minexp: -1074 }, header_bits: 13 };
        let words = layout.total_bits().div_ceil(64);
        let encode = |block_dim: u32, grid_dim: u32| {
            let out: [AtomicU64; 64] = core::array::from_fn(|_| AtomicU64::new(0));
            for block_idx in 0..grid_dim {
                for thread_idx in 0..block_dim {
                    let g = Grid { block_idx, block_dim, thread_idx, grid_dim };
                    assert!(encode_fixed_rate_body::<f32, D2>(g, &data, &layout, &out[..words]));
                }
            }
            out.map(|w| w.load(Ordering::Relaxed))
        };
        let one = encode(1, 1);
        assert_eq!(one, encode(4, 2));
        assert_eq!(one, encode(32, 3));
        assert_eq!(one[0] & 0x1fff, 0, "header bits untouched");
        let mut back = [0f32; 63];
        for b in 0..field.block_count() {
            assert!(decode_fixed_rate_block::<f32, D2, u64>(b, &one, &layout, &mut back, 0));
        }
        let err = data.iter().zip(&back).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(err < 1e-4, "error {err}");
        assert!(!decode_fixed_rate_block::<f32, D2, u64>(0, &one[..2], &layout, &mut back, 0));
    }

    #[test]
    fn non_finite_values_are_reported() {
        let field = Field::new([4, 4, 1]);
        let mut data = [1.0f64; 16];
        data[5] = f64::INFINITY;
        let layout = FixedRate { field, params: Params { minbits: 64, maxbits: 64, maxprec: 64, minexp: -1074 }, header_bits: 0 };
        let out: [AtomicU64; 1] = Default::default();
        let g = Grid { block_idx: 0, block_dim: 1, thread_idx: 0, grid_dim: 1 };
        assert!(!encode_fixed_rate_body::<f64, D2>(g, &data, &layout, &out));
    }
}
