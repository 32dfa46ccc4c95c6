//! Reduction of two coded blocks into one coded block, in the compressed domain where
//! the format allows it (the hZCCL idea applied to SZx).
//!
//! Both operands are decoded (which checks them, and is the cheap half of the codec);
//! then, for `r = combine(op, a', b')` computed exactly as an uncompressed reduction
//! computes it from the decoded values:
//!
//! - a sum with a zero block is the other block, copied as it is (`x + 0 = x`);
//! - two constant (or zero) blocks give the constant `combine(op, c_a, c_b)` (a zero
//!   block if it is zero);
//! - when an operand is a fixed-point block, of unit `2^e`, and every `r` is a multiple
//!   of `2^e` that fixed point can hold (always so for a sum, min or max of two
//!   fixed-point blocks: multiples of `2^e1` and `2^e2` are multiples of
//!   `2^min(e1, e2)`, and the integer sum of two magnitudes below `2^(MANT - 1)` is
//!   exact in `T`), `r` is coded as fixed point on that grid;
//!
//! each of which decodes to `r` exactly (a zero's sign aside): no error is added. Every
//! other pair (raw, direct or offset coded, a constant off the grid) is planned and
//! coded again from `r` with the tolerance given, which adds at most `E`.

use super::coding::{max_quant_bits, mode, state, BlockKind, Coding, Group, GROUP, MIN_QUANT_BITS, SIZE_ENTRY_BYTES};
use super::decode::{check_block, decode_block, BlockError};
use super::encode::encode_block;
use super::plan::{plan_block, BlockPlan};
use super::scalar::{pow2, round_to_uint, uint_to_float, Bits, SzxFloat};
use super::tolerance::Tolerance;
use crate::reduce::{combine, ReduceElem, ReduceOp};

/// One operand: a block's state byte and its payload.
#[derive(Clone, Copy, Debug)]
pub struct BlockRef<'a> {
    pub state: u8,
    pub payload: &'a [u8],
}

/// How a reduced block was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// One operand's block, copied (a sum with a zero block): exact.
    Copied,
    /// Coded from the exact reduced values without rounding them (constant or fixed
    /// point on the operands' grid, or raw).
    Exact,
    /// Planned and coded again within the tolerance: at most `E` added.
    Requantized,
}

/// The reduced block: its state, its payload's length (at the start of the output) and
/// how it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducedBlock {
    pub state: u8,
    pub len: usize,
    pub outcome: Outcome,
}

/// Reduces blocks `a` and `b` of `va.len()` values (at most `MAX_BLOCK_SIZE`) with
/// `op` (at least one value), writing the result's payload to the start of `out`, which must hold at least
/// the raw values (`W * len` bytes; no block is larger). `va` and `vb` are scratch of the
/// block's length. Requantized blocks are
/// coded within `tol`. An operand that does not decode is an error, nothing else is.
#[inline(always)]
pub fn reduce_block<T: SzxFloat + ReduceElem>(
    op: ReduceOp,
    a: BlockRef<'_>,
    b: BlockRef<'_>,
    tol: &Tolerance<T>,
    va: &mut [T],
    vb: &mut [T],
    out: &mut [u8],
) -> Result<ReducedBlock, BlockError> {
    let n = va.len();
    if n == 0 || vb.len() != n || out.len() < n * T::BYTES {
        return Err(BlockError::BadLength);
    }
    let (ka, kb) = (BlockKind::parse::<T>(a.state), BlockKind::parse::<T>(b.state));
    if op == ReduceOp::Sum {
        let copy = match (ka, kb) {
            (Some(BlockKind::Zero), _) => Some((b, a)),
            (_, Some(BlockKind::Zero)) => Some((a, b)),
            _ => None,
        };
        if let Some((keep, zero)) = copy {
            if !zero.payload.is_empty() {
                return Err(BlockError::BadLength);
            }
            // Checked as the decoder checks it. (A crafted coded block can be longer
            // than raw values; that one is coded again.)
            check_block::<T>(keep.state, keep.payload, n)?;
            if let Some(dst) = out.get_mut(..keep.payload.len()) {
                dst.copy_from_slice(keep.payload);
                return Ok(ReducedBlock { state: keep.state, len: keep.payload.len(), outcome: Outcome::Copied });
            }
        }
    }
    decode_block(a.state, a.payload, va)?;
    decode_block(b.state, b.payload, vb)?;
    for (x, &y) in va.iter_mut().zip(vb.iter()) {
        *x = combine(op, *x, y);
    }
    let r = &*va;
    let uniform = |k| matches!(k, Some(BlockKind::Zero | BlockKind::Const));
    if uniform(ka) && uniform(kb) {
        // Every r is the same value (a zero block decodes to +0 and a constant block
        // never holds a zero, so a zero r is +0).
        let c = r[0];
        if c == T::ZERO {
            return Ok(ReducedBlock { state: state::ZERO, len: 0, outcome: Outcome::Exact });
        }
        if c.to_bits() & T::ABS_MASK < T::INF_BITS {
            c.to_bits().store_le(out);
            return Ok(ReducedBlock { state: state::CONST, len: T::BYTES, outcome: Outcome::Exact });
        }
    }
    let grid = [(ka, a), (kb, b)]
        .into_iter()
        .filter_map(|(k, blk)| match k {
            // Decoded, so the payload holds the unit's exponent.
            Some(BlockKind::Quantized { .. }) => blk.payload.get(..2).map(|p| i16::from_le_bytes([p[0], p[1]]) as i32),
            _ => None,
        })
        .min();
    if let Some(coding) = grid.and_then(|e| fixed_point(r, e)) {
        let plan = sized_plan(r, &coding, pow2(coding.delta_exp));
        let len = plan.size as usize;
        return if encode_block(r, &plan, &mut out[..len]) {
            Ok(ReducedBlock { state: plan.state, len, outcome: Outcome::Exact })
        } else {
            Err(BlockError::BadCodes)
        };
    }
    let plan = plan_block(r, tol);
    let len = plan.size as usize;
    if !encode_block(r, &plan, &mut out[..len]) {
        return Err(BlockError::BadCodes);
    }
    let lossless = plan.state == state::RAW || tol.e == T::ZERO;
    Ok(ReducedBlock { state: plan.state, len, outcome: if lossless { Outcome::Exact } else { Outcome::Requantized } })
}

