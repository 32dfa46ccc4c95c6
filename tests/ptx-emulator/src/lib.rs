//! An emulated CUDA device's instruction set: a PTX interpreter for the modules that
//! `cargo xtask build-ptx` writes.
//!
//! [`Module::load`] parses PTX text and pre-decodes every function into a compact form
//! (registers resolved to slots, labels to instruction indices, immediates typed), and
//! refuses anything it cannot execute faithfully. [`launch`] runs every thread of a grid
//! one after another, which is a valid schedule because modules using cross-thread
//! operations (barriers, shuffles, shared memory, votes) are refused at load time.
//! Every memory access is checked (memcheck) and each launch reports the work it did
//! ([`LaunchStats`]).

mod alu;
mod cvt;
mod decode;
mod error;
mod exec;
mod ir;
mod lexer;
mod memory;
mod module;
mod parse;
mod stats;

pub use error::{AccessKind, Fault, LoadError, MemError, Site, Space};
pub use exec::{launch, launch_with, LaunchDims, Limits};
pub use memory::{Memory, DEFAULT_CAPACITY};
pub use module::{EntryId, Module, Param};
pub use stats::LaunchStats;
