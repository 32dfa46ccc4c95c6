//! Compression modes: zfp 1.0's mapping from a rate or tolerance to the block coding
//! parameters, and from parameters to the header's mode word and back.

use codec_kernels::zfp::{Params, Scalar};

use crate::{Codec, ElemType, Error, Result, ZfpMode};

/// zfp's parameter limits (`ZFP_MIN_BITS`, `ZFP_MAX_BITS`, `ZFP_MAX_PREC`, `ZFP_MIN_EXP`).
pub const MIN_BITS: u32 = 1;
/// Largest block size in bits zfp allows.
pub const MAX_BITS: u32 = 16658;
/// Most bit planes per value.
pub const MAX_PREC: u32 = 64;
/// Lowest bit plane exponent (that of the smallest f64 subnormal).
pub const MIN_EXP: i32 = -1074;

/// Largest mode word of the 12-bit short form (`ZFP_MODE_SHORT_MAX`); 0xfff flags the
/// 64-bit long form.
const SHORT_MAX: u64 = 4094;
/// First short-form mode word of each mode (fixed rate starts at 0).
const SHORT_PRECISION: u64 = 2048;
const SHORT_REVERSIBLE: u64 = 2048 + 128;
const SHORT_ACCURACY: u64 = 2048 + 128 + 1;
/// Offset of the long form's biased minexp field.
const LONG_EXP_BIAS: i32 = 16495;

/// Values per block in `dims` dimensions.
pub(crate) fn block_values(dims: usize) -> u32 {
    1 << (2 * dims)
}

/// Bits of the exponent field for an element type, zfp's `EBITS`.
fn ebits(elem: ElemType) -> u32 {
    match elem {
        ElemType::F32 => 8,
        ElemType::F64 => 11,
    }
}

/// The exponent `e` of `x = f * 2^e` with `0.5 <= f < 1` (C's `frexp`), for finite x > 0.
fn frexp_exponent(x: f64) -> i32 {
    let bits = x.to_bits() & !(1 << 63);
    let biased = (bits >> 52) as i32;
    if biased == 0 {
        // Subnormal: the value is m * 2^-1074 with m < 2^52.
        (64 - bits.leading_zeros() as i32) - 1074
    } else {
        biased - 1022
    }
}

/// Block coding parameters for `mode` on `elem` arrays of `dims` dimensions, computed as
/// zfp 1.0's `zfp_stream_set_rate` (with the element type, as the `zfp` tool passes it:
/// at least `1 + EBITS` bits per block, never word-aligned) and
/// `zfp_stream_set_accuracy` compute them.
pub fn params_for(mode: ZfpMode, elem: ElemType, dims: usize) -> Result<Params> {
    match mode {
        ZfpMode::FixedRate { rate } => {
            let n = block_values(dims) as f64;
            if !(rate.is_finite() && rate > 0.0 && (n * rate + 0.5).floor() <= MAX_BITS as f64) {
                return Err(Error::ParamOutOfRange(format!(
                    "zfp rate {rate}: must be > 0 and at most {} bits per value in {dims}D",
                    MAX_BITS as f64 / n
                )));
            }
            let bits = ((n * rate + 0.5).floor() as u32).max(1 + ebits(elem));
            Ok(Params { minbits: bits, maxbits: bits, maxprec: MAX_PREC, minexp: MIN_EXP })
        }
        ZfpMode::FixedAccuracy { tolerance } => {
            // tol = f * 2^e, minexp = e - 1: the tolerance rounded down to a power of two.
            // Below 2^-1073 zfp's parameters would be its defaults (expert mode).
            if !(tolerance.is_finite() && tolerance >= f64::from_bits(1 << 1)) {
                return Err(Error::ParamOutOfRange(format!(
                    "zfp tolerance {tolerance}: must be finite and at least 2^-1073"
                )));
            }
            let minexp = frexp_exponent(tolerance) - 1;
            Ok(Params { minbits: MIN_BITS, maxbits: MAX_BITS, maxprec: MAX_PREC, minexp })
        }
    }
}

