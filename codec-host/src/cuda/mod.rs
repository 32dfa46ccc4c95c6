//! The CUDA backend (feature `cuda`): codec-kernels' entry points as PTX, launched with
//! cust on caller-chosen streams.
//!
//! Every kernel is the same body the CPU executor runs; this module only moves data,
//! picks launch shapes and orders work on streams. Every launch goes through
//! [`CudaBackend::launch`], typed by the kernel's definition in
//! `codec_kernels::kernels`. Work is asynchronous per stream: a caller can keep N
//! compressions in flight on N streams (the multi-stream scheme of ZFP-OPT) and order
//! streams against each other with [`GpuEvent`]s. Every codec compresses from and
//! decompresses into device arrays (`Codec::compress_on`, `decompress_on` with a CUDA
//! [`Backend`](crate::Backend)); the host-slice calls wrap those. Without a device (or
//! without a driver) [`CudaBackend::new`] returns [`Error::NoDevice`]. The driver library
//! is loaded at run time ([`driver`]), so a cuda-enabled binary starts without one.

mod driver;
mod launch;
mod pending;
mod ptx;
mod stream;
mod szx;
mod zfp;

use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::function::Function;
use cust::memory::bytemuck::Pod;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::module::Module;

use codec_kernels::grid::LaunchConfig;
use codec_kernels::kernels::ops::{Max, Min, Prod, Sum};
use codec_kernels::kernels::{
    DevicePtr, ElementKernels, NarrowKernel, NarrowParams, ReduceKernel, ReduceParams, ScanApplyU32, ScanApplyParams,
    ScanExclusiveParams, ScanPartialsExclusive, ScanPartialsParams, ScanPartialsU32, WidenKernel, WidenParams,
};
use codec_kernels::reduce::{ReduceElem, ReduceOp};

use crate::elementwise::{same_len, HalfElem};
use crate::{Codec, Element, Error, Result, Shape, StreamInfo};

pub use launch::{launch_count, launched_entry_points};
pub use pending::{DeviceStream, PendingCompress, PendingDecompress};
pub use stream::{GpuEvent, GpuStream};
pub use ptx::{layout_mismatches, missing_entries, runtime_dir as ptx_runtime_dir};

/// The element types the GPU kernels take (`f32`, `f64`).
pub trait GpuElement: Element + ReduceElem + DeviceCopy + Pod + ElementKernels {}
impl<T: Element + ReduceElem + DeviceCopy + Pod + ElementKernels> GpuElement for T {}

/// Checks that `len` values fill `shape`.
fn check_len(shape: &Shape, len: usize) -> Result<()> {
    if shape.is_empty() {
        return Err(Error::ZeroSize);
    }
    match shape.checked_len() {
        Some(n) if n == len => Ok(()),
        _ => Err(Error::BadDims(format!("shape {shape} does not hold {len} values"))),
    }
}

/// A device slice as a kernel parameter.
fn dptr<T: DeviceCopy>(s: &DeviceSlice<T>) -> DevicePtr<T> {
    DevicePtr::from_addr(s.as_device_ptr().as_raw())
}

/// Threads per block for the grid-stride kernels.
const BLOCK: u32 = 256;
/// Resident blocks per multiprocessor a grid-stride launch asks for; more only queue.
const BLOCKS_PER_SM: u32 = 16;
/// Threads per block of the codec launches, one thread per codec block (cuZFP's choice
/// for ZFP, kept for SZx).
const CODEC_BLOCK: u32 = 128;

/// Grid for `nblocks` codec blocks, one thread each.
fn codec_grid(nblocks: usize) -> (u32, u32) {
    let cfg = LaunchConfig::for_items(nblocks, CODEC_BLOCK);
    (cfg.grid_dim, cfg.block_dim)
}

/// Wraps a driver error with what was being done.
pub(crate) fn gpu(what: &'static str) -> impl Fn(CudaError) -> Error {
    move |e| Error::Gpu(format!("{what}: {e}"))
}

/// A driver that cannot initialise or count devices (no GPU, no kernel module, a
/// driver/library mismatch) leaves no usable device: all of these are `NoDevice`.
fn init_error(e: CudaError) -> Error {
    Error::NoDevice(format!("the CUDA driver reports: {e}"))
}

