//! Instruction semantics against values worked out from the PTX ISA text. Each case runs
//! a one-thread kernel whose body leaves results in %rd1 (64-bit), %r1 (32-bit), %rs1
//! (16-bit), %p1, %f1 and %fd1; the comment beside each case gives the rule it checks.

use ptx_emulator::{launch, LaunchDims, Memory, Module};

#[derive(Debug, Default, PartialEq)]
struct Out {
    rd: u64,
    r: u32,
    rs: u16,
    p: bool,
    f: u32,
    fd: u64,
}

fn kernel(body: &str) -> String {
    format!(
        ".version 7.0\n.target sm_80\n.address_size 64\n\
.visible .entry t(.param .u64 out)\n{{\n\
.reg .pred %p<8>;\n.reg .b16 %rs<8>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n\
mov.b64 %rd1, 0;\nmov.b32 %r1, 0;\nmov.b16 %rs1, 0;\nsetp.ne.b32 %p1, 0, 0;\nmov.f32 %f1, 0f00000000;\nmov.f64 %fd1, 0d0000000000000000;\n\
{body}\n\
ld.param.u64 %rd7, [out];\nst.global.b64 [%rd7], %rd1;\nst.global.b32 [%rd7+8], %r1;\nst.global.b16 [%rd7+12], %rs1;\n\
selp.b16 %rs7, 1, 0, %p1;\nst.global.b8 [%rd7+14], %rs7;\nst.global.f32 [%rd7+16], %f1;\nst.global.f64 [%rd7+24], %fd1;\nret;\n}}\n"
    )
}

fn run(body: &str) -> Out {
    let text = kernel(body);
    let mut mem = Memory::new();
    let m = Module::load(&text, &mut mem).unwrap_or_else(|e| panic!("{e}\n{body}"));
    let out = mem.alloc(32).unwrap();
    let e = m.entry("t").unwrap();
    let dims = LaunchDims { grid: [1, 1, 1], block: [1, 1, 1] };
    launch(&m, e, dims, &out.to_le_bytes(), &mut mem).unwrap_or_else(|f| panic!("{f}\n{body}"));
    let mut b = [0u8; 32];
    mem.read(out, &mut b).unwrap();
    Out {
        rd: u64::from_le_bytes(b[0..8].try_into().unwrap()),
        r: u32::from_le_bytes(b[8..12].try_into().unwrap()),
        rs: u16::from_le_bytes(b[12..14].try_into().unwrap()),
        p: b[14] != 0,
        f: u32::from_le_bytes(b[16..20].try_into().unwrap()),
        fd: u64::from_le_bytes(b[24..32].try_into().unwrap()),
    }
}

fn r32(body: &str) -> u32 {
    run(body).r
}
fn r64(body: &str) -> u64 {
    run(body).rd
}
fn r16(body: &str) -> u16 {
    run(body).rs
}
fn p(body: &str) -> bool {
    run(body).p
}
fn f32b(body: &str) -> u32 {
    run(body).f
}
fn f64b(body: &str) -> u64 {
    run(body).fd
}

#[test]
fn immediates() {
    // Hex with the U suffix, as LLVM writes prmt selectors.
    assert_eq!(r32("mov.u32 %r1, 0x7773U;"), 0x7773);
    // 64-bit literals are not truncated; negative literals are two's complement.
    assert_eq!(r64("mov.u64 %rd1, 18446744073709551615;"), u64::MAX);
    assert_eq!(r64("mov.u64 %rd1, 0x8000000000000001;"), 0x8000_0000_0000_0001);
    assert_eq!(r64("mov.u64 %rd1, -1;"), u64::MAX);
    assert_eq!(r64("and.b64 %rd1, -1, -4294967296;"), 0xffff_ffff_0000_0000);
    assert_eq!(r64("mov.u64 %rd1, 1152921504606846968;"), 1152921504606846968);
    // Octal literals start with 0.
    assert_eq!(r32("mov.u32 %r1, 010;"), 8);
    // 0f/0d literals are IEEE bit patterns; 0d in a .b64 mov is raw bits.
    assert_eq!(f32b("mov.f32 %f1, 0f3F800000;"), 0x3f80_0000);
    assert_eq!(r64("mov.b64 %rd1, 0d3FF0000000000000;"), 0x3ff0_0000_0000_0000);
    // A 16-bit operand takes the literal's low 16 bits.
    assert_eq!(r16("mov.b16 %rs1, -1;"), 0xffff);
}

