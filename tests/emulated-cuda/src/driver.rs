//! The process-wide driver state (created by `cuInit`) and the per-thread stack of
//! current contexts.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

use ptx_emulator::{Memory, DEFAULT_CAPACITY};

use crate::abi::*;
use crate::context::Context;
use crate::event::Event;
use crate::memory::PinnedRange;
use crate::module::{Function, LoadedModule};
use crate::registry::Registry;
use crate::stream::Stream;

/// The device's compute capability when `CCOLL_EMU_CC` is unset.
const DEFAULT_CC: u32 = 80;

pub struct Driver {
    /// The device's global memory, shared by its contexts (addresses are unique
    /// device-wide, as with unified addressing).
    pub mem: Arc<Mutex<Memory>>,
    /// Compute capability, major * 10 + minor.
    pub cc: u32,
    pub contexts: Registry<Context>,
    pub streams: Registry<Stream>,
    pub events: Registry<Event>,
    pub modules: Registry<LoadedModule>,
    pub functions: Registry<Function>,
    /// Page-locked host ranges (allocated or registered), by start address.
    pub pinned: Mutex<BTreeMap<usize, PinnedRange>>,
    /// The primary context: its handle and retain count.
    pub primary: Mutex<Option<(usize, u32)>>,
}

static DRIVER: OnceLock<Driver> = OnceLock::new();

/// `CCOLL_EMU_CC`: e.g. 70, 80, 90 (or 8.0).
fn compute_capability() -> u32 {
    let Ok(v) = std::env::var("CCOLL_EMU_CC") else { return DEFAULT_CC };
    let v = v.trim();
    let parsed = match v.split_once('.') {
        Some((major, minor)) => major.parse::<u32>().ok().zip(minor.parse::<u32>().ok()).map(|(a, b)| a * 10 + b),
        None => v.parse::<u32>().ok(),
    };
    match parsed {
        Some(cc) if (30..=129).contains(&cc) => cc,
        _ => {
            eprintln!("ccoll-emu: CCOLL_EMU_CC={v:?} is not a compute capability like 80 or 8.0; using {DEFAULT_CC}");
            DEFAULT_CC
        }
    }
}

/// `CCOLL_EMU_MEM_BYTES`: the device's capacity in bytes (live allocations beyond it
/// fail with `CUDA_ERROR_OUT_OF_MEMORY`), so that tests can run a device out of memory.
fn capacity() -> usize {
    let Ok(v) = std::env::var("CCOLL_EMU_MEM_BYTES") else { return DEFAULT_CAPACITY };
    match v.trim().parse::<usize>() {
        Ok(bytes) if bytes > 0 => bytes,
        _ => {
            eprintln!("ccoll-emu: CCOLL_EMU_MEM_BYTES={v:?} is not a positive number of bytes; using {DEFAULT_CAPACITY}");
            DEFAULT_CAPACITY
        }
    }
}

pub fn init() {
    DRIVER.get_or_init(|| Driver {
        mem: Arc::new(Mutex::new(Memory::with_capacity(capacity()))),
        cc: compute_capability(),
        contexts: Registry::new(),
        streams: Registry::new(),
        events: Registry::new(),
        modules: Registry::new(),
        functions: Registry::new(),
        pinned: Mutex::new(BTreeMap::new()),
        primary: Mutex::new(None),
    });
}

/// The driver, or NOT_INITIALIZED before `cuInit`.
pub fn driver() -> Result<&'static Driver, CUresult> {
    DRIVER.get().ok_or(CUDA_ERROR_NOT_INITIALIZED)
}

thread_local! {
    /// This thread's context stack; the top is the current context.
    pub static CURRENT: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The current context even if it has a sticky error (for calls that still work then).
pub fn current_any() -> Result<Arc<Context>, CUresult> {
    let d = driver()?;
    let top = CURRENT.with(|c| c.borrow().last().copied()).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    d.contexts.get(top as CUcontext).ok_or(CUDA_ERROR_INVALID_CONTEXT)
}

/// The current context, or its sticky error.
pub fn current() -> Result<Arc<Context>, CUresult> {
    let ctx = current_any()?;
    ctx.sticky.get()?;
    Ok(ctx)
}

/// Runs an export's body: its error, or CUDA_ERROR_UNKNOWN (with a diagnostic) if it
/// panicked, since unwinding into C is not allowed.
pub fn api(body: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => {
            eprintln!("ccoll-emu: internal error (panic) in the emulated driver");
            CUDA_ERROR_UNKNOWN
        }
    }
}

/// Writes `value` through an out-parameter, INVALID_VALUE if it is null.
pub unsafe fn put<T>(out: *mut T, value: T) -> Result<(), CUresult> {
    if out.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    out.write(value);
    Ok(())
}
