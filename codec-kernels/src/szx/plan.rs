//! Phase 1 of the encoder: what one block becomes, and how many payload bytes it takes.
//!
//! In order of preference, a block is
//! 1. raw if it holds NaN or an infinity (they come back bit for bit);
//! 2. a zero block if every `|x| <= E`: no payload;
//! 3. a constant block if one value lies within `E` of every value, checked exactly on
//!    the value stored (the rounded midpoint, or its neighbour towards the side that
//!    failed), never on the float radius alone, and if the block holds no exact zero
//!    (zeros always come back as zeros);
//! 4. coded (see [`super::coding`]), directly or as differences from the midpoint, with
//!    the fewest mantissa bits that keep the bound; raw if that would not be smaller.
//!
//! Direct coding only rounds the mantissa of each value (cuts it, where rounding would
//! overflow), which provably moves a value by at most `E` (see
//! [`Tolerance::mantissa_bits`]), or keeps a value with `|x| <= E` as a zero of its sign
//! (exactly within `E`; runs of such values then repeat and cost only their codes). Offset coding rounds three times (the difference, its
//! mantissa, the reconstruction), so every reconstructed value is checked against the
//! bound, exactly where the rounded error equals `E`; if one fails, one more mantissa bit
//! is tried, then direct coding. Direct coding is also chosen when it is no dearer and
//! whenever the block holds an exact zero, which it keeps exactly; it keeps every sign
//! too (a magnitude rounded to zero keeps its sign bit).

use super::coding::{Coding, Group, GROUP, SIZE_ENTRY_BYTES};
use super::scalar::{exponent_of, next_toward, SzxFloat};
use super::stats::{block_stats, BlockStats};
use super::tolerance::Tolerance;

/// Independent accumulators of the error measurement.
const LANES: usize = 8;

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
    let (coding, size) = choose_coding(x, &st, tol);
    if size + SIZE_ENTRY_BYTES < raw_len {
        let value = if coding.offset { coding.reference } else { tol.e };
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
#[inline(always)]
fn choose_coding<T: SzxFloat>(x: &[T], st: &BlockStats<T>, tol: &Tolerance<T>) -> (Coding<T>, usize) {
    // In the top binade rounding may be refused (it would reach infinity), so keep the
    // bits that cutting off needs.
    let top = |bits: T::Bits| exponent_of::<T>(bits) == T::BIAS;
    let max_abs = st.max_abs();
    let direct = Coding::new(false, tol.mantissa_bits(exponent_of::<T>(max_abs), !top(max_abs)), T::ZERO).flushing(tol.e);
    let direct_len = || (direct, measure::<T, false>(x, &direct).0);
    if st.has_zero {
        return direct_len();
    }
    let m = midpoint(st);
    // Every difference fl(x - m) lies between these two, rounding being monotonic.
    let spread = (st.max - m).abs().to_bits().max((m - st.min).abs().to_bits());
    if top(spread) || spread >= T::INF_BITS {
        return direct_len();
    }
    let k = tol.mantissa_bits(exponent_of::<T>(spread), true);
    for k in [k, k + 1] {
        if k >= direct.mant_bits {
            break;
        }
        let c = Coding::new(true, k, m);
        let (len, worst) = measure::<T, true>(x, &c);
        // The rounded error decides unless it equals E; then decide exactly.
        if worst < tol.e || (worst == tol.e && x.iter().all(|&v| tol.within(v, c.reconstruct::<true>(c.quantize::<true>(v))))) {
            return (c, len);
        }
    }
    direct_len()
}

/// Payload bytes of `x` under coding `c` (`OFFSET == c.offset`) and, for offset coding,
/// the largest rounded reconstruction error `|x - x'|`.
#[inline(always)]
fn measure<T: SzxFloat, const OFFSET: bool>(x: &[T], c: &Coding<T>) -> (usize, T) {
    let mut g = Group::new();
    let mut worst = [T::ZERO; LANES];
    let mut len = c.head_len(x.len());
    for xs in x.chunks(GROUP) {
        c.group::<OFFSET>(xs, g.last(), &mut g);
        len += c.group_len(&g);
        if OFFSET {
            for (vs, ts) in xs.chunks(LANES).zip(g.t.chunks(LANES)) {
                for ((w, &v), &tv) in worst.iter_mut().zip(vs).zip(ts) {
                    *w = w.fmax((v - c.reconstruct::<true>(tv)).abs());
                }
            }
        }
    }
    (len, worst.iter().fold(T::ZERO, |a, &b| a.fmax(b)))
}

#[cfg(test)]
mod tests {
    use super::super::coding::{state, BlockKind};
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
    fn blocks_with_zeros_code_directly_and_offsets_need_fewer_bits() {
        let x: [f32; 64] = core::array::from_fn(|i| if i % 7 == 0 { 0.0 } else { 1.0 + i as f32 / 64.0 });
        let p = plan(&x, 1e-3);
        assert_eq!(BlockKind::parse::<f32>(p.state), Some(BlockKind::Coded { offset: false, mant_bits: 9 }));
        let x: [f32; 64] = core::array::from_fn(|i| 1.0 + i as f32 / 64.0);
        let p = plan(&x, 1e-3);
        // Rounded, differences within 0.5 (exponent -2) need 7 bits, the values themselves 9.
        assert_eq!(BlockKind::parse::<f32>(p.state), Some(BlockKind::Coded { offset: true, mant_bits: 7 }));
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
