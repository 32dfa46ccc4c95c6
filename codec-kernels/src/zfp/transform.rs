//! zfp's decorrelating transform: a lifting scheme applied to every 4-vector of a block,
//! along x, then y, then z (the inverse along z, then y, then x). The rounding in the
//! shifts makes the axis order part of the format; the order of lines within one axis
//! is not.

use super::dims::Dims;
use super::scalar::BlockInt;

/// Forward lift of the 4-vector at `p[b], p[b+s], p[b+2s], p[b+3s]`.
#[inline(always)]
fn fwd_lift<I: BlockInt>(p: &mut [I], b: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    x = x.add(w).half();
    w = w.sub(x);
    z = z.add(y).half();
    y = y.sub(z);
    x = x.add(z).half();
    z = z.sub(x);
    w = w.add(y).half();
    y = y.sub(w);
    w = w.add(y.half());
    y = y.sub(w.half());
    p[b] = x;
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

/// Inverse of [`fwd_lift`].
#[inline(always)]
fn inv_lift<I: BlockInt>(p: &mut [I], b: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    y = y.add(w.half());
    w = w.sub(y.half());
    y = y.add(w);
    w = w.twice().sub(y);
    z = z.add(x);
    x = x.twice().sub(z);
    y = y.add(z);
    z = z.twice().sub(y);
    w = w.add(x);
    x = x.twice().sub(w);
    p[b] = x;
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

/// First index of line `line` (0..N/4) along the axis with stride `s`: the line's other
/// coordinates, with a zero inserted at the axis' base-4 digit.
#[inline(always)]
fn line_start(line: usize, s: usize) -> usize {
    (line / s) * 4 * s + line % s
}

/// Forward transform of a block, in place.
#[inline(always)]
pub fn fwd_xform<I: BlockInt, D: Dims>(block: &mut D::Block<I>) {
    let p = block.as_mut();
    let mut s = 1;
    for _ in 0..D::D {
        for line in 0..D::N / 4 {
            fwd_lift(p, line_start(line, s), s);
        }
        s *= 4;
    }
}

/// Inverse transform of a block, in place.
#[inline(always)]
pub fn inv_xform<I: BlockInt, D: Dims>(block: &mut D::Block<I>) {
    let p = block.as_mut();
    let mut s = D::N / 4;
    for _ in 0..D::D {
        for line in 0..D::N / 4 {
            inv_lift(p, line_start(line, s), s);
        }
        s /= 4;
    }
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

    #[test]
    fn lines_cover_each_axis_once() {
        for s in [1, 4, 16] {
            let mut hit = [0u8; 64];
            for line in 0..16 {
                for t in 0..4 {
                    hit[line_start(line, s) + t * s] += 1;
                }
            }
            assert!(hit.iter().all(|&h| h == 1), "stride {s}");
        }
    }
}
