//! Where a call's work buffer lives: the handful of operations the algorithms do on
//! ranges of it, so that every algorithm is written once for host slices and (feature
//! `cuda`) device slices. The host implementation is the crate's original code path;
//! the device one codes, decodes and reduces on the GPU and moves only frames (and raw
//! pieces the codec refused) across to the host.

use core::ops::{DerefMut, Range};

use codec_host::szx::STREAMING_MIN_BYTES;
use codec_host::{extend_le, read_le, Backend, OutputWrites};

use crate::codec_port::{Encoded, HostCodec, PieceCodec};
use crate::{spare, ReduceOp, Value};

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
    /// True for device memory: a call on it orders itself after the caller's queued work
    /// when it starts and waits for its own before it returns.
    #[cfg(feature = "cuda")]
    const DEVICE: bool;

    /// Values in the buffer.
    fn len(&self) -> usize;
    /// `n` zeros in the same memory as `self`.
    fn zeros(&self, n: usize) -> codec_host::Result<Self::Owned>;
    /// `n` values in the same memory as `self` for a buffer the caller overwrites whole
    /// before it reads any, to hand to [`Place::keep`] when done. Host memory reuses the
    /// buffer an earlier call kept (its pages mapped already, `spare`); device memory
    /// allocates zeros: it has no page faults to save, and a buffer kept there would
    /// hold device memory the caller may need.
    fn scratch(&self, n: usize) -> codec_host::Result<Self::Owned> {
        self.zeros(n)
    }
    /// Ends the use of a [`Place::scratch`] buffer.
    fn keep(_buf: Self::Owned) {}
    /// The smallest and largest finite value of `range` (`None` if it has none).
    fn finite_range(&self, range: Range<usize>) -> codec_host::Result<Option<(f64, f64)>>;
    /// Compresses the pieces of `plan` marked true (each at least one value), and hands
    /// every piece's outcome to `emit` in order (`Coded::Skip` for the unmarked ones).
    /// On the device up to `streams` compressions are queued at once, on as many
    /// streams, so that later pieces compress while `emit` sends earlier ones.
    fn compress_each(&self, codec: &HostCodec, plan: &[(Range<usize>, bool)], streams: usize, emit: &mut dyn FnMut(usize, codec_host::Result<Coded<'_>>));
    /// Decodes `bytes` (exactly `range.len()` values) into `range`.
    fn decompress(&mut self, codec: &HostCodec, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()>;
    /// `self[range][i] = ((x[i] op v0[i]) op v1[i]) ...`, `vk` the values `streams[k]`
    /// decode to and `x` `init[range]`, or `self[range]` where that is None, where the
    /// codec reduces as it decodes into this memory (`HostCodec::reduces_as_it_decodes`,
    /// host memory); `None` elsewhere: the caller decodes into a scratch buffer and
    /// reduces from it.
    fn decompress_reduce(&mut self, codec: &HostCodec, streams: &[&[u8]], range: Range<usize>, init: Option<&Self>, op: ReduceOp) -> Option<codec_host::Result<()>>;
    /// Appends the values of `range`, little-endian, to `out`.
    fn write_le(&self, range: Range<usize>, out: &mut Vec<u8>) -> codec_host::Result<()>;
    /// Reads little-endian values (exactly `range.len()`) into `range`.
    fn read_le(&mut self, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()>;
    /// `self[range][i] = self[range][i] op src[i]`, with the backend's reduction kernel.
    fn reduce(&mut self, backend: &Backend, op: ReduceOp, range: Range<usize>, src: &Self) -> codec_host::Result<()>;
    /// Runs `f` on `self[range]` as a buffer of its own, indexed from 0.
    fn view<R>(&self, range: Range<usize>, f: impl FnOnce(&Self) -> R) -> R;
    /// Runs `f` on `self[read]` and `self[write]` at once, each a buffer of its own
    /// indexed from 0. The ranges must not overlap.
    fn split_disjoint<R>(&mut self, read: Range<usize>, write: Range<usize>, f: impl FnOnce(&Self, &mut Self) -> R) -> R;
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
    #[cfg(feature = "cuda")]
    const DEVICE: bool = false;

    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn zeros(&self, n: usize) -> codec_host::Result<Vec<T>> {
        Ok(vec![T::default(); n])
    }

    fn scratch(&self, n: usize) -> codec_host::Result<Vec<T>> {
        Ok(spare::take_values(n))
    }

    fn keep(buf: Vec<T>) {
        spare::give_values(buf);
    }

    fn finite_range(&self, range: Range<usize>) -> codec_host::Result<Option<(f64, f64)>> {
        Ok(T::finite_range(&self[range]))
    }

    fn compress_each(&self, codec: &HostCodec, plan: &[(Range<usize>, bool)], _: usize, emit: &mut dyn FnMut(usize, codec_host::Result<Coded<'_>>)) {
        for (i, (range, compress)) in plan.iter().enumerate() {
            if !compress {
                emit(i, Ok(Coded::Skip));
                continue;
            }
            match codec.compress(&self[range.clone()]) {
                Ok(Encoded::Stream(stream)) => emit(i, Ok(Coded::Stream(&stream))),
                Ok(Encoded::Refused) => emit(i, Ok(Coded::Refused)),
                Err(e) => emit(i, Err(e)),
            }
        }
    }

    fn decompress(&mut self, codec: &HostCodec, bytes: &[u8], range: Range<usize>) -> codec_host::Result<()> {
        // What the algorithms decode into a buffer is not read again soon: final values,
        // or a block the next step compresses from memory; SZx on the CPU, the only
        // decoder with a choice, reduces through `decompress_reduce`, never through a
        // scratch buffer. A piece of a buffer too large for the caches is therefore
        // written around them (one pass over its lines instead of a read and a write).
        let writes = match size_of_val(self) >= STREAMING_MIN_BYTES {
            true => OutputWrites::Streaming,
            false => OutputWrites::BySize,
        };
        codec.decompress(bytes, &mut self[range], writes)
    }

    fn decompress_reduce(&mut self, codec: &HostCodec, streams: &[&[u8]], range: Range<usize>, init: Option<&Self>, op: ReduceOp) -> Option<codec_host::Result<()>> {
        codec.reduces_as_it_decodes().then(|| codec.decompress_reduce(streams, init.map(|x| &x[range.clone()]), &mut self[range], op))
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

    fn view<R>(&self, range: Range<usize>, f: impl FnOnce(&[T]) -> R) -> R {
        f(&self[range])
    }

    fn split_disjoint<R>(&mut self, read: Range<usize>, write: Range<usize>, f: impl FnOnce(&[T], &mut [T]) -> R) -> R {
        if read.end <= write.start {
            let (head, tail) = self.split_at_mut(write.start);
            f(&head[read], &mut tail[..write.len()])
        } else {
            assert!(write.end <= read.start, "split of overlapping ranges {read:?} and {write:?}");
            let (head, tail) = self.split_at_mut(read.start);
            f(&tail[..read.len()], &mut head[write])
        }
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

#[cfg(test)]
mod tests {
    use super::Place;

    #[test]
    fn split_hands_out_the_two_ranges_whichever_comes_first() {
        let mut v: Vec<f32> = (0..10).map(|i| i as f32).collect();
        let seen = v.split_disjoint(6..9, 1..4, |read, write| {
            write.copy_from_slice(read);
            read.to_vec()
        });
        assert_eq!(seen, [6.0, 7.0, 8.0]);
        assert_eq!(v, [0.0, 6.0, 7.0, 8.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        v.split_disjoint(0..2, 2..4, |read, write| write.copy_from_slice(read));
        assert_eq!(v[..4], [0.0, 6.0, 0.0, 6.0]);
        // Empty ranges (empty blocks) sit at the edge of their neighbours.
        assert_eq!(v.split_disjoint(4..4, 4..6, |read, write| (read.len(), write.to_vec())), (0, vec![4.0, 5.0]));
        assert_eq!(v.split_disjoint(4..6, 4..4, |read, write| (read.to_vec(), write.len())), (vec![4.0, 5.0], 0));
    }

    #[test]
    #[should_panic(expected = "overlapping")]
    fn split_refuses_overlapping_ranges() {
        let mut v = [0f64; 8];
        v[..].split_disjoint(2..5, 4..6, |_, _| ());
    }
}

#[cfg(feature = "cuda")]
pub(crate) mod device {
    //! Device slices: every operation is queued on the rank's one stream, in the
    //! algorithms' order (so the result is the host path's exactly). Copies, zeroing and
    //! reductions are not waited for; what reads the values on the host (a download, a
    //! decode's status) waits for the stream first, and the compression streams wait for
    //! it on the device (an event). A call waits for the caller's work on the legacy
    //! stream when it starts ([`enter`]) and for its own stream before it returns
    //! ([`leave`]).

    use core::ops::Range;
    use std::cell::RefCell;
    use std::collections::VecDeque;

    use codec_host::cuda::{CudaBackend, DeviceStream, GpuEvent, GpuStream};
    use codec_host::{extend_le, read_le, Backend, Error, Shape};
    use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice, LockedBuffer};

    use super::{Coded, Place};
    use crate::codec_port::HostCodec;
    use crate::CodecBackend;
    use crate::{ReduceOp, Value};

    /// The rank's CUDA backend (the calling thread's, as `CodecBackend::Cuda` resolves
    /// it for every call with device buffers) and its stream.
    struct Rank {
        cuda: &'static CudaBackend,
        stream: GpuStream,
    }

    /// This thread's [`Rank`], made on first use.
    fn rank() -> codec_host::Result<&'static Rank> {
        thread_local! {
            static RANK: std::cell::OnceCell<&'static Rank> = const { std::cell::OnceCell::new() };
        }
        if let Some(r) = RANK.with(|r| r.get().copied()) {
            return Ok(r);
        }
        let backend = CodecBackend::Cuda.resolve().map_err(|e| Error::NoDevice(e.to_string()))?;
        let cuda = backend.cuda_backend().ok_or_else(|| Error::NoDevice(format!("device buffers need the CUDA backend; this is {}", backend.describe())))?;
        let r: &'static Rank = Box::leak(Box::new(Rank { cuda, stream: cuda.stream()? }));
        RANK.with(|c| c.set(r).ok());
        Ok(r)
    }

    /// Orders the call's work after what the caller queued on the legacy stream (cust's
    /// copies into the send buffer), without a host wait.
    pub(crate) fn enter() -> codec_host::Result<()> {
        rank()?.stream.wait_for_legacy()
    }

    /// Waits for the call's queued work, so that the receive buffer is complete when the
    /// call returns.
    pub(crate) fn leave() -> codec_host::Result<()> {
        rank()?.stream.synchronize()
    }

    /// At least `n` compression streams of this thread (made once, kept; the pipelines
    /// use the first `n`), each made to wait for `ready` before its next work.
    fn stream_pool(backend: &Backend, n: usize, ready: &GpuEvent) -> codec_host::Result<&'static [GpuStream]> {
        thread_local! {
            static POOL: RefCell<&'static [GpuStream]> = const { RefCell::new(&[]) };
        }
        let mut pool = POOL.with(|p| *p.borrow());
        if pool.len() < n {
            pool = Box::leak((0..n).map(|_| backend.stream()).collect::<codec_host::Result<Vec<_>>>()?.into_boxed_slice());
            POOL.with(|p| *p.borrow_mut() = pool);
        }
        let pool = &pool[..n];
        pool.iter().try_for_each(|s| s.wait_for(ready))?;
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

    /// `d[range]` on the host, once the rank's stream has written it.
    fn download<T: Value>(d: &DeviceSlice<T>, range: Range<usize>) -> codec_host::Result<Vec<T>> {
        let mut host = vec![T::default(); range.len()];
        if !range.is_empty() {
            let r = rank()?;
            r.cuda.download_on(&r.stream, &d.index(range), &mut host)?;
        }
        Ok(host)
    }

    /// Queues the copy of `host` into `d[range]` on the rank's stream (pageable memory:
    /// the driver has staged it when this returns).
    fn upload<T: Value>(d: &mut DeviceSlice<T>, range: Range<usize>, host: &[T]) -> codec_host::Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        let r = rank()?;
        r.cuda.upload_into_on(&r.stream, host, &mut d.index(range))
    }

    impl<T: Value> Place<T> for DeviceSlice<T> {
        type Owned = DeviceBuffer<T>;
        const DEVICE: bool = true;

        fn len(&self) -> usize {
            DeviceSlice::len(self)
        }

        fn zeros(&self, n: usize) -> codec_host::Result<DeviceBuffer<T>> {
            let r = rank()?;
            r.cuda.zeroed_on(&r.stream, n)
        }

        /// The range of a relative bound: no kernel computes it, so the values come to
        /// the host for this one pass (as in codec-host's own device SZx path).
        fn finite_range(&self, range: Range<usize>) -> codec_host::Result<Option<(f64, f64)>> {
            Ok(T::finite_range(&download(self, range)?))
        }

        fn compress_each(&self, codec: &HostCodec, plan: &[(Range<usize>, bool)], streams: usize, emit: &mut dyn FnMut(usize, codec_host::Result<Coded<'_>>)) {
            let backend = codec.backend;
            // The compression streams start where the rank's stream is now.
            let ready = rank().and_then(|r| r.stream.record());
            let streams = match ready.and_then(|ready| stream_pool(backend, streams.max(1), &ready)) {
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
            let s = &rank()?.stream;
            let input = backend.upload_stream(s, bytes)?;
            let mut piece = self.index(range);
            codec_host::decompress_on(&input, &mut piece, backend, s)?.wait()
        }

        /// No device decoder reduces as it decodes.
        fn decompress_reduce(&mut self, _: &HostCodec, _: &[&[u8]], _: Range<usize>, _: Option<&Self>, _: ReduceOp) -> Option<codec_host::Result<()>> {
            None
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

        /// Waited for: `src` is the caller's scratch, freed when this returns.
        fn reduce(&mut self, _: &Backend, op: ReduceOp, range: Range<usize>, src: &DeviceSlice<T>) -> codec_host::Result<()> {
            let r = rank()?;
            r.cuda.reduce_on(&r.stream, op, &mut self.index(range), src)?;
            r.stream.synchronize()
        }

        fn view<R>(&self, range: Range<usize>, f: impl FnOnce(&DeviceSlice<T>) -> R) -> R {
            f(&self.index(range))
        }

        fn split_disjoint<R>(&mut self, read: Range<usize>, write: Range<usize>, f: impl FnOnce(&DeviceSlice<T>, &mut DeviceSlice<T>) -> R) -> R {
            assert!(read.end <= write.start || write.end <= read.start, "split of overlapping ranges {read:?} and {write:?}");
            f(&self.index(read), &mut self.index(write))
        }

        fn copy_range(&mut self, to: Range<usize>, src: &DeviceSlice<T>, from: Range<usize>) -> codec_host::Result<()> {
            if to.len() != from.len() {
                return Err(Error::BadDims(format!("copy of {} values into {}", from.len(), to.len())));
            }
            if to.is_empty() {
                return Ok(());
            }
            let r = rank()?;
            r.cuda.copy_on(&r.stream, &src.index(from), &mut self.index(to))
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