#[test]
fn integer_add_sub_mul() {
    // Two's complement wrap-around at the type's width.
    assert_eq!(r32("add.s32 %r1, 2147483647, 1;"), 0x8000_0000);
    assert_eq!(r16("add.s16 %rs1, 32767, 1;"), 0x8000);
    // add.sat.s32 clamps to the signed range.
    assert_eq!(r32("add.sat.s32 %r1, 2147483647, 1;"), 0x7fff_ffff);
    assert_eq!(r32("sub.sat.s32 %r1, -2147483648, 1;"), 0x8000_0000);
    assert_eq!(r64("sub.s64 %rd1, 5, -3;"), 8);
    // mul.lo keeps the low n bits; mul.hi the high n bits of the 2n-bit product.
    assert_eq!(r32("mul.lo.s32 %r1, 65536, 65537;"), 0x0001_0000);
    assert_eq!(r32("mul.hi.u32 %r1, 0xffffffff, 0xffffffff;"), 0xffff_fffe);
    assert_eq!(r32("mul.hi.s32 %r1, -1, -1;"), 0);
    assert_eq!(r32("mul.hi.s32 %r1, -2147483648, 2;"), 0xffff_ffff);
    assert_eq!(r64("mul.hi.u64 %rd1, -1, -1;"), u64::MAX - 1);
    assert_eq!(r64("mul.hi.s64 %rd1, -9223372036854775808, 2;"), u64::MAX);
    // mul.wide: the full 2n-bit product, signed or unsigned.
    assert_eq!(r64("mul.wide.u32 %rd1, 0xffffffff, 0xffffffff;"), 0xffff_fffe_0000_0001);
    assert_eq!(r64("mul.wide.s32 %rd1, -2, 3;"), (-6i64) as u64);
    assert_eq!(r32("mul.wide.u16 %r1, 0xffff, 0xffff;"), 0xfffe_0001);
    // mad: (a*b).lo + c, .hi + c, .wide + c.
    assert_eq!(r64("mad.lo.s64 %rd1, 3, 5, -20;"), (-5i64) as u64);
    assert_eq!(r32("mad.hi.u32 %r1, 0x80000000, 4, 1;"), 3);
    assert_eq!(r64("mad.wide.u32 %rd1, 0xffffffff, 2, 2;"), 0x2_0000_0000);
    assert_eq!(r64("mad.wide.s32 %rd1, -1, 1, 0;"), u64::MAX);
}

#[test]
fn integer_division() {
    // Truncation toward zero; the remainder takes the dividend's sign.
    assert_eq!(r32("div.s32 %r1, -7, 2;"), (-3i32) as u32);
    assert_eq!(r32("rem.s32 %r1, -7, 2;"), (-1i32) as u32);
    assert_eq!(r32("div.u32 %r1, 7, 2;"), 3);
    assert_eq!(r64("rem.u64 %rd1, 10, 4;"), 2);
    // Division by zero is machine-specific per the ISA; the hardware's values: all ones
    // for div.u, -1 / +1 for div.s by the dividend's sign, and rem gives the dividend.
    assert_eq!(r32("div.u32 %r1, 7, 0;"), u32::MAX);
    assert_eq!(r64("div.u64 %rd1, 7, 0;"), u64::MAX);
    assert_eq!(r32("div.s32 %r1, 7, 0;"), u32::MAX);
    assert_eq!(r32("div.s32 %r1, -7, 0;"), 1);
    assert_eq!(r32("rem.u32 %r1, 7, 0;"), 7);
    assert_eq!(r32("rem.s32 %r1, -7, 0;"), (-7i32) as u32);
    // The one overflowing quotient wraps.
    assert_eq!(r32("div.s32 %r1, -2147483648, -1;"), 0x8000_0000);
    assert_eq!(r16("div.u16 %rs1, 0xffff, 0;"), 0xffff);
}

#[test]
fn min_max_neg_abs() {
    assert_eq!(r32("min.s32 %r1, -1, 1;"), u32::MAX);
    assert_eq!(r32("min.u32 %r1, 0xffffffff, 1;"), 1);
    assert_eq!(r64("max.s64 %rd1, -5, -9;"), (-5i64) as u64);
    assert_eq!(r64("max.u64 %rd1, -5, 9;"), (-5i64) as u64);
    // neg/abs of the most negative value is itself.
    assert_eq!(r32("neg.s32 %r1, -2147483648;"), 0x8000_0000);
    assert_eq!(r32("abs.s32 %r1, -2147483648;"), 0x8000_0000);
    assert_eq!(r32("abs.s32 %r1, -5;"), 5);
    assert_eq!(r64("neg.s64 %rd1, 1;"), u64::MAX);
}

