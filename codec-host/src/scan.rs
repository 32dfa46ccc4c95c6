//! Exclusive prefix sums on the CPU executor, through the three scan bodies the GPU
//! launches (`codec_kernels::scan`): chunk sums, a one-thread scan of them, per-chunk
//! offsets.

use codec_kernels::grid::LaunchConfig;
use codec_kernels::scan::{chunk_count, scan_apply_body, scan_partials_body, scan_partials_exclusive_body};
use codec_kernels::shared::SharedOut;

use crate::CpuExecutor;

/// `base` plus the sum of the lengths before each one, and `base` plus their total;
/// every launch has shape `cfg` and every chunk `chunk` lengths.
pub fn exclusive_scan_with(exec: &CpuExecutor, cfg: LaunchConfig, chunk: usize, lens: &[u32], base: u64) -> (Vec<u64>, u64) {
    let chunk = chunk.max(1);
    let mut partials = vec![0u64; chunk_count(lens.len(), chunk)];
    let mut total = [0u64];
    {
        let p = SharedOut::new(&mut partials[..]);
        exec.launch(cfg, |g| scan_partials_body(g, lens, chunk, &p));
        let t = SharedOut::new(&mut total[..]);
        exec.launch(cfg, |g| scan_partials_exclusive_body(g, &p, base, &t));
    }
    let mut offsets = vec![0u64; lens.len()];
    let o = SharedOut::new(&mut offsets[..]);
    exec.launch(cfg, |g| scan_apply_body(g, lens, chunk, &partials, &o));
    (offsets, total[0])
}

/// [`exclusive_scan_with`] with one chunk per worker thread.
pub fn exclusive_scan(exec: &CpuExecutor, lens: &[u32], base: u64) -> (Vec<u64>, u64) {
    let workers = exec.threads().max(1);
    let cfg = LaunchConfig { grid_dim: workers as u32, block_dim: 1 };
    exclusive_scan_with(exec, cfg, lens.len().div_ceil(workers), lens, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_running_sums_from_base() {
        let exec = CpuExecutor::new(2).unwrap();
        assert_eq!(exclusive_scan(&exec, &[3, 0, 5, 1], 10), (vec![10, 13, 13, 18], 19));
        assert_eq!(exclusive_scan(&exec, &[], 7), (vec![], 7));
    }
}