/// The codec (with its effective rate or tolerance) that parameters read from a header
/// describe, if they are a fixed-rate or fixed-accuracy configuration as zfp 1.0
/// classifies them.
pub fn codec_of(p: &Params, dims: usize) -> Result<Codec> {
    let default = p.minbits == MIN_BITS && p.maxbits == MAX_BITS && p.maxprec == MAX_PREC && p.minexp == MIN_EXP;
    if p.minbits > p.maxbits || p.maxprec == 0 || p.maxprec > MAX_PREC {
        return Err(Error::Corrupt(format!("inconsistent zfp parameters {p:?}")));
    }
    if default {
        return Err(Error::UnsupportedHeader("zfp expert mode (default parameters)".into()));
    }
    if p.minbits == p.maxbits && (1..=MAX_BITS).contains(&p.maxbits) && p.maxprec >= MAX_PREC && p.minexp == MIN_EXP {
        return Ok(Codec::zfp_rate(p.maxbits as f64 / block_values(dims) as f64));
    }
    let unbounded = p.minbits <= MIN_BITS && p.maxbits >= MAX_BITS;
    if unbounded && p.maxprec < MAX_PREC && p.minexp == MIN_EXP {
        return Err(Error::UnsupportedHeader(format!("zfp fixed-precision mode ({} bit planes)", p.maxprec)));
    }
    if unbounded && p.maxprec >= MAX_PREC && p.minexp >= MIN_EXP {
        return Ok(Codec::zfp_accuracy(<f64 as Scalar>::pow2(p.minexp)));
    }
    if unbounded && p.maxprec >= MAX_PREC {
        return Err(Error::UnsupportedHeader("zfp reversible (lossless) mode".into()));
    }
    Err(Error::UnsupportedHeader(format!("zfp expert mode {p:?}")))
}

/// The header's mode word for `p` (zfp's `zfp_stream_mode`): the 12-bit short form for
/// common configurations, otherwise the 64-bit form with every parameter.
pub fn mode_word(p: &Params, dims: usize) -> u64 {
    match codec_of(p, dims) {
        Ok(Codec::Zfp { mode: ZfpMode::FixedRate { .. } }) if p.maxbits <= 2048 => return p.maxbits as u64 - 1,
        Ok(Codec::Zfp { mode: ZfpMode::FixedAccuracy { .. } }) if p.minexp <= 843 => return (p.minexp - MIN_EXP) as u64 + SHORT_ACCURACY,
        _ => {}
    }
    let field = |v: u32, max: u32| (v.clamp(1, max) - 1) as u64;
    let minexp = (p.minexp + LONG_EXP_BIAS).clamp(0, 0x7fff) as u64;
    0xfff | field(p.minbits, 0x8000) << 12 | field(p.maxbits, 0x8000) << 27 | field(p.maxprec, 0x80) << 42 | minexp << 49
}

