//! Exclusive prefix sum of lengths (bit lengths of ZFP blocks, byte sizes of SZx blocks),
//! giving every block its output offset.
//!
//! A body cannot wait at a barrier (the CPU executor runs each grid position to the end
//! before the next), so the scan is three launches instead of one block-level pass with
//! shared memory: (1) every chunk of `chunk` lengths is summed into `partials`, (2) one
//! thread turns `partials` into their exclusive scan plus `base`, (3) every chunk writes
//! its items' offsets starting at its partial. Each launch may have any shape.

use crate::grid::Grid;
use crate::shared::SharedOut;

/// Number of chunks of `chunk` items (at least 1) that cover `n` items.
#[inline(always)]
pub fn chunk_count(n: usize, chunk: usize) -> usize {
    n.div_ceil(chunk.max(1))
}

#[inline(always)]
fn chunk_range(c: usize, chunk: usize, n: usize) -> core::ops::Range<usize> {
    let chunk = chunk.max(1);
    (c * chunk).min(n)..((c + 1) * chunk).min(n)
}

/// Launch 1: `partials[c]` = sum of `lens` over chunk `c`.
#[inline(always)]
pub fn scan_partials_body<L: Copy + Into<u64>>(g: Grid, lens: &[L], chunk: usize, partials: &SharedOut<'_, u64>) {
    for c in g.stride_iter(chunk_count(lens.len(), chunk).min(partials.len())) {
        let mut sum = 0u64;
        for &l in lens.get(chunk_range(c, chunk, lens.len())).unwrap_or(&[]) {
            sum = sum.wrapping_add(l.into());
        }
        partials.set(c, sum);
    }
}

/// Launch 2 (only grid position 0 works): `partials` becomes its exclusive scan plus
/// `base`; `total` (one cell) receives `base` plus the sum of all partials.
#[inline(always)]
pub fn scan_partials_exclusive_body(g: Grid, partials: &SharedOut<'_, u64>, base: u64, total: &SharedOut<'_, u64>) {
    if g.global_index() != 0 {
        return;
    }
    let mut run = base;
    for c in 0..partials.len() {
        let p = partials.get(c).unwrap_or(0);
        partials.set(c, run);
        run = run.wrapping_add(p);
    }
    total.set(0, run);
}

/// Launch 3: `offsets[i]` = scanned partial of `i`'s chunk plus the lengths before `i`
/// in that chunk, i.e. `base` plus the sum of `lens[..i]`.
#[inline(always)]
pub fn scan_apply_body<L: Copy + Into<u64>>(g: Grid, lens: &[L], chunk: usize, partials: &[u64], offsets: &SharedOut<'_, u64>) {
    let n = lens.len().min(offsets.len());
    for c in g.stride_iter(chunk_count(n, chunk)) {
        let mut run = partials.get(c).copied().unwrap_or(0);
        let r = chunk_range(c, chunk, n);
        for (i, &l) in r.clone().zip(lens.get(r).unwrap_or(&[])) {
            offsets.set(i, run);
            run = run.wrapping_add(l.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grids(shape: (u32, u32)) -> impl Iterator<Item = Grid> {
        let (grid_dim, block_dim) = shape;
        (0..grid_dim).flat_map(move |b| (0..block_dim).map(move |t| Grid { block_idx: b, block_dim, thread_idx: t, grid_dim }))
    }

    fn scan(lens: &[u32], chunk: usize, base: u64, shape: (u32, u32)) -> ([u64; 64], u64) {
        let mut partials = [0u64; 64];
        let mut offsets = [0u64; 64];
        let mut total = [0u64; 1];
        let nc = chunk_count(lens.len(), chunk);
        {
            let p = SharedOut::new(&mut partials[..nc]);
            grids(shape).for_each(|g| scan_partials_body(g, lens, chunk, &p));
            let t = SharedOut::new(&mut total[..]);
            grids(shape).for_each(|g| scan_partials_exclusive_body(g, &p, base, &t));
        }
        let o = SharedOut::new(&mut offsets[..lens.len()]);
        grids(shape).for_each(|g| scan_apply_body(g, lens, chunk, &partials[..nc], &o));
        (offsets, total[0])
    }

    #[test]
    fn offsets_are_the_exclusive_sums_for_any_chunk_and_launch() {
        let lens: [u32; 41] = core::array::from_fn(|i| (i as u32 * 7919) % 97 + (i % 3 == 0) as u32);
        let mut want = [0u64; 64];
        let mut run = 96u64;
        for (i, &l) in lens.iter().enumerate() {
            want[i] = run;
            run += l as u64;
        }
        for chunk in [1, 3, 8, 41, 64] {
            for shape in [(1, 1), (2, 4), (5, 32)] {
                assert_eq!(scan(&lens, chunk, 96, shape), (want, run), "chunk {chunk} shape {shape:?}");
            }
        }
        assert_eq!(scan(&[], 4, 5, (1, 1)).1, 5);
    }
}
