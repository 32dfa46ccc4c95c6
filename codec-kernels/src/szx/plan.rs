//! Phase 1 of the encoder: what one block becomes, and how many payload bytes it takes.
//!
//! In order of preference, a block is
//! 1. raw if it holds NaN or an infinity (they come back bit for bit);
//! 2. a zero block if every `|x| <= E`: no payload;
//! 3. a constant block if one value lies within `E` of every value, checked exactly on
//!    the value stored (the rounded midpoint, or its neighbour towards the side that
//!    failed), never on the float radius alone, and if the block holds no exact zero
//!    (zeros always come back as zeros);
//! 4. coded (see [`super::coding`]) with the fewest bits that keep the bound, raw if that
//!    would not be smaller: as fixed point (multiples of a power of two `delta <= 2E`)
//!    where that applies, else directly (the values' own bits); or as differences from
//!    the midpoint when that keeps fewer bits per value than the first two.
//!
//! Fixed point rounds `|x| / delta` to the nearest integer, exactly, so it moves a value
//! by at most `delta / 2 <= E` with no check, and it keeps exact zeros and signs. Direct
//! coding only rounds the mantissa of each value (cuts it, where rounding would
//! overflow), which provably moves a value by at most `E` (see
//! [`Tolerance::mantissa_bits`]), or keeps a value with `|x| <= E` as a zero of its sign;
//! it keeps exact zeros and signs too. Offset coding rounds three times (the difference,
//! its mantissa, the reconstruction), so every reconstructed value is checked against
//! the bound, exactly where the rounded error equals `E`; if one fails, one more
//! mantissa bit is tried, then the fallback. A block holding an exact zero is never
//! offset-coded.

use super::coding::{max_quant_bits, mode, Coding, Group, ERR_LANES, GROUP, MIN_QUANT_BITS, SIZE_ENTRY_BYTES};
use super::encode::{encode_block, encode_coded, max_payload_len};
use super::group_ops::GroupOps;
use super::scalar::{exponent_of, next_toward, pow2, round_to_uint, Bits, SzxFloat};
use super::stats::{block_stats, BlockStats};
use super::tolerance::Tolerance;

/// What phase 1 decides for a block; phase 3 writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockPlan<T: SzxFloat> {
    /// The state byte (see [`super::coding::state`]).
    pub state: u8,
    /// The constant (constant blocks), the reference (offset coding), or the flush
    /// threshold of direct coding (`E`: smaller magnitudes are coded as zeros of their
    /// sign; not stored); zero otherwise.
    pub value: T,
    /// Payload bytes.
    pub size: u32,
}

impl<T: SzxFloat> BlockPlan<T> {
    /// True for a coded block (it takes an entry in the size table).
    #[inline]
    pub fn is_coded(&self) -> bool {
        super::coding::is_coded(self.state)
    }

    fn fixed(state: u8, size: usize) -> Self {
        BlockPlan { state, value: T::ZERO, size: size as u32 }
    }
}

/// Decides the plan of block `x` (non-empty, at most `MAX_BLOCK_SIZE` values).
#[inline(always)]
pub fn plan_block<T: SzxFloat>(x: &[T], tol: &Tolerance<T>) -> BlockPlan<T> {
    plan_with(x, tol, &mut Measure)
}

/// Phases 1 and 3 at once, for a processor that runs the blocks in order: plans block
/// `x` and writes its payload at the start of `out` with the group steps of `ops`; `out`
/// needs room for [`max_payload_len`] bytes (else `None`, nothing planned). Each coding the decision
/// weighs is written rather than only measured, so the one chosen is already in place
/// (the last one written is always the one chosen); the plan and bytes are those of
/// [`plan_block`] and [`encode_block`].
#[inline(always)]
pub fn plan_encode_block<T: SzxFloat, G: GroupOps>(x: &[T], tol: &Tolerance<T>, out: &mut [u8], ops: G) -> Option<BlockPlan<T>> {
    if out.len() < max_payload_len::<T>(x.len()) {
        return None;
    }
    let plan = plan_with(x, tol, &mut WriteInto(&mut *out, ops));
    let payload = &mut out[..plan.size as usize];
    (plan.is_coded() || encode_block(x, &plan, payload)).then_some(plan)
}

/// How the decision learns what a coding costs: the payload length and, for offset
/// coding, the largest rounded reconstruction error.
trait Evaluate<T: SzxFloat> {
    fn eval<const M: u8>(&mut self, x: &[T], c: &Coding<T>) -> (usize, T);
}

/// Measures only (phase 1).
struct Measure;

