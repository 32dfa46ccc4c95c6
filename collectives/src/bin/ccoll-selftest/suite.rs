//! Bookkeeping of the self-test: cases, failures, comparisons and cross-rank sums.

use collectives::{first_excess, CollStats, Value};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The test state of one rank. Every rank runs the same sequence of calls whatever
/// fails, so that a failure never turns into a hang.
pub struct Suite {
    pub world: SimpleCommunicator,
    pub rank: usize,
    pub p: usize,
    pub cases: usize,
    pub failures: Vec<String>,
    /// Run every case on device buffers too (`--device`, feature `cuda`).
    pub device: bool,
    /// Kernel launches of the device runs.
    pub device_launches: u64,
}

impl Suite {
    pub fn new(world: SimpleCommunicator) -> Self {
        let (rank, p) = (world.rank() as usize, world.size() as usize);
        Suite { world, rank, p, cases: 0, failures: Vec::new(), device: false, device_launches: 0 }
    }

    /// Records a failure unless `ok`.
    pub fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let msg = format!("rank {}: {}", self.rank, what());
            eprintln!("FAIL {msg}");
            self.failures.push(msg);
        }
    }

    /// Compares `got` with `want` value by value: non-finite values must match exactly
    /// (NaN with NaN, infinities by sign) whatever the allowance, finite ones within
    /// `allowed(index)`.
    pub fn compare<T: Value>(&mut self, case: &str, got: &[T], want: &[T], allowed: impl Fn(usize) -> f64) {
        self.cases += 1;
        if got.len() != want.len() {
            return self.expect(false, || format!("{case}: {} values, expected {}", got.len(), want.len()));
        }
        if let Some(e) = first_excess(got, want, allowed) {
            let (g, w) = (got[e.index], want[e.index]);
            self.expect(false, || format!("{case}: |error| {:.3e} > allowed {:.3e} at {} (got {g:?}, want {w:?})", e.error, e.allowed, e.index));
        }
    }

    /// Checks the accounting every compressed call reports.
    pub fn check_stats(&mut self, case: &str, st: &CollStats, algorithm: collectives::Algorithm, k: u32) {
        self.expect(st.algorithm == algorithm, || format!("{case}: ran {}, asked for {algorithm}", st.algorithm));
        self.expect(st.compressions_per_value == k, || format!("{case}: k = {}, expected {k}", st.compressions_per_value));
        if let (Some(bound), Some(e)) = (st.error_bound, st.abs_error) {
            self.expect((bound - e * f64::from(k)).abs() <= 1e-12 * bound.abs(), || format!("{case}: bound {bound} is not {k} x {e}"));
        }
    }

    /// Sum of `v` over all ranks.
    pub fn sum(&self, v: u64) -> u64 {
        let mut total = 0u64;
        self.world.all_reduce_into(&v, &mut total, SystemOperation::sum());
        total
    }

    /// Largest `v` over all ranks.
    pub fn max(&self, v: f64) -> f64 {
        let mut m = 0f64;
        self.world.all_reduce_into(&v, &mut m, SystemOperation::max());
        m
    }
}
