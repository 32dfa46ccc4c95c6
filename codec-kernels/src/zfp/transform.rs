//! zfp's decorrelating transform: a lifting scheme applied to every 4-vector of a block,
//! along x, then y, then z (the inverse along z, then y, then x). The rounding in the
//! shifts makes the axis order part of the format; the order of lines within one axis
//! is not.

use super::dims::Dims;
use super::scalar::BlockInt;

/// Forward lift of one 4-vector (x, y, z, w).
#[inline(always)]
fn fwd_lift<I: BlockInt>(x: &mut I, y: &mut I, z: &mut I, w: &mut I) {
    *x = x.add(*w).half();
    *w = w.sub(*x);
    *z = z.add(*y).half();
    *y = y.sub(*z);
    *x = x.add(*z).half();
    *z = z.sub(*x);
    *w = w.add(*y).half();
    *y = y.sub(*w);
    *w = w.add(y.half());
    *y = y.sub(w.half());
}

/// Inverse of [`fwd_lift`].
#[inline(always)]
fn inv_lift<I: BlockInt>(x: &mut I, y: &mut I, z: &mut I, w: &mut I) {
    *y = y.add(w.half());
    *w = w.sub(y.half());
    *y = y.add(*w);
    *w = w.twice().sub(*y);
    *z = z.add(*x);
    *x = x.twice().sub(*z);
    *y = y.add(*z);
    *z = z.twice().sub(*y);
    *w = w.add(*x);
    *x = x.twice().sub(*w);
}

/// Applies `lift` to every line of the block along the axis of stride `S`.
///
/// With the block seen as `[outer][4][S]`, the lines are the middle dimension, and the
/// `S` lines of one `outer` index sit in contiguous lanes, so for `S >= 4` one lift
/// runs on `S` lines at once (packed instructions). Along x (`S = 1`) four rows are
/// transposed first to get the same shape.
#[inline(always)]
fn axis<I: BlockInt, const S: usize>(p: &mut [I], lift: impl Fn(&mut I, &mut I, &mut I, &mut I)) {
    if S == 1 && p.len() >= 16 {
        for rows in p.chunks_exact_mut(16) {
            let mut t: [[I; 4]; 4] = core::array::from_fn(|c| core::array::from_fn(|r| rows[4 * r + c]));
            let [a, b, c, d] = &mut t;
            for l in 0..4 {
                lift(&mut a[l], &mut b[l], &mut c[l], &mut d[l]);
            }
            for (i, v) in rows.iter_mut().enumerate() {
                *v = t[i % 4][i / 4];
            }
        }
        return;
    }
    for chunk in p.chunks_exact_mut(4 * S) {
        let (a, rest) = chunk.split_at_mut(S);
        let (b, rest) = rest.split_at_mut(S);
        let (c, d) = rest.split_at_mut(S);
        for l in 0..S {
            lift(&mut a[l], &mut b[l], &mut c[l], &mut d[l]);
        }
    }
}

/// Forward transform of a block, in place: along x, then y, then z.
#[inline(always)]
pub fn fwd_xform<I: BlockInt, D: Dims>(block: &mut D::Block<I>) {
    let p = block.as_mut();
    axis::<I, 1>(p, fwd_lift);
    if D::D > 1 {
        axis::<I, 4>(p, fwd_lift);
    }
    if D::D > 2 {
        axis::<I, 16>(p, fwd_lift);
    }
}

/// Inverse transform of a block, in place: along z, then y, then x.
#[inline(always)]
pub fn inv_xform<I: BlockInt, D: Dims>(block: &mut D::Block<I>) {
    let p = block.as_mut();
    if D::D > 2 {
        axis::<I, 16>(p, inv_lift);
    }
    if D::D > 1 {
        axis::<I, 4>(p, inv_lift);
    }
    axis::<I, 1>(p, inv_lift);
}

#[cfg(test)]
mod tests {
    use super::super::dims::{D1, D2, D3};
    use super::*;

    #[test]
    fn lift_matches_zfp_worked_example() {
        // (x, y, z, w) = (8, 4, 2, 6): x=(8+6)>>1=7, w=6-7=-1; z=(2+4)>>1=3, y=4-3=1;
        // x=(7+3)>>1=5, z=3-5=-2; w=(-1+1)>>1=0, y=1-0=1; w=0+(1>>1)=0, y=1-(0>>1)=1.
        let mut v = [8i32, 4, 2, 6];
        fwd_xform::<i32, D1>(&mut v);
        assert_eq!(v, [5, 1, -2, 0]);
    }

    #[test]
    fn inverse_undoes_forward_for_smooth_blocks() {
        // The lifting rounds away a few low bits per axis (zfp's transform is not
        // reversible; its guard planes absorb this): the inverse comes back close.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 36) as i32) - (1 << 27)
        };
        for _ in 0..50 {
            let orig: [i32; 64] = core::array::from_fn(|_| next());
            let mut b = orig;
            fwd_xform::<i32, D3>(&mut b);
            inv_xform::<i32, D3>(&mut b);
            let err = orig.iter().zip(&b).map(|(a, b)| (a - b).abs()).max().unwrap();
            assert!(err <= 32, "3D error {err}");
            let mut b2: [i64; 16] = core::array::from_fn(|i| orig[i] as i64 * 1000);
            let o2 = b2;
            fwd_xform::<i64, D2>(&mut b2);
            inv_xform::<i64, D2>(&mut b2);
            assert!(o2.iter().zip(&b2).all(|(a, b)| (a - b).abs() <= 16));
        }
    }

    /// zfp's loops, one line at a time with explicit strides, as the reference.
    fn reference_fwd_3d(p: &mut [i32; 64]) {
        let lift = |p: &mut [i32; 64], b: usize, s: usize| {
            let [mut x, mut y, mut z, mut w] = [p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]];
            fwd_lift(&mut x, &mut y, &mut z, &mut w);
            [p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]] = [x, y, z, w];
        };
        for k in 0..4 {
            for j in 0..4 {
                lift(p, 4 * j + 16 * k, 1);
            }
        }
        for i in 0..4 {
            for k in 0..4 {
                lift(p, 16 * k + i, 4);
            }
        }
        for j in 0..4 {
            for i in 0..4 {
                lift(p, i + 4 * j, 16);
            }
        }
    }

    #[test]
    fn lane_parallel_transform_equals_line_by_line() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        for _ in 0..100 {
            let orig: [i32; 64] = core::array::from_fn(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as i32 >> (seed % 8)
            });
            let mut want = orig;
            reference_fwd_3d(&mut want);
            let mut got = orig;
            fwd_xform::<i32, D3>(&mut got);
            assert_eq!(got, want);
        }
    }
}
