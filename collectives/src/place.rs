//! Where a call's work buffer lives: the handful of operations the algorithms do on
//! ranges of it, so that every algorithm is written once for host slices and (feature
//! `cuda`) device slices. The host implementation is the crate's original code path;
//! the device one codes, decodes and reduces on the GPU and moves only frames (and raw
//! pieces the codec refused) across to the host.

use core::ops::{DerefMut, Range};

use codec_host::{extend_le, read_le, Backend};

use crate::codec_port::{Encoded, HostCodec, PieceCodec};
use crate::value::finite_range;
use crate::{ReduceOp, Value};

/// What [`Place::compress_each`] made of one piece.
pub(crate) enum Coded<'a> {
    /// Not to be compressed (the caller's plan).
    Skip,
    /// The compressed stream.
    Stream(&'a [u8]),
    /// The codec cannot keep its promise for these values: the piece travels raw.
    Refused,
}

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
    /// Compresses the pieces of `plan` marked true (each at least one value), and hands
    /// every piece's outcome to `emit` in order (`Coded::Skip` for the unmarked ones).
    /// On the device up to `streams` compressions are queued at once, on as many
    /// streams, so that later pieces compress while `emit` sends earlier ones.
    fn compress_each(&self, codec: &HostCodec, plan: &[(Range<usize>, bool)], streams: usize, emit: &mut dyn FnMut(usize, codec_host::Result<Coded<'_>>));
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

    fn compress_each(&self, codec: &HostCodec, plan: &[(Range<usize>, bool)], _: usize, emit: &mut dyn FnMut(usize, codec_host::Result<Coded<'_>>)) {
        let mut stream = Vec::new();
        for (i, (range, compress)) in plan.iter().enumerate() {
            if !compress {
                emit(i, Ok(Coded::Skip));
                continue;
            }
            stream.clear();
            let coded = codec.compress(&self[range.clone()], &mut stream).map(|e| match e {
                Encoded::Stream => Coded::Stream(&stream),
                Encoded::Refused => Coded::Refused,
            });
            emit(i, coded);
        }
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
    use std::cell::RefCell;
    use std::collections::VecDeque;

    use codec_host::cuda::{CudaBackend, DeviceStream, GpuStream};
    use codec_host::{extend_le, read_le, Backend, Error, Shape};
    use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice, LockedBuffer};

    use super::{Coded, Place};
    use crate::codec_port::HostCodec;
    use crate::value::finite_range;
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

    /// At least `n` compression streams of this thread (made once, kept; the pipelines
    /// use the first `n`).
    fn stream_pool(backend: &Backend, n: usize) -> codec_host::Result<&'static [GpuStream]> {
        thread_local! {
            static POOL: RefCell<&'static [GpuStream]> = const { RefCell::new(&[]) };
        }
        let have = POOL.with(|p| *p.borrow());
        if have.len() >= n {
            return Ok(&have[..n]);
        }
        let pool: &'static [GpuStream] = Box::leak((0..n).map(|_| backend.stream()).collect::<codec_host::Result<Vec<_>>>()?.into_boxed_slice());
        POOL.with(|p| *p.borrow_mut() = pool);
        Ok(pool)
    }

    /// Copies the compressed stream `d` to the host through this thread's pinned
    /// staging buffer (page-locked, so the copy is one DMA, grown to the largest stream
    /// seen) and leaves its bytes in `out`.
    fn stage(d: &DeviceStream, out: &mut Vec<u8>) -> codec_host::Result<()> {
        thread_local! {
            static PINNED: RefCell<Option<LockedBuffer<u64>>> = const { RefCell::new(None) };
        }
        let words = d.len().div_ceil(8);
        PINNED.with(|p| {
            let mut p = p.borrow_mut();
            if p.as_ref().is_none_or(|b| b.len() < words) {
                *p = Some(LockedBuffer::new(&0u64, words.max(1)).map_err(gpu("cuMemAllocHost"))?);
            }
            let pinned = p.as_mut().expect("made above");
            if words > 0 {
                d.words().index(0..words).copy_to(&mut pinned.as_mut_slice()[..words]).map_err(gpu("cuMemcpyDtoH"))?;
            }
            out.clear();
            out.extend(pinned.as_slice()[..words].iter().flat_map(|w| w.to_le_bytes()));
            out.truncate(d.len());
            Ok(())
        })
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

        fn compress_each(&self, codec: &HostCodec, plan: &[(Range<usize>, bool)], streams: usize, emit: &mut dyn FnMut(usize, codec_host::Result<Coded<'_>>)) {
            let backend = codec.backend;
            let streams = match stream_pool(backend, streams.max(1)) {
                Ok(s) => s,
                // Every piece reports the failure: the caller's schedule goes on.
                Err(e) => return (0..plan.len()).for_each(|i| emit(i, Err(e.clone()))),
            };
            let views: Vec<DeviceSlice<T>> = plan.iter().map(|(r, _)| self.index(r.clone())).collect();
            let mut queued = VecDeque::new();
            let mut next = 0;
            let mut staged = Vec::new();
            for (i, (range, compress)) in plan.iter().enumerate() {
                // Keep the next pieces compressing, one per stream, while this one goes.
                while next < plan.len() && next < i + streams.len() {
                    if plan[next].1 {
                        let s = &streams[next % streams.len()];
                        queued.push_back(codec.codec.compress_on(&views[next], Shape::d1(views[next].len()), backend, s));
                    }
                    next += 1;
                }
                if !compress {
                    emit(i, Ok(Coded::Skip));
                    continue;
                }
                let pending = queued.pop_front().expect("every marked piece was queued in order");
                let coded = match pending.and_then(|p| p.wait()).and_then(|d| stage(&d, &mut staged)) {
                    Ok(()) => match codec.needs_check() {
                        // ZFP's promise is checked against the input as on the host (a
                        // decoded copy compared value by value): such pieces come to the
                        // host for the check.
                        true => download(self, range.clone())
                            .and_then(|values| codec.keeps_promise(&values, &staged))
                            .map(|ok| if ok { Coded::Stream(&staged) } else { Coded::Refused }),
                        false => Ok(Coded::Stream(&staged)),
                    },
                    Err(Error::NonFinite { .. } | Error::NearOverflow { .. }) => Ok(Coded::Refused),
                    Err(e) => Err(e),
                };
                emit(i, coded);
            }
        }

        fn decompress(&mut self, codec: &HostCodec, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()> {
            codec.check_stream::<T>(bytes, range.len())?;
            let backend = codec.backend;
            let s = stream(backend)?;
            let input = backend.upload_stream(s, bytes)?;
            let mut piece = self.index(range);
            codec_host::decompress_on(&input, &mut piece, backend, s)?.wait()
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
