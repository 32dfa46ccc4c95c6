//! The one way kernels are launched: [`CudaBackend::launch`], typed by the kernel's
//! definition in `codec_kernels::kernels`, with the parameter struct's bytes as the
//! packed CUDA parameter buffer.

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use codec_kernels::kernels::Kernel;
use cust::sys::{cuLaunchKernel, cudaError_enum};

use super::{CudaBackend, GpuStream};
use crate::{Error, Result};

// The `extra` markers of cuLaunchKernel: cuda.h defines them as the pointer values 0, 1
// and 2 (tags, never dereferenced).
const CU_LAUNCH_PARAM_END: *mut c_void = std::ptr::null_mut();
const CU_LAUNCH_PARAM_BUFFER_POINTER: *mut c_void = std::ptr::without_provenance_mut(0x01);
const CU_LAUNCH_PARAM_BUFFER_SIZE: *mut c_void = std::ptr::without_provenance_mut(0x02);

/// Names of the kernels this process has launched successfully.
/// Kernel launches of this process (every entry point), for callers' accounting.
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// Kernel launches this process has queued so far.
pub fn launch_count() -> u64 {
    LAUNCHES.load(Ordering::Relaxed)
}

static LAUNCHED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The distinct entry points this process has launched so far, sorted.
pub fn launched_entry_points() -> Vec<&'static str> {
    LAUNCHED.lock().map(|s| s.iter().copied().collect()).unwrap_or_default()
}

impl CudaBackend {
    /// Queues kernel `K` on `stream` with `grid` blocks of `block` threads.
    ///
    /// # Safety
    /// Every `DevicePtr` in `params` must point to live device memory of at least the
    /// length its kernel's definition pairs it with, kept alive (and not written by other
    /// work) until the launch has finished on `stream`.
    pub unsafe fn launch<K: Kernel>(&self, stream: &GpuStream, grid: u32, block: u32, params: &K::Params) -> Result<()> {
        let f = self.function(K::NAME)?;
        let mut size = std::mem::size_of::<K::Params>();
        let mut extra = [
            CU_LAUNCH_PARAM_BUFFER_POINTER,
            params as *const K::Params as *mut c_void,
            CU_LAUNCH_PARAM_BUFFER_SIZE,
            &mut size as *mut usize as *mut c_void,
            CU_LAUNCH_PARAM_END,
        ];
        // SAFETY: `extra` describes a buffer of `size` bytes that the driver copies
        // before returning; the caller vouches for the pointers inside it.
        let r = cuLaunchKernel(f.to_raw(), grid, 1, 1, block, 1, 1, 0, stream.raw(), std::ptr::null_mut(), extra.as_mut_ptr());
        if r != cudaError_enum::CUDA_SUCCESS {
            return Err(Error::Gpu(format!("cuLaunchKernel {}: {r:?}", K::NAME)));
        }
        LAUNCHES.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = LAUNCHED.lock() {
            s.insert(K::NAME);
        }
        Ok(())
    }
}