/// The result of [`CudaBackend::exclusive_scan_on`], valid once its stream gets there.
/// Keep it until then: freeing device memory that queued work still uses makes the
/// driver wait for the device.
pub struct DeviceScan {
    /// `base` plus the sum of the lengths before each one.
    pub offsets: DeviceBuffer<u64>,
    /// One value: `base` plus the sum of all lengths.
    pub total: DeviceBuffer<u64>,
    _partials: DeviceBuffer<u64>,
}

/// A CUDA device with the codec-kernels module loaded.
pub struct CudaBackend {
    // Declared before the context so that it is unloaded first.
    module: Module,
    ctx: Context,
    name: String,
    /// Compute capability, major * 10 + minor.
    cc: u32,
    /// The sm version of the loaded PTX.
    arch: u32,
    max_blocks: u32,
}

impl CudaBackend {
    /// The first device, or [`Error::NoDevice`] if none answers.
    pub fn new() -> Result<Self> {
        Self::on_device(0)
    }

    /// Device number `ordinal`.
    pub fn on_device(ordinal: u32) -> Result<Self> {
        if let Some(why) = driver::load_error() {
            return Err(Error::NoDevice(format!("{} could not be loaded: {why}", driver::LIBRARY)));
        }
        cust::init(cust::CudaFlags::empty()).map_err(init_error)?;
        let count = Device::num_devices().map_err(init_error)?;
        if ordinal >= count {
            return Err(Error::NoDevice(format!("device {ordinal} asked for, the driver reports {count}")));
        }
        let device = Device::get_device(ordinal).map_err(gpu("cuDeviceGet"))?;
        let attr = |a| device.get_attribute(a).map_err(gpu("cuDeviceGetAttribute"));
        let cc = (attr(DeviceAttribute::ComputeCapabilityMajor)? * 10 + attr(DeviceAttribute::ComputeCapabilityMinor)?) as u32;
        let sms = attr(DeviceAttribute::MultiprocessorCount)?.max(1) as u32;
        let name = device.name().map_err(gpu("cuDeviceGetName"))?;
        let (arch, text) = ptx::select(cc)?;
        let missing = missing_entries(&text);
        if !missing.is_empty() {
            return Err(Error::Gpu(format!("the sm_{arch} PTX lacks kernels {missing:?}: rebuild it (cargo xtask build-ptx)")));
        }
        let stale = ptx::layout_mismatches(&text);
        if !stale.is_empty() {
            return Err(Error::Gpu(format!("the sm_{arch} PTX is not built from these kernel definitions ({}): rebuild it (cargo xtask build-ptx)", stale.join("; "))));
        }
        let ctx = Context::new(device).map_err(gpu("cuDevicePrimaryCtxRetain"))?;
        let module = Module::from_ptx(&*text, &[]).map_err(gpu("cuModuleLoadData (PTX JIT)"))?;
        Ok(CudaBackend { module, ctx, name, cc, arch, max_blocks: sms * BLOCKS_PER_SM })
    }

    /// "NAME (sm_CC, PTX sm_ARCH)".
    pub fn describe(&self) -> String {
        format!("{} (sm_{}, PTX sm_{})", self.name, self.cc, self.arch)
    }

    /// Makes this backend's context current on the calling thread (CUDA contexts are
    /// per thread; every public call does this first).
    fn enter(&self) -> Result<()> {
        CurrentContext::set_current(&self.ctx).map_err(gpu("cuCtxSetCurrent"))
    }

    /// A new stream; work on different streams may overlap.
    pub fn stream(&self) -> Result<GpuStream> {
        self.enter()?;
        GpuStream::new()
    }

    /// Grid for `n` items: one thread per item, at most the blocks the device keeps
    /// resident (the kernels loop over the rest).
    fn grid_for(&self, n: usize) -> (u32, u32) {
        let cfg = LaunchConfig::for_items(n, BLOCK);
        (cfg.grid_dim.min(self.max_blocks), cfg.block_dim)
    }

