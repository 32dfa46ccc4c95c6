//! One operation's inputs on this rank, and one run of it with a given configuration.

use collectives::{CollConfig, CollOp, CollStats, CompressedCollectives, ReduceOp, Result, Value};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::data;

/// The buffers a run writes, allocated once per algorithm and size and reused by every
/// iteration, as the OSU benchmarks reuse theirs: a timed call then pays no page faults
/// on memory that an application would have mapped long before.
#[derive(Default)]
pub struct Buffers<T> {
    /// This rank's result.
    pub out: Vec<T>,
    /// Point-to-point: where the even rank receives the echo.
    echo: Vec<T>,
}

/// The inputs of one operation at one size on this rank.
pub struct Workload<T> {
    pub op: CollOp,
    /// Vector or block length.
    pub n: usize,
    /// Input of this rank (for bcast and scatter: the root's, empty elsewhere).
    input: Vec<T>,
    counts: Vec<usize>,
    pub root: usize,
}

impl<T: Value> Workload<T> {
    /// `bytes` means what the OSU benchmarks take it to mean: the whole vector for
    /// allreduce, reduce-scatter, reduce, bcast and p2p; each rank's block for scatter,
    /// gather, allgather and alltoall.
    pub fn new(op: CollOp, bytes: usize, world: &SimpleCommunicator, dataset: &str) -> std::result::Result<Self, String> {
        let (p, rank) = (world.size() as usize, world.rank() as usize);
        let n = bytes / T::SIZE;
        let root = 0;
        let field = |len: usize, seed: usize| data::field::<T>(dataset, len, seed as u64);
        let input = match op {
            CollOp::Allreduce | CollOp::ReduceScatter | CollOp::Reduce | CollOp::Gather | CollOp::Allgather => field(n, rank)?,
            CollOp::Bcast if rank == root => field(n, rank)?,
            CollOp::Scatter if rank == root => field(n * p, rank)?,
            CollOp::Alltoall => field(n * p, rank)?,
            // Both ranks of a pair know what the even one sends.
            CollOp::P2p => field(n, 1000 + rank / 2)?,
            _ => Vec::new(),
        };
        let counts = (0..p).map(|r| n / p + usize::from(r < n % p)).collect();
        Ok(Workload { op, n, input, counts, root })
    }

    /// The same workload on the absolute values of the inputs: run through the MPI
    /// library, its result holds each result value's magnitude (the sum of the operands'
    /// absolute values for the reductions, see `collectives::value_allowance`).
    pub fn magnitudes(&self) -> Self {
        let input = self.input.iter().map(|v| T::from_f64(v.to_f64().abs())).collect();
        Workload { input, counts: self.counts.clone(), ..*self }
    }

    /// Sizes `b` for one run and puts the inputs that live in the result buffers in
    /// place: the Bcast root's vector, and what the even rank of a point-to-point pair
    /// keeps as its result (what it sent). Called outside the timing, before every run,
    /// so that a timed call starts from buffers already mapped, as an application's are.
    pub fn prepare(&self, world: &SimpleCommunicator, b: &mut Buffers<T>) {
        let (p, rank) = (world.size() as usize, world.rank() as usize);
        let at_root = |len: usize| if rank == self.root { len } else { 0 };
        let len = match self.op {
            CollOp::Allreduce | CollOp::Bcast | CollOp::Scatter | CollOp::P2p => self.n,
            CollOp::ReduceScatter => self.counts[rank],
            CollOp::Reduce => at_root(self.n),
            CollOp::Gather => at_root(self.n * p),
            CollOp::Allgather | CollOp::Alltoall => self.n * p,
        };
        b.out.resize(len, T::default());
        let keeps_input = match self.op {
            CollOp::Bcast => rank == self.root,
            CollOp::P2p => rank.is_multiple_of(2),
            _ => false,
        };
        if keeps_input {
            b.out.copy_from_slice(&self.input);
        }
        if self.op == CollOp::P2p {
            b.echo.resize(self.n, T::default());
        }
    }

    /// Runs the operation once on buffers [`Workload::prepare`] set up: the result is in
    /// `b.out` (empty where this rank gets none). Point-to-point runs a ping-pong between
    /// ranks 2i and 2i + 1 (a last odd rank idles, with `None`); the result kept is what
    /// the odd rank received, the stats are those of each rank's send.
    pub fn run(&self, world: &SimpleCommunicator, cfg: &CollConfig, b: &mut Buffers<T>) -> Result<Option<CollStats>> {
        let rank = world.rank() as usize;
        let (x, root, sum, out) = (&self.input[..], self.root, ReduceOp::Sum, &mut b.out[..]);
        Ok(Some(match self.op {
            CollOp::Allreduce => world.c_allreduce(x, out, sum, cfg)?,
            CollOp::ReduceScatter => world.c_reduce_scatter(x, out, &self.counts, sum, cfg)?,
            CollOp::Reduce => world.c_reduce(x, out, root, sum, cfg)?,
            CollOp::Bcast => world.c_bcast(out, root, cfg)?,
            CollOp::Scatter => world.c_scatter(x, out, root, cfg)?,
            CollOp::Gather => world.c_gather(x, out, root, cfg)?,
            CollOp::Allgather => world.c_allgather(x, out, cfg)?,
            CollOp::Alltoall => world.c_alltoall(x, out, cfg)?,
            CollOp::P2p => {
                let partner = rank ^ 1;
                if partner >= world.size() as usize {
                    return Ok(None);
                }
                if rank.is_multiple_of(2) {
                    let sent = world.c_send(partner, x, 1, cfg);
                    let back = world.c_recv(partner, &mut b.echo, 2, cfg);
                    back.and(sent)?
                } else {
                    let st = world.c_recv(partner, out, 1, cfg);
                    let echo = world.c_send(partner, &*out, 2, cfg);
                    st.and(echo)?
                }
            }
        }))
    }

