//! Seeded field generators, SDRBench-style raw-file loaders and quality metrics.
//!
//! Every generator is deterministic for a given seed, so benchmarks and tests on
//! different machines see the same values.

pub mod generate;
pub mod metrics;

pub use generate::{grad16m, laplace_gradients, smooth3d, smooth3d_field};
pub use metrics::{max_abs_error, nrmse, psnr, value_range};
