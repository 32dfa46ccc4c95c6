//! SZx on the GPU, plain and pipelined streams, one thread per block in phases: plan,
//! scans of the payload sizes and coded flags, write (frames and chunk table, into a
//! worst-case buffer; the host computes the fixed header and queues its copy). Decoding:
//! a scan of the chunk table gives the chunk starts, then coded flags, scan, payload
//! lengths, scan, decode. Nothing waits on the host: the stream's length is read when
//! the caller waits. The same phases run on the CPU executor in
//! `tests/szx_gpu_identity.rs`, byte for byte against the CPU codec.

use cust::memory::{CopyDestination, DeviceSlice};

use codec_kernels::kernels::{
    DevicePtr, SzxCodedFlags, SzxCodedFlagsParams, SzxDecodeKernel, SzxDecodeParams, SzxPayloadLensKernel, SzxPayloadLensParams, SzxPlanKernel,
    SzxPlanParams, SzxWriteKernel, SzxWriteParams,
};

use super::pending::{Format, InFlight, Length, Queued};
use super::{codec_grid, dptr, gpu, CudaBackend, DeviceStream, GpuElement, GpuStream, PendingCompress, PendingDecompress};
use crate::szx::{self, ErrorBound, SzxHeader, SzxOptions, HEADER_LEN};
use crate::zfp::words::words_from_bytes;
use crate::{CpuExecutor, Error, Result, Shape, SzxLayout};

/// The layout options and pipelining of an SZx layout, as the CPU path uses them.
fn szx_setup(layout: SzxLayout) -> (SzxOptions, bool) {
    match layout {
        SzxLayout::Plain => (SzxOptions::default(), false),
        SzxLayout::Pipelined { chunk_values } => (SzxOptions { chunk_values, ..SzxOptions::default() }, true),
    }
}

/// The header of the SZx stream of host data `data`, exactly as the CPU path makes it.
pub(super) fn prepare_host<T: GpuElement>(bound: ErrorBound, layout: SzxLayout, data: &[T], shape: Shape) -> Result<SzxHeader> {
    let (opts, pipelined) = szx_setup(layout);
    Ok(szx::prepare(data, shape, bound, &opts, pipelined, CpuExecutor::global())?.0)
}