#[test]
fn shifts() {
    // The shift amount is an unsigned 32-bit value; amounts >= width clamp to width:
    // shl and shr.u give 0, shr.s fills with the sign bit.
    assert_eq!(r32("shl.b32 %r1, 1, 31;"), 0x8000_0000);
    assert_eq!(r32("shl.b32 %r1, 1, 32;"), 0);
    assert_eq!(r64("shl.b64 %rd1, 1, 64;"), 0);
    assert_eq!(r64("shl.b64 %rd1, 1, 63;"), 1 << 63);
    assert_eq!(r32("shr.u32 %r1, 0x80000000, 40;"), 0);
    assert_eq!(r32("shr.s32 %r1, -16, 2;"), (-4i32) as u32);
    assert_eq!(r32("shr.s32 %r1, -16, 40;"), u32::MAX);
    assert_eq!(r32("shr.s32 %r1, 16, 33;"), 0);
    assert_eq!(r64("shr.s64 %rd1, -9223372036854775808, 63;"), u64::MAX);
    assert_eq!(r16("shr.s16 %rs1, 0x8000, 15;"), 0xffff);
    assert_eq!(r16("shl.b16 %rs1, 0x00ff, 12;"), 0xf000);
    // A register amount of 0xffffffff is a huge unsigned amount, not -1.
    assert_eq!(r32("mov.u32 %r2, 0xffffffff; shl.b32 %r1, 1, %r2;"), 0);
    assert_eq!(r32("mov.u32 %r2, 0xffffffff; shr.s32 %r1, -8, %r2;"), u32::MAX);
}

#[test]
fn logic_and_bit_counts() {
    assert_eq!(r16("and.b16 %rs1, 0xff0f, 0x0ff0;"), 0x0f00);
    assert_eq!(r32("or.b32 %r1, 0xf0, 0x0f;"), 0xff);
    assert_eq!(r64("xor.b64 %rd1, -1, 0xff;"), !0xffu64);
    assert_eq!(r64("not.b64 %rd1, 0;"), u64::MAX);
    assert_eq!(r16("not.b16 %rs1, 0x00ff;"), 0xff00);
    assert_eq!(r32("cnot.b32 %r1, 0;"), 1);
    assert_eq!(r32("cnot.b32 %r1, 5;"), 0);
    // popc and clz write a .u32 count: clz of 0 is the width.
    assert_eq!(r32("popc.b64 %r1, -1;"), 64);
    assert_eq!(r32("popc.b32 %r1, 0xf0f0;"), 8);
    assert_eq!(r32("clz.b32 %r1, 0;"), 32);
    assert_eq!(r32("clz.b64 %r1, 0;"), 64);
    assert_eq!(r32("clz.b32 %r1, 1;"), 31);
    assert_eq!(r32("clz.b64 %r1, 0x10000000000;"), 23);
    assert_eq!(r32("brev.b32 %r1, 1;"), 0x8000_0000);
    assert_eq!(r64("brev.b64 %rd1, 6;"), 0x6000_0000_0000_0000);
    // bfind: msb position of non-sign bits, 0xffffffff if none; .shiftamt = msb - pos.
    assert_eq!(r32("bfind.u32 %r1, 0;"), u32::MAX);
    assert_eq!(r32("bfind.u32 %r1, 0x100;"), 8);
    assert_eq!(r32("bfind.s32 %r1, -1;"), u32::MAX);
    assert_eq!(r32("bfind.s32 %r1, -256;"), 7);
    assert_eq!(r32("bfind.shiftamt.u32 %r1, 1;"), 31);
    assert_eq!(r32("bfind.u64 %r1, -1;"), 63);
}

#[test]
fn predicate_logic() {
    assert!(p("setp.eq.s32 %p2, 1, 1; setp.eq.s32 %p3, 1, 2; or.pred %p1, %p2, %p3;"));
    assert!(!p("setp.eq.s32 %p2, 1, 1; setp.eq.s32 %p3, 1, 2; and.pred %p1, %p2, %p3;"));
    assert!(p("setp.eq.s32 %p2, 1, 1; setp.eq.s32 %p3, 1, 2; xor.pred %p1, %p2, %p3;"));
    assert!(p("setp.eq.s32 %p2, 1, 2; not.pred %p1, %p2;"));
    assert!(p("setp.eq.s32 %p2, 1, 1; mov.pred %p1, %p2;"));
    // Guards: @%p runs, @!%p skips.
    assert_eq!(r32("setp.eq.s32 %p2, 1, 1; @%p2 mov.u32 %r1, 5; @!%p2 mov.u32 %r1, 6;"), 5);
}

