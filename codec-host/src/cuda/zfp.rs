//! ZFP on the GPU. Fixed rate as cuZFP does it: one thread per block, each OR-ing its
//! bits into a zeroed stream at `header + b * maxbits`. Fixed accuracy in phases: each
//! block into a worst-case slot with its length, an exclusive scan of the lengths, a
//! compaction of every slot to its offset. Both give the CPU's stream byte for byte
//! (`tests/zfp_gpu_identity.rs` runs the same phases on the CPU executor). Decoding a
//! fixed-accuracy stream goes through its per-block offsets: the ones the encoder
//! produced, or rebuilt on the device by one sequential pass over the stream
//! (`zfp_acc_index_*`, one thread).

use cust::memory::DeviceSlice;

use codec_kernels::bitstream::BitWriter;
use codec_kernels::kernels::{
    ZfpAccCompact, ZfpAccCompactParams, ZfpAccDecodeKernel, ZfpAccDecodeParams, ZfpAccIndexKernel, ZfpAccIndexParams, ZfpAccSlotsKernel,
    ZfpAccSlotsParams, ZfpRateDecodeKernel, ZfpRateDecodeParams, ZfpRateEncodeKernel, ZfpRateEncodeParams,
};
use codec_kernels::zfp::variable::max_block_bits;
use codec_kernels::zfp::{Field, Params, D1, D2, D3};

use super::pending::{Format, InFlight, Length, Queued};
use super::{check_len, codec_grid, dptr, CudaBackend, DeviceStream, GpuElement, GpuStream, PendingCompress, PendingDecompress};
use crate::zfp::layout::field_of;
use crate::zfp::{params_for, Header};
use crate::{Error, Result, Shape, ZfpMode};

