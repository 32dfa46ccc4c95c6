//! Compression-accelerated MPI collectives in the C-Coll design, beside their baselines.
//!
//! [`CompressedCollectives`] extends every rsmpi communicator with allreduce,
//! reduce-scatter, reduce, broadcast, scatter, gather, allgather, alltoall and a
//! pipelined point-to-point send/receive, generic over `f32` and `f64`. Each call takes
//! a [`CollConfig`] (codec, algorithm, pipeline chunk size, compression threshold) and
//! returns [`CollStats`]: the algorithm that ran, the bytes it sent, the compression
//! ratio, the compressions on a value's path and the resulting error bound. With the
//! `cuda` feature, `DeviceCollectives` runs the same operations on device buffers
//! (`docs/collectives.md`, "Device buffers"); `CollConfig::backend` says where the
//! codec work runs.
//!
//! ```no_run
//! use codec_host::Codec;
//! use collectives::{CollConfig, CompressedCollectives, ReduceOp};
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let cfg = CollConfig::new(Codec::zfp_accuracy(1e-4));
//! let mine = vec![1.0f32; 1 << 20];
//! let mut sum = vec![0.0f32; 1 << 20];
//! let stats = world.c_allreduce(&mine, &mut sum, ReduceOp::Sum, &cfg).unwrap();
//! println!("{} moved {} bytes, error <= {:?}", stats.algorithm, stats.bytes_sent, stats.error_bound);
//! ```
//!
//! # Algorithms
//! See [`Algorithm`] and `docs/collectives.md`: the plain MPI baseline, CPR-P2P (compress
//! every send, decompress every receive), the C-Coll frameworks, the collective-level
//! ring and recursive-doubling allreduce, and the hierarchical allreduce. Under
//! [`Algorithm::Auto`], [`config::select`] picks the algorithm the cost model ([`model`])
//! predicts fastest, unless [`ENV_ALGORITHM`] says otherwise.
//!
//! # Errors and mismatched calls
//! Every collective call, the plain `mpi` baseline included, starts with a small
//! agreement (one `MPI_Allreduce` of a few words, see `agree`): if the ranks differ in
//! count, root, element type, codec, operator, algorithm or chunking, or a rank's own
//! arguments are invalid, every rank returns an error and no data moves. Every compressed
//! message then carries a header (codec, type, count, position) that the receiver checks;
//! a rank that finds a bad message keeps running the schedule, so no peer blocks, flags
//! what it forwards, and returns the error, as do the ranks downstream. Point-to-point
//! transfers, whatever the algorithm, start with the sender's announcement, which the
//! receiver accepts or rejects before any data moves; on a rejection both sides return
//! the error.
//!
//! # Aborts
//! A failed MPI call aborts the job (the crate checks every return code of its own MPI
//! calls). With [`ENV_TIMEOUT`] set, a call that has not completed in time prints which
//! rank waits for what and aborts the job.
//!
//! # Waiting
//! A rank waiting for a transfer spins in MPI's blocking calls, or, where the ranks
//! share cores, tests and sleeps between tests so that its core goes to the ranks
//! with codec work ([`ENV_WAIT`]).
//!
//! # NaN and infinity
//! SZx keeps NaN and infinity exactly. ZFP rejects them (`Error::NonFinite`): the piece
//! that holds them is then sent uncompressed, exactly, and counted in
//! [`CollStats::raw_fallbacks`]. The sender decodes every ZFP piece once more and sends
//! it raw too if a finite value would come back infinite or, in fixed-accuracy mode,
//! further than the tolerance from the input: so the stated bound holds, and finite input
//! never comes back infinite. Reductions propagate NaN (see [`ReduceOp`]), so the
//! result has NaN where MPI's SUM and PROD have it.

mod accuracy;
mod agree;
mod alg;
pub mod bench_csv;
mod blocks;
mod call;
mod codec_port;
pub mod config;
mod error;
mod frame;
mod idle;
pub mod model;
mod ops;
mod place;
mod spare;
mod stats;
mod transport;
mod value;
mod watchdog;