#[test]
fn bit_field_extract_and_insert() {
    assert_eq!(r32("bfe.u32 %r1, 0xF0F0F0F0, 4, 8;"), 0x0F);
    // len 0 gives 0.
    assert_eq!(r32("bfe.u32 %r1, 0xFFFFFFFF, 4, 0;"), 0);
    assert_eq!(r32("bfe.s32 %r1, 0xFFFFFFFF, 4, 0;"), 0);
    // pos beyond the msb: unsigned gives 0, signed replicates a[msb].
    assert_eq!(r32("bfe.u32 %r1, 0xFFFFFFFF, 40, 4;"), 0);
    assert_eq!(r32("bfe.s32 %r1, 0x80000000, 40, 4;"), u32::MAX);
    assert_eq!(r32("bfe.s32 %r1, 0x7FFFFFFF, 40, 4;"), 0);
    // Signed: the field's top bit extends.
    assert_eq!(r32("bfe.s32 %r1, 0x70, 4, 3;"), u32::MAX);
    assert_eq!(r32("bfe.s32 %r1, 0x30, 4, 3;"), 3);
    // A field running past the msb takes the bits that exist.
    assert_eq!(r64("bfe.u64 %rd1, 0xF000000000000000, 60, 8;"), 0xF);
    // pos and len are taken from their low 8 bits.
    assert_eq!(r32("bfe.u32 %r1, 0xF0F0F0F0, 260, 264;"), 0x0F);
    // bfi: len 0 or pos beyond the msb return b; bits past the msb are dropped.
    assert_eq!(r32("bfi.b32 %r1, 0xFF, 0, 4, 4;"), 0xF0);
    assert_eq!(r32("bfi.b32 %r1, 0xFF, 0x1234, 4, 0;"), 0x1234);
    assert_eq!(r32("bfi.b32 %r1, 0xFF, 0x1234, 32, 4;"), 0x1234);
    assert_eq!(r32("bfi.b32 %r1, 0xF, 0, 30, 4;"), 0xC000_0000);
    assert_eq!(r64("bfi.b64 %rd1, 1, 0, 63, 1;"), 1 << 63);
}

#[test]
fn byte_permute() {
    // Source bytes numbered 0..7 over {b, a}; a = bytes 0..3, b = bytes 4..7.
    let ab = "mov.b32 %r2, 0x03020100; mov.b32 %r3, 0x07060504;";
    let prmt = |sel: &str| r32(&format!("{ab} prmt.b32 %r1, %r2, %r3, {sel};"));
    let prmt_mode = |mode: &str, sel: u32| r32(&format!("{ab} prmt.b32.{mode} %r1, %r2, %r3, {sel};"));
    // Generic: four 4-bit selectors, d.b0 from the lowest.
    assert_eq!(prmt("0x3210"), 0x0302_0100);
    assert_eq!(prmt("0x7654"), 0x0706_0504);
    assert_eq!(prmt("0x0123"), 0x0001_0203);
    assert_eq!(prmt("0x7773U"), 0x0707_0703);
    // Selector msb set: replicate the selected byte's sign bit.
    let s = "mov.b32 %r2, 0x80007f80; mov.b32 %r3, 0;";
    assert_eq!(r32(&format!("{s} prmt.b32 %r1, %r2, %r3, 0x8888;")), 0xffff_ffff);
    assert_eq!(r32(&format!("{s} prmt.b32 %r1, %r2, %r3, 0x9999;")), 0);
    assert_eq!(r32(&format!("{s} prmt.b32 %r1, %r2, %r3, 0x0B01;")), 0x80ff_807f);
    // Modes use c[1:0] (tables of the ISA, listed d.b3 d.b2 d.b1 d.b0).
    assert_eq!(prmt_mode("f4e", 1), 0x0403_0201); // 4 3 2 1
    assert_eq!(prmt_mode("f4e", 5), 0x0403_0201); // only c[1:0] counts
    assert_eq!(prmt_mode("b4e", 0), 0x0506_0700); // 5 6 7 0
    assert_eq!(prmt_mode("b4e", 2), 0x0700_0102); // 7 0 1 2
    assert_eq!(prmt_mode("rc8", 2), 0x0202_0202);
    assert_eq!(prmt_mode("ecl", 1), 0x0302_0101); // 3 2 1 1
    assert_eq!(prmt_mode("ecl", 2), 0x0302_0202); // 3 2 2 2
    assert_eq!(prmt_mode("ecr", 1), 0x0101_0100); // 1 1 1 0
    assert_eq!(prmt_mode("ecr", 2), 0x0202_0100); // 2 2 1 0
    assert_eq!(prmt_mode("rc16", 1), 0x0302_0302); // 3 2 3 2
    assert_eq!(prmt_mode("rc16", 2), 0x0100_0100); // 1 0 1 0
}

