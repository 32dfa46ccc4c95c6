//! Choosing where kernels run: a CUDA device when one answers, else the CPU executor.
//!
//! A [`Backend`] is the execution policy every codec call takes (as zfp's `zfp_exec_*`):
//! [`Codec::compress`] and [`crate::decompress_into`] for host slices, and with the
//! `cuda` feature `Codec::compress_on` and `decompress_on` for device arrays, which take
//! a stream of the backend as well. Callers (the collectives) use one API whichever
//! backend was picked; the pick and, on a fallback, the reason are reported by
//! [`Backend::kind`], [`Backend::fallback_reason`] and [`Backend::describe`].

use core::fmt;


use crate::elementwise::{self, HalfElem, ReduceOp};
use crate::{Codec, CpuExecutor, Error, OutputWrites, Result, Shape, StreamInfo};

/// Which kind of backend runs the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    Cpu,
    Cuda,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
        })
    }
}

enum Inner {
    /// `None`: the process-wide executor.
    Cpu(Option<CpuExecutor>),
    #[cfg(feature = "cuda")]
    Cuda(Box<crate::cuda::CudaBackend>),
}

/// Where the kernels run.
pub struct Backend {
    inner: Inner,
    /// Why CUDA was not picked, when [`Backend::auto`] fell back to the CPU.
    fallback: Option<Error>,
}

/// The element types every backend computes on (`f32`, `f64`).
#[cfg(feature = "cuda")]
pub trait BackendElem: crate::cuda::GpuElement {}
#[cfg(feature = "cuda")]
impl<T: crate::cuda::GpuElement> BackendElem for T {}
/// The element types every backend computes on (`f32`, `f64`).
#[cfg(not(feature = "cuda"))]
pub trait BackendElem: crate::Element {}
#[cfg(not(feature = "cuda"))]
impl<T: crate::Element> BackendElem for T {}

impl Backend {
    /// CUDA on the first device if one answers, else the shared CPU executor, with the
    /// reason kept in [`fallback_reason`](Self::fallback_reason).
    pub fn auto() -> Backend {
        Self::cuda_or_cpu(Self::cuda())
    }

    /// `cuda` if it succeeded, else the CPU with the reason: no device, no driver and
    /// no usable PTX module are all fallbacks.
    fn cuda_or_cpu(cuda: Result<Backend>) -> Backend {
        cuda.unwrap_or_else(|e| Backend { inner: Inner::Cpu(None), fallback: Some(e) })
    }

    /// The CUDA backend on the first device, or why there is none ([`Error::NoDevice`]
    /// also when built without the `cuda` feature).
    pub fn cuda() -> Result<Backend> {
        #[cfg(feature = "cuda")]
        {
            let b = crate::cuda::CudaBackend::new()?;
            Ok(Backend { inner: Inner::Cuda(Box::new(b)), fallback: None })
        }
        #[cfg(not(feature = "cuda"))]
        Err(Error::NoDevice("built without the `cuda` feature".into()))
    }

    /// The shared CPU executor (one thread per core).
    pub fn cpu() -> Backend {
        Backend { inner: Inner::Cpu(None), fallback: None }
    }

    /// A CPU executor of the caller's.
    pub fn with_executor(exec: CpuExecutor) -> Backend {
        Backend { inner: Inner::Cpu(Some(exec)), fallback: None }
    }

    /// Which backend this is.
    pub fn kind(&self) -> BackendKind {
        match &self.inner {
            Inner::Cpu(_) => BackendKind::Cpu,
            #[cfg(feature = "cuda")]
            Inner::Cuda(_) => BackendKind::Cuda,
        }
    }

    /// Why [`auto`](Self::auto) did not pick CUDA, if it fell back.
    pub fn fallback_reason(&self) -> Option<&Error> {
        self.fallback.as_ref()
    }

    /// One line for logs: the backend, its device or thread count, and any fallback reason.
    pub fn describe(&self) -> String {
        let what = match &self.inner {
            Inner::Cpu(e) => format!("cpu ({} threads)", e.as_ref().unwrap_or(CpuExecutor::global()).threads()),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => format!("cuda: {}", g.describe()),
        };
        match &self.fallback {
            Some(why) => format!("{what}; cuda not used: {why}"),
            None => what,
        }
    }

    /// The CPU executor, when this is a CPU backend.
    pub fn executor(&self) -> Option<&CpuExecutor> {
        match &self.inner {
            Inner::Cpu(e) => Some(e.as_ref().unwrap_or(CpuExecutor::global())),
            #[cfg(feature = "cuda")]
            Inner::Cuda(_) => None,
        }
    }

