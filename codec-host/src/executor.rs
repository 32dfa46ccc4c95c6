//! The CPU grid executor: runs kernel bodies for every grid position.

use codec_kernels::grid::{Grid, LaunchConfig};
use rayon::prelude::*;
use std::sync::OnceLock;

use crate::{Error, Result};

/// Runs kernel bodies on the CPU, in parallel over thread blocks.
///
/// A launch calls the body once per `(block, thread)` pair, as CUDA would; thread blocks
/// are distributed over a rayon pool, the threads of one block run in order on one
/// worker. With one thread the executor calls the body inline, with no pool in between.
pub struct CpuExecutor {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
}

impl CpuExecutor {
    /// An executor with `threads` worker threads; 0 means one per available core.
    pub fn new(threads: usize) -> Result<Self> {
        let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("ccoll-cpu-{i}"))
                    .build()
                    .map_err(|e| Error::Executor(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(CpuExecutor { pool, threads })
    }

    /// The process-wide executor with one thread per core, used by the convenience calls.
    pub fn global() -> &'static CpuExecutor {
        static GLOBAL: OnceLock<CpuExecutor> = OnceLock::new();
        GLOBAL.get_or_init(|| CpuExecutor::new(0).unwrap_or(CpuExecutor { pool: None, threads: 1 }))
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `body` for every thread of the launch `cfg`.
    pub fn launch<F>(&self, cfg: LaunchConfig, body: F)
    where
        F: Fn(Grid) + Sync,
    {
        let run_block = |block_idx: u32| {
            for thread_idx in 0..cfg.block_dim {
                body(Grid { block_idx, block_dim: cfg.block_dim, thread_idx, grid_dim: cfg.grid_dim });
            }
        };
        match &self.pool {
            None => (0..cfg.grid_dim).for_each(run_block),
            Some(pool) => pool.install(|| (0..cfg.grid_dim).into_par_iter().for_each(run_block)),
        }
    }

    /// Runs `f(range)` over `0..n` cut into consecutive ranges of about `tile` items,
    /// in parallel, and returns the results in range order. For host-side phases that
    /// are naturally sequential within a range (e.g. a variable-length bit stream).
    pub fn map_tiles<R, F>(&self, n: usize, tile: usize, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(core::ops::Range<usize>) -> R + Sync,
    {
        let tile = tile.max(1);
        let ranges = (0..n.div_ceil(tile)).map(|t| t * tile..((t + 1) * tile).min(n));
        match &self.pool {
            None => ranges.map(f).collect(),
            Some(pool) => {
                let ranges: Vec<_> = ranges.collect();
                pool.install(|| ranges.into_par_iter().map(&f).collect())
            }
        }
    }

    /// Runs `f(index, chunk)` for the consecutive chunks of `chunk_len` items of `data`
    /// (the last may be shorter), in parallel: for bodies that each fill a disjoint,
    /// contiguous part of one output (e.g. a slab of decoded blocks).
    pub fn for_each_chunk_mut<T, F>(&self, data: &mut [T], chunk_len: usize, f: F)
    where
        T: Send,
        F: Fn(usize, &mut [T]) + Sync,
    {
        let chunk_len = chunk_len.max(1);
        match &self.pool {
            None => data.chunks_mut(chunk_len).enumerate().for_each(|(i, c)| f(i, c)),
            Some(pool) => pool.install(|| data.par_chunks_mut(chunk_len).enumerate().for_each(|(i, c)| f(i, c))),
        }
    }

    /// Runs `f(index, item)` for every item, in parallel, and returns the results in
    /// item order: for work units that own their part of an output (e.g. disjoint
    /// mutable slices of uneven sizes).
    pub fn map_items<I, R, F>(&self, items: Vec<I>, f: F) -> Vec<R>
    where
        I: Send,
        R: Send,
        F: Fn(usize, I) -> R + Sync,
    {
        match &self.pool {
            None => items.into_iter().enumerate().map(|(i, x)| f(i, x)).collect(),
            Some(pool) => pool.install(|| items.into_par_iter().enumerate().map(|(i, x)| f(i, x)).collect()),
        }
    }

    /// Runs `f` inside this executor's pool (so nested rayon calls use it).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            None => f(),
            Some(pool) => pool.install(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_grid_position_runs_exactly_once() {
        for threads in [1, 3] {
            let exec = CpuExecutor::new(threads).unwrap();
            let cfg = LaunchConfig { grid_dim: 7, block_dim: 5 };
            let hits: Vec<AtomicUsize> = (0..cfg.threads()).map(|_| AtomicUsize::new(0)).collect();
            exec.launch(cfg, |g| {
                assert_eq!((g.grid_dim, g.block_dim), (7, 5));
                hits[g.global_index()].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn tiles_cover_the_range_in_order() {
        let exec = CpuExecutor::new(2).unwrap();
        let tiles = exec.map_tiles(10, 4, |r| r);
        assert_eq!(tiles, vec![0..4, 4..8, 8..10]);
        assert!(exec.map_tiles(0, 4, |r| r).is_empty());
    }

    #[test]
    fn items_are_mapped_in_order() {
        for threads in [1, 2] {
            let exec = CpuExecutor::new(threads).unwrap();
            let mut data = [1, 2, 3, 4, 5];
            let (a, b) = data.split_at_mut(2);
            let sums = exec.map_items(vec![a, b], |i, s: &mut [i32]| {
                s.iter_mut().for_each(|v| *v *= 10);
                i as i32 + s.iter().sum::<i32>()
            });
            assert_eq!(sums, [30, 121]);
            assert_eq!(data, [10, 20, 30, 40, 50]);
        }
    }

    #[test]
    fn chunks_are_handed_out_once_with_their_index() {
        for threads in [1, 2] {
            let exec = CpuExecutor::new(threads).unwrap();
            let mut data = vec![0usize; 10];
            exec.for_each_chunk_mut(&mut data, 3, |i, c| c.iter_mut().for_each(|v| *v += i + 1));
            assert_eq!(data, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]);
        }
    }
}
