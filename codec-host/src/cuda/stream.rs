//! Streams and events on the driver API directly.
//!
//! cust 0.3's `Stream::new` drops `CU_STREAM_NON_BLOCKING` (Rust-CUDA issue 15), which
//! makes every stream a blocking one: each synchronous copy on the legacy default
//! stream then waits for all of them, serialising independent streams and hiding
//! missing synchronisation. These wrappers create truly non-blocking streams; all
//! ordering in this backend is explicit (events, `synchronize`).

use std::ffi::c_void;

use cust::sys::{
    cuEventCreate, cuEventDestroy_v2, cuEventQuery, cuEventRecord, cuEventSynchronize, cuMemcpyDtoDAsync_v2, cuMemcpyHtoDAsync_v2, cuMemsetD8Async,
    cuStreamCreate, cuStreamDestroy_v2, cuStreamSynchronize, cuStreamWaitEvent, cudaError_enum, CUevent, CUstream,
};

use crate::{Error, Result};

// Flags of cuda.h.
const CU_STREAM_NON_BLOCKING: u32 = 0x1;
const CU_EVENT_DISABLE_TIMING: u32 = 0x2;
/// The legacy default stream's handle (`CU_STREAM_LEGACY`).
const CU_STREAM_LEGACY: usize = 0x1;

/// `r` as a result, naming the call.
fn check(r: cudaError_enum, what: &'static str) -> Result<()> {
    match r {
        cudaError_enum::CUDA_SUCCESS => Ok(()),
        e => Err(Error::Gpu(format!("{what}: {e:?}"))),
    }
}

/// An ordered queue of GPU work (a non-blocking CUDA stream). Create it with
/// [`CudaBackend::stream`](super::CudaBackend::stream), whose context it belongs to.
pub struct GpuStream {
    raw: CUstream,
}

/// A point in a stream's work; other streams and the host can wait for it.
pub struct GpuEvent {
    raw: CUevent,
}

impl GpuStream {
    /// A new non-blocking stream in the current context.
    pub(crate) fn new() -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` receives the handle.
        check(unsafe { cuStreamCreate(&mut raw, CU_STREAM_NON_BLOCKING) }, "cuStreamCreate")?;
        Ok(GpuStream { raw })
    }

    pub(crate) fn raw(&self) -> CUstream {
        self.raw
    }

    /// Marks the current end of this stream's work.
    pub fn record(&self) -> Result<GpuEvent> {
        GpuEvent::record_on(self.raw)
    }

    /// Makes later work on this stream wait for the work queued so far on the legacy
    /// default stream, where cust's synchronous copies go (no host wait).
    pub fn wait_for_legacy(&self) -> Result<()> {
        self.wait_for(&GpuEvent::record_on(CU_STREAM_LEGACY as CUstream)?)
    }

    /// Makes later work on this stream wait until `event` has happened (no host wait).
    pub fn wait_for(&self, event: &GpuEvent) -> Result<()> {
        // SAFETY: both handles are live.
        check(unsafe { cuStreamWaitEvent(self.raw, event.raw, 0) }, "cuStreamWaitEvent")
    }

    /// Blocks the host until all work queued so far has finished.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { cuStreamSynchronize(self.raw) }, "cuStreamSynchronize")
    }

    /// Queues zeroing `bytes` bytes at device address `dst`.
    ///
    /// # Safety
    /// The range must lie in one live allocation until the stream has passed the call.
    pub(crate) unsafe fn zero(&self, dst: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        check(cuMemsetD8Async(dst, 0, bytes, self.raw), "cuMemsetD8Async")
    }

    /// Queues the copy of `src` to device address `dst`. The driver stages pageable host
    /// memory before returning, so `src` may change afterwards.
    ///
    /// # Safety
    /// `dst` must hold `size_of_val(src)` bytes until the stream has passed the copy.
    pub(crate) unsafe fn copy_in<T: Copy>(&self, dst: u64, src: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(src);
        if bytes == 0 {
            return Ok(());
        }
        check(cuMemcpyHtoDAsync_v2(dst, src.as_ptr() as *const c_void, bytes, self.raw), "cuMemcpyHtoDAsync")
    }

    /// Queues the copy of `bytes` bytes from device address `src` to `dst`.
    ///
    /// # Safety
    /// Both ranges must lie in live allocations until the stream has passed the copy.
    pub(crate) unsafe fn copy_device(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        check(cuMemcpyDtoDAsync_v2(dst, src, bytes, self.raw), "cuMemcpyDtoDAsync")
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once; queued work still completes.
        unsafe { cuStreamDestroy_v2(self.raw) };
    }
}

impl GpuEvent {
    /// A new event recorded on the stream handle `stream`.
    fn record_on(stream: CUstream) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` receives the handle, recorded on a live stream.
        check(unsafe { cuEventCreate(&mut raw, CU_EVENT_DISABLE_TIMING) }, "cuEventCreate")?;
        let event = GpuEvent { raw };
        check(unsafe { cuEventRecord(event.raw, stream) }, "cuEventRecord")?;
        Ok(event)
    }

    /// True once the work before the event has finished (does not block).
    pub fn is_complete(&self) -> Result<bool> {
        // SAFETY: the handle is live.
        match unsafe { cuEventQuery(self.raw) } {
            cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            r => check(r, "cuEventQuery").map(|()| true),
        }
    }

    /// Blocks the host until the event has happened.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { cuEventSynchronize(self.raw) }, "cuEventSynchronize")
    }
}

impl Drop for GpuEvent {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once.
        unsafe { cuEventDestroy_v2(self.raw) };
    }
}