    /// Queues `acc[i] = acc[i] op src[i]` on `stream`.
    pub fn reduce_on<T: GpuElement>(&self, stream: &GpuStream, op: ReduceOp, acc: &mut DeviceSlice<T>, src: &DeviceSlice<T>) -> Result<()> {
        same_len("reduce", acc.len(), src.len())?;
        let n = src.len();
        if n == 0 {
            return Ok(());
        }
        let (grid, block) = self.grid_for(n);
        let p = ReduceParams { acc: dptr(acc), src: dptr(src), n };
        // SAFETY: both slices hold `n` values and are borrowed for the call; the caller
        // keeps them until `stream` has passed this point (as for every `_on` call).
        unsafe {
            match op {
                ReduceOp::Sum => self.launch::<<T as ReduceKernel<Sum>>::K>(stream, grid, block, &p),
                ReduceOp::Min => self.launch::<<T as ReduceKernel<Min>>::K>(stream, grid, block, &p),
                ReduceOp::Max => self.launch::<<T as ReduceKernel<Max>>::K>(stream, grid, block, &p),
                ReduceOp::Prod => self.launch::<<T as ReduceKernel<Prod>>::K>(stream, grid, block, &p),
            }
        }
    }

    /// Queues the widening of half-precision bits `src` into `dst` on `stream`.
    pub fn widen_on<H: HalfElem>(&self, stream: &GpuStream, src: &DeviceSlice<u16>, dst: &mut DeviceSlice<f32>) -> Result<()> {
        same_len("widen", src.len(), dst.len())?;
        let n = src.len();
        if n == 0 {
            return Ok(());
        }
        let (grid, block) = self.grid_for(n);
        // SAFETY: as in `reduce_on`.
        unsafe { self.launch::<<H::Format as WidenKernel>::K>(stream, grid, block, &WidenParams { src: dptr(src), dst: dptr(dst), n }) }
    }

    /// Queues the narrowing of `src` into half-precision bits `dst` on `stream`.
    pub fn narrow_on<H: HalfElem>(&self, stream: &GpuStream, src: &DeviceSlice<f32>, dst: &mut DeviceSlice<u16>) -> Result<()> {
        same_len("narrow", src.len(), dst.len())?;
        let n = src.len();
        if n == 0 {
            return Ok(());
        }
        let (grid, block) = self.grid_for(n);
        // SAFETY: as in `reduce_on`.
        unsafe { self.launch::<<H::Format as NarrowKernel>::K>(stream, grid, block, &NarrowParams { src: dptr(src), dst: dptr(dst), n }) }
    }

    /// A device buffer of `n` zeros, zeroed in `stream`'s order.
    pub fn zeroed_on<T: DeviceCopy + Pod>(&self, stream: &GpuStream, n: usize) -> Result<DeviceBuffer<T>> {
        self.enter()?;
        // SAFETY: `T` is Pod, and the zeroing is queued on `stream` before any work the
        // caller queues there afterwards.
        let d = unsafe { DeviceBuffer::<T>::uninitialized(n) }.map_err(gpu("cuMemAlloc"))?;
        unsafe { stream.zero(d.as_device_ptr().as_raw(), std::mem::size_of::<T>() * n)? };
        Ok(d)
    }

    /// Queues the copy of `host` into `dst` (same length) on `stream`. `host` may change
    /// once this returns if it is pageable (the driver stages it); page-locked memory
    /// must stay until `stream` has passed the copy.
    pub fn upload_into_on<T: DeviceCopy>(&self, stream: &GpuStream, host: &[T], dst: &mut DeviceSlice<T>) -> Result<()> {
        same_len("upload", host.len(), dst.len())?;
        self.enter()?;
        // SAFETY: `dst` holds `host.len()` values; the caller keeps it until `stream` has
        // passed the copy (as for every `_on` call).
        unsafe { stream.copy_in(dst.as_device_ptr().as_raw(), host) }
    }

    /// Queues the copy of `src` into `dst` (same length, device to device) on `stream`.
    pub fn copy_on<T: DeviceCopy>(&self, stream: &GpuStream, src: &DeviceSlice<T>, dst: &mut DeviceSlice<T>) -> Result<()> {
        same_len("copy", src.len(), dst.len())?;
        self.enter()?;
        // SAFETY: both slices hold `src.len()` values and are kept by the caller until
        // `stream` has passed the copy.
        unsafe { stream.copy_device(dst.as_device_ptr().as_raw(), src.as_device_ptr().as_raw(), std::mem::size_of::<T>() * src.len()) }
    }

    /// A device copy of `host`, queued on `stream`. The copy is ordered before later work
    /// on `stream`; callers synchronise `stream` before `host` may change.
    pub fn upload_on<T: DeviceCopy>(&self, stream: &GpuStream, host: &[T]) -> Result<DeviceBuffer<T>> {
        self.enter()?;
        // SAFETY: the buffer is fully written by the copy queued right after, before any
        // later use on `stream`; `host` is pageable (staged before the call returns) or
        // outlives the callers' synchronisation.
        let d = unsafe { DeviceBuffer::<T>::uninitialized(host.len()) }.map_err(gpu("cuMemAlloc"))?;
        unsafe { stream.copy_in(d.as_device_ptr().as_raw(), host)? };
        Ok(d)
    }

