//! Where a call's work buffer lives: the handful of operations the algorithms do on
//! ranges of it, so that every algorithm is written once for host slices and (feature
//! `cuda`) device slices. The host implementation is the crate's original code path;
//! the device one codes, decodes and reduces on the GPU and moves only frames (and raw
//! pieces the codec refused) across to the host.

use core::ops::{DerefMut, Range};

use codec_host::Backend;

use crate::codec_port::{Encoded, HostCodec, PieceCodec};
use crate::value::{extend_le, finite_range, read_le};
use crate::{ReduceOp, Value};

/// A work buffer of `T` values, host or device.
pub(crate) trait Place<T: Value> {
    /// A buffer of the same kind that owns its values (the algorithms' scratch).
    type Owned: DerefMut<Target = Self>;

    /// Values in the buffer.
    fn len(&self) -> usize;
    /// `n` zeros in the same memory as `self`.
    fn zeros(&self, backend: &Backend, n: usize) -> codec_host::Result<Self::Owned>;
    /// The smallest and largest finite value of `range` (`None` if it has none).
    fn finite_range(&self, range: Range<usize>) -> codec_host::Result<Option<(f64, f64)>>;
    /// Appends the compressed form of `range` (at least one value) to `out`, or refuses.
    fn compress(&self, codec: &HostCodec, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<Encoded>;
    /// Decodes `bytes` (exactly `range.len()` values) into `range`.
    fn decompress(&mut self, codec: &HostCodec, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()>;
    /// Appends the values of `range`, little-endian, to `out`.
    fn write_le(&self, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<()>;
    /// Reads little-endian values (exactly `range.len()`) into `range`.
    fn read_le(&mut self, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()>;
    /// `self[range][i] = self[range][i] op src[i]`, with the backend's reduction kernel.
    fn reduce(&mut self, backend: &Backend, op: ReduceOp, range: Range<usize>, src: &Self) -> codec_host::Result<()>;
    /// Copies `src[from]` into `self[to]` (same lengths).
    fn copy_range(&mut self, to: Range<usize>, src: &Self, from: Range<usize>) -> codec_host::Result<()>;
    /// Runs `f` on the values of `range` in host memory (the MPI library's own
    /// collectives, which take host buffers: device values are staged through the host).
    fn with_host<R>(&self, range: Range<usize>, f: impl FnOnce(&[T]) -> R) -> codec_host::Result<R>;
    /// Runs `f` on the values of `range` in host memory and keeps what it wrote.
    fn with_host_mut<R>(&mut self, range: Range<usize>, f: impl FnOnce(&mut [T]) -> R) -> codec_host::Result<R>;
}

impl<T: Value> Place<T> for [T] {
    type Owned = Vec<T>;

    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn zeros(&self, _: &Backend, n: usize) -> codec_host::Result<Vec<T>> {
        Ok(vec![T::default(); n])
    }

    fn finite_range(&self, range: Range<usize>) -> codec_host::Result<Option<(f64, f64)>> {
        Ok(finite_range(&self[range]))
    }

    fn compress(&self, codec: &HostCodec, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<Encoded> {
        codec.compress(&self[range], out)
    }

    fn decompress(&mut self, codec: &HostCodec, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()> {
        codec.decompress(bytes, &mut self[range])
    }

    fn write_le(&self, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<()> {
        extend_le(&self[range], out);
        Ok(())
    }

    fn read_le(&mut self, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()> {
        read_le(bytes, &mut self[range]);
        Ok(())
    }

    fn reduce(&mut self, backend: &Backend, op: ReduceOp, range: Range<usize>, src: &[T]) -> codec_host::Result<()> {
        backend.reduce(op, &mut self[range], src)
    }

    fn copy_range(&mut self, to: Range<usize>, src: &[T], from: Range<usize>) -> codec_host::Result<()> {
        self[to].copy_from_slice(&src[from]);
        Ok(())
    }

    fn with_host<R>(&self, range: Range<usize>, f: impl FnOnce(&[T]) -> R) -> codec_host::Result<R> {
        Ok(f(&self[range]))
    }

    fn with_host_mut<R>(&mut self, range: Range<usize>, f: impl FnOnce(&mut [T]) -> R) -> codec_host::Result<R> {
        Ok(f(&mut self[range]))
    }
}

#[cfg(feature = "cuda")]
mod device {
    //! Device slices: every operation is queued on the rank's one stream and waited for
    //! before it returns, so the algorithms' order of operations (and so the result) is
    //! the host path's exactly.

    use core::ops::Range;

    use codec_host::cuda::{CudaBackend, GpuStream};
    use codec_host::{Backend, Error, Shape};
    use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};

    use super::Place;
    use crate::codec_port::{Encoded, HostCodec};
    use crate::value::{extend_le, finite_range, read_le};
    use crate::{ReduceOp, Value};

    fn cuda(backend: &Backend) -> codec_host::Result<&CudaBackend> {
        backend.cuda_backend().ok_or_else(|| Error::NoDevice(format!("device buffers need the CUDA backend; this is {}", backend.describe())))
    }

    /// The rank's stream (one per thread, made once on the CUDA backend).
    fn stream(backend: &Backend) -> codec_host::Result<&'static GpuStream> {
        thread_local! {
            static STREAM: std::cell::OnceCell<&'static GpuStream> = const { std::cell::OnceCell::new() };
        }
        if let Some(s) = STREAM.with(|s| s.get().copied()) {
            return Ok(s);
        }
        let s: &'static GpuStream = Box::leak(Box::new(backend.stream()?));
        STREAM.with(|c| c.set(s).ok());
        Ok(s)
    }

    fn gpu(what: &'static str) -> impl Fn(cust::error::CudaError) -> Error {
        move |e| Error::Gpu(format!("{what}: {e}"))
    }

    /// Waits for the copies cust queues on the legacy stream: a host-to-device copy from
    /// pageable memory, or a device-to-device copy, may still be running when the call
    /// returns, and the rank's (non-blocking) stream does not wait for it.
    fn settle() -> codec_host::Result<()> {
        cust::context::CurrentContext::synchronize().map_err(gpu("cuCtxSynchronize"))
    }

    fn download<T: Value>(d: &DeviceSlice<T>, range: Range<usize>) -> codec_host::Result<Vec<T>> {
        let mut host = vec![T::default(); range.len()];
        if !range.is_empty() {
            d.index(range).copy_to(&mut host[..]).map_err(gpu("cuMemcpyDtoH"))?;
        }
        Ok(host)
    }

    fn upload<T: Value>(d: &mut DeviceSlice<T>, range: Range<usize>, host: &[T]) -> codec_host::Result<()> {
        if !range.is_empty() {
            let mut dst = d.index(range);
            CopyDestination::copy_from(&mut dst, host).map_err(gpu("cuMemcpyHtoD"))?;
            settle()?;
        }
        Ok(())
    }

    impl<T: Value> Place<T> for DeviceSlice<T> {
        type Owned = DeviceBuffer<T>;

        fn len(&self) -> usize {
            DeviceSlice::len(self)
        }

        fn zeros(&self, backend: &Backend, n: usize) -> codec_host::Result<DeviceBuffer<T>> {
            let s = stream(backend)?;
            let d = cuda(backend)?.zeroed_on(s, n)?;
            s.synchronize()?;
            Ok(d)
        }

        /// The range of a relative bound: no kernel computes it, so the values come to
        /// the host for this one pass (as in codec-host's own device SZx path).
        fn finite_range(&self, range: Range<usize>) -> codec_host::Result<Option<(f64, f64)>> {
            Ok(finite_range(&download(self, range)?))
        }

        fn compress(&self, codec: &HostCodec, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<Encoded> {
            let backend = codec.backend;
            let s = stream(backend)?;
            let n = range.len();
            let piece = self.index(range.clone());
            let stream = match backend.compress_on(s, &codec.codec, &piece, Shape::d1(n)).and_then(|p| p.wait()) {
                Ok(d) => d.to_host()?,
                Err(Error::NonFinite { .. } | Error::NearOverflow { .. }) => return Ok(Encoded::Refused),
                Err(e) => return Err(e),
            };
            // ZFP's promise is checked against the input as on the host (a decoded copy
            // compared value by value): these pieces come to the host for the check.
            if codec.needs_check() && !codec.keeps_promise(&download(self, range)?, &stream)? {
                return Ok(Encoded::Refused);
            }
            out.extend_from_slice(&stream);
            Ok(Encoded::Stream)
        }

        fn decompress(&mut self, codec: &HostCodec, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()> {
            codec.check_stream::<T>(bytes, range.len())?;
            let backend = codec.backend;
            let s = stream(backend)?;
            let input = backend.upload_stream(s, bytes)?;
            let mut piece = self.index(range);
            backend.decompress_on(s, &input, &mut piece)?.wait()
        }

        fn write_le(&self, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<()> {
            extend_le(&download(self, range)?, out);
            Ok(())
        }

        fn read_le(&mut self, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()> {
            let mut host = vec![T::default(); range.len()];
            read_le(bytes, &mut host);
            upload(self, range, &host)
        }

        fn reduce(&mut self, backend: &Backend, op: ReduceOp, range: Range<usize>, src: &DeviceSlice<T>) -> codec_host::Result<()> {
            let s = stream(backend)?;
            let mut acc = self.index(range);
            cuda(backend)?.reduce_on(s, op, &mut acc, src)?;
            s.synchronize()
        }

        fn copy_range(&mut self, to: Range<usize>, src: &DeviceSlice<T>, from: Range<usize>) -> codec_host::Result<()> {
            if to.len() != from.len() {
                return Err(Error::BadDims(format!("copy of {} values into {}", from.len(), to.len())));
            }
            if !to.is_empty() {
                let mut dst = self.index(to);
                CopyDestination::copy_from(&mut dst, &src.index(from)).map_err(gpu("cuMemcpyDtoD"))?;
                settle()?;
            }
            Ok(())
        }

        fn with_host<R>(&self, range: Range<usize>, f: impl FnOnce(&[T]) -> R) -> codec_host::Result<R> {
            Ok(f(&download(self, range)?))
        }

        fn with_host_mut<R>(&mut self, range: Range<usize>, f: impl FnOnce(&mut [T]) -> R) -> codec_host::Result<R> {
            let mut host = download(self, range.clone())?;
            let r = f(&mut host);
            upload(self, range, &host)?;
            Ok(r)
        }
    }
}