/// Parameters from a mode word (zfp's `zfp_stream_set_mode`); reversible mode is given
/// as `minexp = MIN_EXP - 1`, as zfp represents it.
pub fn params_of_mode(mode: u64) -> Params {
    if mode <= SHORT_MAX {
        let unbounded = |maxprec, minexp| Params { minbits: MIN_BITS, maxbits: MAX_BITS, maxprec, minexp };
        if mode < SHORT_PRECISION {
            let bits = mode as u32 + 1;
            Params { minbits: bits, maxbits: bits, maxprec: MAX_PREC, minexp: MIN_EXP }
        } else if mode < SHORT_REVERSIBLE {
            unbounded((mode - SHORT_PRECISION) as u32 + 1, MIN_EXP)
        } else if mode == SHORT_REVERSIBLE {
            unbounded(MAX_PREC, MIN_EXP - 1)
        } else {
            unbounded(MAX_PREC, (mode - SHORT_ACCURACY) as i32 + MIN_EXP)
        }
    } else {
        let field = |shift: u32, mask: u64| ((mode >> shift) & mask) as u32;
        Params {
            minbits: field(12, 0x7fff) + 1,
            maxbits: field(27, 0x7fff) + 1,
            maxprec: field(42, 0x7f) + 1,
            minexp: field(49, 0x7fff) as i32 - LONG_EXP_BIAS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(r: f64) -> ZfpMode {
        ZfpMode::FixedRate { rate: r }
    }
    fn tol(t: f64) -> ZfpMode {
        ZfpMode::FixedAccuracy { tolerance: t }
    }

    #[test]
    fn rates_round_and_are_raised_per_type() {
        let bits = |r, elem, d| params_for(rate(r), elem, d).unwrap().maxbits;
        assert_eq!(bits(4.0, ElemType::F32, 3), 256);
        assert_eq!(bits(8.0, ElemType::F32, 1), 32);
        assert_eq!(bits(2.5, ElemType::F64, 1), 12);
        assert_eq!(bits(2.5, ElemType::F32, 1), 10);
        assert_eq!(bits(1.0, ElemType::F32, 1), 9);
        assert_eq!(bits(0.1, ElemType::F64, 2), 12);
        assert_eq!(bits(64.0, ElemType::F64, 3), 4096);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 261.0] {
            assert!(matches!(params_for(rate(bad), ElemType::F32, 3), Err(Error::ParamOutOfRange(_))), "{bad}");
        }
    }

    #[test]
    fn tolerances_round_down_to_powers_of_two() {
        let minexp = |t| params_for(tol(t), ElemType::F32, 3).unwrap().minexp;
        assert_eq!(minexp(1e-2), -7);
        assert_eq!(minexp(1e-3), -10);
        assert_eq!(minexp(1e-4), -14);
        assert_eq!(minexp(1.0), 0);
        assert_eq!(minexp(0.75), -1);
        assert_eq!(minexp(f64::from_bits(2)), -1073);
        assert_eq!(minexp(f64::from_bits(3 << 23)), -1050); // 1.5 * 2^-1050, subnormal
        for bad in [0.0, -1e-3, f64::NAN, f64::INFINITY, f64::from_bits(1)] {
            assert!(matches!(params_for(tol(bad), ElemType::F64, 1), Err(Error::ParamOutOfRange(_))), "{bad}");
        }
    }

    #[test]
    fn mode_words_match_zfp_headers() {
        let word = |m: ZfpMode, d| mode_word(&params_for(m, ElemType::F32, d).unwrap(), d);
        assert_eq!(word(rate(4.0), 3), 255);
        assert_eq!(word(rate(8.0), 1), 31);
        assert_eq!(word(tol(1e-2), 3), 3244);
        assert_eq!(word(tol(1e-3), 3), 3241);
        assert_eq!(word(tol(1e-4), 3), 3237);
        // 3D f64 rate 64: 4096 bits per block needs the long form.
        let p = params_for(rate(64.0), ElemType::F64, 3).unwrap();
        let long = mode_word(&p, 3);
        assert_eq!(long & 0xfff, 0xfff);
        assert_eq!(params_of_mode(long), p);
        // A huge tolerance (minexp > 843) also needs it.
        let p = params_for(tol(1e300), ElemType::F64, 1).unwrap();
        assert_eq!(params_of_mode(mode_word(&p, 1)), p);
    }

    #[test]
    fn every_short_word_round_trips_or_is_classified() {
        // Fixed precision, reversible and the default (expert) parameters are refused;
        // precisions above 64 are not even valid parameters.
        for mode in 0..=SHORT_MAX {
            let p = params_of_mode(mode);
            match codec_of(&p, 2) {
                Ok(_) => assert_eq!(mode_word(&p, 2), mode),
                Err(Error::UnsupportedHeader(_) | Error::Corrupt(_)) => {
                    assert!((SHORT_PRECISION..=SHORT_ACCURACY).contains(&mode), "{mode}")
                }
                Err(e) => panic!("{mode}: {e}"),
            }
        }
    }
}
