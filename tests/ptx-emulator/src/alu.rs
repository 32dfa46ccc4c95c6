//! Integer and floating-point semantics of the PTX instructions, as pure functions on
//! register bits. Values are held zero-extended in u64; `bits` is the instruction width.
//! Comments cite the PTX ISA rule each edge case follows.

/// The low `bits` bits set (`bits` in 1..=64).
#[inline(always)]
pub(crate) fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The low `bits` bits of `v` as a signed value.
#[inline(always)]
pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    MulLo,
    MulHiU,
    MulHiS,
    DivU,
    DivS,
    RemU,
    RemS,
    MinU,
    MinS,
    MaxU,
    MaxS,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
    AddSatS,
    SubSatS,
}

#[inline(always)]
pub(crate) fn int_op(op: IntOp, bits: u32, a: u64, b: u64) -> u64 {
    let m = mask(bits);
    let r = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::MulLo => a.wrapping_mul(b),
        // mul.hi: bits [2n-1, n] of the full 2n-bit product.
        IntOp::MulHiU => (((a & m) as u128 * (b & m) as u128) >> bits) as u64,
        IntOp::MulHiS => ((sext(a, bits) as i128 * sext(b, bits) as i128) >> bits) as u64,
        // Division by zero "yields an unspecified, machine-specific value" (ISA); NVIDIA
        // hardware gives all ones for div.u, and for div.s the sign-corrected unsigned
        // result: -1 for a >= 0, 1 for a < 0. rem by zero gives a (a - q*0).
        IntOp::DivU => (a & m).checked_div(b & m).unwrap_or(m),
        IntOp::DivS => {
            let (x, y) = (sext(a, bits), sext(b, bits));
            if y == 0 {
                if x < 0 {
                    1
                } else {
                    u64::MAX
                }
            } else {
                x.wrapping_div(y) as u64
            }
        }
        IntOp::RemU => (a & m).checked_rem(b & m).unwrap_or(a & m),
        IntOp::RemS => {
            let (x, y) = (sext(a, bits), sext(b, bits));
            if y == 0 {
                x as u64
            } else {
                x.wrapping_rem(y) as u64
            }
        }
        IntOp::MinU => (a & m).min(b & m),
        IntOp::MaxU => (a & m).max(b & m),
        IntOp::MinS => sext(a, bits).min(sext(b, bits)) as u64,
        IntOp::MaxS => sext(a, bits).max(sext(b, bits)) as u64,
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        // Shift amounts are unsigned 32-bit; amounts >= the width are clamped to the
        // width: shl/shr.u give 0, shr.s fills with the sign bit.
        IntOp::Shl => {
            let s = b as u32;
            if s >= bits {
                0
            } else {
                a << s
            }
        }
        IntOp::ShrU => {
            let s = b as u32;
            if s >= bits {
                0
            } else {
                (a & m) >> s
            }
        }
        IntOp::ShrS => (sext(a, bits) >> (b as u32).min(bits - 1)) as u64,
        // add.sat/sub.sat (.s32 only): clamp to the signed range.
        IntOp::AddSatS => (sext(a, bits) as i128 + sext(b, bits) as i128).clamp(smin(bits), smax(bits)) as u64,
        IntOp::SubSatS => (sext(a, bits) as i128 - sext(b, bits) as i128).clamp(smin(bits), smax(bits)) as u64,
    };
    r & m
}

