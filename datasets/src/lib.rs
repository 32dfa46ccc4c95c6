//! Seeded field generators, SDRBench-style raw-file loaders, field statistics and
//! quality metrics.
//!
//! Every generator is deterministic for a given seed, so benchmarks and tests on
//! different machines see the same values. The generated fields imitate the data that
//! compression-accelerated collectives are evaluated on (see `docs/datasets.md` for the
//! statistics each one matches):
//!
//! | name | module | what |
//! |---|---|---|
//! | `smooth3d`, `grad16m` | [`generate`] | the reference-figures definitions |
//! | `rtm` | [`seismic`] | RTM seismic wavefield snapshot, 3D |
//! | `hurricane` | [`weather`] | hurricane U wind, 3D |
//! | `cesm`, `seaice` | [`climate`] | CESM-like surface temperature and sea-ice fraction, 2D |
//! | `grad`, `grad-bf16` | [`gradients`] | deep-learning gradients, f32 and bf16 |
//!
//! ```
//! let spec = datasets::parse_spec("rtm").unwrap();
//! let d = spec.load_len(4096, 7).unwrap();
//! assert_eq!((d.values.len(), d.dims.iter().product::<usize>()), (4096, 4096));
//! ```

pub mod climate;
mod error;
pub mod generate;
pub mod gradients;
pub mod grid;
pub mod metrics;
mod noise;
pub mod raw;
mod registry;
pub mod seismic;
pub mod stats;
pub mod weather;

pub use error::{Error, Result};
pub use generate::{grad16m, laplace_gradients, smooth3d, smooth3d_field, smooth3d_grid, DEFAULT_SEED};
pub use metrics::{max_abs_error, nrmse, psnr, value_range};
pub use raw::{read_raw, write_raw};
pub use registry::{by_name, parse_spec, Dataset, Named, RawType, Spec, Values};
pub use stats::{field_stats, FieldStats};
