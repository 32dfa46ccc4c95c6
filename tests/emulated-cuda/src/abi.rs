//! The C types and constants of the CUDA driver API this library uses. The values are
//! facts of NVIDIA's `cuda.h`; they are declared here because depending on cust_raw
//! would link NVIDIA's libcuda into the library that replaces it.

use std::ffi::{c_char, c_void};

pub type CUresult = u32;
pub type CUdevice = i32;
pub type CUdeviceptr = u64;
/// Opaque handles: this library hands out registry keys cast to pointers.
pub type CUcontext = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUhostFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// (code, name, description) as NVIDIA's cuGetErrorName / cuGetErrorString give them,
/// for every code this library can return, plus the common ones a caller may ask about.
pub const ERRORS: &[(CUresult, &str, &str)] = &[
    (0, "CUDA_SUCCESS\0", "no error\0"),
    (1, "CUDA_ERROR_INVALID_VALUE\0", "invalid argument\0"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY\0", "out of memory\0"),
    (3, "CUDA_ERROR_NOT_INITIALIZED\0", "initialization error\0"),
    (4, "CUDA_ERROR_DEINITIALIZED\0", "driver shutting down\0"),
    (100, "CUDA_ERROR_NO_DEVICE\0", "no CUDA-capable device is detected\0"),
    (101, "CUDA_ERROR_INVALID_DEVICE\0", "invalid device ordinal\0"),
    (200, "CUDA_ERROR_INVALID_IMAGE\0", "device kernel image is invalid\0"),
    (201, "CUDA_ERROR_INVALID_CONTEXT\0", "invalid device context\0"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU\0", "no kernel image is available for execution on the device\0"),
    (218, "CUDA_ERROR_INVALID_PTX\0", "a PTX JIT compilation failed\0"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND\0", "file not found\0"),
    (400, "CUDA_ERROR_INVALID_HANDLE\0", "invalid resource handle\0"),
    (500, "CUDA_ERROR_NOT_FOUND\0", "named symbol not found\0"),
    (600, "CUDA_ERROR_NOT_READY\0", "device not ready\0"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS\0", "an illegal memory access was encountered\0"),
    (701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\0", "too many resources requested for launch\0"),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT\0", "the launch timed out and was terminated\0"),
    (712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0", "part or all of the requested memory range is already mapped\0"),
    (713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0", "pointer does not correspond to a registered memory region\0"),
    (716, "CUDA_ERROR_MISALIGNED_ADDRESS\0", "misaligned address\0"),
    (719, "CUDA_ERROR_LAUNCH_FAILED\0", "unspecified launch failure\0"),
    (801, "CUDA_ERROR_NOT_SUPPORTED\0", "operation not supported\0"),
    (999, "CUDA_ERROR_UNKNOWN\0", "unknown error\0"),
];

/// `cuStreamCreate` flag: no implicit synchronisation with the legacy default stream.
pub const CU_STREAM_NON_BLOCKING: u32 = 0x1;
/// Special stream handles: the legacy default stream (also the null handle) and the
/// per-thread default stream.
pub const CU_STREAM_LEGACY: usize = 0x1;
pub const CU_STREAM_PER_THREAD: usize = 0x2;

/// `cuEventCreate` flags.
pub const CU_EVENT_BLOCKING_SYNC: u32 = 0x1;
pub const CU_EVENT_DISABLE_TIMING: u32 = 0x2;
pub const CU_EVENT_INTERPROCESS: u32 = 0x4;

/// `cuLaunchKernel` `extra` markers.
pub const CU_LAUNCH_PARAM_END: usize = 0x00;
pub const CU_LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
pub const CU_LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;

/// `CUmemorytype` of a 2D copy's source or destination.
pub const CU_MEMORYTYPE_HOST: u32 = 1;
pub const CU_MEMORYTYPE_DEVICE: u32 = 2;
pub const CU_MEMORYTYPE_ARRAY: u32 = 3;
pub const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// `CUDA_MEMCPY2D` (the `_v2` layout).
#[repr(C)]
pub struct CudaMemcpy2D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// The (name, description) of `code`, NUL-terminated, if it is a known CUresult.
pub fn error_texts(code: CUresult) -> Option<(&'static str, &'static str)> {
    ERRORS.iter().find(|e| e.0 == code).map(|e| (e.1, e.2))
}

/// Writes a `&'static str` ending in NUL through a `const char**` out-parameter.
pub(crate) unsafe fn put_cstr(out: *mut *const c_char, s: &'static str) {
    debug_assert!(s.ends_with('\0'));
    *out = s.as_ptr().cast();
}