    /// Waits for `stream`, then copies `dev` into `host` (same length).
    pub fn download_on<T: DeviceCopy>(&self, stream: &GpuStream, dev: &DeviceSlice<T>, host: &mut [T]) -> Result<()> {
        same_len("download", dev.len(), host.len())?;
        stream.synchronize()?;
        self.enter()?;
        dev.copy_to(host).map_err(gpu("cuMemcpyDtoH"))
    }

    /// Host-memory reduction: uploads, reduces on a fresh stream, downloads into `acc`.
    pub fn reduce<T: GpuElement>(&self, op: ReduceOp, acc: &mut [T], src: &[T]) -> Result<()> {
        same_len("reduce", acc.len(), src.len())?;
        let stream = self.stream()?;
        let mut d_acc = self.upload_on(&stream, acc)?;
        let d_src = self.upload_on(&stream, src)?;
        self.reduce_on(&stream, op, &mut d_acc, &d_src)?;
        self.download_on(&stream, &d_acc, acc)
    }

    /// Host-memory widening of half-precision values.
    pub fn widen<H: HalfElem>(&self, src: &[H], dst: &mut [f32]) -> Result<()> {
        same_len("widen", src.len(), dst.len())?;
        let stream = self.stream()?;
        let d_src = self.upload_on(&stream, H::as_bits(src))?;
        let mut d_dst = self.zeroed_on(&stream, dst.len())?;
        self.widen_on::<H>(&stream, &d_src, &mut d_dst)?;
        self.download_on(&stream, &d_dst, dst)
    }

    /// Host-memory narrowing to half precision.
    pub fn narrow<H: HalfElem>(&self, src: &[f32], dst: &mut [H]) -> Result<()> {
        same_len("narrow", src.len(), dst.len())?;
        let stream = self.stream()?;
        let d_src = self.upload_on(&stream, src)?;
        let mut d_dst = self.zeroed_on(&stream, dst.len())?;
        self.narrow_on::<H>(&stream, &d_src, &mut d_dst)?;
        self.download_on(&stream, &d_dst, H::as_bits_mut(dst))
    }

    /// Queues the exclusive prefix sums of `lens` plus `base` on `stream` (three
    /// barrier-free launches, see `codec_kernels::scan`).
    pub fn exclusive_scan_on(&self, stream: &GpuStream, lens: &DeviceSlice<u32>, base: u64) -> Result<DeviceScan> {
        let offsets = self.zeroed_on::<u64>(stream, lens.len())?;
        let total = self.zeroed_on::<u64>(stream, 1)?;
        // SAFETY: `offsets` holds one value per length and `total` one; all three live
        // in the returned scan.
        let partials = unsafe { self.scan_into(stream, dptr(lens), lens.len(), base, dptr(&offsets), dptr(&total))? };
        Ok(DeviceScan { offsets, total, _partials: partials })
    }

    /// Queues the scan of the `n` lengths at `lens` into `offsets` (`n` values) and
    /// `total` (one); returns the partial sums' buffer, to be kept until the scan is done.
    ///
    /// # Safety
    /// The pointers must hold those many values until `stream` has passed the scan.
    unsafe fn scan_into(
        &self,
        stream: &GpuStream,
        lens: DevicePtr<u32>,
        n: usize,
        base: u64,
        offsets: DevicePtr<u64>,
        total: DevicePtr<u64>,
    ) -> Result<DeviceBuffer<u64>> {
        // Launch 2 walks the partials on one thread: keep them to a few tens of thousands.
        let chunk = n.div_ceil(1 << 15).max(256);
        let n_chunks = codec_kernels::scan::chunk_count(n, chunk);
        let partials = self.zeroed_on::<u64>(stream, n_chunks)?;
        let (grid, block) = self.grid_for(n_chunks);
        let pp = dptr(&partials);
        self.launch::<ScanPartialsU32>(stream, grid, block, &ScanPartialsParams { lens, n, chunk, partials: pp, n_chunks })?;
        self.launch::<ScanPartialsExclusive>(stream, 1, 1, &ScanExclusiveParams { partials: pp, n_chunks, base, total })?;
        self.launch::<ScanApplyU32>(stream, grid, block, &ScanApplyParams { lens, n, chunk, partials: pp, n_chunks, offsets })?;
        Ok(partials)
    }