    /// The CUDA backend, when this is one.
    #[cfg(feature = "cuda")]
    pub fn cuda_backend(&self) -> Option<&crate::cuda::CudaBackend> {
        match &self.inner {
            Inner::Cuda(g) => Some(g),
            Inner::Cpu(_) => None,
        }
    }

    /// [`Codec::compress`] here.
    pub(crate) fn compress<T: BackendElem>(&self, codec: &Codec, data: &[T], shape: Shape) -> Result<Vec<u8>> {
        match &self.inner {
            Inner::Cpu(_) => codec.compress_cpu(data, shape, self.cpu_exec()),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.compress(codec, data, shape),
        }
    }

    /// [`crate::decompress_into`] here.
    pub(crate) fn decompress_into<T: BackendElem>(&self, stream: &[u8], out: &mut [T], writes: OutputWrites) -> Result<StreamInfo> {
        match &self.inner {
            Inner::Cpu(_) => crate::codec::decompress_cpu(stream, out, writes, self.cpu_exec()),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.decompress_into(stream, out),
        }
    }

    /// [`crate::decompress_reduce`] on this backend.
    pub(crate) fn decompress_reduce<T: BackendElem>(&self, stream: &[u8], acc: &mut [T], op: ReduceOp) -> Result<StreamInfo> {
        if let (Inner::Cpu(_), true) = (&self.inner, crate::szx::is_szx(stream)) {
            let info = crate::szx::inspect(stream)?;
            crate::szx::decompress_reduce(stream, acc, op, self.cpu_exec())?;
            return Ok(info);
        }
        let info = crate::codec::inspect(stream)?;
        let (n, got) = (info.shape.len(), acc.len());
        // The caller's buffer, not the stream, vouches for the vector's size.
        let acc = acc.get_mut(..n).ok_or(Error::BufferTooSmall { needed: n, got })?;
        let mut values = vec![T::default(); n];
        self.decompress_into(stream, &mut values, OutputWrites::BySize)?;
        self.reduce(op, acc, &values)?;
        Ok(info)
    }

    /// [`crate::decompress_reduce_all`] on this backend.
    pub(crate) fn decompress_reduce_all<T: BackendElem>(&self, streams: &[&[u8]], init: Option<&[T]>, acc: &mut [T], op: ReduceOp) -> Result<()> {
        let counts = streams.iter().map(|s| crate::codec::inspect(s).map(|i| i.shape.len())).collect::<Result<Vec<_>>>()?;
        let n = counts.first().copied().unwrap_or(0);
        if let Some(&m) = counts.iter().find(|&&m| m != n) {
            return Err(Error::BadDims(format!("streams of {n} and {m} values reduced together")));
        }
        for got in [Some(acc.len()), init.map(<[T]>::len)].into_iter().flatten() {
            if got < n {
                return Err(Error::BufferTooSmall { needed: n, got });
            }
        }
        if let (Inner::Cpu(_), true) = (&self.inner, streams.iter().all(|s| crate::szx::is_szx(s))) {
            if crate::szx::decompress_reduce_all(streams, init, acc, op, self.cpu_exec())? {
                return Ok(());
            }
        }
        if let Some(x) = init {
            acc[..n].copy_from_slice(&x[..n]);
        }
        streams.iter().try_for_each(|s| self.decompress_reduce(s, acc, op).map(drop))
    }

    /// `acc[i] = acc[i] op src[i]` (MPI semantics, see [`ReduceOp`]).
    pub fn reduce<T: BackendElem>(&self, op: ReduceOp, acc: &mut [T], src: &[T]) -> Result<()> {
        match &self.inner {
            Inner::Cpu(_) => elementwise::reduce(self.cpu_exec(), op, acc, src),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.reduce(op, acc, src),
        }
    }

    /// Widens half-precision values to f32.
    pub fn widen<H: HalfElem>(&self, src: &[H], dst: &mut [f32]) -> Result<()> {
        match &self.inner {
            Inner::Cpu(_) => elementwise::widen(self.cpu_exec(), src, dst),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.widen(src, dst),
        }
    }

    /// Narrows f32 values to half precision (round to nearest even).
    pub fn narrow<H: HalfElem>(&self, src: &[f32], dst: &mut [H]) -> Result<()> {
        match &self.inner {
            Inner::Cpu(_) => elementwise::narrow(self.cpu_exec(), src, dst),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.narrow(src, dst),
        }
    }

    /// The CUDA backend, or why device arrays cannot be used with this one.
    #[cfg(feature = "cuda")]
    pub(crate) fn device(&self) -> Result<&crate::cuda::CudaBackend> {
        self.cuda_backend().ok_or_else(|| Error::NoDevice(format!("device arrays need the CUDA backend; this is {}", self.describe())))
    }

