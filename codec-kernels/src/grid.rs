//! The grid index shim: a kernel body receives its position as a value.
//!
//! On the GPU the entry point fills a [`Grid`] from the hardware registers; on the host
//! the CPU executor fills it in a loop. Bodies therefore contain the same index
//! arithmetic and bounds checks on both.

/// Position of one thread in a one-dimensional launch, as CUDA numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Index of the thread block (`blockIdx.x`).
    pub block_idx: u32,
    /// Threads per block (`blockDim.x`).
    pub block_dim: u32,
    /// Index of the thread inside its block (`threadIdx.x`).
    pub thread_idx: u32,
    /// Number of thread blocks (`gridDim.x`).
    pub grid_dim: u32,
}

impl Grid {
    /// Global thread index: `blockIdx.x * blockDim.x + threadIdx.x`.
    #[inline(always)]
    pub fn global_index(&self) -> usize {
        self.block_idx as usize * self.block_dim as usize + self.thread_idx as usize
    }

    /// Total number of threads in the launch, the stride of a grid-stride loop.
    #[inline(always)]
    pub fn global_count(&self) -> usize {
        self.grid_dim as usize * self.block_dim as usize
    }

    /// Items `global_index, global_index + global_count, ...` below `n`: the grid-stride
    /// loop that lets any launch shape cover any problem size.
    #[inline(always)]
    pub fn stride_iter(&self, n: usize) -> core::iter::StepBy<core::ops::Range<usize>> {
        let start = self.global_index().min(n);
        (start..n).step_by(self.global_count().max(1))
    }

    /// Reads the position from the hardware registers (GPU entry points only).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn from_hardware() -> Self {
        // SAFETY: reading the special registers has no side effects.
        unsafe {
            use core::arch::nvptx::*;
            Grid {
                block_idx: _block_idx_x() as u32,
                block_dim: _block_dim_x() as u32,
                thread_idx: _thread_idx_x() as u32,
                grid_dim: _grid_dim_x() as u32,
            }
        }
    }
}

/// Launch shape: `grid_dim` blocks of `block_dim` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid_dim: u32,
    pub block_dim: u32,
}

impl LaunchConfig {
    /// One thread per item, `block_dim` threads per block, as many blocks as needed
    /// (at least one, so that an empty problem is still a valid launch).
    pub fn for_items(n: usize, block_dim: u32) -> Self {
        let block_dim = block_dim.max(1);
        let blocks = n.div_ceil(block_dim as usize).clamp(1, u32::MAX as usize);
        LaunchConfig { grid_dim: blocks as u32, block_dim }
    }

    /// Total number of threads.
    pub fn threads(&self) -> usize {
        self.grid_dim as usize * self.block_dim as usize
    }
}
