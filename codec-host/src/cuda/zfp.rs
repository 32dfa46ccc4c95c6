//! ZFP on the GPU. Fixed rate as cuZFP does it: one thread per block, each OR-ing its
//! bits into a zeroed stream at `header + b * maxbits`. Fixed accuracy in phases: each
//! block into a worst-case slot with its length, an exclusive scan of the lengths, a
//! compaction of every slot to its offset. Both give the CPU's stream byte for byte
//! (`tests/zfp_gpu_identity.rs` runs the same phases on the CPU executor). Decoding a
//! fixed-accuracy stream goes through its per-block offsets: the ones the encoder
//! returned, or rebuilt on the host by one sequential pass over the stream.

use cust::launch;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceSlice};

use codec_kernels::bitstream::BitWriter;
use codec_kernels::gpu_phases::zfp::block_offsets_body;
use codec_kernels::grid::LaunchConfig;
use codec_kernels::kernels::zfp_entry;
use codec_kernels::shared::SharedOut;
use codec_kernels::zfp::variable::max_block_bits;
use codec_kernels::zfp::{Field, Params, D1, D2, D3};

use super::{gpu, CudaBackend, GpuElement, GpuEvent, GpuStream};
use crate::elementwise::ONE_THREAD;
use crate::zfp::layout::field_of;
use crate::zfp::words::{bytes_from_words, words_from_bytes};
use crate::zfp::{params_for, Header};
use crate::{Codec, Error, Result, Shape, StreamInfo};

/// Threads per block of the ZFP launches (cuZFP's choice).
const ZFP_BLOCK: u32 = 128;

/// Where the finished stream's length comes from.
enum Length {
    /// Fixed rate: known before encoding.
    Bits(usize),
    /// Fixed accuracy: the scan's total, on the device.
    Device(DeviceBuffer<u64>),
}

/// A compression queued on a stream; [`wait`](Self::wait) for its bytes.
pub struct PendingZfp<'a, T: GpuElement> {
    data: &'a DeviceSlice<T>,
    words: DeviceBuffer<u64>,
    length: Length,
    /// Fixed accuracy: the stream offset of every block (the decoding index).
    offsets: Option<DeviceBuffer<u64>>,
    status: DeviceBuffer<u32>,
    done: GpuEvent,
    /// Buffers the queued launches use, freed only once they are done.
    _work: Vec<DeviceBuffer<u64>>,
    _lens: Option<DeviceBuffer<u32>>,
    _header: Vec<u64>,
}

impl<T: GpuElement> PendingZfp<'_, T> {
    /// True once the stream is complete (does not block).
    pub fn is_ready(&self) -> Result<bool> {
        self.done.is_complete()
    }

    /// Waits for the stream and returns its bytes.
    pub fn wait(self) -> Result<Vec<u8>> {
        self.wait_with_index().map(|(bytes, _)| bytes)
    }

    /// Waits for the stream; returns its bytes and, for fixed accuracy, the bit offset
    /// of every block (what [`CudaBackend::zfp_decompress_into`] takes as `index`).
    pub fn wait_with_index(self) -> Result<(Vec<u8>, Option<Vec<u64>>)> {
        self.done.synchronize()?;
        let mut status = [0u32];
        self.status.copy_to(&mut status[..]).map_err(gpu("cuMemcpyDtoH"))?;
        if status[0] != 0 {
            let mut host = vec![T::default(); self.data.len()];
            self.data.copy_to(&mut host[..]).map_err(gpu("cuMemcpyDtoH"))?;
            return Err(Error::NonFinite { index: host.iter().position(|v| !v.finite()).unwrap_or(0) });
        }
        let bits = match &self.length {
            Length::Bits(b) => *b,
            Length::Device(total) => {
                let mut t = [0u64];
                total.copy_to(&mut t[..]).map_err(gpu("cuMemcpyDtoH"))?;
                t[0] as usize
            }
        };
        let mut words = vec![0u64; bits.div_ceil(64)];
        if words.len() > self.words.len() {
            return Err(Error::Gpu(format!("stream of {bits} bits exceeds its {}-word buffer", self.words.len())));
        }
        self.words.index(0..words.len()).copy_to(&mut words[..]).map_err(gpu("cuMemcpyDtoH"))?;
        let index = match &self.offsets {
            Some(o) => Some(o.as_host_vec().map_err(gpu("cuMemcpyDtoH"))?),
            None => None,
        };
        Ok((bytes_from_words(words), index))
    }
}