pub use accuracy::{binomial_depth, compressions_per_value, first_excess, prod_error_bound, ring_stage_bounds, value_allowance, Excess};
pub use codec_host::elementwise::ReduceOp;
pub use codec_port::{CodecBackend, ENV_CODEC_THREADS};
pub use config::{Algorithm, CollConfig, CollOp, ModelParams, NodeGroups, ENV_ALGORITHM, ENV_MODEL};
pub use error::{CollError, Result};
pub use idle::ENV_WAIT;
pub use ops::CommHandle;
pub use stats::{CodecCpu, CodecPass, CollStats};
pub use transport::TAG_BASE;
pub use value::Value;
pub use watchdog::ENV_TIMEOUT;

/// Compressed collectives on an rsmpi communicator (implemented for every intra-
/// communicator, e.g. `SimpleCommunicator`). All ranks of the communicator call the same
/// operation with the same settings, as with MPI's own collectives.
pub trait CompressedCollectives: CommHandle + Sized {
    /// Allreduce of `send` into `recv` (same length on every rank).
    fn c_allreduce<T: Value>(&self, send: &[T], recv: &mut [T], op: ReduceOp, cfg: &CollConfig) -> Result<CollStats> {
        ops::allreduce(self, Some(send), recv, op, cfg)
    }

    /// Allreduce in place: `buf` is the input and receives the result.
    fn c_allreduce_in_place<T: Value>(&self, buf: &mut [T], op: ReduceOp, cfg: &CollConfig) -> Result<CollStats> {
        ops::allreduce(self, None, buf, op, cfg)
    }

    /// Reduce-scatter (`MPI_Reduce_scatter`): `send` holds `sum(counts)` values on every
    /// rank; rank r receives the reduction of block r (`counts[r]` values) in `recv`.
    fn c_reduce_scatter<T: Value>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: ReduceOp,
        cfg: &CollConfig,
    ) -> Result<CollStats> {
        ops::reduce_scatter(self, send, recv, counts, op, cfg)
    }

    /// Reduce to `root`: `recv` (as long as `send`) is written at the root; other ranks
    /// may pass an empty slice.
    fn c_reduce<T: Value>(&self, send: &[T], recv: &mut [T], root: usize, op: ReduceOp, cfg: &CollConfig) -> Result<CollStats> {
        ops::reduce(self, send, recv, root, op, cfg)
    }

    /// Broadcast of `buf` from `root`.
    fn c_bcast<T: Value>(&self, buf: &mut [T], root: usize, cfg: &CollConfig) -> Result<CollStats> {
        ops::bcast(self, buf, root, cfg)
    }

    /// Scatter from `root`: its `send` holds one block of `recv.len()` values per rank;
    /// other ranks may pass an empty `send`.
    fn c_scatter<T: Value>(&self, send: &[T], recv: &mut [T], root: usize, cfg: &CollConfig) -> Result<CollStats> {
        ops::scatter(self, send, recv, root, cfg)
    }

    /// Gather to `root`: its `recv` gets one block of `send.len()` values per rank; other
    /// ranks may pass an empty `recv`.
    fn c_gather<T: Value>(&self, send: &[T], recv: &mut [T], root: usize, cfg: &CollConfig) -> Result<CollStats> {
        ops::gather(self, send, recv, root, cfg)
    }

    /// Allgather: `recv` gets one block of `send.len()` values per rank.
    fn c_allgather<T: Value>(&self, send: &[T], recv: &mut [T], cfg: &CollConfig) -> Result<CollStats> {
        ops::allgather(self, Some(send), recv, cfg)
    }

    /// Allgather in place: block `rank` of `buf` is this rank's contribution.
    fn c_allgather_in_place<T: Value>(&self, buf: &mut [T], cfg: &CollConfig) -> Result<CollStats> {
        ops::allgather(self, None, buf, cfg)
    }

    /// Alltoall: block d of `send` goes to rank d, block s of `recv` comes from rank s.
    fn c_alltoall<T: Value>(&self, send: &[T], recv: &mut [T], cfg: &CollConfig) -> Result<CollStats> {
        ops::alltoall(self, send, recv, cfg)
    }

    /// Sends `data` to `dest`; compressed algorithms (pipelined under `c-coll`) return
    /// once the receiver has accepted the transfer and every chunk is sent. `tag` must be
    /// below [`TAG_BASE`].
    fn c_send<T: Value>(&self, dest: usize, data: &[T], tag: i32, cfg: &CollConfig) -> Result<CollStats> {
        ops::send(self, dest, data, tag, cfg)
    }

    /// Receives exactly `buf.len()` values sent by [`CompressedCollectives::c_send`]
    /// from `src` with the same algorithm.
    fn c_recv<T: Value>(&self, src: usize, buf: &mut [T], tag: i32, cfg: &CollConfig) -> Result<CollStats> {
        ops::recv(self, src, buf, tag, cfg)
    }
}