/// The fixed-point coding of unit `2^e` (`|e| < BIAS`, as a decoded block's) that holds
/// every value of `r` exactly, if there is one: each `|v| / 2^e` an integer below
/// `2^(MANT - 1)`. Scaling by a power of two is exact here (an integer result is not
/// subnormal), so the test is exact.
#[inline(always)]
fn fixed_point<T: SzxFloat>(r: &[T], e: i32) -> Option<Coding<T>> {
    let inv = pow2::<T>(-e);
    let qmax = max_quant_bits(T::MANT_BITS);
    let limit = pow2::<T>(qmax as i32);
    let mut on_grid = true;
    let mut largest = T::Bits::ZERO;
    for &v in r {
        let x = v.abs() * inv;
        // NaN and infinities fail the first test.
        let fits = x < limit;
        let n = if fits { round_to_uint(x) } else { T::Bits::ZERO };
        on_grid &= fits && uint_to_float::<T>(n) == x;
        largest = largest.max(n);
    }
    let bits = (T::Bits::BITS - largest.lz()).max(MIN_QUANT_BITS);
    (on_grid && bits <= qmax).then(|| Coding::quantized(bits, e))
}

/// The plan of `r` coded with `c` (fixed point of unit `value`), or raw where that is
/// not smaller, as the planner decides between the two.
#[inline(always)]
fn sized_plan<T: SzxFloat>(r: &[T], c: &Coding<T>, value: T) -> BlockPlan<T> {
    let mut g = Group::new();
    let mut size = c.head_len(r.len());
    for xs in r.chunks(GROUP) {
        c.group::<{ mode::QUANT }>(xs, g.last(), &mut g);
        size += c.group_len(&g);
    }
    let raw = r.len() * T::BYTES;
    if size + SIZE_ENTRY_BYTES < raw {
        BlockPlan { state: c.state(), value, size: size as u32 }
    } else {
        BlockPlan { state: state::RAW, value: T::ZERO, size: raw as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes `x` as one block within `e`; returns its state and payload length in `buf`.
    fn code<T: SzxFloat>(x: &[T], e: T, buf: &mut [u8]) -> (u8, usize) {
        let plan = plan_block(x, &Tolerance::new(e));
        assert!(encode_block(x, &plan, &mut buf[..plan.size as usize]));
        (plan.state, plan.size as usize)
    }

    /// Reduces two coded blocks and checks the result against the decoded operands.
    fn check(op: ReduceOp, x: &[f32], y: &[f32], e: f32) -> Outcome {
        let n = x.len();
        let (mut ba, mut bb, mut out) = ([0u8; 1024], [0u8; 1024], [0u8; 1024]);
        let (sa, la) = code(x, e, &mut ba);
        let (sb, lb) = code(y, e, &mut bb);
        let (mut va, mut vb) = ([0f32; 128], [0f32; 128]);
        let tol = Tolerance::new(e);
        let a = BlockRef { state: sa, payload: &ba[..la] };
        let b = BlockRef { state: sb, payload: &bb[..lb] };
        let got = reduce_block(op, a, b, &tol, &mut va[..n], &mut vb[..n], &mut out).unwrap();
        let (mut da, mut db, mut back) = ([0f32; 128], [0f32; 128], [0f32; 128]);
        decode_block(sa, &ba[..la], &mut da[..n]).unwrap();
        decode_block(sb, &bb[..lb], &mut db[..n]).unwrap();
        decode_block(got.state, &out[..got.len], &mut back[..n]).unwrap();
        for i in 0..n {
            let want = combine(op, da[i], db[i]);
            let err = ((back[i] - want) as f64).abs();
            if got.outcome == Outcome::Requantized {
                assert!(err <= e as f64, "{op:?} {i}: {} vs {want}", back[i]);
            } else {
                assert!(back[i] == want || (back[i].is_nan() && want.is_nan()), "{op:?} {i}: {} vs {want}, {got:?}", back[i]);
            }
        }
        got.outcome
    }

    #[test]
    fn fixed_point_and_zero_and_constant_blocks_reduce_exactly() {
        let wave: [f32; 128] = core::array::from_fn(|i| if i % 9 == 0 { 0.0 } else { (i as f32 * 0.3).sin() });
        let other: [f32; 128] = core::array::from_fn(|i| if i % 5 == 0 { 0.0 } else { (i as f32 * 0.11).cos() * 2.0 });
        for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max] {
            assert_eq!(check(op, &wave, &other, 1e-3), Outcome::Exact, "{op:?}");
        }
        assert_eq!(check(ReduceOp::Sum, &[1e-4; 128], &other, 1e-3), Outcome::Copied);
        assert_eq!(check(ReduceOp::Sum, &wave, &[0.0; 128], 1e-3), Outcome::Copied);
        assert_eq!(check(ReduceOp::Sum, &[3.0; 128], &[-1.25; 128], 1e-3), Outcome::Exact);
        assert_eq!(check(ReduceOp::Sum, &[3.0; 128], &[-3.0; 128], 1e-3), Outcome::Exact);
        // Far from zero, without zeros: offset coding, so the sum is coded again.
        let smooth: [f32; 128] = core::array::from_fn(|i| 1000.0 + i as f32 / 512.0);
        assert_eq!(BlockKind::parse::<f32>(plan_block(&smooth, &Tolerance::new(1e-3)).state), Some(BlockKind::Coded { offset: true, mant_bits: 5 }));
        assert_eq!(check(ReduceOp::Sum, &smooth, &smooth, 1e-3), Outcome::Requantized);
        let mut nan = wave;
        nan[7] = f32::NAN;
        assert_eq!(check(ReduceOp::Sum, &nan, &other, 1e-3), Outcome::Exact, "raw, NaN kept");
    }

    #[test]
    fn corrupt_operands_and_short_outputs_are_errors() {
        let x: [f32; 64] = core::array::from_fn(|i| (i as f32 * 0.2).sin());
        let mut buf = [0u8; 512];
        let (s, l) = code(&x, 1e-3, &mut buf);
        let tol = Tolerance::new(1e-3f32);
        let (mut va, mut vb, mut out) = ([0f32; 64], [0f32; 64], [0u8; 256]);
        let good = BlockRef { state: s, payload: &buf[..l] };
        let bad = BlockRef { state: s, payload: &buf[..l - 1] };
        assert!(reduce_block(ReduceOp::Sum, good, bad, &tol, &mut va, &mut vb, &mut out).is_err());
        let bad_state = BlockRef { state: 0x3f, payload: &[] };
        assert_eq!(reduce_block(ReduceOp::Sum, bad_state, good, &tol, &mut va, &mut vb, &mut out), Err(BlockError::BadState));
        assert_eq!(reduce_block(ReduceOp::Sum, good, good, &tol, &mut va, &mut vb, &mut out[..255]), Err(BlockError::BadLength));
    }
}
