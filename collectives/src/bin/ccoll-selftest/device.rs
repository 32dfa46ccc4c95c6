//! The device half of `--device` (feature `cuda`): every case runs again on device
//! buffers with the CUDA backend, and must give this rank the host run's result bit for
//! bit and the same accounting, with kernels launched wherever values were coded.

use codec_host::{Codec, ErrorBound};
use collectives::{Algorithm, CodecBackend, CollConfig, CollError, CollStats, DeviceCollectives, ReduceOp, Value};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::suite::Suite;

/// A device copy of `host`, complete when this returns (a copy from pageable memory
/// may otherwise still run on the legacy stream, which the collectives' stream does
/// not wait for).
pub fn up<T: Value>(host: &[T]) -> collectives::Result<DeviceBuffer<T>> {
    let fail = |e: cust::error::CudaError| collectives::CollError::Config(format!("device upload: {e}"));
    let d = DeviceBuffer::from_slice(host).map_err(fail)?;
    cust::context::CurrentContext::synchronize().map_err(fail)?;
    Ok(d)
}

/// A host copy of `dev`.
pub fn down<T: Value>(dev: &DeviceSlice<T>) -> collectives::Result<Vec<T>> {
    let mut host = vec![T::default(); dev.len()];
    if !host.is_empty() {
        dev.copy_to(&mut host[..]).map_err(|e| collectives::CollError::Config(format!("device download: {e}")))?;
    }
    Ok(host)
}

impl Suite {
    /// Runs `call` (the case on device buffers, returning this rank's result) with `cfg`
    /// on the CUDA backend and compares it with the host run's `got` and `st`.
    pub fn on_device<T: Value>(
        &mut self,
        name: &str,
        cfg: &CollConfig,
        got: &[T],
        st: &CollStats,
        call: impl FnOnce(&SimpleCommunicator, &CollConfig) -> collectives::Result<(Vec<T>, CollStats)>,
    ) {
        if !self.device {
            return;
        }
        self.cases += 1;
        if let Err(e) = CodecBackend::Cuda.resolve() {
            return self.expect(false, || format!("{name} (device): {e}"));
        }
        let dcfg = CollConfig { backend: CodecBackend::Cuda, ..*cfg };
        let (dgot, dst) = match call(&self.world, &dcfg) {
            Ok(r) => r,
            Err(e) => return self.expect(false, || format!("{name} (device): {e}")),
        };
        let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
        self.expect(bits(&dgot) == bits(got), || format!("{name} (device): result differs from the host run's"));
        let same = (dst.compressions_per_value, dst.error_bound, dst.abs_error, dst.bytes_sent, dst.messages_sent, dst.values_compressed, dst.values_decompressed)
            == (st.compressions_per_value, st.error_bound, st.abs_error, st.bytes_sent, st.messages_sent, st.values_compressed, st.values_decompressed);
        self.expect(same, || format!("{name} (device): stats {dst:?}, host {st:?}"));
        self.expect(st.device_launches == 0, || format!("{name}: the host run launched {} kernels", st.device_launches));
        let coded = dst.values_compressed + dst.values_decompressed > 0;
        self.expect(!coded || dst.device_launches > 0, || format!("{name} (device): values coded but no kernel launched"));
        self.device_launches += dst.device_launches;
    }
}

