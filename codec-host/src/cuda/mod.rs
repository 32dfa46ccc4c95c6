//! The CUDA backend (feature `cuda`): codec-kernels' entry points as PTX, launched with
//! cust on caller-chosen streams.
//!
//! Every kernel is the same body the CPU executor runs; this module only moves data,
//! picks launch shapes and orders work on streams. Work is asynchronous per stream: a
//! caller can keep N compressions in flight on N streams (the multi-stream scheme of
//! ZFP-OPT) and order streams against each other with [`GpuEvent`]s. Without a device
//! (or without a driver) [`CudaBackend::new`] returns [`Error::NoDevice`].

mod ptx;
mod szx;
mod zfp;

use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::event::{Event, EventFlags, EventStatus};
use cust::launch;
use cust::function::Function;
use cust::memory::bytemuck::Pod;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags, StreamWaitEventFlags};

use codec_kernels::grid::LaunchConfig;
use codec_kernels::kernels::{reduce_entry, ENTRY_POINTS};
use codec_kernels::reduce::{ReduceElem, ReduceOp};

use crate::elementwise::{same_len, HalfElem};
use crate::{Element, Error, Result};

pub use ptx::{missing_entries, runtime_dir as ptx_runtime_dir};
pub use zfp::PendingZfp;

/// The element types the GPU kernels take (`f32`, `f64`).
pub trait GpuElement: Element + ReduceElem + DeviceCopy + Pod {}
impl<T: Element + ReduceElem + DeviceCopy + Pod> GpuElement for T {}

/// Threads per block for the grid-stride kernels.
const BLOCK: u32 = 256;
/// Resident blocks per multiprocessor a grid-stride launch asks for; more only queue.
const BLOCKS_PER_SM: u32 = 16;

/// Wraps a driver error with what was being done.
pub(crate) fn gpu(what: &'static str) -> impl Fn(CudaError) -> Error {
    move |e| Error::Gpu(format!("{what}: {e}"))
}

/// A driver that cannot initialise or count devices (no GPU, no kernel module, a
/// driver/library mismatch) leaves no usable device: all of these are `NoDevice`.
fn init_error(e: CudaError) -> Error {
    Error::NoDevice(format!("the CUDA driver reports: {e}"))
}

/// The name in [`ENTRY_POINTS`] equal to `name`, as a `'static` string.
fn entry(name: &str) -> Result<&'static str> {
    ENTRY_POINTS
        .iter()
        .copied()
        .find(|n| *n == name)
        .ok_or_else(|| Error::Gpu(format!("no kernel named {name}")))
}

/// An ordered queue of GPU work (a non-blocking CUDA stream).
pub struct GpuStream {
    inner: Stream,
}

/// A point in a stream's work; other streams and the host can wait for it.
pub struct GpuEvent {
    inner: Event,
}

impl GpuStream {
    /// Marks the current end of this stream's work.
    pub fn record(&self) -> Result<GpuEvent> {
        let inner = Event::new(EventFlags::DISABLE_TIMING).map_err(gpu("cuEventCreate"))?;
        inner.record(&self.inner).map_err(gpu("cuEventRecord"))?;
        Ok(GpuEvent { inner })
    }

    /// Makes later work on this stream wait until `event` has happened (no host wait).
    /// The event is used up: record one per waiting stream.
    pub fn wait_for(&self, event: GpuEvent) -> Result<()> {
        self.inner.wait_event(event.inner, StreamWaitEventFlags::DEFAULT).map_err(gpu("cuStreamWaitEvent"))
    }

    /// Blocks the host until all work queued so far has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.synchronize().map_err(gpu("cuStreamSynchronize"))
    }
}

impl GpuEvent {
    /// True once the work before the event has finished (does not block).
    pub fn is_complete(&self) -> Result<bool> {
        match self.inner.query().map_err(gpu("cuEventQuery"))? {
            EventStatus::Ready => Ok(true),
            EventStatus::NotReady => Ok(false),
        }
    }