impl<C: CommHandle> CompressedCollectives for C {}

#[cfg(feature = "cuda")]
pub use cust::memory::DeviceSlice;

/// The compressed collectives on device-resident buffers (feature `cuda`): the same
/// operations, algorithms, checks and results as [`CompressedCollectives`] (bit for bit,
/// for the same codec and algorithm), with compression, decompression and reduction on
/// the GPU and only frames crossing to the host. `cfg.backend` must be
/// [`CodecBackend::Cuda`]. See `docs/collectives.md`, "Device buffers".
#[cfg(feature = "cuda")]
pub trait DeviceCollectives: CommHandle + Sized {
    /// [`CompressedCollectives::c_allreduce`] on device buffers.
    fn d_allreduce<T: Value>(&self, send: &DeviceSlice<T>, recv: &mut DeviceSlice<T>, op: ReduceOp, cfg: &CollConfig) -> Result<CollStats> {
        ops::allreduce(self, Some(send), recv, op, cfg)
    }

    /// [`CompressedCollectives::c_allreduce_in_place`] on a device buffer.
    fn d_allreduce_in_place<T: Value>(&self, buf: &mut DeviceSlice<T>, op: ReduceOp, cfg: &CollConfig) -> Result<CollStats> {
        ops::allreduce(self, None, buf, op, cfg)
    }

    /// [`CompressedCollectives::c_reduce_scatter`] on device buffers.
    fn d_reduce_scatter<T: Value>(
        &self,
        send: &DeviceSlice<T>,
        recv: &mut DeviceSlice<T>,
        counts: &[usize],
        op: ReduceOp,
        cfg: &CollConfig,
    ) -> Result<CollStats> {
        ops::reduce_scatter(self, send, recv, counts, op, cfg)
    }

    /// [`CompressedCollectives::c_reduce`] on device buffers.
    fn d_reduce<T: Value>(&self, send: &DeviceSlice<T>, recv: &mut DeviceSlice<T>, root: usize, op: ReduceOp, cfg: &CollConfig) -> Result<CollStats> {
        ops::reduce(self, send, recv, root, op, cfg)
    }

    /// [`CompressedCollectives::c_bcast`] on a device buffer.
    fn d_bcast<T: Value>(&self, buf: &mut DeviceSlice<T>, root: usize, cfg: &CollConfig) -> Result<CollStats> {
        ops::bcast(self, buf, root, cfg)
    }

    /// [`CompressedCollectives::c_scatter`] on device buffers.
    fn d_scatter<T: Value>(&self, send: &DeviceSlice<T>, recv: &mut DeviceSlice<T>, root: usize, cfg: &CollConfig) -> Result<CollStats> {
        ops::scatter(self, send, recv, root, cfg)
    }