impl<T: SzxFloat> Evaluate<T> for Measure {
    #[inline(always)]
    fn eval<const M: u8>(&mut self, x: &[T], c: &Coding<T>) -> (usize, T) {
        measure::<T, M>(x, c)
    }
}

/// Writes the payload into the buffer while measuring, with these group steps.
struct WriteInto<'a, G>(&'a mut [u8], G);

impl<T: SzxFloat, G: GroupOps> Evaluate<T> for WriteInto<'_, G> {
    #[inline(always)]
    fn eval<const M: u8>(&mut self, x: &[T], c: &Coding<T>) -> (usize, T) {
        // The caller made room for any coded payload; were there none, the length given
        // makes the block raw, which is then written over it.
        encode_coded::<T, G, M>(x, c, self.0, M == mode::OFFSET, self.1).unwrap_or((usize::MAX / 2, T::ZERO))
    }
}

#[inline(always)]
fn plan_with<T: SzxFloat, E: Evaluate<T>>(x: &[T], tol: &Tolerance<T>, ev: &mut E) -> BlockPlan<T> {
    use super::coding::state;
    let raw_len = T::BYTES * x.len();
    let st = block_stats(x);
    if !st.finite {
        return BlockPlan::fixed(state::RAW, raw_len);
    }
    if T::from_bits(st.max_abs()) <= tol.e {
        return BlockPlan::fixed(state::ZERO, 0);
    }
    // A block holding an exact zero is never constant (unless zero), so zeros stay zero.
    if let Some(c) = constant(&st, tol).filter(|_| !st.has_zero) {
        return BlockPlan { state: state::CONST, value: c, size: T::BYTES as u32 };
    }
    let (coding, size) = choose_coding(x, &st, tol, ev);
    if size + SIZE_ENTRY_BYTES < raw_len {
        let value = match coding.mode {
            mode::OFFSET => coding.reference,
            mode::QUANT => pow2(coding.delta_exp),
            _ => tol.e,
        };
        BlockPlan { state: coding.state(), value, size: size as u32 }
    } else {
        BlockPlan::fixed(state::RAW, raw_len)
    }
}

/// `min/2 + max/2`: the midpoint without overflow for any finite pair.
#[inline(always)]
fn midpoint<T: SzxFloat>(st: &BlockStats<T>) -> T {
    st.min * T::HALF + st.max * T::HALF
}

/// A value within `E` of both extremes (hence of every value), if the rounded midpoint
/// or its neighbour towards the violated side is one.
#[inline(always)]
fn constant<T: SzxFloat>(st: &BlockStats<T>, tol: &Tolerance<T>) -> Option<T> {
    let mid = midpoint(st);
    let ok = |c: T| tol.within(st.max, c) && tol.within(st.min, c);
    if ok(mid) {
        return Some(mid);
    }
    // Step one unit towards the extreme that is too far.
    let far = if tol.within(st.max, mid) { st.min } else { st.max };
    let nudged = next_toward(mid, far > mid);
    ok(nudged).then_some(nudged)
}

/// The cheapest coding that provably or verifiably keeps every value within `E`, and
/// its payload length.
/// The coding returned is always the last one evaluated.
#[inline(always)]
fn choose_coding<T: SzxFloat, E: Evaluate<T>>(x: &[T], st: &BlockStats<T>, tol: &Tolerance<T>, ev: &mut E) -> (Coding<T>, usize) {
    // In the top binade rounding may be refused (it would reach infinity), so keep the
    // bits that cutting off needs.
    let top = |bits: T::Bits| exponent_of::<T>(bits) == T::BIAS;
    let max_abs = st.max_abs();
    // Fixed point where it applies (it keeps EXP_BITS - 1 bits fewer per value than direct
    // coding, exactly within the bound), else direct coding.
    let base = quantized(st, tol).unwrap_or_else(|| {
        Coding::new(false, tol.mantissa_bits(exponent_of::<T>(max_abs), !top(max_abs)), T::ZERO).flushing(tol.e)
    });
    let base_len = |ev: &mut E| match base.mode {
        mode::QUANT => (base, ev.eval::<{ mode::QUANT }>(x, &base).0),
        _ => (base, ev.eval::<{ mode::DIRECT }>(x, &base).0),
    };
    if st.has_zero {
        return base_len(ev);
    }
    let m = midpoint(st);
    // Every difference fl(x - m) lies between these two, rounding being monotonic.
    let spread = (st.max - m).abs().to_bits().max((m - st.min).abs().to_bits());
    if top(spread) || spread >= T::INF_BITS {
        return base_len(ev);
    }
    let k = tol.mantissa_bits(exponent_of::<T>(spread), true);
    for k in [k, k + 1] {
        let c = Coding::new(true, k, m);
        if c.keep_bits() >= base.keep_bits() {
            break;
        }
        let (len, worst) = ev.eval::<{ mode::OFFSET }>(x, &c);
        // The rounded error decides unless it equals E; then decide exactly.
        let back = |v: T| c.reconstruct::<{ mode::OFFSET }>(c.quantize::<{ mode::OFFSET }>(v));
        if worst < tol.e || (worst == tol.e && x.iter().all(|&v| tol.within(v, back(v)))) {
            return (c, len);
        }
    }
    base_len(ev)
}

