//! `cvt`: conversions between integer and floating-point types with PTX rounding and
//! saturation rules.

use crate::alu::{ftz32, mask, sext};

/// A scalar type: the kind and width of an instruction type such as `.s32` or `.f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    B,
    U,
    S,
    F,
    Pred,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ty {
    pub kind: Kind,
    pub bits: u32,
}

impl Ty {
    pub fn parse(s: &str) -> Option<Ty> {
        let (kind, bits) = match s {
            ".pred" => return Some(Ty { kind: Kind::Pred, bits: 1 }),
            _ => {
                let s = s.strip_prefix('.')?;
                let (k, n) = s.split_at(1);
                let k = match k {
                    "b" => Kind::B,
                    "u" => Kind::U,
                    "s" => Kind::S,
                    "f" => Kind::F,
                    _ => return None,
                };
                (k, n.parse::<u32>().ok()?)
            }
        };
        let ok = match kind {
            Kind::F => matches!(bits, 16 | 32 | 64),
            _ => matches!(bits, 8 | 16 | 32 | 64),
        };
        ok.then_some(Ty { kind, bits })
    }
    pub fn is_float(self) -> bool {
        self.kind == Kind::F
    }
}

/// Rounding modifier: `.rn/.rz/.rm/.rp` round to a float, `.rni/.rzi/.rmi/.rpi` to an
/// integral value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rnd {
    None,
    Rn,
    Rz,
    Rm,
    Rp,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

impl Rnd {
    pub fn parse(s: &str) -> Option<Rnd> {
        Some(match s {
            ".rn" => Rnd::Rn,
            ".rz" => Rnd::Rz,
            ".rm" => Rnd::Rm,
            ".rp" => Rnd::Rp,
            ".rni" => Rnd::Rni,
            ".rzi" => Rnd::Rzi,
            ".rmi" => Rnd::Rmi,
            ".rpi" => Rnd::Rpi,
            _ => return None,
        })
    }
    fn is_integral(self) -> bool {
        matches!(self, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi)
    }
}

/// A binary floating-point format: exponent and stored mantissa bits.
#[derive(Clone, Copy)]
struct Fmt {
    exp: u32,
    man: u32,
}
const F16: Fmt = Fmt { exp: 5, man: 10 };
const F32: Fmt = Fmt { exp: 8, man: 23 };

