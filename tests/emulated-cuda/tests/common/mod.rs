//! Helpers shared by this crate's tests: calling the driver API through its C ABI.
#![allow(dead_code)]
// CUDA handles are pointer-typed but opaque: these helpers pass them on, never read them.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_void, CString};
use std::ptr::null_mut;

use cuda::abi::*;
use cuda::*;

/// Asserts that a driver call returned `want`, naming the error on failure.
#[track_caller]
pub fn expect(got: CUresult, want: CUresult) {
    assert_eq!(got, want, "got {} ({}), want {}", got, name(got), want);
}

#[track_caller]
pub fn ok(r: CUresult) {
    expect(r, CUDA_SUCCESS);
}

pub fn name(code: CUresult) -> String {
    error_texts(code).map_or_else(|| "?".into(), |(n, _)| n.trim_end_matches('\0').to_owned())
}

/// Initialises the driver and makes a fresh context current on this thread: each test
/// gets its own, so a sticky error in one does not leak into another.
pub fn context() -> CUcontext {
    let mut ctx = null_mut();
    unsafe {
        ok(cuInit(0));
        ok(cuCtxCreate_v2(&mut ctx, 0, 0));
    }
    ctx
}

pub fn alloc(bytes: usize) -> CUdeviceptr {
    let mut d = 0;
    unsafe { ok(cuMemAlloc_v2(&mut d, bytes)) };
    d
}

pub fn upload<T: Copy>(dst: CUdeviceptr, src: &[T]) {
    unsafe { ok(cuMemcpyHtoD_v2(dst, src.as_ptr().cast(), std::mem::size_of_val(src))) };
}

pub fn download<T: Copy + Default>(src: CUdeviceptr, n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    unsafe { ok(cuMemcpyDtoH_v2(v.as_mut_ptr().cast(), src, std::mem::size_of_val(&v[..]))) };
    v
}

pub fn stream(flags: u32) -> CUstream {
    let mut s = null_mut();
    unsafe { ok(cuStreamCreate(&mut s, flags)) };
    s
}

pub fn load_ptx(ptx: &str) -> Result<CUmodule, CUresult> {
    let text = CString::new(ptx).unwrap();
    let mut m = null_mut();
    match unsafe { cuModuleLoadData(&mut m, text.as_ptr().cast()) } {
        0 => Ok(m),
        e => Err(e),
    }
}

pub fn function(m: CUmodule, name: &str) -> CUfunction {
    let name = CString::new(name).unwrap();
    let mut f = null_mut();
    unsafe { ok(cuModuleGetFunction(&mut f, m, name.as_ptr())) };
    f
}

/// Launches `f` on a 1D grid with `kernelParams` pointing at `args`.
pub fn launch(f: CUfunction, grid: u32, block: u32, s: CUstream, args: &mut [*mut c_void]) -> CUresult {
    unsafe { cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args.as_mut_ptr(), null_mut()) }
}

/// `store_index(out: *u32, n: u64)`: thread i writes i to out[i] for i < n. The
/// `buggy` variant compares with `>` instead of `>=`, so thread n stores one element
/// past the end: the planted off-by-one memcheck must catch. The module also has
/// `boom()`, which traps, and `spin()`, which never ends.
pub fn store_index_ptx(buggy: bool) -> String {
    let cmp = if buggy { "setp.gt.u64" } else { "setp.ge.u64" };
    format!(
        r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry store_index(
	.param .u64 store_index_param_0,
	.param .u64 store_index_param_1
)
{{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [store_index_param_0];
	ld.param.u64 	%rd2, [store_index_param_1];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mul.wide.u32 	%rd3, %r1, %r2;
	cvt.u64.u32 	%rd4, %r3;
	add.s64 	%rd5, %rd3, %rd4;
	{cmp} 	%p1, %rd5, %rd2;
	@%p1 bra 	$L__done;
	cvta.to.global.u64 	%rd6, %rd1;
	shl.b64 	%rd7, %rd5, 2;
	add.s64 	%rd6, %rd6, %rd7;
	cvt.u32.u64 	%r4, %rd5;
	st.global.b32 	[%rd6], %r4;
$L__done:
	ret;
}}

.visible .entry boom()
{{
	trap;
}}

.visible .entry spin()
{{
$L__forever:
	bra.uni 	$L__forever;
}}
"#
    )
}
