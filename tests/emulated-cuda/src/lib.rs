//! `libcuda.so` for an emulated CUDA device: the CUDA driver API, with the C ABI of
//! NVIDIA's library, over the `ptx-emulator` interpreter.
//!
//! Programs linked against the CUDA driver (cust, and so `codec-host --features cuda`)
//! load this library instead when its directory comes first on `LD_LIBRARY_PATH`; see
//! `cargo xtask emulate` and docs/gpu.md ("The emulated device"). There is one device.
//! Its streams are real: work is queued per stream and run in order on a worker thread,
//! asynchronously to the host, so missing synchronisation in host code shows up (more
//! reliably with `CCOLL_EMU_STREAM_DELAY_US`). Kernel faults found by the interpreter's
//! memcheck become the context's sticky error, as on hardware.
//!
//! Environment: `CCOLL_EMU_CC` (compute capability, default 80),
//! `CCOLL_EMU_STREAM_DELAY_US` (delay before each queued operation),
//! `CCOLL_EMU_STATS` (file receiving one JSON line per launch), `CCOLL_EMU_MEM_BYTES`
//! (device capacity in bytes, default 4 GiB).
//!
//! Arrays, textures, surfaces, graphs, external memory, the linker and managed memory
//! answer `CUDA_ERROR_NOT_SUPPORTED`.

// Every export takes raw pointers from C callers; their validity is the caller's
// contract, as with NVIDIA's library.
#![allow(clippy::missing_safety_doc)]

pub mod abi;
mod context;
mod device;
mod driver;
mod event;
mod launch;
mod memory;
mod module;
mod queue;
mod registry;
mod stats;
mod stream;
mod unsupported;

pub use context::*;
pub use device::*;
pub use event::*;
pub use launch::*;
pub use memory::*;
pub use module::*;
pub use stream::*;
pub use unsupported::*;