/// The value of a float register of `bits` width, exactly, as f64.
fn float_value(v: u64, bits: u32) -> f64 {
    match bits {
        16 => f16_to_f64(v as u16),
        32 => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    sign * match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Rounds the finite or infinite f64 `x` to format `f` under `rnd` (Rn/Rz/Rm/Rp), exactly
/// (a single rounding from the f64 value). NaN gives the format's canonical NaN
/// (all mantissa bits set).
fn round_to(x: f64, f: Fmt, rnd: Rnd) -> u64 {
    let sign = (x.is_sign_negative() as u64) << (f.exp + f.man);
    let exp_all = (1u64 << f.exp) - 1;
    if x.is_nan() {
        return (exp_all << f.man) | mask(f.man);
    }
    if x.is_infinite() {
        return sign | (exp_all << f.man);
    }
    if x == 0.0 {
        return sign;
    }
    // Rounding of the magnitude: up (away from zero) or down (toward zero) for directed modes.
    let neg = x < 0.0;
    let up = match rnd {
        Rnd::Rp => Some(!neg),
        Rnd::Rm => Some(neg),
        Rnd::Rz => Some(false),
        _ => None, // nearest even
    };
    let bits = x.abs().to_bits();
    let (be, bm) = ((bits >> 52) as i64, bits & mask(52));
    // |x| = m * 2^e exactly.
    let (m, e) = if be == 0 { (bm, -1074i64) } else { (bm | (1 << 52), be - 1075) };
    let top = 63 - m.leading_zeros() as i64 + e; // floor(log2 |x|)
    let bias = (1i64 << (f.exp - 1)) - 1;
    let emin = 1 - bias;
    let q = top.max(emin) - f.man as i64; // exponent of the target's last mantissa bit
    let shift = q - e;
    let mut n: u64 = if shift <= 0 {
        m << (-shift) as u32
    } else if shift >= 64 {
        // Far below the smallest subnormal: only the rounding direction matters.
        match up {
            Some(true) => 1,
            _ => 0,
        }
    } else {
        let kept = m >> shift;
        let rest = m & mask(shift as u32);
        let half = 1u64 << (shift - 1);
        let round_up = match up {
            Some(u) => u && rest != 0,
            None => rest > half || (rest == half && kept & 1 == 1),
        };
        kept + round_up as u64
    };
    let mut q = q;
    if n >> (f.man + 1) != 0 {
        n >>= 1; // carry out of the mantissa (exact: n was 2^(man+1))
        q += 1;
    }
    let exp_field = if n >> f.man == 0 { 0 } else { q + f.man as i64 + bias };
    if exp_field >= exp_all as i64 {
        // Overflow: infinity when rounding away from zero or to nearest, else the largest finite.
        return match up {
            Some(false) => sign | ((exp_all - 1) << f.man) | mask(f.man),
            _ => sign | (exp_all << f.man),
        };
    }
    sign | ((exp_field as u64) << f.man) | (n & mask(f.man))
}

/// Rounds a float value to an integral value under `.rni/.rzi/.rmi/.rpi`.
fn round_integral(x: f64, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rzi => x.trunc(),
        Rnd::Rmi => x.floor(),
        Rnd::Rpi => x.ceil(),
        _ => x.round_ties_even(),
    }
}

/// An integer converted to a float of `to` bits under `rnd`, with a single rounding.
fn int_to_float(x: i128, to: u32, rnd: Rnd) -> u64 {
    if to == 16 {
        // |x| > 2^53 (where `as f64` rounds) overflows f16 in every mode alike.
        return round_to(x as f64, F16, rnd);
    }
    // Rust's integer-to-float casts round to nearest even; a directed mode then takes
    // the neighbour on its side when the nearest one lies on the wrong side of x.
    let (bits, back) = if to == 64 {
        let r = x as f64;
        (r.to_bits(), r as i128)
    } else {
        let r = x as f32;
        (r.to_bits() as u64, r as i128)
    };
    let (value_down, value_up) = match rnd {
        Rnd::Rm => (back > x, false),
        Rnd::Rp => (false, back < x),
        Rnd::Rz => (x > 0 && back > x, x < 0 && back < x),
        _ => (false, false),
    };
    // Bit patterns order magnitudes: a step down in value is -1 for positives, +1 for negatives.
    match (value_down, value_up, x < 0) {
        (true, _, false) | (_, true, true) => bits - 1,
        (true, _, true) | (_, true, false) => bits + 1,
        _ => bits,
    }
}

/// `cvt.rnd.sat.ftz.to.from d, a` on register bits; the result is masked to `to`.
pub(crate) fn cvt(a: u64, from: Ty, to: Ty, rnd: Rnd, sat: bool, ftz: bool) -> u64 {
    let out = match (from.is_float(), to.is_float()) {
        (false, false) => {
            let x: i128 = if from.kind == Kind::S { sext(a, from.bits) as i128 } else { (a & mask(from.bits)) as i128 };
            let x = if sat { x.clamp(int_min(to), int_max(to)) } else { x };
            x as u64
        }
        (false, true) => {
            let x: i128 = if from.kind == Kind::S { sext(a, from.bits) as i128 } else { (a & mask(from.bits)) as i128 };
            let r = int_to_float(x, to.bits, rnd);
            float_post(r, to.bits, ftz, sat)
        }
        (true, false) => {
            // Float to integer: round as asked, then saturate to the destination range
            // (always, with or without .sat); NaN converts to 0.
            let x = float_in(a, from.bits, ftz);
            if x.is_nan() {
                0
            } else {
                let r = round_integral(x, rnd);
                let (lo, hi) = (int_min(to), int_max(to));
                let v = if r <= lo as f64 {
                    lo
                } else if r >= hi as f64 {
                    hi
                } else {
                    r as i128
                };
                v as u64
            }
        }
        (true, true) => {
            let x = float_in(a, from.bits, ftz);
            let r = if rnd.is_integral() {
                // Same-size rounding to an integral value in the same format.
                let r = round_integral(x, rnd);
                match to.bits {
                    64 => r.to_bits(),
                    32 => round_to(r, F32, Rnd::Rn),
                    _ => round_to(r, F16, Rnd::Rn),
                }
            } else {
                match to.bits {
                    64 => {
                        if x.is_nan() {
                            // Widening keeps the payload, quieted.
                            (if from.bits == 32 { (f32::from_bits(a as u32) as f64).to_bits() } else { a }) | (1 << 51)
                        } else {
                            x.to_bits()
                        }
                    }
                    32 if from.bits == 16 => (x as f32).to_bits() as u64,
                    32 => round_to(x, F32, rnd),
                    _ => round_to(x, F16, rnd),
                }
            };
            float_post(r, to.bits, ftz, sat)
        }
    };
    out & mask(to.bits)
}

fn int_min(t: Ty) -> i128 {
    if t.kind == Kind::S {
        -(1i128 << (t.bits - 1))
    } else {
        0
    }
}
fn int_max(t: Ty) -> i128 {
    if t.kind == Kind::S {
        (1i128 << (t.bits - 1)) - 1
    } else {
        (1i128 << t.bits) - 1
    }
}

/// A float source operand's value, with .ftz flushing f32 subnormals.
fn float_in(a: u64, bits: u32, ftz: bool) -> f64 {
    if bits == 32 && ftz {
        ftz32(f32::from_bits(a as u32)) as f64
    } else {
        float_value(a, bits)
    }
}

/// .ftz flushes an f32 subnormal result; .sat clamps a float result to [0, 1] (NaN to 0).
fn float_post(r: u64, bits: u32, ftz: bool, sat: bool) -> u64 {
    let r = if sat {
        let x = float_value(r, bits);
        let c = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) + 0.0 };
        match bits {
            64 => c.to_bits(),
            32 => (c as f32).to_bits() as u64,
            _ => round_to(c, F16, Rnd::Rn),
        }
    } else {
        r
    };
    if bits == 32 && ftz {
        ftz32(f32::from_bits(r as u32)).to_bits() as u64
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    //! Conversions against independent references over many pseudo-random inputs:
    //! Rust's `as` casts (round to nearest even, float-to-int saturating with NaN to 0)
    //! and the `half` crate, plus the defining property of each directed mode.
    use super::*;

    const F32T: Ty = Ty { kind: Kind::F, bits: 32 };
    const F64T: Ty = Ty { kind: Kind::F, bits: 64 };
    const S64T: Ty = Ty { kind: Kind::S, bits: 64 };
    const S32T: Ty = Ty { kind: Kind::S, bits: 32 };
    const F16T: Ty = Ty { kind: Kind::F, bits: 16 };

    /// SplitMix64: reproducible inputs without a dependency.
    fn inputs(n: usize) -> impl Iterator<Item = u64> {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        (0..n).map(move |_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
    }

    /// f64 values spread over every exponent, f32's and f16's ranges included.
    fn doubles(n: usize) -> impl Iterator<Item = f64> {
        inputs(n).map(|b| {
            let e = 1023 - 160 + (b >> 52) % 320; // exponents around the f32 range
            f64::from_bits((b & (1 << 63)) | (e << 52) | (b & ((1 << 52) - 1)))
        })
    }

    #[test]
    fn f64_to_f32_nearest_matches_the_as_cast() {
        for x in doubles(200_000) {
            assert_eq!(cvt(x.to_bits(), F64T, F32T, Rnd::Rn, false, false), (x as f32).to_bits() as u64, "{x:e}");
        }
    }

    #[test]
    fn directed_f64_to_f32_brackets_the_value() {
        for x in doubles(100_000) {
            let down = f32::from_bits(cvt(x.to_bits(), F64T, F32T, Rnd::Rm, false, false) as u32) as f64;
            let up = f32::from_bits(cvt(x.to_bits(), F64T, F32T, Rnd::Rp, false, false) as u32) as f64;
            let zero = f32::from_bits(cvt(x.to_bits(), F64T, F32T, Rnd::Rz, false, false) as u32) as f64;
            assert!(down <= x && x <= up, "{x:e}: {down:e} {up:e}");
            // Adjacent (or equal when exact): nothing representable lies strictly between.
            let (d32, u32_) = (down as f32, up as f32);
            assert!(d32 == u32_ || next_up(d32) == u32_, "{x:e}: {down:e} {up:e}");
            assert_eq!(zero, if x < 0.0 { up } else { down }, "{x:e}");
        }
    }

    fn next_up(x: f32) -> f32 {
        if x == 0.0 {
            return f32::from_bits(1);
        }
        f32::from_bits(if x > 0.0 { x.to_bits() + 1 } else { x.to_bits() - 1 })
    }

    #[test]
    fn f16_nearest_matches_the_half_crate() {
        // From f32 inputs: the half crate's f64 path rounds through f32 (double rounding),
        // so it is no reference for f64 inputs.
        for x in doubles(100_000).map(|v| (v / 2f64.powi(100)) as f32) {
            let want = half::f16::from_f32(x).to_bits() as u64;
            assert_eq!(cvt(x.to_bits() as u64, F32T, F16T, Rnd::Rn, false, false), want, "{x:e}");
            let back = cvt(want, F16T, F32T, Rnd::None, false, false);
            assert_eq!(back, half::f16::from_bits(want as u16).to_f32().to_bits() as u64);
        }
        // From f64, one rounding: 817.25 + 2^-17.2 is above the tie of 817.0 / 817.5
        // (f16 spacing 0.5 there), so it rounds up, where rounding through f32 would
        // land on the tie and go to the even 817.0.
        assert_eq!(cvt(817.2500066895216f64.to_bits(), F64T, F16T, Rnd::Rn, false, false), 0x6263);
    }

    #[test]
    fn integer_to_float_matches_the_as_cast_and_directed_modes_bracket() {
        for b in inputs(100_000) {
            let x = (b as i64) >> (b % 40);
            assert_eq!(cvt(x as u64, S64T, F32T, Rnd::Rn, false, false), (x as f32).to_bits() as u64);
            assert_eq!(cvt(x as u64, S64T, F64T, Rnd::Rn, false, false), (x as f64).to_bits());
            let down = f32::from_bits(cvt(x as u64, S64T, F32T, Rnd::Rm, false, false) as u32) as i128;
            let up = f32::from_bits(cvt(x as u64, S64T, F32T, Rnd::Rp, false, false) as u32) as i128;
            assert!(down <= x as i128 && x as i128 <= up, "{x}");
            let zero = f32::from_bits(cvt(x as u64, S64T, F32T, Rnd::Rz, false, false) as u32) as i128;
            assert_eq!(zero, if x < 0 { up } else { down });
        }
    }

    #[test]
    fn float_to_integer_truncation_matches_the_saturating_as_cast() {
        for x in doubles(100_000).map(|v| v * 2f64.powi(40)) {
            assert_eq!(cvt(x.to_bits(), F64T, S64T, Rnd::Rzi, false, false), x as i64 as u64, "{x:e}");
            assert_eq!(cvt(x.to_bits(), F64T, S32T, Rnd::Rzi, false, false), x as i32 as u32 as u64, "{x:e}");
        }
        assert_eq!(cvt(f64::NAN.to_bits(), F64T, S64T, Rnd::Rzi, false, false), 0);
    }
}
