//! Entry points with no meaning on the emulated device: CUDA arrays, textures,
//! surfaces, graphs, external memory, the JIT linker and managed memory. Each answers
//! CUDA_ERROR_NOT_SUPPORTED and writes nothing. They exist so that programs linked
//! against cust (which references them all) load.

use std::ffi::c_void;

use crate::abi::*;

macro_rules! not_supported {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($(_: $ty),*) -> CUresult {
            CUDA_ERROR_NOT_SUPPORTED
        }
    )*};
}

type Ptr = *mut c_void;

not_supported! {
    cuArray3DCreate_v2(handle: *mut Ptr, desc: *const c_void);
    cuArray3DGetDescriptor_v2(desc: Ptr, array: Ptr);
    cuArrayDestroy(array: Ptr);
    cuMemcpyAtoH_v2(dst: Ptr, array: Ptr, offset: usize, bytes: usize);
    cuMemcpyHtoA_v2(array: Ptr, offset: usize, src: *const c_void, bytes: usize);
    cuTexObjectCreate(tex: *mut u64, res: *const c_void, desc: *const c_void, view: *const c_void);
    cuTexObjectDestroy(tex: u64);
    cuTexObjectGetResourceDesc(res: Ptr, tex: u64);
    cuTexObjectGetResourceViewDesc(view: Ptr, tex: u64);
    cuSurfObjectCreate(surf: *mut u64, res: *const c_void);
    cuSurfObjectDestroy(surf: u64);
    cuSurfObjectGetResourceDesc(res: Ptr, surf: u64);
    cuGraphCreate(graph: *mut Ptr, flags: u32);
    cuGraphDestroy(graph: Ptr);
    cuGraphAddKernelNode(node: *mut Ptr, graph: Ptr, deps: *const Ptr, n: usize, params: *const c_void);
    cuGraphDebugDotPrint(graph: Ptr, path: *const i8, flags: u32);
    cuGraphGetEdges(graph: Ptr, from: *mut Ptr, to: *mut Ptr, n: *mut usize);
    cuGraphGetNodes(graph: Ptr, nodes: *mut Ptr, n: *mut usize);
    cuGraphKernelNodeGetParams(node: Ptr, params: Ptr);
    cuGraphNodeGetType(node: Ptr, kind: *mut u32);
    cuImportExternalMemory(mem: *mut Ptr, desc: *const c_void);
    cuExternalMemoryGetMappedBuffer(dptr: *mut CUdeviceptr, mem: Ptr, desc: *const c_void);
    cuDestroyExternalMemory(mem: Ptr);
    cuLinkCreate_v2(n: u32, options: *mut i32, values: *mut Ptr, state: *mut Ptr);
    cuLinkAddData_v2(state: Ptr, kind: u32, data: Ptr, size: usize, name: *const i8, n: u32, options: *mut i32, values: *mut Ptr);
    cuLinkComplete(state: Ptr, cubin: *mut Ptr, size: *mut usize);
    cuLinkDestroy(state: Ptr);
    cuMemAllocManaged(dptr: *mut CUdeviceptr, bytes: usize, flags: u32);
    cuMemAdvise(dptr: CUdeviceptr, bytes: usize, advice: u32, dev: CUdevice);
    cuMemPrefetchAsync(dptr: CUdeviceptr, bytes: usize, dev: CUdevice, stream: CUstream);
    /// The original entry point returns 32-bit device pointers; every address of the
    /// emulated device lies above 4 GiB.
    cuMemAlloc(dptr: *mut u32, bytes: u32);
}
