//! Kernel launches, function attributes and the occupancy calculator.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

use std::sync::OnceLock;

use ptx_emulator::{launch_with, LaunchDims, Limits};

use crate::abi::*;
use crate::device::MULTIPROCESSORS;
use crate::driver::{api, current, driver, put};
use crate::module::Function;
use crate::queue::Failure;
use crate::stream::submit;

const MAX_THREADS_PER_BLOCK: u32 = 1024;
const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
const MAX_GRID_DIM: [u32; 3] = [(1 << 31) - 1, 65535, 65535];
const MAX_SHARED_PER_BLOCK: u32 = 48 << 10;
const MAX_THREADS_PER_SM: u32 = 2048;
const MAX_BLOCKS_PER_SM: u32 = 32;

/// `CCOLL_EMU_MAX_INSTRUCTIONS`: a launch that executes more instructions (over all its
/// threads) fails with CUDA_ERROR_LAUNCH_TIMEOUT, so a kernel that never ends cannot
/// hang a test run. Unset: no limit.
fn limits() -> Limits {
    static LIMITS: OnceLock<Limits> = OnceLock::new();
    *LIMITS.get_or_init(|| match std::env::var("CCOLL_EMU_MAX_INSTRUCTIONS") {
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(n) if n >= 1.0 => Limits { max_instructions: n as u64 },
            _ => {
                eprintln!("ccoll-emu: CCOLL_EMU_MAX_INSTRUCTIONS={v:?} is not a positive count; no limit");
                Limits::default()
            }
        },
        Err(_) => Limits::default(),
    })
}

