//! One block of floating-point values to bits and back (zfp's `encode_block` /
//! `decode_block` for float and double, non-reversible).

use super::dims::Dims;
use super::fixedpoint::{block_exponent, fwd_cast, inv_cast, precision};
use super::order::{fwd_order, inv_order, sequency};
use super::planes::{decode_ints, encode_ints, skip_ints};
use super::scalar::Scalar;
use super::transform::{fwd_xform, inv_xform};
use crate::bitstream::{BitReader, BitWriter, Word, WordSink};

/// zfp's coding parameters for every block of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Fewest bits a block takes (zero-padded up to it).
    pub minbits: u32,
    /// Most bits a block may take (coding stops there).
    pub maxbits: u32,
    /// Most bit planes coded per block.
    pub maxprec: u32,
    /// Lowest bit plane exponent coded (sets the absolute error bound).
    pub minexp: i32,
}

/// Encodes one block and returns the bits written, or `None` (having written nothing)
/// if the block holds an infinity or NaN, which zfp cannot code.
#[inline(always)]
pub fn encode_block<S: Scalar, D: Dims, W: WordSink>(w: &mut BitWriter<W>, p: &Params, block: &D::Block<S>) -> Option<u32> {
    let emax = block_exponent::<S, D>(block)?;
    let prec = precision(emax, p.maxprec, p.minexp, D::D);
    // The biased exponent is 0 only for an all-zero block.
    let e = if prec > 0 { emax + S::EBIAS } else { 0 };
    let mut bits = 1;
    if e > 0 {
        bits += S::EBITS;
        w.write_bits(2 * e as u64 + 1, bits);
        let mut ints = fwd_cast::<S, D>(block, emax);
        fwd_xform::<S::Int, D>(&mut ints);
        let coef = fwd_order::<S, D>(&ints);
        bits += encode_ints::<S::UInt, D, W>(w, p.maxbits.saturating_sub(bits), prec, sequency::<S::UInt, D>(&coef));
    } else {
        w.write_bits(0, 1);
    }
    if bits < p.minbits {
        w.pad((p.minbits - bits) as usize);
        bits = p.minbits;
    }
    Some(bits)
}

/// Reads a block's leading bits: `Some(emax)` for a coded block (its exponent read), `None`
/// for an all-zero one.
#[inline(always)]
fn read_exponent<S: Scalar, R: Word>(r: &mut BitReader<'_, R>) -> Option<i32> {
    r.read_bit().then(|| r.read_bits(S::EBITS) as i32 - S::EBIAS)
}

/// Skips the zero padding up to `minbits`; returns the block's length.
#[inline(always)]
fn pad_to_minbits<R: Word>(r: &mut BitReader<'_, R>, p: &Params, bits: u32) -> u32 {
    if bits < p.minbits {
        r.skip((p.minbits - bits) as usize);
        return p.minbits;
    }
    bits
}

/// Decodes one block written by [`encode_block`] with the same parameters; returns the
/// values and the bits read.
#[inline(always)]
pub fn decode_block<S: Scalar, D: Dims, R: Word>(r: &mut BitReader<'_, R>, p: &Params) -> (D::Block<S>, u32) {
    let mut bits = 1;
    let block = match read_exponent::<S, R>(r) {
        Some(emax) => {
            bits += S::EBITS;
            let prec = precision(emax, p.maxprec, p.minexp, D::D);
            let mut ints = D::splat(<S::Int as Default>::default());
            bits += decode_ints::<S::UInt, D, R>(r, p.maxbits.saturating_sub(bits), prec, inv_order::<S, D>(&mut ints));
            inv_xform::<S::Int, D>(&mut ints);
            inv_cast::<S, D>(&ints, emax)
        }
        None => D::splat(S::ZERO),
    };
    (block, pad_to_minbits(r, p, bits))
}

/// Moves past one block written by [`encode_block`] without decoding its values (to
/// find where later blocks of a variable-length stream start); returns its length.
#[inline(always)]
pub fn skip_block<S: Scalar, D: Dims, R: Word>(r: &mut BitReader<'_, R>, p: &Params) -> u32 {
    let mut bits = 1;
    if let Some(emax) = read_exponent::<S, R>(r) {
        bits += S::EBITS;
        let prec = precision(emax, p.maxprec, p.minexp, D::D);
        bits += skip_ints::<S::UInt, D, R>(r, p.maxbits.saturating_sub(bits), prec);
    }
    pad_to_minbits(r, p, bits)
}

#[cfg(test)]
mod tests {
    use super::super::dims::{D1, D3};
    use super::*;

    const RATE8_1D: Params = Params { minbits: 32, maxbits: 32, maxprec: 64, minexp: -1074 };

    #[test]
    fn zero_block_is_one_zero_bit_padded_to_minbits() {
        let mut words = [u64::MAX; 2];
        let mut w = BitWriter::new(&mut words[..], 0);
        assert_eq!(encode_block::<f32, D1, _>(&mut w, &RATE8_1D, &[0.0; 4]), Some(32));
        assert_eq!(w.position(), 32);
        w.flush();
        assert_eq!(words[0], 0);
        let mut r = BitReader::new(&words, 0);
        assert_eq!(decode_block::<f32, D1, u64>(&mut r, &RATE8_1D), ([0.0; 4], 32));
    }

    #[test]
    fn header_bits_hold_the_biased_exponent() {
        let mut words = [0u64; 2];
        let mut w = BitWriter::new(&mut words[..], 0);
        encode_block::<f32, D1, _>(&mut w, &RATE8_1D, &[1.0, 0.5, 0.25, 0.0]).unwrap();
        w.flush();
        // emax = 1 -> e = 128 -> 2e + 1 = 257, LSB first in 9 bits.
        assert_eq!(words[0] & 0x1ff, 257);
    }

    #[test]
    fn non_finite_blocks_are_refused_untouched() {
        let mut words = [0u64; 2];
        let mut w = BitWriter::new(&mut words[..], 0);
        assert_eq!(encode_block::<f64, D1, _>(&mut w, &RATE8_1D, &[1.0, f64::NAN, 0.0, 0.0]), None);
        assert_eq!(w.position(), 0);
    }

    #[test]
    fn fixed_accuracy_block_stays_within_tolerance() {
        let p = Params { minbits: 1, maxbits: 16658, maxprec: 64, minexp: -10 };
        let block: [f64; 64] = core::array::from_fn(|i| ((i as f64) * 0.37).sin() * 3.0);
        let mut words = [0u64; 80];
        let mut w = BitWriter::new(&mut words[..], 5);
        let bits = encode_block::<f64, D3, _>(&mut w, &p, &block).unwrap();
        w.flush();
        let mut r = BitReader::new(&words, 5);
        let (back, read) = decode_block::<f64, D3, u64>(&mut r, &p);
        assert_eq!(read, bits);
        let mut r = BitReader::new(&words, 5);
        assert_eq!(skip_block::<f64, D3, u64>(&mut r, &p), bits);
        let err = block.iter().zip(&back).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err <= 2f64.powi(-10), "error {err}");
    }
}