/// The kernel `kind` for `T` and the shape's dimensionality.
fn kernel<T: GpuElement>(kind: &str, dims: usize) -> Result<&'static str> {
    zfp_entry(kind, &T::TYPE.to_string(), dims).ok_or_else(|| Error::Gpu(format!("no zfp {kind} kernel for {} {dims}D", T::TYPE)))
}

/// The header's bits as words (the stream's first words before the blocks go in).
fn header_words(header: &Header) -> Result<Vec<u64>> {
    let mut words = vec![0u64; header.bits().div_ceil(64)];
    let mut w = BitWriter::new(&mut words[..], 0);
    header.write(&mut w)?;
    w.flush();
    Ok(words)
}

/// Bound on the bits a block takes under `p` for `T` in `dims` dimensions.
fn block_bound<T: GpuElement>(p: &Params, dims: usize) -> usize {
    match dims {
        1 => max_block_bits::<T, D1>(p),
        2 => max_block_bits::<T, D2>(p),
        _ => max_block_bits::<T, D3>(p),
    }
}

fn check_len(shape: &Shape, len: usize) -> Result<()> {
    if shape.is_empty() {
        return Err(Error::ZeroSize);
    }
    match shape.checked_len() {
        Some(n) if n == len => Ok(()),
        _ => Err(Error::BadDims(format!("shape {shape} does not hold {len} values"))),
    }
}

impl CudaBackend {
    fn zfp_grid(nblocks: usize) -> (u32, u32) {
        let cfg = LaunchConfig::for_items(nblocks, ZFP_BLOCK);
        (cfg.grid_dim, cfg.block_dim)
    }

