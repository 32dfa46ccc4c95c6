//! Arrays as grids of blocks: block numbering, gather with zfp's edge padding, scatter.
//!
//! Blocks are numbered in raster order, x fastest (for each z block, for each y block,
//! for each x block), the order of zfp's compress loop and of its stream.

use super::dims::Dims;
use super::scalar::Scalar;

/// A contiguous array of `nx * ny * nz` values, x fastest. Unused axes have extent 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Extents, x first.
    pub n: [usize; 3],
}

impl Field {
    /// An array with extents `n` (x first; 1 for axes a block shape does not use).
    pub const fn new(n: [usize; 3]) -> Self {
        Field { n }
    }

    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// True if some extent is zero.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Blocks along each axis, `ceil(n / 4)`.
    #[inline]
    pub fn blocks(&self) -> [usize; 3] {
        [self.n[0].div_ceil(4), self.n[1].div_ceil(4), self.n[2].div_ceil(4)]
    }

    /// Total number of blocks (for a block shape covering every axis of extent > 1).
    #[inline]
    pub fn block_count(&self) -> usize {
        let b = self.blocks();
        b[0] * b[1] * b[2]
    }

    /// Array coordinates of the first value of block `b` of a field cut into blocks of
    /// `D` (which spares the divisions along axes that `D` does not have).
    #[inline(always)]
    pub fn block_origin<D: Dims>(&self, b: usize) -> [usize; 3] {
        let nb = self.blocks();
        match D::D {
            1 => [4 * b, 0, 0],
            2 => [4 * (b % nb[0]), 4 * (b / nb[0]), 0],
            _ => {
                let rest = b / nb[0];
                [4 * (b % nb[0]), 4 * (rest % nb[1]), 4 * (rest / nb[1])]
            }
        }
    }

    /// Index of the value at `c`.
    #[inline(always)]
    fn index(&self, c: [usize; 3]) -> usize {
        c[0] + self.n[0] * (c[1] + self.n[1] * c[2])
    }

    /// Number of valid values (1 to 4) along each axis of the block at `origin`.
    #[inline(always)]
    fn valid(&self, origin: [usize; 3]) -> [usize; 3] {
        core::array::from_fn(|a| (self.n[a] - origin[a]).min(4))
    }
}

/// Row `r` of a block (its 4 values along x) starts at block index `4r`; its y and z
/// offsets in the array are those of `r = y + 4z`.
#[inline(always)]
fn row_offset(f: &Field, r: usize) -> usize {
    (r % 4) * f.n[0] + (r / 4) * f.n[0] * f.n[1]
}

/// zfp's padding of a 4-vector with `n` valid leading values (a, b, c):
/// n=1 -> a a a a, n=2 -> a b b a, n=3 -> a b c a.
#[inline(always)]
fn pad<E: Copy>(p: &mut [E], b: usize, n: usize, s: usize) {
    if n <= 1 {
        p[b + s] = p[b];
    }
    if n <= 2 {
        p[b + 2 * s] = p[b + s];
    }
    if n <= 3 {
        p[b + 3 * s] = p[b];
    }
}

/// Reads block `b` of `data` (the whole array of `f`), padding a partial block as zfp
/// does. `None` if `data` is shorter than the field.
#[inline(always)]
pub fn gather<S: Scalar, D: Dims>(data: &[S], f: &Field, b: usize) -> Option<D::Block<S>> {
    let origin = f.block_origin::<D>(b);
    let base = f.index(origin);
    let valid = f.valid(origin);
    let mut block = D::splat(S::ZERO);
    let p = block.as_mut();
    if valid == [4, if D::D > 1 { 4 } else { valid[1] }, if D::D > 2 { 4 } else { valid[2] }] {
        for (r, row) in p.chunks_exact_mut(4).enumerate() {
            let at = base + row_offset(f, r);
            row.copy_from_slice(data.get(at..at + 4)?);
        }
        return Some(block);
    }
    let (cx, cy, cz) = (valid[0], valid[1], valid[2]);
    for z in 0..cz {
        for y in 0..cy {
            let at = base + y * f.n[0] + z * f.n[0] * f.n[1];
            let row = 16 * z + 4 * y;
            p[row..row + cx].copy_from_slice(data.get(at..at + cx)?);
            pad(p, row, cx, 1);
        }
        if D::D > 1 {
            for x in 0..4 {
                pad(p, 16 * z + x, cy, 4);
            }
        }
    }
    if D::D > 2 {
        for c in 0..16 {
            pad(p, c, cz, 16);
        }
    }
    Some(block)
}