/// Fixed-point coding for a finite block, if it applies: `E > 0`, the unit
/// `delta = 2^(floor(log2 E) + 1)` (so `delta / 2 <= E`: rounding to the nearest multiple
/// keeps the bound exactly) and its inverse are normal, no value lies in the top binade
/// (so no multiple rounds up to infinity), and the largest multiple index fits
/// [`max_quant_bits`].
#[inline(always)]
fn quantized<T: SzxFloat>(st: &BlockStats<T>, tol: &Tolerance<T>) -> Option<Coding<T>> {
    let a = tol.e_exp + 1;
    let max_abs = st.max_abs();
    if tol.e <= T::ZERO || a.abs() >= T::BIAS || exponent_of::<T>(max_abs) >= T::BIAS {
        return None;
    }
    let qmax = max_quant_bits(T::MANT_BITS);
    let x = T::from_bits(max_abs) * pow2(-a);
    if x >= pow2::<T>(qmax as i32) {
        return None;
    }
    let n = round_to_uint(x);
    let bits = (T::Bits::BITS - n.lz()).max(MIN_QUANT_BITS);
    (bits <= qmax).then(|| Coding::quantized(bits, a))
}

/// Payload bytes of `x` under coding `c` (`M == c.mode`) and, for offset coding,
/// the largest rounded reconstruction error `|x - x'|`.
#[inline(always)]
fn measure<T: SzxFloat, const M: u8>(x: &[T], c: &Coding<T>) -> (usize, T) {
    let mut g = Group::new();
    let mut worst = [T::ZERO; ERR_LANES];
    let mut len = c.head_len(x.len());
    for xs in x.chunks(GROUP) {
        c.group::<M>(xs, g.last(), &mut g);
        len += c.group_len(&g);
        if M == mode::OFFSET {
            c.fold_offset_errors(xs, &g, &mut worst);
        }
    }
    (len, worst.iter().fold(T::ZERO, |a, &b| a.fmax(b)))
}

#[cfg(test)]
mod tests {
    use super::super::coding::{state, BlockKind};
    use super::super::group_ops::ScalarOps;
    use super::*;

    fn plan<T: SzxFloat>(x: &[T], e: T) -> BlockPlan<T> {
        plan_block(x, &Tolerance::new(e))
    }

    #[test]
    fn non_finite_blocks_are_raw() {
        assert_eq!(plan(&[1.0f32, f32::NAN, 2.0], 0.5).state, state::RAW);
        assert_eq!(plan(&[f64::NEG_INFINITY; 4], 1.0).size, 32);
    }

    #[test]
    fn small_blocks_become_zero_and_constant_blocks_keep_the_bound() {
        assert_eq!(plan(&[1e-3f32, -1e-3, 0.0], 1e-3).state, state::ZERO);
        // Values near 100 with E = 2e-5: the reference's float-radius test broke the bound.
        let x = [100.0f32, 100.00004];
        let p = plan(&x, 2e-5);
        if p.state == state::CONST {
            assert!(x.iter().all(|&v| ((v - p.value) as f64).abs() <= 2e-5f32 as f64));
        }
        let x = [10.0f64, 10.5, 11.0];
        let p = plan(&x, 0.5);
        assert_eq!((p.state, p.value, p.size), (state::CONST, 10.5, 8));
        assert_ne!(plan(&x, 0.49).state, state::CONST);
    }

