//! Variable-length (fixed-accuracy) kernel bodies. Block lengths depend on the data, so
//! a run of consecutive blocks is coded into one contiguous bit stream: on the CPU one
//! run per tile of blocks, on a GPU one run of a single block per slot. The runs are
//! then moved to their final offsets with [`copy_bits`].

use core::ops::Range;

use super::block::{decode_block, encode_block, skip_block, Params};
use super::dims::Dims;
use super::field::{gather, scatter, Field};
use super::scalar::{Coefficient, Scalar};
use crate::bitstream::{BitReader, BitWriter, Word, WordSink};

/// Upper bound on the bits one block takes under `p`: exponent, plus per coded plane
/// the verbatim bits (at most N), plus at most N positive and one negative group test
/// per plane and N scan bits in all.
pub fn max_block_bits<S: Scalar, D: Dims>(p: &Params) -> usize {
    let planes = p.maxprec.min(S::UInt::BITS) as usize;
    let coded = 1 + S::EBITS as usize + planes * D::N + 2 * D::N + planes;
    coded.min(p.maxbits as usize).max(p.minbits as usize).max(1)
}

/// Encodes `blocks` of `data` one after another into `w`. Returns false at the first
/// block that holds a non-finite value (or if `data` is shorter than the field).
pub fn encode_blocks<S: Scalar, D: Dims, W: WordSink>(
    w: &mut BitWriter<W>,
    data: &[S],
    field: &Field,
    p: &Params,
    blocks: Range<usize>,
) -> bool {
    for b in blocks {
        let Some(block) = gather::<S, D>(data, field, b) else { return false };
        if encode_block::<S, D, W>(w, p, &block).is_none() {
            return false;
        }
    }
    true
}

/// Decodes `blocks` one after another from `r` into `out`, which holds the array's
/// values from index `out_start` on. Returns false if `out` does not cover a block or
/// the stream ends early.
pub fn decode_blocks<S: Scalar, D: Dims, R: Word>(
    r: &mut BitReader<'_, R>,
    field: &Field,
    p: &Params,
    blocks: Range<usize>,
    out: &mut [S],
    out_start: usize,
) -> bool {
    for b in blocks {
        let (block, _) = decode_block::<S, D, R>(r, p);
        if r.overrun() || !scatter::<S, D>(&block, out, out_start, field, b) {
            return false;
        }
    }
    true
}

/// Moves `r` past `count` blocks without decoding them (the first pass of a parallel
/// decode, which finds where each tile of blocks starts). Returns false if the stream
/// ends early.
pub fn skip_blocks<S: Scalar, D: Dims, R: Word>(r: &mut BitReader<'_, R>, p: &Params, count: usize) -> bool {
    for _ in 0..count {
        skip_block::<S, D, R>(r, p);
        if r.overrun() {
            return false;
        }
    }
    true
}

/// Appends the first `nbits` bits of `src` to `dst`: the compaction step that moves a
/// run (a tile's or a slot's bits) to its final offset. Missing source words read as 0.
pub fn copy_bits<W: WordSink>(src: &[u64], nbits: usize, dst: &mut BitWriter<W>) {
    let full = nbits / 64;
    for i in 0..full {
        dst.write_bits(src.get(i).copied().unwrap_or(0), 64);
    }
    let rest = (nbits % 64) as u32;
    if rest > 0 {
        dst.write_bits(src.get(full).copied().unwrap_or(0), rest);
    }
}

#[cfg(test)]
mod tests {
    use super::super::dims::{D1, D3};
    use super::*;

    const TOL: Params = Params { minbits: 1, maxbits: 16658, maxprec: 64, minexp: -12 };

    #[test]
    fn tiles_concatenated_equal_one_run() {
        let field = Field::new([37, 1, 1]);
        let data: [f64; 37] = core::array::from_fn(|i| (i as f64 * 0.21).sin() * (1.0 + i as f64));
        let nb = field.block_count();
        let mut whole = [0u64; 64];
        let mut w = BitWriter::new(&mut whole[..], 7);
        assert!(encode_blocks::<f64, D1, _>(&mut w, &data, &field, &TOL, 0..nb));
        let end = w.position();
        w.flush();
        // Two tiles coded separately, then copied behind each other after 7 bits.
        let mut t0 = [0u64; 32];
        let mut t1 = [0u64; 32];
        let mut w0 = BitWriter::new(&mut t0[..], 0);
        assert!(encode_blocks::<f64, D1, _>(&mut w0, &data, &field, &TOL, 0..4));
        let n0 = w0.position();
        w0.flush();
        let mut w1 = BitWriter::new(&mut t1[..], 0);
        assert!(encode_blocks::<f64, D1, _>(&mut w1, &data, &field, &TOL, 4..nb));
        let n1 = w1.position();
        w1.flush();
        let mut joined = [0u64; 64];
        let mut w = BitWriter::new(&mut joined[..], 7);
        copy_bits(&t0, n0, &mut w);
        copy_bits(&t1, n1, &mut w);
        assert_eq!(w.position(), end);
        w.flush();
        assert_eq!(joined, whole);
        let mut out = [0f64; 37];
        let mut r = BitReader::new(&joined, 7);
        assert!(decode_blocks::<f64, D1, u64>(&mut r, &field, &TOL, 0..nb, &mut out, 0));
        assert_eq!(r.position(), end);
        // Skipping the first tile lands where the second was copied.
        let mut r = BitReader::new(&joined, 7);
        assert!(skip_blocks::<f64, D1, u64>(&mut r, &TOL, 4));
        assert_eq!(r.position(), 7 + n0);
        assert!(!skip_blocks::<f64, D1, u64>(&mut BitReader::new(&joined[..1], 7), &TOL, nb));
        assert!(data.iter().zip(&out).all(|(a, b)| (a - b).abs() <= 2f64.powi(-12)));
        let mut r = BitReader::new(&joined[..3], 7);
        assert!(!decode_blocks::<f64, D1, u64>(&mut r, &field, &TOL, 0..nb, &mut out, 0));
    }

    #[test]
    fn block_bound_holds_for_incompressible_blocks() {
        let bound = max_block_bits::<f32, D3>(&Params { minbits: 1, maxbits: 16658, maxprec: 64, minexp: -1074 });
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let data: [f32; 64] = core::array::from_fn(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Values in ±[1, 2) with random mantissas: every plane is busy.
            f32::from_bits(0x3f80_0000 | (seed as u32) & 0x807f_ffff)
        });
        let field = Field::new([4, 4, 4]);
        let mut words = [0u64; 64];
        let mut w = BitWriter::new(&mut words[..], 0);
        let p = Params { minbits: 1, maxbits: 16658, maxprec: 64, minexp: -1074 };
        assert!(encode_blocks::<f32, D3, _>(&mut w, &data, &field, &p, 0..1));
        assert!(w.position() <= bound && w.position() > 1900, "{} bits, bound {bound}", w.position());
    }
}