/// `--device-oom` (run by `collectives/tests/device_mpirun.rs` with a small device for
/// rank 0 only, `CCOLL_EMU_MEM_BYTES`): rank 0 fills its device nearly to the brim, then
/// - a reduce-scatter whose work buffer does not fit there fails at the agreement:
///   rank 0 reports the device error, every other rank `PeerRejected { rank: 0 }`;
/// - an in-place allreduce (C-Coll) that needs no work buffer fails inside its first
///   ring step on rank 0 (the chunk's compression cannot allocate): rank 0 reports the
///   device error, every other rank `PeerFailed` (the failure travels around the ring in
///   the flagged frames), and no rank waits for the watchdog;
/// - a CPR-P2P Scatter from rank 2 of 4, where rank 0 is the inner rank above rank 1:
///   rank 0 cannot allocate its child's buffer and reports the device error, rank 1
///   `PeerFailed { peer: 0 }` (the empty bundle it got instead), and the root and rank 3
///   end with their blocks.
pub fn out_of_memory(s: &mut Suite) {
    let mut cfg = CollConfig::new(Codec::szx(ErrorBound::Abs(1e-3))).with_algorithm(Algorithm::CColl);
    cfg.backend = CodecBackend::Cuda;
    cfg.min_bytes_to_compress = 0;
    cfg.pipeline_chunk_bytes = 4000;
    if let Err(e) = CodecBackend::Cuda.resolve() {
        return s.expect(false, || format!("--device-oom: {e}"));
    }
    let is_device_error = |r: &collectives::Result<CollStats>| matches!(r, Err(CollError::Codec(codec_host::Error::Gpu(_))));
    let started = std::time::Instant::now();

    // Rank 0 receives one value (its buffer made before the fill), the last rank the rest.
    s.cases += 1;
    let outcome = (|| -> collectives::Result<_> {
        let small = up(&[0f32])?;
        let total = fill(s, 64).max(s.p);
        let counts: Vec<usize> = (0..s.p).map(|r| if r + 1 == s.p { total - (s.p - 1) } else { 1 }).collect();
        let send = up(&vec![1f32; total])?;
        let mut recv = if s.rank == 0 { small } else { up(&vec![0f32; counts[s.rank]])? };
        Ok(s.world.d_reduce_scatter(&send, &mut recv, &counts, ReduceOp::Sum, &cfg))
    })();
    println!("ccoll-selftest: rank {}: reduce-scatter beyond rank 0's device memory: {outcome:?}", s.rank);
    match outcome {
        Ok(r) if s.rank == 0 => s.expect(is_device_error(&r), || format!("reduce-scatter beyond rank 0's device memory: rank 0 got {r:?}")),
        Ok(r) => s.expect(r == Err(CollError::PeerRejected { rank: 0 }), || format!("reduce-scatter beyond rank 0's device memory: got {r:?}")),
        Err(e) => s.expect(false, || format!("--device-oom setup: {e}")),
    }

    s.cases += 1;
    let n = fill(s, 64);
    let outcome = up(&vec![1f32; n]).map(|mut buf| s.world.d_allreduce_in_place(&mut buf, ReduceOp::Sum, &cfg));
    println!("ccoll-selftest: rank {}: allreduce of {n} values: {outcome:?}", s.rank);
    match outcome {
        Ok(r) if s.rank == 0 => s.expect(is_device_error(&r), || format!("allreduce of {n} values: rank 0 got {r:?}")),
        Ok(r) => s.expect(matches!(r, Err(CollError::PeerFailed { .. })), || format!("allreduce of {n} values: got {r:?}")),
        Err(e) => s.expect(false, || format!("--device-oom setup: {e}")),
    }
    if s.p == 4 {
        scatter_past_a_full_inner_rank(s, cfg);
    }
    println!("ccoll-selftest: rank {}: --device-oom took {:.1} s", s.rank, started.elapsed().as_secs_f64());
}

/// Values of f32 that fill rank 0's free device memory but for `spare` bytes (agreed by
/// every rank).
fn fill(s: &Suite, spare: usize) -> usize {
    let mut n = 0u64;
    if s.rank == 0 {
        let free = cust::memory::mem_get_info().map_or(0, |(free, _)| free);
        n = (free.saturating_sub(spare) / 4) as u64;
    }
    s.world.process_at_rank(0).broadcast_into(&mut n);
    n as usize
}

/// The third case of [`out_of_memory`]: rank `r`'s block is 1024 values of `r + 1`.
fn scatter_past_a_full_inner_rank(s: &mut Suite, cfg: CollConfig) {
    const N: usize = 1024;
    // `inner` is rank 0, whose device `fill` measures.
    let (root, inner) = (2, 0);
    let cfg = cfg.with_algorithm(Algorithm::CprP2p);
    s.cases += 1;
    let outcome = (|| -> collectives::Result<_> {
        let all: Vec<f32> = (0..s.p * N).map(|i| (i / N + 1) as f32).collect();
        let send = up(if s.rank == root { &all[..] } else { &all[..1] })?;
        let mut recv = up(&[0f32; N])?;
        // Rank 0's device full but for 64 bytes: its child's block (4 KiB) cannot fit.
        let n = fill(s, 64);
        let _fill = if s.rank == inner { Some(up(&vec![0f32; n])?) } else { None };
        let r = s.world.d_scatter(&send, &mut recv, root, &cfg);
        Ok((r, down(&recv)?))
    })();
    println!("ccoll-selftest: rank {}: cpr-p2p scatter past rank 0's full device: {:?}", s.rank, outcome.as_ref().map(|(r, _)| r));
    let (rank, want) = (s.rank, (s.rank + 1) as f32);
    match outcome {
        Ok((r, _)) if s.rank == inner => s.expect(matches!(r, Err(CollError::Codec(codec_host::Error::Gpu(_)))), || format!("cpr-p2p scatter: rank 0 got {r:?}")),
        Ok((r, _)) if s.rank == 1 => s.expect(r == Err(CollError::PeerFailed { peer: inner }), || format!("cpr-p2p scatter: rank 1 got {r:?}")),
        Ok((r, got)) => s.expect(r.is_ok() && got.iter().all(|&x| (x - want).abs() <= 1e-3), || format!("cpr-p2p scatter: rank {rank} got {r:?}, {:?}", &got[..4])),
        Err(e) => s.expect(false, || format!("--device-oom setup: {e}")),
    }
}