/// Writes the valid values of block `b` into `out`, which holds the array's values from
/// index `out_start` on. Returns false (writing nothing more) if `out` is too short.
#[inline(always)]
pub fn scatter<S: Scalar, D: Dims>(block: &D::Block<S>, out: &mut [S], out_start: usize, f: &Field, b: usize) -> bool {
    let origin = f.block_origin::<D>(b);
    let Some(base) = f.index(origin).checked_sub(out_start) else { return false };
    let valid = f.valid(origin);
    let p = block.as_ref();
    if valid == [4, if D::D > 1 { 4 } else { valid[1] }, if D::D > 2 { 4 } else { valid[2] }] {
        // Whole rows as fixed-size copies (kept apart from the partial case, whose
        // variable-length copies become library calls).
        for (r, row) in p.chunks_exact(4).enumerate() {
            let at = base + row_offset(f, r);
            let Some(dst) = out.get_mut(at..at + 4) else { return false };
            for (d, &v) in dst.iter_mut().zip(row) {
                *d = v;
            }
        }
        return true;
    }
    for (r, row) in p.chunks_exact(4).enumerate() {
        let (y, z) = (r % 4, r / 4);
        if y >= valid[1] || z >= valid[2] {
            continue;
        }
        let at = base + row_offset(f, r);
        match out.get_mut(at..at + valid[0]) {
            Some(dst) => dst.copy_from_slice(&row[..valid[0]]),
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::dims::{D1, D2, D3};
    use super::*;

    #[test]
    fn blocks_are_numbered_x_fastest() {
        let f = Field::new([9, 5, 6]);
        assert_eq!(f.blocks(), [3, 2, 2]);
        assert_eq!(f.block_count(), 12);
        assert_eq!(f.block_origin::<D3>(0), [0, 0, 0]);
        assert_eq!(f.block_origin::<D3>(2), [8, 0, 0]);
        assert_eq!(f.block_origin::<D3>(3), [0, 4, 0]);
        assert_eq!(f.block_origin::<D3>(7), [4, 0, 4]);
        assert_eq!(Field::new([9, 5, 1]).block_origin::<D2>(5), [8, 4, 0]);
        assert_eq!(Field::new([9, 1, 1]).block_origin::<D1>(2), [8, 0, 0]);
    }

    #[test]
    fn partial_1d_blocks_pad_as_zfp() {
        let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let f = Field::new([7, 1, 1]);
        assert_eq!(gather::<f32, D1>(&data, &f, 1), Some([5.0, 6.0, 7.0, 5.0]));
        let f = Field::new([6, 1, 1]);
        assert_eq!(gather::<f32, D1>(&data, &f, 1), Some([5.0, 6.0, 6.0, 5.0]));
        let f = Field::new([5, 1, 1]);
        assert_eq!(gather::<f32, D1>(&data, &f, 1), Some([5.0; 4]));
        assert_eq!(gather::<f32, D1>(&data[..3], &f, 0), None);
    }

    #[test]
    fn partial_2d_block_pads_x_then_y() {
        // 2x3 array: rows (1 2), (3 4), (5 6).
        let data = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        let f = Field::new([2, 3, 1]);
        let b = gather::<f64, D2>(&data, &f, 0).unwrap();
        #[rustfmt::skip]
        let want = [1.0, 2.0, 2.0, 1.0,  3.0, 4.0, 4.0, 3.0,  5.0, 6.0, 6.0, 5.0,  1.0, 2.0, 2.0, 1.0];
        assert_eq!(b, want);
        let mut out = [0.0; 6];
        assert!(scatter::<f64, D2>(&b, &mut out, 0, &f, 0));
        assert_eq!(out, data);
    }

    #[test]
    fn gather_scatter_round_trip_3d_with_partial_blocks() {
        let f = Field::new([5, 6, 7]);
        let data: [f32; 210] = core::array::from_fn(|i| i as f32);
        let mut out = [0f32; 210];
        for b in 0..f.block_count() {
            let blk = gather::<f32, D3>(&data, &f, b).unwrap();
            assert!(scatter::<f32, D3>(&blk, &mut out, 0, &f, b));
        }
        assert_eq!(out, data);
        // A partial z slab: value (x, y, z=6) padded along z copies z=4 into k=3.
        let blk = gather::<f32, D3>(&data, &f, f.block_count() - 1).unwrap();
        assert_eq!(blk[48], blk[0]);
        assert_eq!(blk[32], data[f.index([4, 4, 6])]);
    }

    #[test]
    fn scatter_into_a_slab_and_out_of_bounds() {
        let f = Field::new([4, 4, 8]);
        let blk = [7.0f32; 64];
        let mut slab = [0f32; 64];
        assert!(scatter::<f32, D3>(&blk, &mut slab, 64, &f, 1));
        assert!(slab.iter().all(|&v| v == 7.0));
        assert!(!scatter::<f32, D3>(&blk, &mut slab[..10], 64, &f, 1));
        assert!(!scatter::<f32, D3>(&blk, &mut slab, 65, &f, 1));
    }
}
