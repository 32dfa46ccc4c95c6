//! Initialisation, the one device and its attributes, versions and error texts.

use std::ffi::{c_char, c_int, c_uint};

use crate::abi::*;
use crate::driver::{api, driver, init, put};

/// What `cuDeviceGetName` reports: says plainly that this is no NVIDIA GPU.
pub const DEVICE_NAME: &str = "ccoll emulated CUDA device (PTX interpreter)";
/// Multiprocessors reported: few, so that grid-stride kernels get several blocks each.
pub const MULTIPROCESSORS: c_int = 4;
/// The CUDA version this driver API matches (cuDriverGetVersion: 1000 * major + 10 * minor).
pub const DRIVER_VERSION: c_int = 12020;

pub fn check_device(dev: CUdevice) -> Result<(), CUresult> {
    driver()?;
    if dev == 0 {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_DEVICE)
    }
}

/// CUdevice_attribute values the device reports; attributes not listed read 0 (a
/// capability it does not have). Numbers from NVIDIA's cuda.h.
fn attribute(attr: c_int, cc: u32) -> Option<c_int> {
    Some(match attr {
        1 => 1024,                // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,            // MAX_BLOCK_DIM_X, _Y
        4 => 64,                  // MAX_BLOCK_DIM_Z
        5 => i32::MAX,            // MAX_GRID_DIM_X
        6 | 7 => 65535,           // MAX_GRID_DIM_Y, _Z
        8 => 48 << 10,            // MAX_SHARED_MEMORY_PER_BLOCK
        9 => 64 << 10,            // TOTAL_CONSTANT_MEMORY
        10 => 32,                 // WARP_SIZE
        11 => i32::MAX,           // MAX_PITCH
        12 => 64 << 10,           // MAX_REGISTERS_PER_BLOCK
        13 => 1_410_000,          // CLOCK_RATE (kHz)
        14 => 512,                // TEXTURE_ALIGNMENT
        15 => 1,                  // GPU_OVERLAP
        16 => MULTIPROCESSORS,    // MULTIPROCESSOR_COUNT
        19 => 1,                  // CAN_MAP_HOST_MEMORY
        30 => 512,                // SURFACE_ALIGNMENT
        31 => 1,                  // CONCURRENT_KERNELS
        36 => 1_215_000,          // MEMORY_CLOCK_RATE (kHz)
        37 => 5120,               // GLOBAL_MEMORY_BUS_WIDTH
        38 => 40 << 20,           // L2_CACHE_SIZE
        39 => 2048,               // MAX_THREADS_PER_MULTIPROCESSOR
        40 => 2,                  // ASYNC_ENGINE_COUNT
        41 => 1,                  // UNIFIED_ADDRESSING
        75 => (cc / 10) as c_int, // COMPUTE_CAPABILITY_MAJOR
        76 => (cc % 10) as c_int, // COMPUTE_CAPABILITY_MINOR
        81 => 164 << 10,          // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
        82 => 64 << 10,           // MAX_REGISTERS_PER_MULTIPROCESSOR
        97 => 48 << 10,           // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        106 => 32,                // MAX_BLOCKS_PER_MULTIPROCESSOR
        // Up to CU_DEVICE_ATTRIBUTE_MAX of CUDA 12.2.
        a if (1..=132).contains(&a) => 0,
        _ => return None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CUresult {
    api(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        init();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CUresult {
    api(|| put(version, DRIVER_VERSION))
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    api(|| {
        driver()?;
        put(count, 1)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    api(|| {
        check_device(ordinal)?;
        put(device, ordinal)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // Truncated to `len - 1` bytes plus the terminating NUL, as NVIDIA's does.
        let n = DEVICE_NAME.len().min(len as usize - 1);
        std::ptr::copy_nonoverlapping(DEVICE_NAME.as_ptr(), name.cast::<u8>(), n);
        *name.add(n) = 0;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        let v = attribute(attrib, driver()?.cc).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        put(pi, v)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CUresult {
    api(|| {
        check_device(dev)?;
        // The interpreter's capacity (allocations live in host RAM).
        put(bytes, driver()?.mem.lock().unwrap().capacity())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(error: CUresult, pstr: *mut *const c_char) -> CUresult {
    error_text(error, pstr, |(_, text)| text)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(error: CUresult, pstr: *mut *const c_char) -> CUresult {
    error_text(error, pstr, |(name, _)| name)
}

/// Works before cuInit, as NVIDIA's does; an unknown code gives NULL and INVALID_VALUE.
unsafe fn error_text(error: CUresult, out: *mut *const c_char, pick: fn((&'static str, &'static str)) -> &'static str) -> CUresult {
    if out.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    match error_texts(error) {
        Some(t) => {
            put_cstr(out, pick(t));
            CUDA_SUCCESS
        }
        None => {
            *out = std::ptr::null();
            CUDA_ERROR_INVALID_VALUE
        }
    }
}
