//! The uncompressed exchange among the group leaders of the hierarchical allreduce
//! (NV-Group's small-message path): no codec latency, and an exact result whose
//! reduction order is the same on every leader.

use mpi::traits::Communicator;

use crate::alg::baseline;
use crate::call::Call;
use crate::place::Place;
use crate::{ReduceOp, Value};

/// Every leader receives every leader's partial result (the library's allgather) and
/// reduces them in leader order, so all leaders compute the same values bit for bit.
pub(crate) fn leaders_allreduce<C: Communicator, T: Value>(call: &mut Call, leaders: &C, buf: &mut [T], op: ReduceOp) {
    let (n, groups) = (buf.len(), leaders.size() as usize);
    if n == 0 || groups < 2 {
        return;
    }
    // One partial per group, as the allgather's input and output (what the caller's
    // buffer times the group count justifies).
    let mut partials = vec![T::default(); n * groups];
    baseline::allgather(leaders, buf, &mut partials);
    call.count_uncompressed::<T>(n);
    let (first, rest) = partials.split_at(n);
    buf.copy_from_slice(first);
    // On the host whatever the call's backend: the buffer is a host staging of the
    // device's when the call runs on device buffers.
    let host = codec_host::Backend::cpu();
    for partial in rest.chunks_exact(n) {
        if let Err(e) = Place::reduce(buf, &host, op, 0..n, partial) {
            call.fail(e.into());
            return;
        }
    }
}