#[test]
fn integer_comparisons_and_select() {
    assert!(p("setp.lt.s32 %p1, -1, 1;"));
    assert!(!p("setp.lt.u32 %p1, 0xffffffff, 1;"));
    assert!(!p("setp.lo.u32 %p1, 0xffffffff, 1;"));
    assert!(p("setp.hi.u64 %p1, -1, 1;"));
    assert!(p("setp.ge.s64 %p1, -1, -1;"));
    assert!(p("setp.ne.b16 %p1, 1, 2;"));
    assert!(p("setp.gt.u16 %p1, 0xffff, 1;"));
    assert!(!p("setp.gt.s16 %p1, 0xffff, 1;"));
    // setp p|q: q gets the complement; .and/.or combine with a (negated) predicate.
    assert_eq!(r32("setp.lt.s32 %p2|%p3, 1, 2; selp.b32 %r1, 10, 20, %p3;"), 20);
    assert!(!p("setp.eq.s32 %p2, 1, 1; setp.lt.s32.and %p1, 1, 2, !%p2;"));
    assert!(p("setp.eq.s32 %p2, 1, 1; setp.gt.s32.or %p1, 1, 2, %p2;"));
    assert_eq!(r64("setp.eq.s32 %p2, 1, 2; selp.b64 %rd1, 7, -1, %p2;"), u64::MAX);
}

#[test]
fn float_arithmetic_single_precision() {
    // Round to nearest even in single precision: 1 + 2^-24 is a tie -> 1.
    assert_eq!(f32b("add.rn.f32 %f1, 0f3F800000, 0f33800000;"), 0x3f80_0000);
    // 1 + 3*2^-25 is above the tie -> 1 + 2^-23.
    assert_eq!(f32b("add.rn.f32 %f1, 0f3F800000, 0f33C00000;"), 0x3f80_0001);
    assert_eq!(f32b("div.rn.f32 %f1, 0f3F800000, 0f40400000;"), 0x3eaa_aaab);
    assert_eq!(f32b("sqrt.rn.f32 %f1, 0f40000000;"), 0x3fb5_04f3);
    assert_eq!(f32b("sub.rn.f32 %f1, 0f3F800000, 0f3F800000;"), 0);
    // Subnormal results are kept without .ftz and flushed (sign kept) with it.
    assert_eq!(f32b("mul.rn.f32 %f1, 0f00800000, 0f3F000000;"), 0x0040_0000);
    assert_eq!(f32b("mul.rn.ftz.f32 %f1, 0f00800000, 0f3F000000;"), 0);
    assert_eq!(f32b("mul.rn.ftz.f32 %f1, 0f80800000, 0f3F000000;"), 0x8000_0000);
    // .ftz flushes subnormal inputs too.
    assert_eq!(f32b("add.ftz.f32 %f1, 0f00400000, 0f00000000;"), 0);
    // fma rounds once: (1+2^-23)(1-2^-23) - 1 = -2^-46 exactly, not 0.
    assert_eq!(f32b("fma.rn.f32 %f1, 0f3F800001, 0f3F7FFFFE, 0fBF800000;"), 0xa880_0000);
    assert_eq!(f32b("mad.rn.f32 %f1, 0f3F800001, 0f3F7FFFFE, 0fBF800000;"), 0xa880_0000);
    // Single-precision NaN results are the canonical NaN 0x7fffffff.
    assert_eq!(f32b("add.f32 %f1, 0f7FC00001, 0f3F800000;"), 0x7fff_ffff);
    assert_eq!(f32b("mul.rn.f32 %f1, 0f7F800000, 0f00000000;"), 0x7fff_ffff);
    // .sat clamps to [0, 1]; NaN gives 0.
    assert_eq!(f32b("add.sat.f32 %f1, 0f3F400000, 0f3F000000;"), 0x3f80_0000);
    assert_eq!(f32b("add.sat.f32 %f1, 0fBF400000, 0f00000000;"), 0);
    assert_eq!(f32b("mul.sat.f32 %f1, 0f7F800000, 0f00000000;"), 0);
    // neg/abs change only the sign bit, NaN included.
    assert_eq!(f32b("abs.f32 %f1, 0fFFC00000;"), 0x7fc0_0000);
    assert_eq!(f32b("neg.f32 %f1, 0f7FC00000;"), 0xffc0_0000);
    assert_eq!(f32b("neg.f32 %f1, 0f00000000;"), 0x8000_0000);
    assert_eq!(f32b("copysign.f32 %f1, 0fBF800000, 0f40000000;"), 0xc000_0000);
    assert_eq!(f32b("rcp.rn.f32 %f1, 0f40000000;"), 0x3f00_0000);
}