fn smin(bits: u32) -> i128 {
    -(1i128 << (bits - 1))
}
fn smax(bits: u32) -> i128 {
    (1i128 << (bits - 1)) - 1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnOp {
    Not,
    Cnot,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
    BfindU,
    BfindS,
    BfindShiftU,
    BfindShiftS,
}

#[inline(always)]
pub(crate) fn un_op(op: UnOp, bits: u32, a: u64) -> u64 {
    let m = mask(bits);
    let x = a & m;
    let r = match op {
        UnOp::Not => !x,
        // cnot: 1 if a is zero, else 0.
        UnOp::Cnot => (x == 0) as u64,
        UnOp::Neg => x.wrapping_neg(),
        // abs of the most negative value is itself (two's complement).
        UnOp::Abs => sext(x, bits).wrapping_abs() as u64,
        // popc/clz write a .u32 count: clz.b32 is 0..=32, clz.b64 0..=64.
        UnOp::Popc => x.count_ones() as u64,
        UnOp::Clz => (x.leading_zeros() - (64 - bits)) as u64,
        UnOp::Brev => x.reverse_bits() >> (64 - bits),
        UnOp::BfindU | UnOp::BfindS | UnOp::BfindShiftU | UnOp::BfindShiftS => {
            // bfind: position of the most significant non-sign bit (signed inputs that
            // are negative are inverted first); 0xffffffff if none; .shiftamt gives
            // msb - position instead.
            let signed = matches!(op, UnOp::BfindS | UnOp::BfindShiftS);
            let y = if signed && (x >> (bits - 1)) & 1 == 1 { !x & m } else { x };
            if y == 0 {
                0xffff_ffff
            } else {
                let pos = 63 - y.leading_zeros() as u64;
                if matches!(op, UnOp::BfindShiftU | UnOp::BfindShiftS) {
                    (bits as u64 - 1) - pos
                } else {
                    pos
                }
            }
        }
    };
    r & if matches!(op, UnOp::Popc | UnOp::Clz | UnOp::BfindU | UnOp::BfindS | UnOp::BfindShiftU | UnOp::BfindShiftS) {
        0xffff_ffff
    } else {
        m
    }
}

/// mul.wide / mad.wide: the full 2n-bit product of two n-bit operands.
#[inline(always)]
pub(crate) fn mul_wide(signed: bool, bits: u32, a: u64, b: u64) -> u64 {
    if signed {
        (sext(a, bits).wrapping_mul(sext(b, bits)) as u64) & mask(2 * bits)
    } else {
        ((a & mask(bits)).wrapping_mul(b & mask(bits))) & mask(2 * bits)
    }
}

/// bfe: extract `len` bits from position `pos` (both taken mod 256, as the ISA restricts
/// them to 0..255), zero- or sign-extended; bits beyond the msb read as the sign bit
/// (for signed) or 0; len 0 gives 0.
pub(crate) fn bfe(signed: bool, bits: u32, a: u64, pos: u64, len: u64) -> u64 {
    let msb = bits - 1;
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    let sbit = if !signed || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
    let mut d = 0u64;
    for i in 0..bits {
        let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

/// bfi: insert the low `len` bits of `a` into `b` at `pos` (mod 256 each); bits that
/// would land beyond the msb are dropped, so len 0 or pos > msb returns `b`.
pub(crate) fn bfi(bits: u32, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let msb = bits - 1;
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    let mut f = b & mask(bits);
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

/// prmt.b32 modes: 0 = generic (four 4-bit selectors in c[15:0]), else
/// 1 .f4e, 2 .b4e, 3 .rc8, 4 .ecl, 5 .ecr, 6 .rc16 (selector c[1:0]).
pub(crate) fn prmt(mode: u8, a: u64, b: u64, c: u64) -> u64 {
    let src = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
    let byte = |i: u64| (src >> (8 * (i & 7))) & 0xff;
    let s = c & 3;
    // For each mode, the source byte of d.b0, d.b1, d.b2, d.b3 (ISA mode tables).
    let pick: [u64; 4] = match mode {
        0 => {
            let mut d = 0;
            for k in 0..4 {
                let sel = (c >> (4 * k)) & 0xf;
                let v = byte(sel & 7);
                // msb of the selector set: replicate the byte's sign bit over the byte.
                let v = if sel & 8 != 0 { if v & 0x80 != 0 { 0xff } else { 0 } } else { v };
                d |= v << (8 * k);
            }
            return d;
        }
        // forward 4 extract: bytes s, s+1, s+2, s+3.
        1 => [s, s + 1, s + 2, s + 3],
        // backward 4 extract: s=0 -> {0,7,6,5}, 1 -> {1,0,7,6}, 2 -> {2,1,0,7}, 3 -> {3,2,1,0}.
        2 => [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7],
        // replicate byte s.
        3 => [s; 4],
        // edge clamp left: d.bk = max(k, s)... s=0 -> {0,1,2,3}, 1 -> {1,1,2,3}, 2 -> {2,2,2,3}, 3 -> {3,3,3,3}.
        4 => [s, s.max(1), s.max(2), 3],
        // edge clamp right: s=0 -> {0,0,0,0}, 1 -> {0,1,1,1}, 2 -> {0,1,2,2}, 3 -> {0,1,2,3}.
        5 => [0, s.min(1), s.min(2), s],
        // replicate 16: the low (s even) or high (s odd) half-word of a, twice.
        _ => {
            let h = (s & 1) * 2;
            [h, h + 1, h, h + 1]
        }
    };
    pick.iter().enumerate().fold(0, |d, (k, &i)| d | (byte(i) << (8 * k)))
}

/// The canonical NaN NVIDIA hardware returns from single-precision arithmetic.
pub(crate) const CANONICAL_NAN_F32: u32 = 0x7fff_ffff;

/// .ftz: subnormal f32 to zero of the same sign.
#[inline(always)]
pub(crate) fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// min/max on floats: a NaN operand loses to a number; both NaN gives NaN; -0.0 is
/// treated as less than +0.0.
fn fmin<T: PartialOrd + Copy>(x: T, y: T, x_nan: bool, y_nan: bool, x_neg: bool, max: bool) -> Option<T> {
    if x_nan && y_nan {
        return None;
    }
    if x_nan {
        return Some(y);
    }
    if y_nan {
        return Some(x);
    }
    let pick_x = if x == y { x_neg != max } else { (x < y) != max };
    Some(if pick_x { x } else { y })
}

/// f32 arithmetic, rounded to nearest even in single precision (no double rounding),
/// subnormals kept unless `ftz`; NaN results are the canonical NaN; `.sat` clamps to
/// [0, 1] with NaN giving +0.
pub(crate) fn f32_op(op: FOp, ftz: bool, sat: bool, a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
    if ftz {
        (x, y) = (ftz32(x), ftz32(y));
    }
    let r = match op {
        FOp::Add => x + y,
        FOp::Sub => x - y,
        FOp::Mul => x * y,
        FOp::Div => x / y,
        FOp::Min | FOp::Max => {
            fmin(x, y, x.is_nan(), y.is_nan(), x.is_sign_negative(), op == FOp::Max).unwrap_or(f32::NAN)
        }
    };
    f32_out(r, ftz, sat)
}

#[inline(always)]
pub(crate) fn f32_out(r: f32, ftz: bool, sat: bool) -> u64 {
    if r.is_nan() {
        return if sat { 0 } else { CANONICAL_NAN_F32 as u64 };
    }
    let r = if sat { r.clamp(0.0, 1.0) } else { r };
    // clamp keeps -0.0; .sat results are in [+0, 1].
    let r = if sat && r == 0.0 { 0.0 } else { r };
    (if ftz { ftz32(r) } else { r }).to_bits() as u64
}

/// f64 arithmetic, rounded to nearest even. NaN results propagate a quieted input NaN
/// (the hardware's NaN payload is not modelled).
pub(crate) fn f64_op(op: FOp, sat: bool, a: u64, b: u64) -> u64 {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    let r = match op {
        FOp::Add => x + y,
        FOp::Sub => x - y,
        FOp::Mul => x * y,
        FOp::Div => x / y,
        FOp::Min | FOp::Max => {
            fmin(x, y, x.is_nan(), y.is_nan(), x.is_sign_negative(), op == FOp::Max).unwrap_or(f64::NAN)
        }
    };
    f64_out(r, sat)
}

pub(crate) fn f64_out(r: f64, sat: bool) -> u64 {
    if sat {
        if r.is_nan() {
            return 0;
        }
        let r = r.clamp(0.0, 1.0);
        return (if r == 0.0 { 0.0 } else { r }).to_bits();
    }
    r.to_bits()
}

pub(crate) fn f32_fma(ftz: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let f = |v: u64| {
        let x = f32::from_bits(v as u32);
        if ftz {
            ftz32(x)
        } else {
            x
        }
    };
    f32_out(f(a).mul_add(f(b), f(c)), ftz, sat)
}

pub(crate) fn f64_fma(sat: bool, a: u64, b: u64, c: u64) -> u64 {
    f64_out(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)), sat)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FUnOp {
    Neg,
    Abs,
    Sqrt,
    Rcp,
}

/// neg/abs change only the sign bit (f32; .ftz flushes a subnormal input first);
/// sqrt.rn/rcp.rn are correctly rounded.
pub(crate) fn f32_un(op: FUnOp, ftz: bool, a: u64) -> u64 {
    let x = f32::from_bits(a as u32);
    let x = if ftz { ftz32(x) } else { x };
    match op {
        FUnOp::Neg => (x.to_bits() ^ 0x8000_0000) as u64,
        FUnOp::Abs => (x.to_bits() & 0x7fff_ffff) as u64,
        FUnOp::Sqrt => f32_out(x.sqrt(), ftz, false),
        FUnOp::Rcp => f32_out(1.0 / x, ftz, false),
    }
}

/// f64 neg/abs pass NaN through unchanged (CUDA's documented deviation from IEEE 754).
pub(crate) fn f64_un(op: FUnOp, a: u64) -> u64 {
    let x = f64::from_bits(a);
    match op {
        FUnOp::Neg | FUnOp::Abs if x.is_nan() => a,
        FUnOp::Neg => a ^ (1 << 63),
        FUnOp::Abs => a & !(1 << 63),
        FUnOp::Sqrt => x.sqrt().to_bits(),
        FUnOp::Rcp => (1.0 / x).to_bits(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// testp; zero counts as normal (ISA special case).
pub(crate) fn testp(op: TestOp, f64: bool, a: u64) -> bool {
    let x = if f64 { f64::from_bits(a) } else { f32::from_bits(a as u32) as f64 };
    let sub = if f64 { x.is_subnormal() } else { f32::from_bits(a as u32).is_subnormal() };
    match op {
        TestOp::Finite => x.is_finite(),
        TestOp::Infinite => x.is_infinite(),
        TestOp::Number => !x.is_nan(),
        TestOp::NotANumber => x.is_nan(),
        TestOp::Normal => x.is_finite() && !sub,
        TestOp::Subnormal => sub,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// How setp reads its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpTy {
    U(u32),
    S(u32),
    F32 { ftz: bool },
    F64,
}

/// setp's comparison. Integer: signed or unsigned by type (lo/ls/hi/hs are the unsigned
/// spellings, decoded to Lt/Le/Gt/Ge). Float: eq..ge are ordered (false if either is
/// NaN), equ..geu unordered (true if either is NaN), num/nan test for NaN.
#[inline(always)]
pub(crate) fn compare(cmp: Cmp, ty: CmpTy, a: u64, b: u64) -> bool {
    use std::cmp::Ordering::*;
    let ord = match ty {
        CmpTy::U(bits) => Some((a & mask(bits)).cmp(&(b & mask(bits)))),
        CmpTy::S(bits) => Some(sext(a, bits).cmp(&sext(b, bits))),
        CmpTy::F32 { ftz } => {
            let f = |v: u64| {
                let x = f32::from_bits(v as u32);
                if ftz {
                    ftz32(x)
                } else {
                    x
                }
            };
            f(a).partial_cmp(&f(b))
        }
        CmpTy::F64 => f64::from_bits(a).partial_cmp(&f64::from_bits(b)),
    };
    match (cmp, ord) {
        (Cmp::Num, o) => o.is_some(),
        (Cmp::Nan, o) => o.is_none(),
        (Cmp::Eq | Cmp::Ne | Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge, None) => false,
        (_, None) => true,
        (Cmp::Eq | Cmp::Equ, Some(o)) => o == Equal,
        (Cmp::Ne | Cmp::Neu, Some(o)) => o != Equal,
        (Cmp::Lt | Cmp::Ltu, Some(o)) => o == Less,
        (Cmp::Le | Cmp::Leu, Some(o)) => o != Greater,
        (Cmp::Gt | Cmp::Gtu, Some(o)) => o == Greater,
        (Cmp::Ge | Cmp::Geu, Some(o)) => o != Less,
    }
}
