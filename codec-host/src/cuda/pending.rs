//! Work in flight and its results: compressed streams in device memory
//! ([`DeviceStream`]) and the handles of queued compressions and decompressions
//! ([`PendingCompress`], [`PendingDecompress`]).
//!
//! A handle keeps every buffer its queued work uses; dropping it unwaited waits for the
//! work first, so no buffer is freed under a running kernel.

use std::any::Any;
use std::marker::PhantomData;

use codec_kernels::szx::coding::SIZE_ENTRY_BYTES;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};

use super::{gpu, DeviceScan, GpuElement, GpuEvent};
use crate::szx::SzxHeader;
use crate::zfp::words::bytes_from_words;
use crate::{ElemType, Error, Result, Shape};

/// What a device stream's header says, kept on the host.
pub(crate) enum Format {
    Zfp {
        header: crate::zfp::Header,
        header_bits: usize,
        /// Fixed accuracy: the stream offset of every block, when the encoder gave them.
        index: Option<DeviceBuffer<u64>>,
    },
    Szx(SzxHeader),
}

/// A compressed stream in device memory: its bytes, zero-padded to whole 64-bit words,
/// and its header's contents on the host.
pub struct DeviceStream {
    words: DeviceBuffer<u64>,
    len: usize,
    format: Format,
    /// An upload's host words and the event after its copy.
    upload: Option<(Vec<u64>, GpuEvent)>,
}

impl DeviceStream {
    pub(crate) fn new(words: DeviceBuffer<u64>, len: usize, format: Format, upload: Option<(Vec<u64>, GpuEvent)>) -> Self {
        DeviceStream { words, len, format, upload }
    }

    /// Length of the stream in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a stream of no bytes (never produced by a codec).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element type of the values.
    pub fn elem(&self) -> ElemType {
        match &self.format {
            Format::Zfp { header, .. } => header.elem,
            Format::Szx(h) => h.elem,
        }
    }

    /// The shape of the values.
    pub fn shape(&self) -> Shape {
        match &self.format {
            Format::Zfp { header, .. } => header.shape,
            Format::Szx(h) => h.shape,
        }
    }

    /// The number of values.
    pub fn values(&self) -> usize {
        self.shape().len()
    }

    /// The stream's bytes as device words (the last one zero-padded).
    pub fn words(&self) -> &DeviceSlice<u64> {
        &self.words
    }

    pub(crate) fn format(&self) -> &Format {
        &self.format
    }

    /// Copies the stream to the host (waiting for its upload, if it is one).
    pub fn to_host(&self) -> Result<Vec<u8>> {
        if let Some((_, ready)) = &self.upload {
            ready.synchronize()?;
        }
        let mut words = vec![0u64; self.len.div_ceil(8)];
        self.words.index(0..words.len()).copy_to(&mut words[..]).map_err(gpu("cuMemcpyDtoH"))?;
        let mut bytes = bytes_from_words(words);
        bytes.truncate(self.len);
        Ok(bytes)
    }
}

/// Queued work: the event after it and the buffers it uses. Dropping it waits for the
/// event, then frees the buffers.
pub(crate) struct InFlight {
    done: GpuEvent,
    keep: Vec<Box<dyn Any>>,
}

impl InFlight {
    pub(crate) fn new(done: GpuEvent, keep: Vec<Box<dyn Any>>) -> Self {
        InFlight { done, keep }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Freeing device memory under queued work is a use after free on the device.
        if self.done.synchronize().is_err() {
            // The context is broken; the buffers can only be leaked safely.
            std::mem::forget(std::mem::take(&mut self.keep));
        }
    }
}

/// How a compressed stream's length becomes known.
pub(crate) enum Length {
    /// Before encoding (ZFP fixed rate), in bytes.
    Bytes(usize),
    /// ZFP fixed accuracy: the scan total is the stream's length in bits.
    ZfpBits(DeviceScan),
    /// SZx: `fixed` bytes (prefix and state bytes) plus a size entry per coded block
    /// plus the payloads.
    Szx { fixed: usize, coded: DeviceScan, sizes: DeviceScan },
}

/// A compression's queued work, without the input it reads.
pub(crate) struct Queued {
    pub(crate) inflight: InFlight,
    pub(crate) words: DeviceBuffer<u64>,
    pub(crate) length: Length,
    pub(crate) format: Format,
    pub(crate) status: DeviceBuffer<u32>,
}

enum Input<'a, T: GpuElement> {
    Borrowed(&'a DeviceSlice<T>),
    Owned(DeviceBuffer<T>),
}