#[test]
fn float_min_max_and_comparisons() {
    // A NaN operand loses to a number; both NaN give NaN; -0 < +0.
    assert_eq!(f32b("min.f32 %f1, 0f7FC00000, 0f3F800000;"), 0x3f80_0000);
    assert_eq!(f32b("max.f32 %f1, 0f3F800000, 0f7FC00000;"), 0x3f80_0000);
    assert_eq!(f32b("min.f32 %f1, 0f7FC00000, 0f7FC00001;"), 0x7fff_ffff);
    assert_eq!(f32b("min.f32 %f1, 0f00000000, 0f80000000;"), 0x8000_0000);
    assert_eq!(f32b("max.f32 %f1, 0f80000000, 0f00000000;"), 0);
    assert_eq!(f64b("min.f64 %fd1, 0d7FF8000000000000, 0d4000000000000000;"), 2f64.to_bits());
    assert_eq!(f64b("max.f64 %fd1, 0dC000000000000000, 0d4000000000000000;"), 2f64.to_bits());
    // Ordered comparisons are false with a NaN, unordered ones true.
    let nan = "0f7FC00000";
    assert!(!p(&format!("setp.lt.f32 %p1, {nan}, 0f3F800000;")));
    assert!(p(&format!("setp.ltu.f32 %p1, {nan}, 0f3F800000;")));
    assert!(!p(&format!("setp.ne.f32 %p1, {nan}, 0f3F800000;")));
    assert!(p(&format!("setp.neu.f32 %p1, {nan}, 0f3F800000;")));
    assert!(!p(&format!("setp.eq.f32 %p1, {nan}, {nan};")));
    assert!(p(&format!("setp.nan.f32 %p1, 0f3F800000, {nan};")));
    assert!(!p(&format!("setp.num.f32 %p1, 0f3F800000, {nan};")));
    assert!(p("setp.num.f64 %p1, 0d3FF0000000000000, 0d0000000000000000;"));
    assert!(p("setp.eq.f32 %p1, 0f80000000, 0f00000000;"));
    assert!(p("setp.geu.f64 %p1, 0d7FF8000000000000, 0d3FF0000000000000;"));
    assert!(!p("setp.gt.f64 %p1, 0d3FF0000000000000, 0d3FF0000000000000;"));
    // testp: zero counts as normal.
    assert!(p("testp.normal.f32 %p1, 0f00000000;"));
    assert!(p("testp.subnormal.f32 %p1, 0f00000001;"));
    assert!(!p("testp.finite.f64 %p1, 0d7FF0000000000000;"));
    assert!(p("testp.notanumber.f64 %p1, 0d7FF0000000000001;"));
    assert_eq!(r32("setp.lt.f32 %p2, 0f3F800000, 0f40000000; selp.f32 %f2, 0f3F800000, 0f40000000, %p2; mov.b32 %r1, %f2;"), 0x3f80_0000);
}

#[test]
fn float_arithmetic_double_precision() {
    assert_eq!(f64b("mul.rn.f64 %fd1, 0d4008000000000000, 0d3FE0000000000000;"), 1.5f64.to_bits());
    assert_eq!(f64b("rcp.rn.f64 %fd1, 0d4008000000000000;"), 0x3fd5_5555_5555_5555);
    assert_eq!(f64b("div.rn.f64 %fd1, 0d3FF0000000000000, 0d4008000000000000;"), 0x3fd5_5555_5555_5555);
    // Subnormals are always kept in double precision.
    assert_eq!(f64b("mul.rn.f64 %fd1, 0d0010000000000000, 0d3FE0000000000000;"), 0x0008_0000_0000_0000);
    // f64 neg/abs pass NaN through unchanged (CUDA's documented deviation).
    assert_eq!(f64b("neg.f64 %fd1, 0d7FF8000000000000;"), 0x7ff8_0000_0000_0000);
    assert_eq!(f64b("abs.f64 %fd1, 0dBFF0000000000000;"), 1f64.to_bits());
    assert_eq!(f64b("fma.rn.f64 %fd1, 0d3FF0000000000001, 0d3FEFFFFFFFFFFFFE, 0dBFF0000000000000;"), (-(2f64.powi(-104))).to_bits());
    assert_eq!(f64b("sub.rn.f64 %fd1, 0d3FF0000000000000, 0d4000000000000000;"), (-1f64).to_bits());
}