    /// [`Workload::run`] on device buffers (`--device cuda`): the inputs are uploaded
    /// and the results downloaded (into `b.out`) around the call, which runs on device
    /// buffers with `cfg`'s backend (CUDA). The same schedule and result as `run`.
    #[cfg(feature = "cuda")]
    pub fn run_device(&self, world: &SimpleCommunicator, cfg: &CollConfig, b: &mut Buffers<T>) -> Result<Option<CollStats>> {
        use collectives::DeviceCollectives;
        let (p, rank) = (world.size() as usize, world.rank() as usize);
        let (n, root, sum) = (self.n, self.root, ReduceOp::Sum);
        let x = up(&self.input)?;
        let zeros = |len: usize| up(&vec![T::default(); len]);
        let at_root = |len: usize| if rank == root { len } else { 0 };
        let (out, st) = match self.op {
            CollOp::Allreduce => {
                let mut out = zeros(n)?;
                let st = world.d_allreduce(&x, &mut out, sum, cfg)?;
                (out, st)
            }
            CollOp::ReduceScatter => {
                let mut out = zeros(self.counts[rank])?;
                let st = world.d_reduce_scatter(&x, &mut out, &self.counts, sum, cfg)?;
                (out, st)
            }
            CollOp::Reduce => {
                let mut out = zeros(at_root(n))?;
                let st = world.d_reduce(&x, &mut out, root, sum, cfg)?;
                (out, st)
            }
            CollOp::Bcast => {
                let mut buf = if rank == root { x } else { zeros(n)? };
                let st = world.d_bcast(&mut buf, root, cfg)?;
                (buf, st)
            }
            CollOp::Scatter => {
                let mut out = zeros(n)?;
                let st = world.d_scatter(&x, &mut out, root, cfg)?;
                (out, st)
            }
            CollOp::Gather => {
                let mut out = zeros(at_root(n * p))?;
                let st = world.d_gather(&x, &mut out, root, cfg)?;
                (out, st)
            }
            CollOp::Allgather => {
                let mut out = zeros(n * p)?;
                let st = world.d_allgather(&x, &mut out, cfg)?;
                (out, st)
            }
            CollOp::Alltoall => {
                let mut out = zeros(n * p)?;
                let st = world.d_alltoall(&x, &mut out, cfg)?;
                (out, st)
            }
            CollOp::P2p => {
                let partner = rank ^ 1;
                if partner >= p {
                    return Ok(None);
                }
                let mut got = zeros(n)?;
                if rank.is_multiple_of(2) {
                    let sent = world.d_send(partner, &x, 1, cfg);
                    let back = world.d_recv(partner, &mut got, 2, cfg);
                    (x, back.and(sent)?)
                } else {
                    let st = world.d_recv(partner, &mut got, 1, cfg);
                    let echo = world.d_send(partner, &got, 2, cfg);
                    (got, st.and(echo)?)
                }
            }
        };
        b.out = down(&out)?;
        Ok(Some(st))
    }
}

/// A device copy of `host`, complete when this returns (cust copies pageable memory on
/// the legacy stream, which the collectives' stream does not wait for).
#[cfg(feature = "cuda")]
fn up<T: Value>(host: &[T]) -> Result<cust::memory::DeviceBuffer<T>> {
    let fail = |e: cust::error::CudaError| collectives::CollError::Config(format!("device upload: {e}"));
    let d = cust::memory::DeviceBuffer::from_slice(host).map_err(fail)?;
    cust::context::CurrentContext::synchronize().map_err(fail)?;
    Ok(d)
}

/// A host copy of `dev`.
#[cfg(feature = "cuda")]
fn down<T: Value>(dev: &cust::memory::DeviceSlice<T>) -> Result<Vec<T>> {
    use cust::memory::CopyDestination;
    let mut host = vec![T::default(); dev.len()];
    if !host.is_empty() {
        dev.copy_to(&mut host[..]).map_err(|e| collectives::CollError::Config(format!("device download: {e}")))?;
    }
    Ok(host)
}
