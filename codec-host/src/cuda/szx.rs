//! SZx on the GPU, plain and pipelined streams, one thread per block in phases: plan,
//! scans of the payload sizes and coded flags, write (frames and chunk table; the host
//! writes the fixed header). Decoding: coded flags, scan, payload lengths, scan, decode,
//! from the chunk starts the table gives. The same phases run on the CPU executor in
//! `tests/szx_gpu_identity.rs`, byte for byte against the CPU codec.

use cust::launch;
use cust::memory::{DeviceBuffer, DeviceSlice};

use codec_kernels::grid::LaunchConfig;

use super::{gpu, CudaBackend, DeviceScan, GpuElement, GpuStream};
use crate::szx::{self, ErrorBound, SzxHeader, SzxOptions, HEADER_LEN};
use crate::{Codec, CpuExecutor, Error, Result, Shape, StreamInfo};

/// Threads per block of the SZx launches.
const SZX_BLOCK: u32 = 128;

/// The kernel `szx_{kind}_{elem}`.
fn kernel<T: GpuElement>(kind: &str) -> Result<&'static str> {
    let name = format!("szx_{kind}_{}", T::TYPE);
    codec_kernels::kernels::ENTRY_POINTS.iter().copied().find(|n| *n == name).ok_or_else(|| Error::Gpu(format!("no kernel {name}")))
}

/// The bound, layout options and pipelining of an SZx codec, as the CPU path uses them.
fn szx_setup(codec: &Codec) -> Result<(ErrorBound, SzxOptions, bool)> {
    match *codec {
        Codec::Szx { abs_error } => Ok((ErrorBound::Abs(abs_error), SzxOptions::default(), false)),
        Codec::SzxRelative { rel_error } => Ok((ErrorBound::Rel(rel_error), SzxOptions::default(), false)),
        Codec::SzxPipelined { bound, chunk_values } => Ok((bound, SzxOptions { chunk_values, ..SzxOptions::default() }, true)),
        other => Err(Error::ParamOutOfRange(format!("{other:?} is not an SZx codec"))),
    }
}

impl CudaBackend {
    fn szx_grid(nblocks: usize) -> (u32, u32) {
        let cfg = LaunchConfig::for_items(nblocks, SZX_BLOCK);
        (cfg.grid_dim, cfg.block_dim)
    }

    /// Reads one device value once `stream` has reached it.
    fn read_one(&self, stream: &GpuStream, v: &DeviceSlice<u64>) -> Result<u64> {
        let mut x = [0u64];
        self.download_on(stream, v, &mut x[..])?;
        Ok(x[0])
    }

    /// Compresses host data into an SZx stream (plain or pipelined, as `codec` says) on
    /// the GPU; the bytes equal the CPU codec's.
    pub fn szx_compress<T: GpuElement>(&self, codec: &Codec, data: &[T], shape: Shape) -> Result<Vec<u8>> {
        let (bound, opts, pipelined) = szx_setup(codec)?;
        // Parameters, header and (for a relative bound) the value range, on the host.
        let (header, _) = szx::prepare(data, shape, bound, &opts, pipelined, CpuExecutor::global())?;
        let (n, block, chunk_blocks) = (header.len(), header.block_size, header.chunk_values / header.block_size);
        let nblocks = n.div_ceil(block);
        let e = header.abs_error;
        let stream = self.stream()?;
        let d_data = self.upload_on(&stream, data)?;
        let states = self.zeroed_on::<u8>(&stream, nblocks)?;
        let sizes = self.zeroed_on::<u32>(&stream, nblocks)?;
        let coded = self.zeroed_on::<u32>(&stream, nblocks)?;
        let status = self.zeroed_on::<u32>(&stream, 1)?;
        let (grid, tpb) = Self::szx_grid(nblocks);
        let s = &stream.inner;
        let (dp, stp, szp, cop, sp) =
            (d_data.as_device_ptr(), states.as_device_ptr(), sizes.as_device_ptr(), coded.as_device_ptr(), status.as_device_ptr());
        let f = self.function(kernel::<T>("plan")?)?;
        // SAFETY: the arguments match szx_plan_* in codec-kernels' entry module; every
        // pointer is a live device buffer of the length beside it.
        unsafe { launch!(f<<<grid, tpb, 0, s>>>(dp, n, block, chunk_blocks, e, stp, szp, cop, nblocks)) }
            .map_err(gpu("cuLaunchKernel szx_plan"))?;
        let sizes_scan: DeviceScan = self.exclusive_scan_on(&stream, &sizes, 0)?;
        let coded_scan: DeviceScan = self.exclusive_scan_on(&stream, &coded, 0)?;
        let total = header.prefix_len()
            + nblocks
            + 2 * self.read_one(&stream, &coded_scan.total)? as usize
            + self.read_one(&stream, &sizes_scan.total)? as usize;
        let out = self.zeroed_on::<u8>(&stream, total)?;
        let (so, st, co, ct, op) = (
            sizes_scan.offsets.as_device_ptr(),
            sizes_scan.total.as_device_ptr(),
            coded_scan.offsets.as_device_ptr(),
            coded_scan.total.as_device_ptr(),
            out.as_device_ptr(),
        );
        let (frames_at, table_at) = (header.prefix_len(), HEADER_LEN);
        let f = self.function(kernel::<T>("write")?)?;
        // SAFETY: as above, for szx_write_*; the scans are of this plan's sizes and flags,
        // which makes the byte ranges the threads write disjoint.
        unsafe {
            launch!(f<<<grid, tpb, 0, s>>>(dp, n, block, chunk_blocks, e, so, st, co, ct, nblocks, frames_at, table_at, op, total, sp))
        }
        .map_err(gpu("cuLaunchKernel szx_write"))?;
        let mut st = [0u32];
        self.download_on(&stream, &status, &mut st[..])?;
        if st[0] != 0 {
            return Err(Error::Gpu("SZx encoder: a block's plan changed between phases".into()));
        }
        let mut bytes = vec![0u8; total];
        self.download_on(&stream, &out, &mut bytes[..])?;
        header.write(&mut bytes[..HEADER_LEN]);
        Ok(bytes)
    }