    /// Queues the ZFP compression of `data` (on the device, shape `shape`) on `stream`.
    /// Several can be in flight on several streams at once.
    pub fn zfp_compress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        codec: &Codec,
        data: &'a DeviceSlice<T>,
        shape: Shape,
    ) -> Result<PendingZfp<'a, T>> {
        check_len(&shape, data.len())?;
        let dims = shape.ndims();
        let header = Header { elem: T::TYPE, shape, params: params_for(codec, T::TYPE, dims)? };
        let hw = header_words(&header)?;
        let p = header.params;
        let field: Field = field_of(&shape);
        let nblocks = field.block_count();
        let [nx, ny, nz] = field.n;
        let (minbits, maxbits, maxprec, minexp) = (p.minbits, p.maxbits, p.maxprec, p.minexp);
        let header_bits = header.bits();
        let status = self.zeroed_on::<u32>(stream, 1)?;
        let (grid, block) = Self::zfp_grid(nblocks);
        let (dp, n, sp) = (data.as_device_ptr(), data.len(), status.as_device_ptr());
        let s = &stream.inner;
        let fixed_rate = p.minbits == p.maxbits;
        // Fixed rate: the stream's exact size. Fixed accuracy: every block at its bound.
        let slot_bits = block_bound::<T>(&p, dims).div_ceil(64) * 64;
        let capacity_bits = if fixed_rate { header_bits + nblocks * maxbits as usize } else { header_bits + nblocks * slot_bits };
        let words = self.zeroed_on::<u64>(stream, capacity_bits.div_ceil(64))?;
        // SAFETY: the header words are staged (pageable) before the call returns and
        // kept in the pending stream; the copy precedes the kernels on `stream`.
        unsafe { words.index(0..hw.len()).async_copy_from(&hw[..], s) }.map_err(gpu("cuMemcpyHtoDAsync"))?;
        let (wp, n_words) = (words.as_device_ptr(), words.len());
        if fixed_rate {
            let f = self.function(kernel::<T>("rate_encode", dims)?)?;
            // SAFETY: the arguments match zfp_rate_encode_* in codec-kernels' entry
            // module; every pointer is a live device buffer of the length beside it.
            unsafe {
                launch!(f<<<grid, block, 0, s>>>(dp, n, nx, ny, nz, minbits, maxbits, maxprec, minexp, header_bits, wp, n_words, sp))
            }
            .map_err(gpu("cuLaunchKernel zfp_rate_encode"))?;
            let done = stream.record()?;
            return Ok(PendingZfp {
                data,
                words,
                length: Length::Bits(capacity_bits),
                offsets: None,
                status,
                done,
                _work: Vec::new(),
                _lens: None,
                _header: hw,
            });
        }
        let slots = self.zeroed_on::<u64>(stream, nblocks * slot_bits / 64)?;
        let lens = self.zeroed_on::<u32>(stream, nblocks)?;
        let (slp, n_slot_words, lp) = (slots.as_device_ptr(), slots.len(), lens.as_device_ptr());
        let f = self.function(kernel::<T>("acc_slots", dims)?)?;
        // SAFETY: as above, for zfp_acc_slots_*.
        unsafe {
            launch!(f<<<grid, block, 0, s>>>(dp, n, nx, ny, nz, minbits, maxbits, maxprec, minexp, slot_bits, slp, n_slot_words, lp, nblocks, sp))
        }
        .map_err(gpu("cuLaunchKernel zfp_acc_slots"))?;
        let scan = self.exclusive_scan_on(stream, &lens, header_bits as u64)?;
        let op = scan.offsets.as_device_ptr();
        let f = self.function("zfp_acc_compact")?;
        // SAFETY: as above, for zfp_acc_compact.
        unsafe { launch!(f<<<grid, block, 0, s>>>(slp, n_slot_words, slot_bits, lp, op, nblocks, wp, n_words)) }
            .map_err(gpu("cuLaunchKernel zfp_acc_compact"))?;
        let done = stream.record()?;
        Ok(PendingZfp {
            data,
            words,
            length: Length::Device(scan.total),
            offsets: Some(scan.offsets),
            status,
            done,
            _work: vec![slots, scan._partials],
            _lens: Some(lens),
            _header: hw,
        })
    }

    /// Compresses host data on the GPU (upload, encode, download).
    pub fn zfp_compress<T: GpuElement>(&self, codec: &Codec, data: &[T], shape: Shape) -> Result<Vec<u8>> {
        check_len(&shape, data.len())?;
        let stream = self.stream()?;
        let d = self.upload_on(&stream, data)?;
        self.zfp_compress_on(&stream, codec, &d, shape)?.wait()
    }

    /// Compresses several arrays at once, each on its own stream (ZFP-OPT's
    /// multi-stream scheme: the uploads, kernels and downloads of different arrays
    /// overlap). Returns the streams in input order.
    pub fn zfp_compress_batch<T: GpuElement>(&self, codec: &Codec, inputs: &[(&[T], Shape)]) -> Result<Vec<Vec<u8>>> {
        let streams = inputs.iter().map(|_| self.stream()).collect::<Result<Vec<_>>>()?;
        let mut uploads = Vec::with_capacity(inputs.len());
        for ((data, shape), s) in inputs.iter().zip(&streams) {
            check_len(shape, data.len())?;
            uploads.push(self.upload_on(s, data)?);
        }
        let pending = inputs
            .iter()
            .zip(&streams)
            .zip(&uploads)
            .map(|(((_, shape), s), d)| self.zfp_compress_on(s, codec, d, *shape))
            .collect::<Result<Vec<_>>>()?;
        pending.into_iter().map(PendingZfp::wait).collect()
    }

    /// Decodes a ZFP stream into `out` on the GPU. `index` is the per-block offsets of a
    /// fixed-accuracy stream (from [`PendingZfp::wait_with_index`]); without it they
    /// are rebuilt on the host by one sequential pass.
    pub fn zfp_decompress_into<T: GpuElement>(&self, stream_bytes: &[u8], out: &mut [T], index: Option<&[u64]>) -> Result<StreamInfo> {
        let info = crate::inspect(stream_bytes)?;
        if info.elem != T::TYPE {
            return Err(Error::TypeMismatch { stream: info.elem, requested: T::TYPE });
        }
        let (header, header_bits) = Header::parse(stream_bytes)?;
        let n = header.shape.checked_len().ok_or_else(|| Error::BadDims(format!("shape {} overflows", header.shape)))?;
        if out.len() < n {
            return Err(Error::BufferTooSmall { needed: n, got: out.len() });
        }
        let out = &mut out[..n];
        let dims = header.shape.ndims();
        let field = field_of(&header.shape);
        let nblocks = field.block_count();
        let [nx, ny, nz] = field.n;
        let p = header.params;
        let (minbits, maxbits, maxprec, minexp) = (p.minbits, p.maxbits, p.maxprec, p.minexp);
        let words = words_from_bytes(stream_bytes);
        let stream = self.stream()?;
        let d_words = self.upload_on(&stream, &words)?;
        let d_out = self.zeroed_on::<T>(&stream, n)?;
        let status = self.zeroed_on::<u32>(&stream, 1)?;
        let (wp, n_words, outp, sp) = (d_words.as_device_ptr(), d_words.len(), d_out.as_device_ptr(), status.as_device_ptr());
        let (grid, block) = Self::zfp_grid(nblocks);
        let s = &stream.inner;
        // The index buffer lives until the decode has been waited for.
        let _index = if p.minbits == p.maxbits {
            let f = self.function(kernel::<T>("rate_decode", dims)?)?;
            // SAFETY: the arguments match zfp_rate_decode_*; `inspect` checked that the
            // stream holds every block.
            unsafe {
                launch!(f<<<grid, block, 0, s>>>(wp, n_words, nx, ny, nz, minbits, maxbits, maxprec, minexp, header_bits, outp, n, sp))
            }
            .map_err(gpu("cuLaunchKernel zfp_rate_decode"))?;
            None
        } else {
            let host_index = match index {
                Some(i) if i.len() == nblocks => i.to_vec(),
                Some(i) => return Err(Error::BadDims(format!("index of {} offsets for {nblocks} blocks", i.len()))),
                None => block_offsets::<T>(&words, header_bits, &p, dims, nblocks, stream_bytes.len())?,
            };
            let offsets = self.upload_on(&stream, &host_index)?;
            let op = offsets.as_device_ptr();
            let f = self.function(kernel::<T>("acc_decode", dims)?)?;
            // SAFETY: the arguments match zfp_acc_decode_*; the kernel bounds every read
            // by `n_words` and flags blocks that run past it.
            unsafe {
                launch!(f<<<grid, block, 0, s>>>(wp, n_words, op, nblocks, nx, ny, nz, minbits, maxbits, maxprec, minexp, outp, n, sp))
            }
            .map_err(gpu("cuLaunchKernel zfp_acc_decode"))?;
            Some(offsets)
        };
        let mut st = [0u32];
        self.download_on(&stream, &status, &mut st[..])?;
        if st[0] != 0 {
            return Err(Error::Truncated { needed: stream_bytes.len() + 1, got: stream_bytes.len() });
        }
        self.download_on(&stream, &d_out, out)?;
        Ok(info)
    }
}

/// The offset of every block of a fixed-accuracy stream, by one sequential pass on the
/// host (the body `block_offsets_body` on a one-thread grid).
fn block_offsets<T: GpuElement>(words: &[u64], start: usize, p: &Params, dims: usize, nblocks: usize, len: usize) -> Result<Vec<u64>> {
    let mut offsets = vec![0u64; nblocks];
    let mut end = [0u64];
    let (o, e) = (SharedOut::new(&mut offsets[..]), SharedOut::new(&mut end[..]));
    let ok = match dims {
        1 => block_offsets_body::<T, D1>(ONE_THREAD, words, start, p, &o, &e),
        2 => block_offsets_body::<T, D2>(ONE_THREAD, words, start, p, &o, &e),
        _ => block_offsets_body::<T, D3>(ONE_THREAD, words, start, p, &o, &e),
    };
    if !ok || end[0] as usize > len * 8 {
        return Err(Error::Truncated { needed: (end[0] as usize).div_ceil(8).max(len + 1), got: len });
    }
    Ok(offsets)
}
