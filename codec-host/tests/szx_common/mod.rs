//! Shared helpers of the SZx integration tests: an exact bound oracle and test data.
#![allow(dead_code)]

use codec_host::Element;

/// Exact `|a - b| <= e` for finite `a`, `b` and `e >= 0`, by integer arithmetic on the
/// values scaled to a common exponent (independent of the codec's float reasoning).
pub fn exactly_within(a: f64, b: f64, e: f64) -> bool {
    const LIMBS: usize = 36; // 2 * 1074 + 53 bits and a carry
    fn parts(v: f64) -> (bool, u64, i32) {
        let bits = v.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | 1 << 52, exp - 1075) };
        (v.is_sign_negative(), m, e)
    }
    fn scaled(m: u64, shift: u32) -> [u64; LIMBS] {
        let mut out = [0u64; LIMBS];
        let (q, r) = ((shift / 64) as usize, shift % 64);
        out[q] |= m << r;
        if r > 0 {
            out[q + 1] |= m >> (64 - r);
        }
        out
    }
    fn add(a: &[u64; LIMBS], b: &[u64; LIMBS]) -> [u64; LIMBS] {
        let mut out = [0u64; LIMBS];
        let mut carry = 0u128;
        for i in 0..LIMBS {
            let s = a[i] as u128 + b[i] as u128 + carry;
            out[i] = s as u64;
            carry = s >> 64;
        }
        out
    }
    fn sub(a: &[u64; LIMBS], b: &[u64; LIMBS]) -> [u64; LIMBS] {
        let mut out = [0u64; LIMBS];
        let mut borrow = 0i128;
        for i in 0..LIMBS {
            let d = a[i] as i128 - b[i] as i128 - borrow;
            out[i] = d as u64;
            borrow = (d < 0) as i128;
        }
        out
    }
    fn le(a: &[u64; LIMBS], b: &[u64; LIMBS]) -> bool {
        a.iter().rev().cmp(b.iter().rev()) != std::cmp::Ordering::Greater
    }
    assert!(a.is_finite() && b.is_finite() && e.is_finite() && e >= 0.0);
    let (pa, pb, pe) = (parts(a), parts(b), parts(e));
    let base = pa.2.min(pb.2).min(pe.2);
    let (ma, mb, me) = (scaled(pa.1, (pa.2 - base) as u32), scaled(pb.1, (pb.2 - base) as u32), scaled(pe.1, (pe.2 - base) as u32));
    let diff = if pa.0 != pb.0 { add(&ma, &mb) } else if le(&mb, &ma) { sub(&ma, &mb) } else { sub(&mb, &ma) };
    le(&diff, &me)
}

/// Checks the SZx promises for one value pair: within `e` if finite, bit-exact if not,
/// zeros stay zero. Returns a message on violation.
pub fn check_value<T: Element>(i: usize, x: T, y: T, e: f64) -> Result<(), String> {
    let (a, b) = (x.to_f64(), y.to_f64());
    if !a.is_finite() {
        return if x.to_bits() == y.to_bits() { Ok(()) } else { Err(format!("value {i}: non-finite {x:?} came back as {y:?}")) };
    }
    if !b.is_finite() || !exactly_within(a, b, e) {
        return Err(format!("value {i}: {x:?} came back as {y:?}, error {} > {e}", (a - b).abs()));
    }
    if a == 0.0 && b != 0.0 {
        return Err(format!("value {i}: zero came back as {y:?}"));
    }
    Ok(())
}

/// Checks every value.
pub fn check_all<T: Element>(x: &[T], y: &[T], e: f64) -> Result<(), String> {
    assert_eq!(x.len(), y.len());
    x.iter().zip(y).enumerate().try_for_each(|(i, (&a, &b))| check_value(i, a, b, e))
}

#[path = "../rng/mod.rs"]
mod rng;
pub use rng::Rng;

/// Kinds of test data, adversarial ones included.
pub const KINDS: usize = 10;

/// `n` values of kind `kind` (0..KINDS) from `seed`, as f64 (callers narrow to f32).
pub fn data(kind: usize, n: usize, seed: u64, narrow: fn(f64) -> f64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    let scale = 10f64.powi(r.below(13) as i32 - 6);
    let v: Vec<f64> = match kind {
        // Smooth field with noise.
        0 => (0..n).map(|i| scale * ((i as f64 * 0.05).sin() + 0.01 * r.unit())).collect(),
        // Random walk around a large offset (offset coding, rounding of the sum).
        1 => {
            let mut x = scale * 1e3 * (1.0 + r.unit());
            (0..n).map(|_| { x += scale * (r.unit() - 0.5); x }).collect()
        }
        // Powers of two and their neighbours, both signs.
        2 => (0..n)
            .map(|_| {
                let p = 2f64.powi(r.below(60) as i32 - 30);
                let p = narrow(p);
                let bits = p.to_bits() as i64 + r.below(5) as i64 - 2;
                let v = narrow(f64::from_bits(bits as u64));
                if r.below(2) == 0 { v } else { -v }
            })
            .collect(),
        // Alternating signs of similar magnitude.
        3 => (0..n).map(|i| if i % 2 == 0 { scale * (1.0 + r.unit()) } else { -scale * (1.0 + r.unit()) }).collect(),
        // Huge magnitudes near the type's maximum.
        4 => (0..n).map(|_| narrow(f64::MAX) * (0.5 + 0.5 * r.unit()) * if r.below(2) == 0 { 1.0 } else { -1.0 }).collect(),
        // Subnormals and tiny values.
        5 => {
            let tiny = if narrow(1e-300) == 0.0 { 2f64.powi(-126) } else { f64::MIN_POSITIVE };
            (0..n).map(|_| tiny * 4.0 * r.unit() * if r.below(2) == 0 { 1.0 } else { -1.0 }).collect()
        }
        // Gradients: Laplace values with many exact zeros.
        6 => (0..n)
            .map(|_| {
                if r.below(10) == 0 {
                    0.0
                } else {
                    let u = r.unit() - 0.5;
                    -scale * u.signum() * (1.0 - 2.0 * u.abs()).max(1e-300).ln()
                }
            })
            .collect(),
        // Nearly constant blocks (constant-block edge cases).
        7 => {
            let c = scale * 100.0 * (r.unit() + 0.5);
            (0..n).map(|_| c + scale * 1e-5 * (r.unit() - 0.5)).collect()
        }
        // Random finite bit patterns.
        8 => (0..n)
            .map(|_| loop {
                let v = narrow(f64::from_bits(r.next_u64()));
                if v.is_finite() {
                    break v;
                }
            })
            .collect(),
        // Anything goes: mixture with zeros, NaN and infinities.
        _ => (0..n)
            .map(|i| match r.below(8) {
                0 => 0.0,
                1 => -0.0,
                2 if i % 3 == 0 => f64::NAN,
                3 if i % 5 == 0 => f64::INFINITY,
                4 if i % 5 == 0 => f64::NEG_INFINITY,
                _ => scale * (r.unit() - 0.3),
            })
            .collect(),
    };
    v.into_iter().map(narrow).collect()
}

pub fn as_f32(v: f64) -> f64 {
    v as f32 as f64
}

pub fn as_f64(v: f64) -> f64 {
    v
}

/// `floor(log2 v)` for a normal `v > 0`.
pub fn floor_log2(v: f64) -> i32 {
    ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023
}
