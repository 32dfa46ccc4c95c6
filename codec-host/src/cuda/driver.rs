//! The CUDA driver library, loaded at run time.
//!
//! cust links `-lcuda`, which would make every cuda-enabled binary need `libcuda.so.1`
//! just to start, even for `--backend cpu`. This module defines every driver function
//! cust and this backend call as a forwarder to the same function of `libcuda.so.1`, opened with
//! `dlopen` on first use. The linker then finds these definitions before it reaches
//! `-lcuda`, and `--as-needed` (rustc's default on Linux) leaves the library out of the
//! binary's `NEEDED` list. Without the library every forwarder returns
//! `CUDA_ERROR_NO_DEVICE`, which `CudaBackend::on_device` reports as
//! [`crate::Error::NoDevice`] with the loader's reason ([`load_error`]).
//!
//! rust-lld takes the definitions from codec-host's archive whatever the order; for GNU
//! ld, which scans archives once in order, `CudaBackend::on_device` calling
//! [`load_error`] pulls this module's object, with every forwarder, before cust's archive
//! is reached (docs/gpu.md, "Running on a real GPU").

#![allow(non_snake_case)] // the driver API's own parameter names

use std::ffi::{c_char, c_int, c_uchar, c_uint, c_ushort, c_void, CStr};
use std::sync::OnceLock;

use cust::sys::*;

/// The driver library's name (its soname), as NVIDIA's installer and Debian ship it.
pub const LIBRARY: &str = "libcuda.so.1";

/// The `dlopen` handle of the driver library, or the loader's reason it failed.
struct Handle(*mut c_void);
// SAFETY: a dlopen handle is a process-wide token; dlsym may be called from any thread.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

fn library() -> &'static Result<Handle, String> {
    static LIB: OnceLock<Result<Handle, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        let name = c"libcuda.so.1";
        debug_assert_eq!(name.to_str(), Ok(LIBRARY));
        // SAFETY: a valid C string; dlerror is per thread and read right after the failure.
        unsafe {
            let h = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if h.is_null() {
                let why = libc::dlerror();
                Err(if why.is_null() { format!("{LIBRARY}: dlopen failed") } else { CStr::from_ptr(why).to_string_lossy().into_owned() })
            } else {
                Ok(Handle(h))
            }
        }
    })
}

/// Why the driver library could not be loaded (the loader's message), or `None` when it
/// is loaded. Loads it on the first call.
#[inline(never)]
pub fn load_error() -> Option<&'static str> {
    library().as_ref().err().map(String::as_str)
}

/// The address of `name` (a NUL-terminated symbol name) in the driver library, or the
/// error a forwarder returns: `CUDA_ERROR_NO_DEVICE` without the library (a system
/// without a driver has no device), `CUDA_ERROR_NOT_FOUND` for a symbol this driver
/// version lacks.
fn lookup(name: &'static str) -> Result<*mut c_void, CUresult> {
    let Ok(Handle(h)) = library() else { return Err(cudaError_enum::CUDA_ERROR_NO_DEVICE) };
    // SAFETY: a live handle and a NUL-terminated name.
    let p = unsafe { libc::dlsym(*h, name.as_ptr().cast::<c_char>()) };
    if p.is_null() {
        Err(cudaError_enum::CUDA_ERROR_NOT_FOUND)
    } else {
        Ok(p)
    }
}

/// Defines each listed driver function as a forwarder with cust's signature (checked
/// against `cust::sys` at compile time), resolving its target once.
macro_rules! forward {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {$(
        /// Forwards to the driver library's function of this name.
        ///
        /// # Safety
        /// The driver API's contract for this function.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
            type Real = unsafe extern "C" fn($($ty),*) -> CUresult;
            // cust's declaration has exactly this type.
            const _: Real = cust::sys::$name;
            static REAL: OnceLock<Result<Real, CUresult>> = OnceLock::new();
            let real = REAL.get_or_init(|| {
                // SAFETY: the library exports this symbol with the driver API's type.
                lookup(concat!(stringify!($name), "\0")).map(|p| unsafe { std::mem::transmute::<*mut c_void, Real>(p) })
            });
            match real {
                Ok(f) => f($($arg),*),
                Err(e) => *e,
            }
        }
    )*};
}

