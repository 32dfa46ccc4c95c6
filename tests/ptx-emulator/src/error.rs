//! Typed errors: loading a module, host-side memory operations, and launch faults.

use std::fmt;

/// Why a module could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The text is not PTX this parser understands.
    #[error("PTX line {line}: {message}")]
    Syntax { line: u32, message: String },
    /// A construct the emulator cannot execute faithfully.
    #[error("PTX line {line}: unsupported: {message}")]
    Unsupported { line: u32, message: String },
    /// Module-scope variables could not be placed in device memory.
    #[error("allocating module globals: {0}")]
    Memory(#[from] MemError),
}

/// A host-side operation on device memory that was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error("zero-byte allocation")]
    ZeroSize,
    #[error("out of device memory allocating {0} bytes")]
    OutOfMemory(usize),
    #[error("{0:#x} is not the base of a live allocation")]
    NotABase(u64),
    #[error("range {addr:#x}+{len} is not inside one live allocation")]
    OutOfBounds { addr: u64, len: usize },
    #[error("fill pattern must be 1, 2 or 4 bytes, got {0}")]
    BadPattern(usize),
}

/// Where in a launch something happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The `.entry` launched.
    pub kernel: String,
    /// The function executing (the entry itself or a `.func` it called).
    pub function: String,
    /// 1-based line of the instruction in the loaded PTX text.
    pub line: u32,
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "kernel {} ", self.kernel)?;
        if self.function != self.kernel {
            write!(f, "(in {}) ", self.function)?;
        }
        write!(f, "PTX line {}, block ({bx},{by},{bz}) thread ({tx},{ty},{tz})", self.line)
    }
}

/// Which memory an access went to, after generic addresses were resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    Local,
    Param,
    /// A generic address in neither the global nor the local window.
    Generic,
}

/// What an access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// Why a launch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// Memcheck: the access is outside every live allocation (or the thread's frame).
    #[error("illegal address: {site}: {kind:?} of {size} bytes at {addr:#x} ({space:?}): {detail}")]
    IllegalAddress { site: Site, addr: u64, size: u32, kind: AccessKind, space: Space, detail: String },
    /// Memcheck: the address is not a multiple of the access size.
    #[error("misaligned address: {site}: {kind:?} of {size} bytes at {addr:#x} ({space:?})")]
    Misaligned { site: Site, addr: u64, size: u32, kind: AccessKind, space: Space },
    /// The kernel executed `trap` (e.g. a Rust panic in device code).
    #[error("trap: {site}")]
    Trap { site: Site },
    /// Behaviour the PTX ISA leaves undefined (e.g. a `brx.idx` index out of range).
    #[error("undefined behaviour: {site}: {detail}")]
    Undefined { site: Site, detail: String },
    /// The launch executed more instructions than its [`crate::Limits`] allow (a kernel
    /// that does not terminate, e.g. a grid-stride loop over a wrong length).
    #[error("launch timeout: {kernel} executed over {limit} instructions")]
    Timeout { kernel: String, limit: u64 },
    /// The parameter buffer does not match the entry's `.param` list.
    #[error("parameter buffer for {kernel} is {got} bytes, its .param list packs to {expected}")]
    ParamMismatch { kernel: String, expected: usize, got: usize },
    /// Launch dimensions the device does not accept.
    #[error("invalid launch: {0}")]
    InvalidLaunch(String),
}

impl Fault {
    /// The CUresult a driver reports for this fault.
    pub fn cuda_error(&self) -> u32 {
        match self {
            Fault::IllegalAddress { .. } | Fault::Misaligned { .. } => 700, // CUDA_ERROR_ILLEGAL_ADDRESS
            Fault::ParamMismatch { .. } | Fault::InvalidLaunch(_) => 1,     // CUDA_ERROR_INVALID_VALUE
            Fault::Trap { .. } | Fault::Undefined { .. } => 719,            // CUDA_ERROR_LAUNCH_FAILED
            Fault::Timeout { .. } => 702,                                   // CUDA_ERROR_LAUNCH_TIMEOUT
        }
    }
}