#[test]
fn conversions_float_to_integer() {
    // Float-to-integer saturates to the destination range; NaN converts to 0.
    assert_eq!(r32("cvt.rzi.s32.f32 %r1, 0f7FC00000;"), 0);
    assert_eq!(r32("cvt.rzi.s32.f32 %r1, 0f4F32D05E;"), 0x7fff_ffff); // 3e9
    assert_eq!(r32("cvt.rzi.s32.f32 %r1, 0fCF32D05E;"), 0x8000_0000); // -3e9
    assert_eq!(r32("cvt.rzi.u32.f32 %r1, 0fBFC00000;"), 0); // -1.5
    assert_eq!(r64("cvt.rzi.u64.f64 %rd1, 0d46293E5939A08CEA;"), u64::MAX); // 1e30
    assert_eq!(r64("cvt.rzi.s64.f64 %rd1, 0dFFF0000000000000;"), 1 << 63);
    // Integer rounding modes: nearest even, toward zero, down, up.
    assert_eq!(r32("cvt.rzi.s32.f32 %r1, 0fC02CCCCD;"), (-2i32) as u32); // -2.7
    assert_eq!(r32("cvt.rni.s32.f32 %r1, 0f40200000;"), 2); // 2.5
    assert_eq!(r32("cvt.rni.s32.f32 %r1, 0f40600000;"), 4); // 3.5
    assert_eq!(r32("cvt.rmi.s32.f32 %r1, 0fC0200000;"), (-3i32) as u32); // -2.5
    assert_eq!(r32("cvt.rpi.s32.f32 %r1, 0f40066666;"), 3); // 2.1
    assert_eq!(r64("cvt.rzi.s64.f64 %rd1, 0dC00599999999999A;"), (-2i64) as u64); // -2.7
    assert_eq!(r16("cvt.rzi.s16.f32 %rs1, 0f47800000;"), 0x7fff); // 65536 -> s16 max
    assert_eq!(r16("cvt.rzi.u16.f64 %rs1, 0dC000000000000000;"), 0); // -2 -> u16 min
}

#[test]
fn conversions_integer_to_float() {
    // .rn: 2^24 + 1 is a tie between 2^24 and 2^24 + 2 -> even mantissa (2^24).
    assert_eq!(f32b("cvt.rn.f32.s32 %f1, 16777217;"), 0x4b80_0000);
    assert_eq!(f32b("cvt.rn.f32.s32 %f1, 16777219;"), 0x4b80_0002);
    // Directed modes take the neighbour on their side.
    assert_eq!(f32b("cvt.rz.f32.u32 %f1, 0xffffffff;"), 0x4f7f_ffff);
    assert_eq!(f32b("cvt.rn.f32.u32 %f1, 0xffffffff;"), 0x4f80_0000);
    assert_eq!(f32b("cvt.rp.f32.s32 %f1, 16777217;"), 0x4b80_0001);
    assert_eq!(f32b("cvt.rm.f32.s32 %f1, -16777217;"), 0xcb80_0001);
    assert_eq!(f32b("cvt.rz.f32.s32 %f1, -16777219;"), 0xcb80_0001);
    assert_eq!(f32b("cvt.rm.f32.s32 %f1, 16777217;"), 0x4b80_0000);
    assert_eq!(f64b("cvt.rn.f64.u64 %fd1, -1;"), 0x43f0_0000_0000_0000); // 2^64
    assert_eq!(f64b("cvt.rz.f64.u64 %fd1, -1;"), 0x43ef_ffff_ffff_ffff);
    assert_eq!(f64b("cvt.rn.f64.s64 %fd1, -9223372036854775808;"), 0xc3e0_0000_0000_0000);
    assert_eq!(f64b("cvt.rn.f64.s16 %fd1, 0x8000;"), (-32768f64).to_bits());
}

