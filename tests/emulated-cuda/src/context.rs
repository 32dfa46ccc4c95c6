//! Contexts: the primary context, created contexts, the current-context stack, and
//! context-wide synchronisation and teardown.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::device::check_device;
use crate::driver::{api, current, current_any, driver, put, CURRENT};
use crate::queue::{Queue, Sticky};
use crate::stream::Stream;

/// `cuCtxGetApiVersion`: the context API of CUDA 3.2 and later.
const CONTEXT_API_VERSION: c_uint = 3020;
/// CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE, CU_LIMIT_MALLOC_HEAP_SIZE and their
/// defaults on NVIDIA devices; the other limits read 0.
const DEFAULT_LIMITS: [(u32, usize); 3] = [(0, 1024), (1, 1 << 20), (2, 8 << 20)];
/// The highest CUlimit value (CU_LIMIT_PERSISTING_L2_CACHE_SIZE).
const MAX_LIMIT: u32 = 6;
/// Stream priorities: 0 is the lowest (and default), -5 the greatest.
pub const LEAST_PRIORITY: c_int = 0;
pub const GREATEST_PRIORITY: c_int = -5;

pub struct Context {
    pub handle: usize,
    pub flags: AtomicU32,
    pub sticky: Arc<Sticky>,
    /// The legacy default stream (handle 0).
    pub legacy: Arc<Queue>,
    /// Live streams created in this context.
    pub streams: Mutex<Vec<Arc<Stream>>>,
    /// Bases of this context's device allocations.
    pub allocations: Mutex<HashSet<u64>>,
    limits: Mutex<HashMap<u32, usize>>,
    cache_config: AtomicU32,
    shared_config: AtomicU32,
}

impl Context {
    /// Blocks until every stream of the context has run its work; then its sticky error.
    pub fn synchronize(&self) -> Result<(), CUresult> {
        self.legacy.drain();
        let streams: Vec<Arc<Stream>> = self.streams.lock().unwrap().clone();
        for s in streams {
            s.queue.drain();
        }
        self.sticky.get()
    }
}

fn create_context(flags: c_uint) -> Result<usize, CUresult> {
    let d = driver()?;
    let handle = d.contexts.insert_with(|handle| {
        let sticky = Arc::new(Sticky::default());
        Ok::<_, CUresult>(Context {
            handle,
            flags: AtomicU32::new(flags),
            legacy: Queue::start(Arc::clone(&sticky))?,
            sticky,
            streams: Mutex::new(Vec::new()),
            allocations: Mutex::new(HashSet::new()),
            limits: Mutex::new(DEFAULT_LIMITS.into_iter().collect()),
            cache_config: AtomicU32::new(0),
            shared_config: AtomicU32::new(0),
        })
    })?;
    Ok(handle as usize)
}

/// Waits for the context's work, then releases everything it owns: streams, modules,
/// device allocations. Later calls with its handle get INVALID_CONTEXT.
fn destroy_context(handle: usize) -> Result<(), CUresult> {
    let d = driver()?;
    let ctx = d.contexts.remove(handle as CUcontext).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    let _ = ctx.synchronize();
    ctx.legacy.close();
    for s in d.streams.remove_where(|s| s.ctx == handle) {
        s.queue.close();
    }
    ctx.streams.lock().unwrap().clear();
    crate::module::unload_all(handle);
    let mut mem = d.mem.lock().unwrap();
    for base in ctx.allocations.lock().unwrap().drain() {
        let _ = mem.free(base);
    }
    Ok(())
}