    /// On subnormals, where halving rounds, the constant decision finds a representative
    /// exactly when one exists: some multiple `c` of the unit with `|x - c| <= E` for
    /// both extremes, i.e. `max - min <= 2E` (in units).
    #[test]
    fn constant_decision_is_exact_on_subnormals() {
        let unit = |k: i32| if k < 0 { -f32::from_bits(-k as u32) } else { f32::from_bits(k as u32) };
        for lo in -20..20 {
            for hi in lo..20 {
                for e in 0..24 {
                    let st = block_stats(&[unit(lo), unit(hi)]);
                    let tol = Tolerance::new(unit(e));
                    let found = constant(&st, &tol);
                    assert_eq!(found.is_some(), hi - lo <= 2 * e, "[{lo}, {hi}] units, E {e}");
                    if let Some(c) = found {
                        assert!(tol.within(unit(lo), c) && tol.within(unit(hi), c));
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_with_zeros_code_fixed_point_and_offsets_need_fewer_bits() {
        // E = 1e-3: unit 2^-9; values below 2 take 10 magnitude bits.
        let x: [f32; 64] = core::array::from_fn(|i| if i % 7 == 0 { 0.0 } else { 1.0 + i as f32 / 64.0 });
        let p = plan(&x, 1e-3);
        assert_eq!(BlockKind::parse::<f32>(p.state), Some(BlockKind::Quantized { mag_bits: 10 }));
        assert_eq!(p.value, 2f32.powi(-9));
        // Near 100 fixed point needs 16 magnitude bits (L = 17); differences within 0.5
        // (exponent -2), rounded, need 7 mantissa bits (L = 16).
        let x: [f32; 64] = core::array::from_fn(|i| 100.0 + i as f32 / 64.0);
        let p = plan(&x, 1e-3);
        assert_eq!(BlockKind::parse::<f32>(p.state), Some(BlockKind::Coded { offset: true, mant_bits: 7 }));
        // Without a usable unit (E = 0), blocks with zeros are coded directly.
        let x: [f32; 64] = core::array::from_fn(|i| if i % 7 == 0 { 0.0 } else { 1.0 + i as f32 / 64.0 });
        assert_eq!(BlockKind::parse::<f32>(plan(&x, 0.0).state), Some(BlockKind::Coded { offset: false, mant_bits: 23 }));
    }

    /// Planning while writing gives the plan and the bytes of the two phases, for every
    /// kind of block (offset candidates rejected or not), and refuses too little room.
    #[test]
    fn plan_encode_matches_the_two_phases() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut kinds = [0usize; 6];
        for case in 0..400 {
            let n = [1usize, 7, 64, 100, 128][case % 5];
            let e = [0.0f32, 1e-6, 1e-3, 0.1, 3.0][case / 5 % 5];
            let x: [f32; 128] = core::array::from_fn(|i| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (s >> 40) as f32 / (1u64 << 24) as f32;
                match case / 25 % 8 {
                    0 => 100.0 + r * 0.01,
                    1 => (i as f32 * 0.1).sin() * 0.5,
                    2 if i % 3 == 0 => 0.0,
                    3 => if r < 0.5 { 1e-4 } else { -1e-4 },
                    4 => f32::from_bits(s as u32 & 0x7f7f_ffff),
                    5 if i == 5 => f32::NAN,
                    6 => 7.0,
                    _ => r - 0.5,
                }
            });
            let (x, tol) = (&x[..n], Tolerance::new(e));
            let plan = plan_block(x, &tol);
            let mut two = [0u8; 600];
            assert!(encode_block(x, &plan, &mut two[..plan.size as usize]));
            let mut one = [0xa5u8; 600];
            assert_eq!(plan_encode_block(x, &tol, &mut one, ScalarOps), Some(plan), "case {case}");
            assert_eq!(one[..plan.size as usize], two[..plan.size as usize], "case {case}");
            assert_eq!(plan_encode_block(x, &tol, &mut one[..max_payload_len::<f32>(n) - 1], ScalarOps), None);
            kinds[match BlockKind::parse::<f32>(plan.state).unwrap() {
                BlockKind::Zero => 0,
                BlockKind::Const => 1,
                BlockKind::Raw => 2,
                BlockKind::Coded { offset: false, .. } => 3,
                BlockKind::Coded { offset: true, .. } => 4,
                BlockKind::Quantized { .. } => 5,
            }] += 1;
        }
        assert!(kinds.iter().all(|&k| k > 0), "{kinds:?}");
    }

    #[test]
    fn incompressible_blocks_are_raw() {
        // Random bit patterns (finite): hardly a leading byte repeats.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let x: [f64; 16] = core::array::from_fn(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            f64::from_bits(s >> 1 & !(1 << 62))
        });
        let p = plan(&x, 0.0);
        assert_eq!((p.state, p.size), (state::RAW, 128));
        // Smooth values of one exponent reuse leading bytes even losslessly.
        let x: [f64; 16] = core::array::from_fn(|i| 1.0 + i as f64 / 64.0);
        assert_eq!(plan(&x, 0.0).state, state::DIRECT | 52);
    }
}