    /// Queues the compression of `data` (on the device, shape `shape`) with `codec` on
    /// `stream`; the stream is the CPU codec's byte for byte. Several can be in flight on
    /// several streams at once.
    pub(crate) fn compress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        codec: &Codec,
        data: &'a DeviceSlice<T>,
        shape: Shape,
    ) -> Result<PendingCompress<'a, T>> {
        match *codec {
            Codec::Zfp { mode } => self.zfp_compress_on(stream, mode, data, shape),
            Codec::Szx { bound, layout } => self.szx_compress_on(stream, bound, layout, data, shape),
        }
    }

    /// Queues the decompression of `input` into the first values of `out` on `stream`.
    /// `input` must be complete in `stream`'s order (a waited-for compression, or an
    /// [`upload_stream`](Self::upload_stream) on the same stream).
    pub(crate) fn decompress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        input: &'a DeviceStream,
        out: &'a mut DeviceSlice<T>,
    ) -> Result<PendingDecompress<'a>> {
        if input.elem() != T::TYPE {
            return Err(Error::TypeMismatch { stream: input.elem(), requested: T::TYPE });
        }
        let n = input.values();
        if out.len() < n {
            return Err(Error::BufferTooSmall { needed: n, got: out.len() });
        }
        match input.format() {
            pending::Format::Zfp { .. } => self.zfp_decompress_on(stream, input, out),
            pending::Format::Szx(_) => self.szx_decompress_on(stream, input, out),
        }
    }

    /// Compresses host data on the GPU (upload, encode, download).
    pub(crate) fn compress<T: GpuElement>(&self, codec: &Codec, data: &[T], shape: Shape) -> Result<Vec<u8>> {
        let stream = self.stream()?;
        self.compress_host_on(&stream, codec, data, shape)?.wait_host()
    }

    /// Queues the compression of host data on `stream`: upload, then the device path
    /// (SZx's header, which a relative bound computes from the value range, is
    /// prepared from the host copy).
    fn compress_host_on<T: GpuElement>(
        &self,
        stream: &GpuStream,
        codec: &Codec,
        data: &[T],
        shape: Shape,
    ) -> Result<PendingCompress<'static, T>> {
        check_len(&shape, data.len())?;
        if matches!(codec, Codec::Zfp { .. }) {
            // As on the CPU: values zfp would decode as infinities are refused
            // (Error::NearOverflow), not coded. Device arrays are not checked (see docs/gpu.md).
            crate::zfp::check_codable(data, crate::CpuExecutor::global())?;
        }
        let d = self.upload_on(stream, data)?;
        let q = match *codec {
            Codec::Zfp { mode } => self.zfp_queue(stream, mode, &d, shape)?,
            Codec::Szx { bound, layout } => self.szx_queue(stream, szx::prepare_host(bound, layout, data, shape)?, &d)?,
        };
        Ok(PendingCompress::owning(q, d))
    }

    /// Decodes a stream in host memory into `out` on the GPU (upload, decode, download).
    pub(crate) fn decompress_into<T: GpuElement>(&self, bytes: &[u8], out: &mut [T]) -> Result<StreamInfo> {
        let info = crate::inspect(bytes)?;
        if info.elem != T::TYPE {
            return Err(Error::TypeMismatch { stream: info.elem, requested: T::TYPE });
        }
        let n = info.shape.len();
        if out.len() < n {
            return Err(Error::BufferTooSmall { needed: n, got: out.len() });
        }
        let stream = self.stream()?;
        let input = self.upload_stream(&stream, bytes)?;
        let mut d_out = self.zeroed_on::<T>(&stream, n)?;
        self.decompress_on(&stream, &input, &mut d_out)?.wait()?;
        self.download_on(&stream, &d_out, &mut out[..n])?;
        Ok(info)
    }

    /// The kernel `name` (one of `codec_kernels::kernels::ENTRY_POINTS`) of the loaded module.
    fn function(&self, name: &'static str) -> Result<Function<'_>> {
        self.enter()?;
        self.module.get_function(name).map_err(gpu("cuModuleGetFunction"))
    }
}