    /// [`CompressedCollectives::c_gather`] on device buffers.
    fn d_gather<T: Value>(&self, send: &DeviceSlice<T>, recv: &mut DeviceSlice<T>, root: usize, cfg: &CollConfig) -> Result<CollStats> {
        ops::gather(self, send, recv, root, cfg)
    }

    /// [`CompressedCollectives::c_allgather`] on device buffers.
    fn d_allgather<T: Value>(&self, send: &DeviceSlice<T>, recv: &mut DeviceSlice<T>, cfg: &CollConfig) -> Result<CollStats> {
        ops::allgather(self, Some(send), recv, cfg)
    }

    /// [`CompressedCollectives::c_allgather_in_place`] on a device buffer.
    fn d_allgather_in_place<T: Value>(&self, buf: &mut DeviceSlice<T>, cfg: &CollConfig) -> Result<CollStats> {
        ops::allgather(self, None, buf, cfg)
    }

    /// [`CompressedCollectives::c_alltoall`] on device buffers.
    fn d_alltoall<T: Value>(&self, send: &DeviceSlice<T>, recv: &mut DeviceSlice<T>, cfg: &CollConfig) -> Result<CollStats> {
        ops::alltoall(self, send, recv, cfg)
    }

    /// [`CompressedCollectives::c_send`] from a device buffer.
    fn d_send<T: Value>(&self, dest: usize, data: &DeviceSlice<T>, tag: i32, cfg: &CollConfig) -> Result<CollStats> {
        ops::send(self, dest, data, tag, cfg)
    }

    /// [`CompressedCollectives::c_recv`] into a device buffer.
    fn d_recv<T: Value>(&self, src: usize, buf: &mut DeviceSlice<T>, tag: i32, cfg: &CollConfig) -> Result<CollStats> {
        ops::recv(self, src, buf, tag, cfg)
    }
}

#[cfg(feature = "cuda")]
impl<C: CommHandle> DeviceCollectives for C {}

/// Makes a panic on any rank abort the whole MPI job (after printing the panic) rather
/// than leave the other ranks waiting, and the panicking rank blocked in `MPI_Finalize`
/// while it unwinds. For MPI programs; call once after initialising MPI.
pub fn abort_job_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        // MPI_Abort is valid only between MPI_Init and MPI_Finalize: a panic after
        // finalising (or before initialising) unwinds as usual.
        if mpi_is_running() {
            // SAFETY: MPI is initialised and not finalised; MPI_Abort does not return.
            unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101) };
        }
    }));
}

/// Sets `MPI_ERRORS_ARE_FATAL` on `MPI_COMM_WORLD` (MPI's default, made explicit): every
/// failing MPI call on it, or on the communicators derived from it, aborts the job. The
/// crate checks the return codes of its own MPI calls whatever the handler; the `mpi`
/// baseline runs the library's collectives through rsmpi, which does not, so a program
/// that sets `MPI_ERRORS_RETURN` would see their failures only as wrong data. For MPI
/// programs; call once after initialising MPI.
pub fn fatal_mpi_errors() {
    // SAFETY: MPI is initialised (the caller's contract); both handles are predefined.
    let rc = unsafe { mpi::ffi::MPI_Comm_set_errhandler(mpi::ffi::RSMPI_COMM_WORLD, mpi::ffi::RSMPI_ERRORS_ARE_FATAL) };
    assert_eq!(rc, mpi::ffi::MPI_SUCCESS as i32, "MPI_Comm_set_errhandler failed");
}

/// True between `MPI_Init` and `MPI_Finalize`.
fn mpi_is_running() -> bool {
    let (mut initialised, mut finalised) = (0, 0);
    // SAFETY: both queries may be called at any time, even before MPI_Init and after
    // MPI_Finalize.
    unsafe {
        mpi::ffi::MPI_Initialized(&mut initialised);
        mpi::ffi::MPI_Finalized(&mut finalised);
    }
    initialised != 0 && finalised == 0
}