    /// A new stream for the device-array calls (CUDA backend only).
    #[cfg(feature = "cuda")]
    pub fn stream(&self) -> Result<crate::cuda::GpuStream> {
        self.device()?.stream()
    }

    /// Queues the upload of a compressed stream from host memory on `stream` (CUDA
    /// backend only), for [`crate::decompress_on`].
    #[cfg(feature = "cuda")]
    pub fn upload_stream(&self, stream: &crate::cuda::GpuStream, bytes: &[u8]) -> Result<crate::cuda::DeviceStream> {
        self.device()?.upload_stream(stream, bytes)
    }

    fn cpu_exec(&self) -> &CpuExecutor {
        self.executor().unwrap_or(CpuExecutor::global())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reports_its_pick_and_works_either_way() {
        let b = Backend::auto();
        match b.kind() {
            BackendKind::Cpu => {
                let why = b.fallback_reason().expect("a CPU pick by auto() carries the reason");
                let no_ptx = matches!(why, Error::Gpu(m) if m.contains("PTX"));
                assert!(matches!(why, Error::NoDevice(_)) || no_ptx, "{why}");
                assert!(b.describe().contains(&format!("cuda not used: {why}")), "{}", b.describe());
            }
            BackendKind::Cuda => assert!(b.fallback_reason().is_none()),
        }
        let mut acc = vec![1.0f64, f64::NAN, -0.0, 5.0];
        b.reduce(ReduceOp::Max, &mut acc, &[2.0, 1.0, 0.0, f64::NEG_INFINITY]).unwrap();
        assert_eq!(acc[0], 2.0);
        assert!(acc[1].is_nan());
        assert_eq!(acc[2].to_bits(), 0f64.to_bits());
        assert_eq!(acc[3], 5.0);
        assert!(matches!(b.reduce(ReduceOp::Sum, &mut acc, &[1.0]), Err(Error::BadDims(_))));
        let field: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.01).sin()).collect();
        for codec in [Codec::zfp_rate(8.0), Codec::zfp_accuracy(1e-3), Codec::szx(crate::ErrorBound::Abs(1e-3))] {
            let stream = codec.compress(&field, Shape::d2(64, 64), &b).unwrap();
            assert_eq!(stream, codec.compress(&field, Shape::d2(64, 64), &Backend::cpu()).unwrap(), "{}", b.describe());
            let mut back = vec![0f32; field.len()];
            crate::decompress_into(&stream, &mut back, &b).unwrap();
            let mut want = vec![0f32; field.len()];
            crate::decompress_into(&stream, &mut want, &Backend::cpu()).unwrap();
            assert_eq!(back, want);
        }
    }

    /// A device whose PTX is missing (no build-ptx run, none embedded) is no more usable
    /// than no device: `auto()` falls back and says why.
    #[test]
    fn missing_ptx_falls_back_like_a_missing_device() {
        for why in [
            Error::Gpu("no PTX embedded and none in target/ptx: run `cargo xtask build-ptx` (or set CCOLL_PTX_DIR)".into()),
            Error::NoDevice("the CUDA driver reports: no CUDA-capable device is detected".into()),
        ] {
            let b = Backend::cuda_or_cpu(Err(why.clone()));
            assert_eq!(b.kind(), BackendKind::Cpu);
            assert_eq!(b.fallback_reason(), Some(&why));
            assert!(b.describe().ends_with(&format!("; cuda not used: {why}")), "{}", b.describe());
            let mut acc = [1.0f32];
            b.reduce(ReduceOp::Sum, &mut acc, &[2.0]).unwrap();
            assert_eq!(acc, [3.0]);
        }
    }

    /// Device arrays exist only on the CUDA backend; a CPU backend says so.
    #[cfg(feature = "cuda")]
    #[test]
    fn device_array_calls_on_a_cpu_backend_are_no_device_errors() {
        let b = Backend::with_executor(CpuExecutor::new(1).unwrap());
        assert!(matches!(b.stream(), Err(Error::NoDevice(m)) if m.contains("cpu (1 threads)")));
    }

    #[test]
    fn explicit_cpu_backends_have_no_fallback_reason() {
        let b = Backend::with_executor(CpuExecutor::new(1).unwrap());
        assert_eq!(b.kind(), BackendKind::Cpu);
        assert!(b.fallback_reason().is_none());
        assert_eq!(b.describe(), "cpu (1 threads)");
        let mut wide = [0f32; 2];
        b.widen(&[half::bf16::from_f32(1.5), half::bf16::MAX], &mut wide).unwrap();
        assert_eq!(wide, [1.5, half::bf16::MAX.to_f32()]);
    }
}