#[test]
fn conversions_between_floats() {
    // f64 -> f32 rounds once from the f64 value.
    assert_eq!(f32b("cvt.rn.f32.f64 %f1, 0d3FF0000010000000;"), 0x3f80_0000); // 1 + 2^-24: tie -> even
    assert_eq!(f32b("cvt.rn.f32.f64 %f1, 0d3FF0000010000001;"), 0x3f80_0001); // just above the tie
    assert_eq!(f32b("cvt.rz.f32.f64 %f1, 0d7E37E43C8800759C;"), 0x7f7f_ffff); // 1e300 -> max finite
    assert_eq!(f32b("cvt.rn.f32.f64 %f1, 0d7E37E43C8800759C;"), 0x7f80_0000); // -> inf
    assert_eq!(f32b("cvt.rm.f32.f64 %f1, 0d81C06A5E4E8D3A9E;"), 0x8000_0001); // -tiny -> -min subnormal
    assert_eq!(f32b("cvt.rp.f32.f64 %f1, 0d01C06A5E4E8D3A9E;"), 0x0000_0001);
    assert_eq!(f32b("cvt.rn.f32.f64 %f1, 0d01C06A5E4E8D3A9E;"), 0);
    assert_eq!(f32b("cvt.rn.f32.f64 %f1, 0d36A0000000000000;"), 0x0000_0001); // 2^-149 exactly
    assert_eq!(f32b("cvt.rn.f32.f64 %f1, 0d3690000000000000;"), 0); // 2^-150: tie -> even (0)
    assert_eq!(f32b("cvt.rn.ftz.f32.f64 %f1, 0d36A0000000000000;"), 0);
    // f32 -> f64 is exact.
    assert_eq!(f64b("cvt.f64.f32 %fd1, 0f3EAAAAAB;"), (f32::from_bits(0x3eaa_aaab) as f64).to_bits());
    assert_eq!(f64b("cvt.f64.f32 %fd1, 0f00000001;"), 2f64.powi(-149).to_bits());
    // Same-size: integral rounding, ftz, sat.
    assert_eq!(f32b("cvt.rni.f32.f32 %f1, 0f40200000;"), 0x4000_0000); // 2.5 -> 2
    assert_eq!(f64b("cvt.rmi.f64.f64 %fd1, 0dC004000000000000;"), (-3f64).to_bits());
    assert_eq!(f32b("cvt.ftz.f32.f32 %f1, 0f80000001;"), 0x8000_0000);
    assert_eq!(f32b("cvt.sat.f32.f32 %f1, 0f3FC00000;"), 0x3f80_0000);
    // Half precision: nearest even, overflow to inf unless rounding toward zero.
    assert_eq!(r16("cvt.rn.f16.f32 %rs1, 0f3F800000;"), 0x3c00);
    assert_eq!(r16("cvt.rn.f16.f32 %rs1, 0f477FF000;"), 0x7c00); // 65520 -> inf
    assert_eq!(r16("cvt.rz.f16.f32 %rs1, 0f477FF000;"), 0x7bff); // -> 65504
    assert_eq!(r16("cvt.rn.f16.f32 %rs1, 0f33800000;"), 0x0001); // 2^-24
    assert_eq!(f32b("mov.b16 %rs2, 0x3555; cvt.f32.f16 %f1, %rs2;"), 0x3eaa_a000);
    assert_eq!(f32b("mov.b16 %rs2, 0x0001; cvt.f32.f16 %f1, %rs2;"), 0x3380_0000);
    assert_eq!(f32b("mov.b16 %rs2, 0xfc00; cvt.f32.f16 %f1, %rs2;"), 0xff80_0000);
}

#[test]
fn conversions_between_integers() {
    assert_eq!(r32("cvt.u32.u64 %r1, 0x123456789;"), 0x2345_6789);
    assert_eq!(r64("cvt.s64.s32 %rd1, -1;"), u64::MAX);
    assert_eq!(r64("cvt.u64.u32 %rd1, 0xffffffff;"), 0xffff_ffff);
    assert_eq!(r32("cvt.s32.s16 %r1, 0x8000;"), 0xffff_8000);
    assert_eq!(r32("cvt.u32.u16 %r1, 0x8000;"), 0x8000);
    assert_eq!(r16("cvt.u16.u32 %rs1, 0x12345;"), 0x2345);
    assert_eq!(r64("cvt.u64.u16 %rd1, 0xffff;"), 0xffff);
    // .sat clamps to the destination range.
    assert_eq!(r16("cvt.sat.s16.s32 %rs1, 70000;"), 0x7fff);
    assert_eq!(r16("cvt.sat.s16.s32 %rs1, -70000;"), 0x8000);
    assert_eq!(r32("cvt.sat.u32.s32 %r1, -5;"), 0);
    assert_eq!(r16("cvt.u8.u32 %rs1, 0x1ff;"), 0xff);
}

#[test]
fn vector_mov_local_memory_and_calls() {
    // mov.b64 {lo, hi}: element 0 from the low bits.
    assert_eq!(r32("{ .reg .b32 tmp; mov.b64 {tmp, %r1}, 0x1111111122222222; }"), 0x1111_1111);
    assert_eq!(r64("mov.b32 %r2, 1; mov.b32 %r3, 2; mov.b64 %rd1, {%r2, %r3};"), 0x2_0000_0001);
    assert_eq!(r16("mov.b32 {%rs2, %rs1}, 0xabcd1234;"), 0xabcd);
}

#[test]
fn global_address_conversions_are_identity() {
    assert_eq!(r64("cvta.to.global.u64 %rd1, 0x123456789000;"), 0x1234_5678_9000);
    assert_eq!(r64("cvta.global.u64 %rd1, 42;"), 42);
}