/// Launches the kernel that selection trait `$sel` picks for `$t` in `$dims` dimensions.
macro_rules! launch_by_dims {
    ($gpu:expr, $sel:ident, $t:ty, $dims:expr, $stream:expr, $grid:expr, $block:expr, $p:expr) => {
        match $dims {
            1 => $gpu.launch::<<$t as $sel<D1>>::K>($stream, $grid, $block, $p),
            2 => $gpu.launch::<<$t as $sel<D2>>::K>($stream, $grid, $block, $p),
            _ => $gpu.launch::<<$t as $sel<D3>>::K>($stream, $grid, $block, $p),
        }
    };
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


impl CudaBackend {
    /// Queues the ZFP compression of `data` (on the device, shape `shape`) on `stream`.
    pub(crate) fn zfp_compress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        mode: ZfpMode,
        data: &'a DeviceSlice<T>,
        shape: Shape,
    ) -> Result<PendingCompress<'a, T>> {
        Ok(PendingCompress::new(self.zfp_queue(stream, mode, data, shape)?, data))
    }

    /// Queues the compression; the caller keeps `data` alive until it is done.
    pub(crate) fn zfp_queue<T: GpuElement>(&self, stream: &GpuStream, mode: ZfpMode, data: &DeviceSlice<T>, shape: Shape) -> Result<Queued> {
        check_len(&shape, data.len())?;
        let dims = shape.ndims();
        let header = Header { elem: T::TYPE, shape, params: params_for(mode, T::TYPE, dims)? };
        let hw = header_words(&header)?;
        let p = header.params;
        let field: Field = field_of(&shape);
        let nblocks = field.block_count();
        let [nx, ny, nz] = field.n;
        let (minbits, maxbits, maxprec, minexp) = (p.minbits, p.maxbits, p.maxprec, p.minexp);
        let header_bits = header.bits();
        let status = self.zeroed_on::<u32>(stream, 1)?;
        let (grid, block) = codec_grid(nblocks);
        let n = data.len();
        let fixed_rate = p.minbits == p.maxbits;
        // Fixed rate: the stream's exact size. Fixed accuracy: every block at its bound.
        let slot_bits = block_bound::<T>(&p, dims).div_ceil(64) * 64;
        let capacity_bits = if fixed_rate { header_bits + nblocks * maxbits as usize } else { header_bits + nblocks * slot_bits };
        let words = self.zeroed_on::<u64>(stream, capacity_bits.div_ceil(64))?;
        // SAFETY: the header words are kept with the queued work; the copy precedes the
        // kernels on `stream`.
        unsafe { stream.copy_in(dptr(&words).addr(), &hw)? };
        let (out, n_words, st) = (dptr(&words), words.len(), dptr(&status));
        let format = Format::Zfp { header, header_bits, index: None };
        if fixed_rate {
            let params = ZfpRateEncodeParams {
                data: dptr(data), n, nx, ny, nz, minbits, maxbits, maxprec, minexp, header_bits, out, n_words, status: st,
            };
            // SAFETY: every pointer is a live buffer of the length beside it, kept by the
            // returned work (`data` by the caller).
            unsafe { launch_by_dims!(self, ZfpRateEncodeKernel, T, dims, stream, grid, block, &params)? };
            let inflight = InFlight::new(stream.record()?, vec![Box::new(hw)]);
            let length = Length::Bytes(capacity_bits.div_ceil(64) * 8);
            return Ok(Queued { inflight, words, length, format, status });
        }
        let slots = self.zeroed_on::<u64>(stream, nblocks * slot_bits / 64)?;
        let lens = self.zeroed_on::<u32>(stream, nblocks)?;
        let params = ZfpAccSlotsParams {
            data: dptr(data), n, nx, ny, nz, minbits, maxbits, maxprec, minexp,
            slot_bits, slots: dptr(&slots), n_slot_words: slots.len(), lens: dptr(&lens), n_blocks: nblocks, status: st,
        };
        // SAFETY: as above.
        unsafe { launch_by_dims!(self, ZfpAccSlotsKernel, T, dims, stream, grid, block, &params)? };
        let scan = self.exclusive_scan_on(stream, &lens, header_bits as u64)?;
        let params = ZfpAccCompactParams {
            slots: dptr(&slots), n_slot_words: slots.len(), slot_bits, lens: dptr(&lens), offsets: dptr(&scan.offsets),
            n_blocks: nblocks, out, n_words,
        };
        // SAFETY: as above.
        unsafe { self.launch::<ZfpAccCompact>(stream, grid, block, &params)? };
        let inflight = InFlight::new(stream.record()?, vec![Box::new(hw), Box::new(slots), Box::new(lens)]);
        Ok(Queued { inflight, words, length: Length::ZfpBits(scan), format, status })
    }

    /// Queues the decoding of the ZFP stream `input` into `out` (checked by the caller
    /// to hold its values).
    pub(crate) fn zfp_decompress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        input: &'a DeviceStream,
        out: &'a mut DeviceSlice<T>,
    ) -> Result<PendingDecompress<'a>> {
        let Format::Zfp { header, header_bits, index } = input.format() else {
            return Err(Error::Gpu("not a ZFP stream".into()));
        };
        let header_bits = *header_bits;
        let dims = header.shape.ndims();
        let field = field_of(&header.shape);
        let nblocks = field.block_count();
        let [nx, ny, nz] = field.n;
        let p = header.params;
        let (minbits, maxbits, maxprec, minexp) = (p.minbits, p.maxbits, p.maxprec, p.minexp);
        let n = header.shape.len();
        let (words, n_words) = (dptr(input.words()), input.len().div_ceil(8));
        let status = self.zeroed_on::<u32>(stream, 1)?;
        let st = dptr(&status);
        let (grid, block) = codec_grid(nblocks);
        let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
        if p.minbits == p.maxbits {
            let params = ZfpRateDecodeParams { words, n_words, nx, ny, nz, minbits, maxbits, maxprec, minexp, header_bits, out: dptr(out), n, status: st };
            // SAFETY: `input` and `out` are borrowed by the returned handle; the kernel
            // reads at most `n_words` words and writes `n` values.
            unsafe { launch_by_dims!(self, ZfpRateDecodeKernel, T, dims, stream, grid, block, &params)? };
        } else {
            let offsets = match index {
                Some(i) => dptr(i),
                None => {
                    let rebuilt = self.zeroed_on::<u64>(stream, nblocks)?;
                    let params = ZfpAccIndexParams {
                        words, n_words, start_bits: header_bits, stream_bits: input.len() * 8,
                        minbits, maxbits, maxprec, minexp, offsets: dptr(&rebuilt), n_blocks: nblocks, status: st,
                    };
                    // SAFETY: as above; a sequential pass, so one thread.
                    unsafe { launch_by_dims!(self, ZfpAccIndexKernel, T, dims, stream, 1, 1, &params)? };
                    let at = dptr(&rebuilt);
                    keep.push(Box::new(rebuilt));
                    at
                }
            };
            let params = ZfpAccDecodeParams {
                words, n_words, offsets, n_blocks: nblocks, nx, ny, nz, minbits, maxbits, maxprec, minexp, out: dptr(out), n, status: st,
            };
            // SAFETY: as above; the kernel bounds every read by `n_words`.
            unsafe { launch_by_dims!(self, ZfpAccDecodeKernel, T, dims, stream, grid, block, &params)? };
        }
        let failure = Error::Truncated { needed: input.len() + 1, got: input.len() };
        Ok(PendingDecompress::new(InFlight::new(stream.record()?, keep), status, failure))
    }

    /// Queues the upload of a compressed stream from host memory on `stream` (its header
    /// checked on the host first); use it on `stream`, or after synchronising it.
    pub fn upload_stream(&self, stream: &GpuStream, bytes: &[u8]) -> Result<DeviceStream> {
        crate::inspect(bytes)?;
        let format = if crate::szx::is_szx(bytes) {
            Format::Szx(crate::szx::SzxHeader::read(bytes)?)
        } else {
            let (header, header_bits) = Header::parse(bytes)?;
            Format::Zfp { header, header_bits, index: None }
        };
        let host = crate::zfp::words::words_from_bytes(bytes);
        let words = self.upload_on(stream, &host)?;
        let ready = stream.record()?;
        Ok(DeviceStream::new(words, bytes.len(), format, Some((host, ready))))
    }
}