fn function(f: CUfunction) -> Result<Arc<Function>, CUresult> {
    driver()?.functions.get(f).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// INVALID_VALUE (with a diagnostic) for dimensions the device does not accept.
fn check_dims(name: &str, grid: [u32; 3], block: [u32; 3], shared: u32) -> Result<(), CUresult> {
    let threads = block.iter().map(|&b| b as u64).product::<u64>();
    let why = if grid.contains(&0) || block.contains(&0) {
        "a zero dimension"
    } else if grid.iter().zip(MAX_GRID_DIM).any(|(&g, m)| g > m) {
        "grid dimension above the device limit (2^31-1, 65535, 65535)"
    } else if block.iter().zip(MAX_BLOCK_DIM).any(|(&b, m)| b > m) || threads > MAX_THREADS_PER_BLOCK as u64 {
        "block above the device limit (1024 threads; 1024, 1024, 64)"
    } else if shared > MAX_SHARED_PER_BLOCK {
        "dynamic shared memory above 48 KiB"
    } else {
        return Ok(());
    };
    eprintln!("ccoll-emu: cuLaunchKernel {name}: grid {grid:?} block {block:?} shared {shared}: {why}");
    Err(CUDA_ERROR_INVALID_VALUE)
}

/// The packed parameter buffer, from `kernelParams` (one pointer per `.param`, sizes
/// from the entry's list) or from `extra` (a buffer whose size must equal the packed
/// size exactly).
unsafe fn param_buffer(f: &Function, params: *mut *mut c_void, extra: *mut *mut c_void) -> Result<Vec<u8>, CUresult> {
    let size = f.module.param_buffer_size(f.entry);
    let list = f.module.params(f.entry);
    let bad = |why: String| {
        eprintln!("ccoll-emu: cuLaunchKernel {}: {why}", f.name);
        CUDA_ERROR_INVALID_VALUE
    };
    match (params.is_null(), extra.is_null()) {
        (false, false) => Err(bad("both kernelParams and extra given".into())),
        (true, true) if list.is_empty() => Ok(Vec::new()),
        (true, true) => Err(bad(format!("no arguments given for {} parameters", list.len()))),
        (false, true) => {
            let mut buf = vec![0u8; size];
            for (i, p) in list.iter().enumerate() {
                let arg = *params.add(i);
                if arg.is_null() {
                    return Err(bad(format!("kernelParams[{i}] ({}) is null", p.name)));
                }
                std::ptr::copy_nonoverlapping(arg.cast::<u8>(), buf[p.offset..].as_mut_ptr(), p.size);
            }
            Ok(buf)
        }
        (true, false) => {
            let (mut data, mut len): (*const u8, Option<usize>) = (std::ptr::null(), None);
            let mut i = 0;
            loop {
                match *extra.add(i) as usize {
                    CU_LAUNCH_PARAM_END => break,
                    CU_LAUNCH_PARAM_BUFFER_POINTER => data = (*extra.add(i + 1)).cast(),
                    CU_LAUNCH_PARAM_BUFFER_SIZE => {
                        let p = (*extra.add(i + 1)).cast::<usize>();
                        len = (!p.is_null()).then(|| *p);
                    }
                    other => return Err(bad(format!("unknown extra marker {other:#x}"))),
                }
                i += 2;
            }
            let len = len.ok_or_else(|| bad("extra has no CU_LAUNCH_PARAM_BUFFER_SIZE".into()))?;
            if data.is_null() {
                return Err(bad("extra has no CU_LAUNCH_PARAM_BUFFER_POINTER".into()));
            }
            if len != size {
                return Err(bad(format!("parameter buffer is {len} bytes, the .param list packs to {size}")));
            }
            Ok(std::slice::from_raw_parts(data, len).to_vec())
        }
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: CUfunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_bytes: c_uint,
    h: CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    api(|| {
        let ctx = current()?;
        let func = function(f)?;
        if func.ctx != ctx.handle {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let dims = LaunchDims { grid: [grid_x, grid_y, grid_z], block: [block_x, block_y, block_z] };
        check_dims(&func.name, dims.grid, dims.block, shared_bytes)?;
        let buf = param_buffer(&func, params, extra)?;
        let mem = Arc::clone(&driver()?.mem);
        let work = Box::new(move || {
            let result = launch_with(&func.module, func.entry, dims, &buf, &mut mem.lock().unwrap(), limits());
            match result {
                Ok(stats) => {
                    crate::stats::record(&func.name, dims, &stats);
                    Ok(())
                }
                Err(fault) => Err(Failure { code: fault.cuda_error(), message: fault.to_string() }),
            }
        });
        submit(&ctx, h, work).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncGetAttribute(pi: *mut c_int, attrib: c_int, f: CUfunction) -> CUresult {
    api(|| {
        function(f)?;
        let cc = driver()?.cc as c_int;
        let v = match attrib {
            0 => MAX_THREADS_PER_BLOCK as c_int, // MAX_THREADS_PER_BLOCK
            1..=3 => 0,                          // SHARED_, CONST_, LOCAL_SIZE_BYTES (not modelled)
            4 => 32,                             // NUM_REGS (not modelled: a typical figure)
            5 | 6 => cc,                         // PTX_VERSION, BINARY_VERSION
            7 => 0,                              // CACHE_MODE_CA
            8 => MAX_SHARED_PER_BLOCK as c_int,  // MAX_DYNAMIC_SHARED_SIZE_BYTES
            9 => -1,                             // PREFERRED_SHARED_MEMORY_CARVEOUT (default)
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        };
        put(pi, v)
    })
}

/// Cache and shared-memory preferences do not change how the interpreter runs.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetCacheConfig(f: CUfunction, config: c_uint) -> CUresult {
    api(|| {
        function(f)?;
        if config > 3 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncSetSharedMemConfig(f: CUfunction, config: c_uint) -> CUresult {
    api(|| {
        function(f)?;
        if config > 2 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    })
}

/// Resident blocks per multiprocessor: limited by threads and the block count (the
/// kernels use no shared memory and registers are not modelled).
fn blocks_per_sm(block_size: u32) -> u32 {
    (MAX_THREADS_PER_SM / block_size).min(MAX_BLOCKS_PER_SM)
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut c_int, f: CUfunction, block_size: c_int, _smem: usize) -> CUresult {
    api(|| {
        function(f)?;
        if !(1..=MAX_THREADS_PER_BLOCK as c_int).contains(&block_size) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(n, blocks_per_sm(block_size as u32) as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSize(
    min_grid: *mut c_int,
    block: *mut c_int,
    f: CUfunction,
    _smem_for_block: Option<unsafe extern "C" fn(c_int) -> usize>,
    _smem: usize,
    limit: c_int,
) -> CUresult {
    api(|| {
        function(f)?;
        let size = if limit > 0 { (limit as u32).min(MAX_THREADS_PER_BLOCK) } else { MAX_THREADS_PER_BLOCK };
        put(block, size as c_int)?;
        put(min_grid, (blocks_per_sm(size) * MULTIPROCESSORS as u32) as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyAvailableDynamicSMemPerBlock(smem: *mut usize, f: CUfunction, blocks: c_int, block_size: c_int) -> CUresult {
    api(|| {
        function(f)?;
        if blocks <= 0 || block_size <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(smem, MAX_SHARED_PER_BLOCK as usize)
    })
}