    /// Decodes an SZx stream (plain or pipelined) into `out` on the GPU. Corrupt streams
    /// are reported as errors, never decoded past their chunks.
    pub fn szx_decompress_into<T: GpuElement>(&self, bytes: &[u8], out: &mut [T]) -> Result<StreamInfo> {
        let info = szx::inspect(bytes)?;
        let header = SzxHeader::read(bytes)?;
        if header.elem != T::TYPE {
            return Err(Error::TypeMismatch { stream: header.elem, requested: T::TYPE });
        }
        let n = header.len();
        if out.len() < n {
            return Err(Error::BufferTooSmall { needed: n, got: out.len() });
        }
        let (lens, end) = header.chunk_lens(bytes)?;
        let mut starts = Vec::with_capacity(header.chunk_count + 1);
        starts.push(header.prefix_len() as u64);
        let mut at = header.prefix_len() as u64;
        for len in lens {
            at += len as u64;
            starts.push(at);
        }
        let bytes = &bytes[..end];
        let (block, chunk_blocks) = (header.block_size, header.chunk_values / header.block_size);
        let nblocks = n.div_ceil(block);
        let stream = self.stream()?;
        let d_bytes = self.upload_on(&stream, bytes)?;
        let d_starts = self.upload_on(&stream, &starts)?;
        let coded = self.zeroed_on::<u32>(&stream, nblocks)?;
        let lens = self.zeroed_on::<u32>(&stream, nblocks)?;
        let d_out: DeviceBuffer<T> = self.zeroed_on(&stream, n)?;
        let status = self.zeroed_on::<u32>(&stream, 1)?;
        let (grid, tpb) = Self::szx_grid(nblocks);
        let s = &stream.inner;
        let (bp, blen, stp, nst, cop, lp, outp, sp) = (
            d_bytes.as_device_ptr(),
            d_bytes.len(),
            d_starts.as_device_ptr(),
            d_starts.len(),
            coded.as_device_ptr(),
            lens.as_device_ptr(),
            d_out.as_device_ptr(),
            status.as_device_ptr(),
        );
        let f = self.function("szx_coded_flags")?;
        // SAFETY: the arguments match the entry points in codec-kernels' entry module;
        // every pointer is a live device buffer of the length beside it, and the kernels
        // bound every read of the stream by its length.
        unsafe { launch!(f<<<grid, tpb, 0, s>>>(bp, blen, n, block, chunk_blocks, stp, nst, cop, nblocks, sp)) }
            .map_err(gpu("cuLaunchKernel szx_coded_flags"))?;
        let c_scan = self.exclusive_scan_on(&stream, &coded, 0)?;
        let (co, ct) = (c_scan.offsets.as_device_ptr(), c_scan.total.as_device_ptr());
        let f = self.function(kernel::<T>("payload_lens")?)?;
        // SAFETY: as above.
        unsafe { launch!(f<<<grid, tpb, 0, s>>>(bp, blen, n, block, chunk_blocks, stp, nst, co, ct, lp, nblocks, sp)) }
            .map_err(gpu("cuLaunchKernel szx_payload_lens"))?;
        let s_scan = self.exclusive_scan_on(&stream, &lens, 0)?;
        let (so, st) = (s_scan.offsets.as_device_ptr(), s_scan.total.as_device_ptr());
        let f = self.function(kernel::<T>("decode")?)?;
        // SAFETY: as above; each block's values are written by one thread only.
        unsafe { launch!(f<<<grid, tpb, 0, s>>>(bp, blen, n, block, chunk_blocks, stp, nst, co, ct, so, st, nblocks, outp, sp)) }
            .map_err(gpu("cuLaunchKernel szx_decode"))?;
        let mut bad = [0u32];
        self.download_on(&stream, &status, &mut bad[..])?;
        if bad[0] != 0 {
            return Err(Error::Corrupt("SZx stream: a block's state, size or payload does not fit its chunk".into()));
        }
        self.download_on(&stream, &d_out, &mut out[..n])?;
        Ok(info)
    }
}