/// Replaces the top of this thread's context stack (pushes onto an empty one); a null
/// handle unbinds the current context.
fn set_current(handle: usize) {
    CURRENT.with(|c| {
        let mut stack = c.borrow_mut();
        stack.pop();
        if handle != 0 {
            stack.push(handle);
        }
    });
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        let d = driver()?;
        let mut primary = d.primary.lock().unwrap();
        let handle = match &mut *primary {
            Some((h, count)) if d.contexts.get(*h as CUcontext).is_some() => {
                *count += 1;
                *h
            }
            _ => {
                let h = create_context(0)?;
                *primary = Some((h, 1));
                h
            }
        };
        put(pctx, handle as CUcontext)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        let d = driver()?;
        let mut primary = d.primary.lock().unwrap();
        match &mut *primary {
            Some((h, count)) => {
                *count -= 1;
                if *count == 0 {
                    let h = *h;
                    *primary = None;
                    destroy_context(h)?;
                }
                Ok(())
            }
            None => Err(CUDA_ERROR_INVALID_CONTEXT),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        let d = driver()?;
        if let Some((h, _)) = d.primary.lock().unwrap().take() {
            let _ = destroy_context(h);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) -> CUresult {
    api(|| {
        check_device(dev)?;
        let d = driver()?;
        if let Some((h, _)) = *d.primary.lock().unwrap() {
            if let Some(ctx) = d.contexts.get(h as CUcontext) {
                ctx.flags.store(flags, Ordering::Relaxed);
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        if pctx.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let h = create_context(flags)?;
        CURRENT.with(|c| c.borrow_mut().push(h));
        put(pctx, h as CUcontext)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxDestroy_v2(ctx: CUcontext) -> CUresult {
    api(|| {
        let d = driver()?;
        let h = ctx as usize;
        if d.primary.lock().unwrap().is_some_and(|(p, _)| p == h) {
            // The primary context is released, never destroyed, by its users.
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        destroy_context(h)?;
        CURRENT.with(|c| c.borrow_mut().retain(|&x| x != h));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> CUresult {
    api(|| {
        let d = driver()?;
        if !ctx.is_null() && d.contexts.get(ctx).is_none() {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        set_current(ctx as usize);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(pctx: *mut CUcontext) -> CUresult {
    api(|| {
        driver()?;
        let top = CURRENT.with(|c| c.borrow().last().copied()).unwrap_or(0);
        put(pctx, top as CUcontext)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CUresult {
    api(|| {
        if driver()?.contexts.get(ctx).is_none() {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        CURRENT.with(|c| c.borrow_mut().push(ctx as usize));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CUresult {
    api(|| {
        driver()?;
        let top = CURRENT.with(|c| c.borrow_mut().pop()).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if !pctx.is_null() {
            *pctx = top as CUcontext;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> CUresult {
    api(|| current_any()?.synchronize())
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CUresult {
    api(|| {
        current()?;
        put(device, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut c_uint) -> CUresult {
    api(|| put(flags, current()?.flags.load(Ordering::Relaxed)))
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) -> CUresult {
    api(|| {
        let d = driver()?;
        if ctx.is_null() {
            current_any()?;
        } else if d.contexts.get(ctx).is_none() {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        put(version, CONTEXT_API_VERSION)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetLimit(pvalue: *mut usize, limit: c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        if limit > MAX_LIMIT {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let v = ctx.limits.lock().unwrap().get(&limit).copied().unwrap_or(0);
        put(pvalue, v)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetLimit(limit: c_uint, value: usize) -> CUresult {
    api(|| {
        let ctx = current()?;
        if limit > MAX_LIMIT {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        ctx.limits.lock().unwrap().insert(limit, value);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCacheConfig(pconfig: *mut c_uint) -> CUresult {
    api(|| put(pconfig, current()?.cache_config.load(Ordering::Relaxed)))
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCacheConfig(config: c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        // CU_FUNC_CACHE_PREFER_NONE .. CU_FUNC_CACHE_PREFER_EQUAL
        if config > 3 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        ctx.cache_config.store(config, Ordering::Relaxed);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetSharedMemConfig(pconfig: *mut c_uint) -> CUresult {
    api(|| put(pconfig, current()?.shared_config.load(Ordering::Relaxed)))
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetSharedMemConfig(config: c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        // CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE .. EIGHT_BYTE_BANK_SIZE
        if config > 2 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        ctx.shared_config.store(config, Ordering::Relaxed);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CUresult {
    api(|| {
        current()?;
        if !least.is_null() {
            *least = LEAST_PRIORITY;
        }
        if !greatest.is_null() {
            *greatest = GREATEST_PRIORITY;
        }
        Ok(())
    })
}