// Every driver function cust 0.3 and this backend (stream.rs) call, with cust_raw's
// signatures. A function missing here links to libcuda.so.1 directly again: the
// cli_backend test `starts_without_the_driver_library` then fails.
forward! {
    fn cuArray3DCreate_v2(pHandle: *mut CUarray, pAllocateArray: *const CUDA_ARRAY3D_DESCRIPTOR);
    fn cuArray3DGetDescriptor_v2(pArrayDescriptor: *mut CUDA_ARRAY3D_DESCRIPTOR, hArray: CUarray);
    fn cuArrayDestroy(hArray: CUarray);
    fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice);
    fn cuCtxDestroy_v2(ctx: CUcontext);
    fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint);
    fn cuCtxGetCacheConfig(pconfig: *mut CUfunc_cache);
    fn cuCtxGetCurrent(pctx: *mut CUcontext);
    fn cuCtxGetDevice(device: *mut CUdevice);
    fn cuCtxGetFlags(flags: *mut c_uint);
    fn cuCtxGetLimit(pvalue: *mut usize, limit: CUlimit);
    fn cuCtxGetSharedMemConfig(pConfig: *mut CUsharedconfig);
    fn cuCtxGetStreamPriorityRange(leastPriority: *mut c_int, greatestPriority: *mut c_int);
    fn cuCtxPopCurrent_v2(pctx: *mut CUcontext);
    fn cuCtxPushCurrent_v2(ctx: CUcontext);
    fn cuCtxSetCacheConfig(config: CUfunc_cache);
    fn cuCtxSetCurrent(ctx: CUcontext);
    fn cuCtxSetLimit(limit: CUlimit, value: usize);
    fn cuCtxSetSharedMemConfig(config: CUsharedconfig);
    fn cuCtxSynchronize();
    fn cuDestroyExternalMemory(extMem: CUexternalMemory);
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int);
    fn cuDeviceGetAttribute(pi: *mut c_int, attrib: CUdevice_attribute, dev: CUdevice);
    fn cuDeviceGetCount(count: *mut c_int);
    fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice);
    fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice);
    fn cuDevicePrimaryCtxReset_v2(dev: CUdevice);
    fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice);
    fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint);
    fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice);
    fn cuDriverGetVersion(driverVersion: *mut c_int);
    fn cuEventCreate(phEvent: *mut CUevent, Flags: c_uint);
    fn cuEventDestroy_v2(hEvent: CUevent);
    fn cuEventElapsedTime(pMilliseconds: *mut f32, hStart: CUevent, hEnd: CUevent);
    fn cuEventQuery(hEvent: CUevent);
    fn cuEventRecord(hEvent: CUevent, hStream: CUstream);
    fn cuEventSynchronize(hEvent: CUevent);
    fn cuExternalMemoryGetMappedBuffer(devPtr: *mut CUdeviceptr, extMem: CUexternalMemory, bufferDesc: *const CUDA_EXTERNAL_MEMORY_BUFFER_DESC);
    fn cuFuncGetAttribute(pi: *mut c_int, attrib: CUfunction_attribute, hfunc: CUfunction);
    fn cuFuncSetCacheConfig(hfunc: CUfunction, config: CUfunc_cache);
    fn cuFuncSetSharedMemConfig(hfunc: CUfunction, config: CUsharedconfig);
    fn cuGetErrorString(error: CUresult, pStr: *mut *const c_char);
    fn cuGraphAddKernelNode(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, nodeParams: *const CUDA_KERNEL_NODE_PARAMS);
    fn cuGraphCreate(phGraph: *mut CUgraph, flags: c_uint);
    fn cuGraphDebugDotPrint(hGraph: CUgraph, path: *const c_char, flags: c_uint);
    fn cuGraphDestroy(hGraph: CUgraph);
    fn cuGraphGetEdges(hGraph: CUgraph, from: *mut CUgraphNode, to: *mut CUgraphNode, numEdges: *mut usize);
    fn cuGraphGetNodes(hGraph: CUgraph, nodes: *mut CUgraphNode, numNodes: *mut usize);
    fn cuGraphKernelNodeGetParams(hNode: CUgraphNode, nodeParams: *mut CUDA_KERNEL_NODE_PARAMS);
    fn cuGraphNodeGetType(hNode: CUgraphNode, type_: *mut CUgraphNodeType);
    fn cuImportExternalMemory(extMem_out: *mut CUexternalMemory, memHandleDesc: *const CUDA_EXTERNAL_MEMORY_HANDLE_DESC);
    fn cuInit(Flags: c_uint);
    fn cuLaunchHostFunc(hStream: CUstream, fn_: CUhostFn, userData: *mut c_void);
    fn cuLaunchKernel(f: CUfunction, gridDimX: c_uint, gridDimY: c_uint, gridDimZ: c_uint, blockDimX: c_uint, blockDimY: c_uint, blockDimZ: c_uint, sharedMemBytes: c_uint, hStream: CUstream, kernelParams: *mut *mut c_void, extra: *mut *mut c_void);
    fn cuLinkAddData_v2(state: CUlinkState, type_: CUjitInputType, data: *mut c_void, size: usize, name: *const c_char, numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void);
    fn cuLinkComplete(state: CUlinkState, cubinOut: *mut *mut c_void, sizeOut: *mut usize);
    fn cuLinkCreate_v2(numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void, stateOut: *mut CUlinkState);
    fn cuLinkDestroy(state: CUlinkState);
    fn cuMemAdvise(devPtr: CUdeviceptr, count: usize, advice: CUmem_advise, device: CUdevice);
    fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, hStream: CUstream);
    fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize);
    fn cuMemAllocManaged(dptr: *mut CUdeviceptr, bytesize: usize, flags: c_uint);
    fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize);
    fn cuMemFreeAsync(dptr: CUdeviceptr, hStream: CUstream);
    fn cuMemFreeHost(p: *mut c_void);
    fn cuMemFree_v2(dptr: CUdeviceptr);
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize);
    fn cuMemPrefetchAsync(devPtr: CUdeviceptr, count: usize, dstDevice: CUdevice, hStream: CUstream);
    fn cuMemcpy2D_v2(pCopy: *const CUDA_MEMCPY2D);
    fn cuMemcpyAtoH_v2(dstHost: *mut c_void, srcArray: CUarray, srcOffset: usize, ByteCount: usize);
    fn cuMemcpyDtoDAsync_v2(dstDevice: CUdeviceptr, srcDevice: CUdeviceptr, ByteCount: usize, hStream: CUstream);
    fn cuMemcpyDtoD_v2(dstDevice: CUdeviceptr, srcDevice: CUdeviceptr, ByteCount: usize);
    fn cuMemcpyDtoHAsync_v2(dstHost: *mut c_void, srcDevice: CUdeviceptr, ByteCount: usize, hStream: CUstream);
    fn cuMemcpyDtoH_v2(dstHost: *mut c_void, srcDevice: CUdeviceptr, ByteCount: usize);
    fn cuMemcpyHtoA_v2(dstArray: CUarray, dstOffset: usize, srcHost: *const c_void, ByteCount: usize);
    fn cuMemcpyHtoDAsync_v2(dstDevice: CUdeviceptr, srcHost: *const c_void, ByteCount: usize, hStream: CUstream);
    fn cuMemcpyHtoD_v2(dstDevice: CUdeviceptr, srcHost: *const c_void, ByteCount: usize);
    fn cuMemsetD16Async(dstDevice: CUdeviceptr, us: c_ushort, N: usize, hStream: CUstream);
    fn cuMemsetD16_v2(dstDevice: CUdeviceptr, us: c_ushort, N: usize);
    fn cuMemsetD32Async(dstDevice: CUdeviceptr, ui: c_uint, N: usize, hStream: CUstream);
    fn cuMemsetD32_v2(dstDevice: CUdeviceptr, ui: c_uint, N: usize);
    fn cuMemsetD8Async(dstDevice: CUdeviceptr, uc: c_uchar, N: usize, hStream: CUstream);
    fn cuMemsetD8_v2(dstDevice: CUdeviceptr, uc: c_uchar, N: usize);
    fn cuModuleGetFunction(hfunc: *mut CUfunction, hmod: CUmodule, name: *const c_char);
    fn cuModuleGetGlobal_v2(dptr: *mut CUdeviceptr, bytes: *mut usize, hmod: CUmodule, name: *const c_char);
    fn cuModuleLoad(module: *mut CUmodule, fname: *const c_char);
    fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void);
    fn cuModuleLoadDataEx(module: *mut CUmodule, image: *const c_void, numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void);
    fn cuModuleUnload(hmod: CUmodule);
    fn cuOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize: *mut usize, func: CUfunction, numBlocks: c_int, blockSize: c_int);
    fn cuOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks: *mut c_int, func: CUfunction, blockSize: c_int, dynamicSMemSize: usize);
    fn cuOccupancyMaxPotentialBlockSize(minGridSize: *mut c_int, blockSize: *mut c_int, func: CUfunction, blockSizeToDynamicSMemSize: CUoccupancyB2DSize, dynamicSMemSize: usize, blockSizeLimit: c_int);
    fn cuStreamCreate(phStream: *mut CUstream, Flags: c_uint);
    fn cuStreamCreateWithPriority(phStream: *mut CUstream, flags: c_uint, priority: c_int);
    fn cuStreamDestroy_v2(hStream: CUstream);
    fn cuStreamGetFlags(hStream: CUstream, flags: *mut c_uint);
    fn cuStreamGetPriority(hStream: CUstream, priority: *mut c_int);
    fn cuStreamSynchronize(hStream: CUstream);
    fn cuStreamWaitEvent(hStream: CUstream, hEvent: CUevent, Flags: c_uint);
    fn cuSurfObjectCreate(pSurfObject: *mut CUsurfObject, pResDesc: *const CUDA_RESOURCE_DESC);
    fn cuSurfObjectDestroy(surfObject: CUsurfObject);
    fn cuSurfObjectGetResourceDesc(pResDesc: *mut CUDA_RESOURCE_DESC, surfObject: CUsurfObject);
    fn cuTexObjectCreate(pTexObject: *mut CUtexObject, pResDesc: *const CUDA_RESOURCE_DESC, pTexDesc: *const CUDA_TEXTURE_DESC, pResViewDesc: *const CUDA_RESOURCE_VIEW_DESC);
    fn cuTexObjectDestroy(texObject: CUtexObject);
    fn cuTexObjectGetResourceDesc(pResDesc: *mut CUDA_RESOURCE_DESC, texObject: CUtexObject);
    fn cuTexObjectGetResourceViewDesc(pResViewDesc: *mut CUDA_RESOURCE_VIEW_DESC, texObject: CUtexObject);
}
