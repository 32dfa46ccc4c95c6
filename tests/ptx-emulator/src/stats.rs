//! Work counters of a launch, for the throughput estimate.

/// Dynamic instruction counts by class and bytes moved, summed over every thread of a
/// launch. Predicated-off instructions are not counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchStats {
    pub threads: u64,
    /// Integer arithmetic, logic, shifts, bit manipulation, moves.
    pub int_alu: u64,
    pub fp32: u64,
    pub fp64: u64,
    /// `cvt` and `cvta`.
    pub conversion: u64,
    /// Branches, calls, returns, exit, trap.
    pub control: u64,
    /// `setp`, `selp` and predicate logic.
    pub predicate: u64,
    pub global_load: u64,
    pub global_store: u64,
    pub global_atomic: u64,
    pub local_load: u64,
    pub local_store: u64,
    /// Parameter-space loads/stores and anything else.
    pub param_other: u64,
    pub global_load_bytes: u64,
    pub global_store_bytes: u64,
    pub local_load_bytes: u64,
    pub local_store_bytes: u64,
}

impl LaunchStats {
    /// Adds another launch's counts to these.
    pub fn add(&mut self, o: &LaunchStats) {
        self.threads += o.threads;
        self.int_alu += o.int_alu;
        self.fp32 += o.fp32;
        self.fp64 += o.fp64;
        self.conversion += o.conversion;
        self.control += o.control;
        self.predicate += o.predicate;
        self.global_load += o.global_load;
        self.global_store += o.global_store;
        self.global_atomic += o.global_atomic;
        self.local_load += o.local_load;
        self.local_store += o.local_store;
        self.param_other += o.param_other;
        self.global_load_bytes += o.global_load_bytes;
        self.global_store_bytes += o.global_store_bytes;
        self.local_load_bytes += o.local_load_bytes;
        self.local_store_bytes += o.local_store_bytes;
    }

    /// All dynamic instructions.
    pub fn instructions(&self) -> u64 {
        self.int_alu
            + self.fp32
            + self.fp64
            + self.conversion
            + self.control
            + self.predicate
            + self.global_load
            + self.global_store
            + self.global_atomic
            + self.local_load
            + self.local_store
            + self.param_other
    }
}