/// A compression queued on a stream: poll [`is_ready`](Self::is_ready), then
/// [`wait`](Self::wait) for the stream in device memory or
/// [`wait_host`](Self::wait_host) for its bytes.
pub struct PendingCompress<'a, T: GpuElement> {
    // Dropped first: waits for the work before the input may be freed.
    q: Queued,
    input: Input<'a, T>,
}

/// Reads one device value (the work writing it is done).
fn read_one(v: &DeviceSlice<u64>) -> Result<u64> {
    let mut x = [0u64];
    v.copy_to(&mut x[..]).map_err(gpu("cuMemcpyDtoH"))?;
    Ok(x[0])
}

impl<'a, T: GpuElement> PendingCompress<'a, T> {
    pub(crate) fn new(q: Queued, input: &'a DeviceSlice<T>) -> Self {
        PendingCompress { q, input: Input::Borrowed(input) }
    }

    /// The same work, owning its (uploaded) input.
    pub(crate) fn owning(q: Queued, input: DeviceBuffer<T>) -> PendingCompress<'static, T> {
        PendingCompress { q, input: Input::Owned(input) }
    }

    /// True once the stream is complete (does not block).
    pub fn is_ready(&self) -> Result<bool> {
        self.q.inflight.done.is_complete()
    }

    /// Waits for the work and returns the stream, in device memory. This is where the
    /// host learns the stream's length (a few bytes copied back): ZFP fixed accuracy and
    /// SZx know it only once their scans have run.
    pub fn wait(self) -> Result<DeviceStream> {
        let PendingCompress { q, input } = self;
        q.inflight.done.synchronize()?;
        let mut status = [0u32];
        q.status.copy_to(&mut status[..]).map_err(gpu("cuMemcpyDtoH"))?;
        if status[0] != 0 {
            return Err(match q.format {
                Format::Zfp { .. } => {
                    let data = match &input {
                        Input::Borrowed(d) => d,
                        Input::Owned(d) => &**d,
                    };
                    let mut host = vec![T::default(); data.len()];
                    data.copy_to(&mut host[..]).map_err(gpu("cuMemcpyDtoH"))?;
                    Error::NonFinite { index: host.iter().position(|v| !v.finite()).unwrap_or(0) }
                }
                Format::Szx(_) => Error::Gpu("SZx encoder: a block's plan changed between phases".into()),
            });
        }
        let len = match &q.length {
            Length::Bytes(b) => *b,
            Length::ZfpBits(scan) => (read_one(&scan.total)? as usize).div_ceil(64) * 8,
            Length::Szx { fixed, coded, sizes } => {
                fixed + SIZE_ENTRY_BYTES * read_one(&coded.total)? as usize + read_one(&sizes.total)? as usize
            }
        };
        if len > q.words.len() * 8 {
            return Err(Error::Gpu(format!("stream of {len} bytes exceeds its {}-word buffer", q.words.len())));
        }
        let Queued { inflight, words, length, mut format, .. } = q;
        // The fixed-accuracy scan's offsets are the stream's decoding index.
        if let (Format::Zfp { index, .. }, Length::ZfpBits(scan)) = (&mut format, length) {
            *index = Some(scan.offsets);
        }
        drop(inflight);
        Ok(DeviceStream::new(words, len, format, None))
    }

    /// Waits for the work and returns the stream's bytes in host memory.
    pub fn wait_host(self) -> Result<Vec<u8>> {
        self.wait()?.to_host()
    }
}

/// A decompression queued on a stream; [`wait`](Self::wait) for its verdict.
pub struct PendingDecompress<'a> {
    inflight: InFlight,
    status: DeviceBuffer<u32>,
    /// The error a failure flag means.
    failure: Error,
    _io: PhantomData<&'a mut ()>,
}

impl PendingDecompress<'_> {
    pub(crate) fn new(inflight: InFlight, status: DeviceBuffer<u32>, failure: Error) -> Self {
        PendingDecompress { inflight, status, failure, _io: PhantomData }
    }

    /// True once the values are written (does not block).
    pub fn is_ready(&self) -> Result<bool> {
        self.inflight.done.is_complete()
    }

    /// Waits for the work; an error if the stream was corrupt (the output is then
    /// unspecified).
    pub fn wait(self) -> Result<()> {
        self.inflight.done.synchronize()?;
        let mut status = [0u32];
        self.status.copy_to(&mut status[..]).map_err(gpu("cuMemcpyDtoH"))?;
        if status[0] != 0 {
            return Err(self.failure.clone());
        }
        Ok(())
    }
}