    /// Blocks the host until the event has happened.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.synchronize().map_err(gpu("cuEventSynchronize"))
    }
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
        Ok(GpuStream { inner: Stream::new(StreamFlags::NON_BLOCKING, None).map_err(gpu("cuStreamCreate"))? })
    }

    /// Grid for `n` items: one thread per item, at most the blocks the device keeps
    /// resident (the kernels loop over the rest).
    fn grid_for(&self, n: usize) -> (u32, u32) {
        let cfg = LaunchConfig::for_items(n, BLOCK);
        (cfg.grid_dim.min(self.max_blocks), cfg.block_dim)
    }

    /// Launches an elementwise kernel `name(a, b, n)`.
    fn launch_elementwise<A: DeviceCopy, B: DeviceCopy>(
        &self,
        stream: &GpuStream,
        name: &str,
        a: DevicePointer<A>,
        b: DevicePointer<B>,
        n: usize,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let f = self.function(name)?;
        let (grid, block) = self.grid_for(n);
        let s = &stream.inner;
        // SAFETY: every elementwise entry point takes (pointer, pointer, usize); the
        // callers pass device pointers to at least `n` values of the kernel's types.
        unsafe { launch!(f<<<grid, block, 0, s>>>(a, b, n)) }.map_err(gpu("cuLaunchKernel"))
    }

    /// Queues `acc[i] = acc[i] op src[i]` on `stream`.
    pub fn reduce_on<T: ReduceElem + Element + DeviceCopy>(
        &self,
        stream: &GpuStream,
        op: ReduceOp,
        acc: &mut DeviceSlice<T>,
        src: &DeviceSlice<T>,
    ) -> Result<()> {
        same_len("reduce", acc.len(), src.len())?;
        let name = reduce_entry(op, &T::TYPE.to_string()).ok_or_else(|| Error::Gpu(format!("no reduce kernel for {}", T::TYPE)))?;
        self.launch_elementwise(stream, name, acc.as_device_ptr(), src.as_device_ptr(), src.len())
    }

    /// Queues the widening of half-precision bits `src` into `dst` on `stream`.
    pub fn widen_on<H: HalfElem>(&self, stream: &GpuStream, src: &DeviceSlice<u16>, dst: &mut DeviceSlice<f32>) -> Result<()> {
        use codec_kernels::half_convert::HalfFormat;
        same_len("widen", src.len(), dst.len())?;
        let name = format!("{}_to_f32", H::Format::NAME);
        self.launch_elementwise(stream, &name, src.as_device_ptr(), dst.as_device_ptr(), src.len())
    }

    /// Queues the narrowing of `src` into half-precision bits `dst` on `stream`.
    pub fn narrow_on<H: HalfElem>(&self, stream: &GpuStream, src: &DeviceSlice<f32>, dst: &mut DeviceSlice<u16>) -> Result<()> {
        use codec_kernels::half_convert::HalfFormat;
        same_len("narrow", src.len(), dst.len())?;
        let name = format!("f32_to_{}", H::Format::NAME);
        self.launch_elementwise(stream, &name, src.as_device_ptr(), dst.as_device_ptr(), src.len())
    }

    /// A device buffer of `n` zeros, zeroed in `stream`'s order.
    pub fn zeroed_on<T: DeviceCopy + Pod>(&self, stream: &GpuStream, n: usize) -> Result<DeviceBuffer<T>> {
        self.enter()?;
        // SAFETY: `T` is Pod, and the zeroing is queued on `stream` before any work the
        // caller queues there afterwards.
        let mut d = unsafe { DeviceBuffer::uninitialized(n) }.map_err(gpu("cuMemAlloc"))?;
        unsafe { d.set_8_async(0, &stream.inner) }.map_err(gpu("cuMemsetD8Async"))?;
        Ok(d)
    }

    /// A device copy of `host`, queued on `stream`. The copy is ordered before later work
    /// on `stream`; callers synchronise `stream` before `host` may change.
    fn upload_on<T: DeviceCopy>(&self, stream: &GpuStream, host: &[T]) -> Result<DeviceBuffer<T>> {
        self.enter()?;
        // SAFETY: the buffer is fully written by the copy queued right after, before any
        // later use on `stream`; `host` is pageable (staged before the call returns) or
        // outlives the callers' synchronisation.
        let mut d = unsafe { DeviceBuffer::uninitialized(host.len()) }.map_err(gpu("cuMemAlloc"))?;
        unsafe { d.async_copy_from(host, &stream.inner) }.map_err(gpu("cuMemcpyHtoDAsync"))?;
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
    pub fn reduce<T: ReduceElem + Element + DeviceCopy>(&self, op: ReduceOp, acc: &mut [T], src: &[T]) -> Result<()> {
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
        let n = lens.len();
        // Launch 2 walks the partials on one thread: keep them to a few tens of thousands.
        let chunk = n.div_ceil(1 << 15).max(256);
        let n_chunks = codec_kernels::scan::chunk_count(n, chunk);
        let partials = self.zeroed_on::<u64>(stream, n_chunks)?;
        let total = self.zeroed_on::<u64>(stream, 1)?;
        let offsets = self.zeroed_on::<u64>(stream, n)?;
        let (lp, pp, tp, op) = (lens.as_device_ptr(), partials.as_device_ptr(), total.as_device_ptr(), offsets.as_device_ptr());
        let (grid, block) = self.grid_for(n_chunks);
        let f1 = self.function("scan_partials_u32")?;
        let f2 = self.function("scan_partials_exclusive")?;
        let f3 = self.function("scan_apply_u32")?;
        let s = &stream.inner;
        // SAFETY: argument lists match the entry points in codec-kernels' `entry` module;
        // every pointer is a live device buffer of the length passed beside it.
        unsafe {
            launch!(f1<<<grid, block, 0, s>>>(lp, n, chunk, pp, n_chunks)).map_err(gpu("cuLaunchKernel scan_partials_u32"))?;
            launch!(f2<<<1, 1, 0, s>>>(pp, n_chunks, base, tp)).map_err(gpu("cuLaunchKernel scan_partials_exclusive"))?;
            launch!(f3<<<grid, block, 0, s>>>(lp, n, chunk, pp, n_chunks, op)).map_err(gpu("cuLaunchKernel scan_apply_u32"))?;
        }
        Ok(DeviceScan { offsets, total, _partials: partials })
    }

    /// The kernel `name` (one of [`ENTRY_POINTS`]) of the loaded module.
    fn function(&self, name: &str) -> Result<Function<'_>> {
        self.enter()?;
        self.module.get_function(entry(name)?).map_err(gpu("cuModuleGetFunction"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuExecutor;

    #[test]
    fn every_launched_kernel_name_is_an_entry_point() {
        for op in ReduceOp::ALL {
            for t in ["f32", "f64"] {
                assert!(reduce_entry(op, t).is_some());
            }
        }
        for name in ["f16_to_f32", "f32_to_f16", "bf16_to_f32", "f32_to_bf16"] {
            assert_eq!(entry(name).unwrap(), name);
        }
        assert!(matches!(entry("nope"), Err(Error::Gpu(_))));
    }

    /// On a machine without a GPU (CI) the backend must say "no device", not panic or
    /// report another failure; on one with a GPU the kernels must agree with the CPU.
    #[test]
    fn no_device_is_reported_or_the_device_agrees_with_the_cpu() {
        let gpu = match CudaBackend::new() {
            Err(Error::NoDevice(why)) => {
                eprintln!("no CUDA device: {why}");
                return;
            }
            Err(e) => panic!("expected a device or NoDevice, got {e}"),
            Ok(gpu) => gpu,
        };
        let exec = CpuExecutor::new(1).unwrap();
        let n = 100_003;
        let src: Vec<f32> = (0..n).map(|i| (i as f32 * 0.01).sin() * 1e3).collect();
        for op in ReduceOp::ALL {
            let mut want: Vec<f32> = (0..n).map(|i| (i as f32 * 0.02).cos()).collect();
            let mut got = want.clone();
            crate::elementwise::reduce(&exec, op, &mut want, &src).unwrap();
            gpu.reduce(op, &mut got, &src).unwrap();
            assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "{op:?} on {}", gpu.describe());
        }
        let mut h_cpu = vec![half::bf16::ZERO; n];
        let mut h_gpu = h_cpu.clone();
        crate::elementwise::narrow(&exec, &src, &mut h_cpu).unwrap();
        gpu.narrow(&src, &mut h_gpu).unwrap();
        assert_eq!(h_cpu, h_gpu);
        let halves: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
        let (mut w_cpu, mut w_gpu) = (vec![0f32; halves.len()], vec![0f32; halves.len()]);
        crate::elementwise::widen(&exec, &halves, &mut w_cpu).unwrap();
        gpu.widen(&halves, &mut w_gpu).unwrap();
        assert!(w_cpu.iter().zip(&w_gpu).all(|(a, b)| a.to_bits() == b.to_bits()));
        // SZx, plain and pipelined: the same streams and values as the CPU.
        let x: Vec<f32> = (0..50_000).map(|i| (i as f32 * 3e-3).sin() * if i % 1000 < 100 { 0.0 } else { 1.0 }).collect();
        let szx = [crate::Codec::Szx { abs_error: 1e-3 }, crate::Codec::SzxPipelined { bound: crate::szx::ErrorBound::Rel(1e-4), chunk_values: 5120 }];
        for codec in szx {
            let cpu = codec.compress_with(&x, crate::Shape::d1(x.len()), &exec).unwrap();
            assert_eq!(gpu.szx_compress(&codec, &x, crate::Shape::d1(x.len())).unwrap(), cpu, "{codec:?}");
            let (mut got, mut want) = (vec![0f32; x.len()], vec![0f32; x.len()]);
            gpu.szx_decompress_into(&cpu, &mut got).unwrap();
            crate::decompress_into_with(&cpu, &mut want, &exec).unwrap();
            assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{codec:?}");
            let mut bad = cpu.clone();
            let at = bad.len() - 3;
            bad.truncate(at);
            assert!(gpu.szx_decompress_into(&bad, &mut got).is_err());
        }
        // ZFP: the same streams as the CPU, several arrays in flight on several streams.
        let shapes = [crate::Shape::d1(100_003), crate::Shape::d2(317, 129), crate::Shape::d3(61, 33, 17)];
        let arrays: Vec<Vec<f64>> = shapes.iter().map(|s| (0..s.len()).map(|i| (i as f64 * 1e-3).sin()).collect()).collect();
        for codec in [crate::Codec::ZfpFixedRate { rate: 12.0 }, crate::Codec::ZfpFixedAccuracy { tolerance: 1e-6 }] {
            let inputs: Vec<(&[f64], crate::Shape)> = arrays.iter().map(|a| &a[..]).zip(shapes).collect();
            let streams = gpu.zfp_compress_batch(&codec, &inputs).unwrap();
            for ((a, shape), stream) in inputs.iter().zip(&streams) {
                assert_eq!(stream, &codec.compress_with(a, *shape, &exec).unwrap(), "{codec:?} {shape}");
                let (mut got, mut want) = (vec![0f64; a.len()], vec![0f64; a.len()]);
                gpu.zfp_decompress_into(stream, &mut got, None).unwrap();
                crate::decompress_into_with(stream, &mut want, &exec).unwrap();
                assert!(got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()), "{codec:?} {shape}");
            }
        }
    }
}
