//! The device half of `--device` (feature `cuda`): every case runs again on device
//! buffers with the CUDA backend, and must give this rank the host run's result bit for
//! bit and the same accounting, with kernels launched wherever values were coded.

use collectives::{CodecBackend, CollConfig, CollStats, Value};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use mpi::topology::SimpleCommunicator;

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