impl CudaBackend {
    /// Queues the SZx compression (plain or pipelined, as `layout` says) of `data` on
    /// `stream`. An absolute bound queues everything at once. A relative bound needs the
    /// value range first, and no kernel computes it: the call waits for `stream`, copies
    /// `data` to the host and takes the range there (the one host wait of this path).
    pub(crate) fn szx_compress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        bound: ErrorBound,
        layout: SzxLayout,
        data: &'a DeviceSlice<T>,
        shape: Shape,
    ) -> Result<PendingCompress<'a, T>> {
        let (opts, pipelined) = szx_setup(layout);
        let mut header = szx::layout_header::<T>(shape, &opts, pipelined)?;
        if header.len() != data.len() {
            return Err(Error::BadDims(format!("shape {shape} holds {} values, data {}", header.len(), data.len())));
        }
        let mut copy_failed = None;
        szx::set_bound::<T>(&mut header, bound, || {
            let mut host = vec![T::default(); data.len()];
            match stream.synchronize().and_then(|()| data.copy_to(&mut host[..]).map_err(gpu("cuMemcpyDtoH"))) {
                Ok(()) => szx::finite_range(&host, CpuExecutor::global()),
                Err(e) => {
                    copy_failed = Some(e);
                    (0.0, 0.0)
                }
            }
        })?;
        if let Some(e) = copy_failed {
            return Err(e);
        }
        Ok(PendingCompress::new(self.szx_queue(stream, header, data)?, data))
    }

    /// Queues the phases for `data` under `header` (its bound set); the caller keeps
    /// `data` alive until they are done.
    pub(super) fn szx_queue<T: GpuElement>(&self, stream: &GpuStream, header: SzxHeader, data: &DeviceSlice<T>) -> Result<Queued> {
        let (n, block, chunk_blocks) = (header.len(), header.block_size, header.chunk_values / header.block_size);
        let nblocks = n.div_ceil(block);
        let e = header.abs_error;
        let capacity = szx::bound_len(n, T::TYPE.size(), block, header.chunk_values);
        let words = self.zeroed_on::<u64>(stream, capacity.div_ceil(8))?;
        let mut head = [0u8; HEADER_LEN];
        header.write(&mut head);
        let hw = words_from_bytes(&head);
        // SAFETY: the header words are kept with the queued work; the copy precedes the
        // write phase on `stream`, which leaves the header's bytes alone.
        unsafe { stream.copy_in(dptr(&words).addr(), &hw)? };
        let states = self.zeroed_on::<u8>(stream, nblocks)?;
        let sizes = self.zeroed_on::<u32>(stream, nblocks)?;
        let coded = self.zeroed_on::<u32>(stream, nblocks)?;
        let status = self.zeroed_on::<u32>(stream, 1)?;
        let (grid, tpb) = codec_grid(nblocks);
        let p = SzxPlanParams {
            data: dptr(data), n, block, chunk_blocks, e, states: dptr(&states), sizes: dptr(&sizes), coded: dptr(&coded), n_blocks: nblocks,
        };
        // SAFETY: every pointer is a live buffer of the length beside it, kept by the
        // returned work (`data` by the caller).
        unsafe { self.launch::<<T as SzxPlanKernel>::K>(stream, grid, tpb, &p)? };
        let s_scan = self.exclusive_scan_on(stream, &sizes, 0)?;
        let c_scan = self.exclusive_scan_on(stream, &coded, 0)?;
        let p = SzxWriteParams {
            data: dptr(data), n, block, chunk_blocks, e,
            s_offsets: dptr(&s_scan.offsets), s_total: dptr(&s_scan.total), c_offsets: dptr(&c_scan.offsets), c_total: dptr(&c_scan.total),
            n_blocks: nblocks, frames_at: header.prefix_len(), table_at: HEADER_LEN,
            out: DevicePtr::from_addr(dptr(&words).addr()), out_len: capacity, status: dptr(&status),
        };
        // SAFETY: as above; the scans are of this plan's sizes and flags, which makes the
        // byte ranges the threads write disjoint, all inside the `capacity` bytes.
        unsafe { self.launch::<<T as SzxWriteKernel>::K>(stream, grid, tpb, &p)? };
        let inflight = InFlight::new(stream.record()?, vec![Box::new(hw), Box::new(states), Box::new(sizes), Box::new(coded)]);
        let length = Length::Szx { fixed: header.prefix_len() + nblocks, coded: c_scan, sizes: s_scan };
        Ok(Queued { inflight, words, length, format: Format::Szx(header), status })
    }

    /// Queues the decoding of the SZx stream `input` (plain or pipelined) into `out`
    /// (checked by the caller to hold its values). Corrupt streams fail at `wait`, never
    /// decoded past their chunks.
    pub(crate) fn szx_decompress_on<'a, T: GpuElement>(
        &self,
        stream: &GpuStream,
        input: &'a DeviceStream,
        out: &'a mut DeviceSlice<T>,
    ) -> Result<PendingDecompress<'a>> {
        let Format::Szx(header) = input.format() else {
            return Err(Error::Gpu("not an SZx stream".into()));
        };
        let n = header.len();
        let (block, chunk_blocks) = (header.block_size, header.chunk_values / header.block_size);
        let nblocks = n.div_ceil(block);
        let chunks = header.chunk_count;
        if input.len() < header.prefix_len() {
            return Err(Error::Truncated { needed: header.prefix_len(), got: input.len() });
        }
        let bytes = DevicePtr::<u8>::from_addr(dptr(input.words()).addr());
        // Chunk starts from the table: its entries (u32, at a 4-aligned offset) scanned
        // from the prefix's end, the stream's end in the last slot.
        let starts = self.zeroed_on::<u64>(stream, chunks + 1)?;
        let table = DevicePtr::<u32>::from_addr(bytes.addr() + HEADER_LEN as u64);
        let ends_at = DevicePtr::<u64>::from_addr(dptr(&starts).addr() + 8 * chunks as u64);
        // SAFETY: the table's `chunks` entries lie inside the stream (checked above),
        // `starts` holds `chunks + 1` values.
        let table_scan = unsafe { self.scan_into(stream, table, chunks, header.prefix_len() as u64, dptr(&starts), ends_at)? };
        let coded = self.zeroed_on::<u32>(stream, nblocks)?;
        let lens = self.zeroed_on::<u32>(stream, nblocks)?;
        let status = self.zeroed_on::<u32>(stream, 1)?;
        let (grid, tpb) = codec_grid(nblocks);
        let (stream_len, chunk_starts, n_starts, st) = (input.len(), dptr(&starts), chunks + 1, dptr(&status));
        let p = SzxCodedFlagsParams { stream: bytes, stream_len, n, block, chunk_blocks, chunk_starts, n_starts, coded: dptr(&coded), n_blocks: nblocks, status: st };
        // SAFETY: every pointer is a live buffer of the length beside it (`input` and
        // `out` borrowed by the returned handle, the rest kept by it); the kernels bound
        // every read of the stream by its length.
        unsafe { self.launch::<SzxCodedFlags>(stream, grid, tpb, &p)? };
        let c_scan = self.exclusive_scan_on(stream, &coded, 0)?;
        let (c_offsets, c_total) = (dptr(&c_scan.offsets), dptr(&c_scan.total));
        let p = SzxPayloadLensParams {
            stream: bytes, stream_len, n, block, chunk_blocks, chunk_starts, n_starts, c_offsets, c_total, lens: dptr(&lens), n_blocks: nblocks, status: st,
        };
        // SAFETY: as above.
        unsafe { self.launch::<<T as SzxPayloadLensKernel>::K>(stream, grid, tpb, &p)? };
        let s_scan = self.exclusive_scan_on(stream, &lens, 0)?;
        let p = SzxDecodeParams {
            stream: bytes, stream_len, n, block, chunk_blocks, chunk_starts, n_starts, c_offsets, c_total,
            s_offsets: dptr(&s_scan.offsets), s_total: dptr(&s_scan.total), n_blocks: nblocks, out: dptr(out), status: st,
        };
        // SAFETY: as above; each block's values are written by one thread only.
        unsafe { self.launch::<<T as SzxDecodeKernel>::K>(stream, grid, tpb, &p)? };
        let keep: Vec<Box<dyn std::any::Any>> =
            vec![Box::new(starts), Box::new(table_scan), Box::new(coded), Box::new(lens), Box::new(c_scan), Box::new(s_scan)];
        let failure = Error::Corrupt("SZx stream: a block's state, size or payload does not fit its chunk".into());
        Ok(PendingDecompress::new(InFlight::new(stream.record()?, keep), status, failure))
    }
}
