//! The driver API through its C ABI: device, contexts, memory, copies, streams,
//! events, and errors. Kernel launches are in `kernels.rs`.

mod common;

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use cuda::abi::*;
use cuda::*;

#[test]
fn init_device_and_error_texts() {
    unsafe {
        expect(cuInit(1), CUDA_ERROR_INVALID_VALUE);
        ok(cuInit(0));
        let mut n = 0;
        ok(cuDeviceGetCount(&mut n));
        assert_eq!(n, 1);
        let mut dev = -1;
        ok(cuDeviceGet(&mut dev, 0));
        assert_eq!(dev, 0);
        expect(cuDeviceGet(&mut dev, 1), CUDA_ERROR_INVALID_DEVICE);
        let mut name = [0 as c_char; 128];
        ok(cuDeviceGetName(name.as_mut_ptr(), 128, 0));
        let name = CStr::from_ptr(name.as_ptr()).to_str().unwrap();
        assert!(name.contains("emulated"), "{name}");
        let mut short = [1 as c_char; 6];
        ok(cuDeviceGetName(short.as_mut_ptr(), 6, 0));
        assert_eq!(CStr::from_ptr(short.as_ptr()).to_bytes(), &name.as_bytes()[..5]);

        let attr = |a| {
            let mut v = -1;
            ok(cuDeviceGetAttribute(&mut v, a, 0));
            v
        };
        let cc = std::env::var("CCOLL_EMU_CC").ok().and_then(|v| v.parse::<i32>().ok()).unwrap_or(80);
        assert_eq!((attr(75), attr(76)), (cc / 10, cc % 10));
        assert_eq!(attr(16), 4, "multiprocessors");
        assert_eq!(attr(10), 32, "warp size");
        assert_eq!(attr(1), 1024, "threads per block");
        let mut v = 0;
        expect(cuDeviceGetAttribute(&mut v, 100_000, 0), CUDA_ERROR_INVALID_VALUE);
        let mut total = 0;
        ok(cuDeviceTotalMem_v2(&mut total, 0));
        assert!(total >= 1 << 30);
        let mut version = 0;
        ok(cuDriverGetVersion(&mut version));
        assert!(version >= 11000);

        let mut s: *const c_char = null();
        ok(cuGetErrorName(700, &mut s));
        assert_eq!(CStr::from_ptr(s).to_str().unwrap(), "CUDA_ERROR_ILLEGAL_ADDRESS");
        ok(cuGetErrorString(700, &mut s));
        assert_eq!(CStr::from_ptr(s).to_str().unwrap(), "an illegal memory access was encountered");
        ok(cuGetErrorName(801, &mut s));
        assert_eq!(CStr::from_ptr(s).to_str().unwrap(), "CUDA_ERROR_NOT_SUPPORTED");
        ok(cuGetErrorString(218, &mut s));
        assert_eq!(CStr::from_ptr(s).to_str().unwrap(), "a PTX JIT compilation failed");
        expect(cuGetErrorString(12345, &mut s), CUDA_ERROR_INVALID_VALUE);
        assert!(s.is_null());
    }
}

#[test]
fn contexts_stack_and_primary_context() {
    unsafe {
        ok(cuInit(0));
        let mut cur = null_mut();
        let a = context();
        ok(cuCtxGetCurrent(&mut cur));
        assert_eq!(cur, a);
        let mut b = null_mut();
        ok(cuCtxCreate_v2(&mut b, 0, 0));
        assert_ne!(a, b);
        ok(cuCtxGetCurrent(&mut cur));
        assert_eq!(cur, b);
        let mut popped = null_mut();
        ok(cuCtxPopCurrent_v2(&mut popped));
        assert_eq!(popped, b);
        ok(cuCtxGetCurrent(&mut cur));
        assert_eq!(cur, a);
        ok(cuCtxPushCurrent_v2(b));
        ok(cuCtxSetCurrent(a));
        ok(cuCtxGetCurrent(&mut cur));
        assert_eq!(cur, a);
        ok(cuCtxDestroy_v2(b));
        expect(cuCtxPushCurrent_v2(b), CUDA_ERROR_INVALID_CONTEXT);

        let (mut p1, mut p2) = (null_mut(), null_mut());
        ok(cuDevicePrimaryCtxRetain(&mut p1, 0));
        ok(cuDevicePrimaryCtxRetain(&mut p2, 0));
        assert_eq!(p1, p2);
        expect(cuCtxDestroy_v2(p1), CUDA_ERROR_INVALID_CONTEXT);
        ok(cuDevicePrimaryCtxRelease_v2(0));
        ok(cuCtxSetCurrent(p1));
        let d = alloc(64);
        ok(cuMemFree_v2(d));
        ok(cuCtxSetCurrent(a));
        ok(cuDevicePrimaryCtxRelease_v2(0));
        // Released to zero: the primary context is gone.
        expect(cuCtxSetCurrent(p1), CUDA_ERROR_INVALID_CONTEXT);

        let mut version = 0;
        ok(cuCtxGetApiVersion(a, &mut version));
        assert_eq!(version, 3020);
        let mut dev = -1;
        ok(cuCtxGetDevice(&mut dev));
        assert_eq!(dev, 0);
        let mut limit = 0;
        ok(cuCtxSetLimit(0, 4096));
        ok(cuCtxGetLimit(&mut limit, 0));
        assert_eq!(limit, 4096);
        let (mut least, mut greatest) = (1, 1);
        ok(cuCtxGetStreamPriorityRange(&mut least, &mut greatest));
        assert!(greatest < least);
        ok(cuCtxDestroy_v2(a));
        let mut d = 0;
        expect(cuMemAlloc_v2(&mut d, 16), CUDA_ERROR_INVALID_CONTEXT);
    }
}

#[test]
fn copies_and_memsets_round_trip_and_bad_pointers_are_refused() {
    let ctx = context();
    unsafe {
        let n = 1000usize;
        let d = alloc(n * 4);
        let src: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        upload(d, &src);
        assert_eq!(download::<u32>(d, n), src);

        let e = alloc(n * 4);
        ok(cuMemcpyDtoD_v2(e, d, n * 4));
        assert_eq!(download::<u32>(e, n), src);
        ok(cuMemsetD32_v2(e + 8, 0xdead_beef, 3));
        let got = download::<u32>(e, 6);
        assert_eq!(&got[..], &[src[0], src[1], 0xdead_beef, 0xdead_beef, 0xdead_beef, src[5]]);
        ok(cuMemsetD16_v2(e, 0x1234, 2));
        ok(cuMemsetD8_v2(e + 4, 0xab, 1));
        let got = download::<u8>(e, 6);
        assert_eq!(&got[..], &[0x34, 0x12, 0x34, 0x12, 0xab, (src[1] >> 8) as u8]);
        expect(cuMemsetD32_v2(e + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);

        // Past the end, before the start, a random address, a freed allocation.
        let mut host = vec![0u8; 8];
        expect(cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), d + (n * 4) as u64 - 4, 8), CUDA_ERROR_INVALID_VALUE);
        expect(cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), d - 8, 8), CUDA_ERROR_INVALID_VALUE);
        expect(cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), 0x1234_5678, 8), CUDA_ERROR_INVALID_VALUE);
        expect(cuMemcpyHtoD_v2(0, host.as_ptr().cast(), 8), CUDA_ERROR_INVALID_VALUE);
        expect(cuMemsetD8_v2(d + (n * 4) as u64, 0, 1), CUDA_ERROR_INVALID_VALUE);
        expect(cuMemFree_v2(d + 4), CUDA_ERROR_INVALID_VALUE);
        let (mut free0, mut total) = (0, 0);
        ok(cuMemGetInfo_v2(&mut free0, &mut total));
        ok(cuMemFree_v2(e));
        let mut free1 = 0;
        ok(cuMemGetInfo_v2(&mut free1, &mut total));
        assert_eq!(free1 - free0, n * 4);
        expect(cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), e, 8), CUDA_ERROR_INVALID_VALUE);
        expect(cuMemFree_v2(e), CUDA_ERROR_INVALID_VALUE);
        let mut z = 0;
        expect(cuMemAlloc_v2(&mut z, 0), CUDA_ERROR_INVALID_VALUE);

        // Unified addressing: cuMemcpy tells device from host pointers.
        let mut back = vec![0u32; 4];
        ok(cuMemcpy(back.as_mut_ptr() as CUdeviceptr, d + 4, 16));
        assert_eq!(&back[..], &src[1..5]);

        // A pitched 2D copy of a 3x5 u32 block.
        let (mut p, mut pitch) = (0, 0);
        ok(cuMemAllocPitch(&mut p, &mut pitch, 5 * 4, 3, 4));
        assert!(pitch >= 20 && pitch % 256 == 0);
        let block: Vec<u32> = (0..15).collect();
        let mut c = CudaMemcpy2D {
            src_x_in_bytes: 0,
            src_y: 0,
            src_memory_type: CU_MEMORYTYPE_HOST,
            src_host: block.as_ptr().cast(),
            src_device: 0,
            src_array: null_mut(),
            src_pitch: 20,
            dst_x_in_bytes: 0,
            dst_y: 0,
            dst_memory_type: CU_MEMORYTYPE_DEVICE,
            dst_host: null_mut(),
            dst_device: p,
            dst_array: null_mut(),
            dst_pitch: pitch,
            width_in_bytes: 20,
            height: 3,
        };
        ok(cuMemcpy2D_v2(&c));
        let row2 = download::<u32>(p + 2 * pitch as u64, 5);
        assert_eq!(row2, vec![10, 11, 12, 13, 14]);
        c.height = 4;
        expect(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
        c.dst_memory_type = CU_MEMORYTYPE_ARRAY;
        expect(cuMemcpy2D_v2(&c), CUDA_ERROR_NOT_SUPPORTED);
        ok(cuCtxDestroy_v2(ctx));
    }
}

#[test]
fn page_locked_memory_is_tracked() {
    let ctx = context();
    unsafe {
        let mut p: *mut c_void = null_mut();
        ok(cuMemAllocHost_v2(&mut p, 4096));
        assert_eq!(p as usize % 4096, 0);
        let mut q: *mut c_void = null_mut();
        ok(cuMemHostAlloc(&mut q, 100, 0));
        expect(cuMemFreeHost(q.cast::<u8>().add(1).cast()), CUDA_ERROR_INVALID_VALUE);
        ok(cuMemFreeHost(q));
        expect(cuMemFreeHost(q), CUDA_ERROR_INVALID_VALUE);

        let mut buf = vec![7u8; 1 << 16];
        ok(cuMemHostRegister_v2(buf.as_mut_ptr().cast(), buf.len(), 0));
        expect(cuMemHostRegister_v2(buf.as_mut_ptr().add(100).cast(), 10, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        expect(cuMemHostUnregister(buf.as_mut_ptr().add(1).cast()), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);

        // Async copies through page-locked memory land once the stream gets there.
        let s = stream(CU_STREAM_NON_BLOCKING);
        let d = alloc(4096);
        std::ptr::write_bytes(p.cast::<u8>(), 0x5a, 4096);
        ok(cuMemcpyHtoDAsync_v2(d, p, 4096, s));
        ok(cuMemcpyDtoHAsync_v2(buf.as_mut_ptr().cast(), d, 4096, s));
        ok(cuStreamSynchronize(s));
        assert!(buf[..4096].iter().all(|&b| b == 0x5a));
        assert!(buf[4096..].iter().all(|&b| b == 7));
        ok(cuMemHostUnregister(buf.as_mut_ptr().cast()));
        ok(cuMemFreeHost(p));
        ok(cuStreamDestroy_v2(s));
        ok(cuCtxDestroy_v2(ctx));
    }
}

/// A host function that blocks its stream until the returned sender sends (or drops).
fn gate(s: CUstream) -> mpsc::Sender<()> {
    unsafe extern "C" fn wait(rx: *mut c_void) {
        let rx = Box::from_raw(rx.cast::<mpsc::Receiver<()>>());
        let _ = rx.recv();
    }
    let (tx, rx) = mpsc::channel::<()>();
    let rx = Box::into_raw(Box::new(rx));
    unsafe { ok(cuLaunchHostFunc(s, Some(wait), rx.cast())) };
    tx
}

#[test]
fn streams_run_in_order_and_events_order_streams() {
    let ctx = context();
    unsafe {
        let a = stream(CU_STREAM_NON_BLOCKING);
        let b = stream(CU_STREAM_NON_BLOCKING);
        let d = alloc(16);
        ok(cuMemsetD32_v2(d, 1, 4));
        ok(cuCtxSynchronize());

        let open_a = gate(a);
        let mut ev = null_mut();
        ok(cuEventCreate(&mut ev, CU_EVENT_DISABLE_TIMING));
        ok(cuMemsetD32Async(d, 2, 4, a));
        ok(cuEventRecord(ev, a));
        ok(cuStreamWaitEvent(b, ev, 0));
        ok(cuMemsetD32Async(d + 8, 3, 2, b));
        std::thread::sleep(Duration::from_millis(20));
        expect(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
        expect(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
        // b waits for a's event: its memset has not run either.
        expect(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
        let mut now = [0u32; 4];
        let mut pinned: *mut c_void = null_mut();
        ok(cuMemAllocHost_v2(&mut pinned, 16));
        let c = stream(CU_STREAM_NON_BLOCKING);
        ok(cuMemcpyDtoHAsync_v2(pinned, d, 16, c));
        ok(cuStreamSynchronize(c));
        std::ptr::copy_nonoverlapping(pinned.cast::<u32>(), now.as_mut_ptr(), 4);
        assert_eq!(now, [1, 1, 1, 1]);

        open_a.send(()).unwrap();
        ok(cuStreamSynchronize(b));
        ok(cuEventQuery(ev));
        ok(cuStreamQuery(a));
        assert_eq!(download::<u32>(d, 4), vec![2, 2, 3, 3]);
        let mut ms = 0f32;
        expect(cuEventElapsedTime(&mut ms, ev, ev), CUDA_ERROR_INVALID_HANDLE);

        // Timing events measure the host time between two points of a stream.
        let (mut t0, mut t1) = (null_mut(), null_mut());
        ok(cuEventCreate(&mut t0, 0));
        ok(cuEventCreate(&mut t1, 0));
        let open = gate(a);
        ok(cuEventRecord(t0, a));
        unsafe extern "C" fn nap(_: *mut c_void) {
            std::thread::sleep(Duration::from_millis(30));
        }
        ok(cuLaunchHostFunc(a, Some(nap), null_mut()));
        ok(cuEventRecord(t1, a));
        expect(cuEventElapsedTime(&mut ms, t0, t1), CUDA_ERROR_NOT_READY);
        open.send(()).unwrap();
        ok(cuEventSynchronize(t1));
        ok(cuEventElapsedTime(&mut ms, t0, t1));
        assert!((25.0..5000.0).contains(&ms), "{ms} ms");

        for e in [ev, t0, t1] {
            ok(cuEventDestroy_v2(e));
        }
        expect(cuEventQuery(ev), CUDA_ERROR_INVALID_HANDLE);
        for s in [a, b, c] {
            ok(cuStreamDestroy_v2(s));
        }
        expect(cuStreamQuery(a), CUDA_ERROR_INVALID_HANDLE);
        ok(cuMemFreeHost(pinned));
        ok(cuCtxDestroy_v2(ctx));
    }
}

#[test]
fn legacy_stream_and_synchronous_copies_wait_for_blocking_streams_only() {
    let ctx = context();
    unsafe {
        let blocking = stream(0);
        let non_blocking = stream(CU_STREAM_NON_BLOCKING);
        let mut flags = 9;
        ok(cuStreamGetFlags(non_blocking, &mut flags));
        assert_eq!(flags, CU_STREAM_NON_BLOCKING);
        let d = alloc(4);

        // A stalled non-blocking stream does not hold the legacy stream up.
        let open_nb = gate(non_blocking);
        ok(cuMemsetD32_v2(d, 5, 1));
        ok(cuStreamSynchronize(null_mut()));
        assert_eq!(download::<u32>(d, 1), vec![5]);
        expect(cuStreamQuery(non_blocking), CUDA_ERROR_NOT_READY);

        // A stalled blocking stream does: legacy work queued after it waits.
        let open_b = gate(blocking);
        ok(cuMemsetD32_v2(d, 6, 1));
        std::thread::sleep(Duration::from_millis(20));
        expect(cuStreamQuery(null_mut()), CUDA_ERROR_NOT_READY);
        // And blocking-stream work queued after legacy work waits for it.
        ok(cuMemsetD32Async(d, 7, 1, blocking));
        open_b.send(()).unwrap();
        ok(cuStreamSynchronize(blocking));
        assert_eq!(download::<u32>(d, 1), vec![7]);
        open_nb.send(()).unwrap();
        ok(cuCtxSynchronize());

        // A synchronous copy waits for the legacy stream, hence for earlier work on a
        // blocking stream...
        let open_b = gate(blocking);
        ok(cuMemsetD32Async(d, 8, 1, blocking));
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            open_b.send(()).unwrap();
        });
        let t = std::time::Instant::now();
        assert_eq!(download::<u32>(d, 1), vec![8]);
        assert!(t.elapsed() >= Duration::from_millis(40), "returned after {:?}", t.elapsed());
        opener.join().unwrap();
        // ...but not for a non-blocking stream's.
        let open_nb = gate(non_blocking);
        ok(cuMemsetD32Async(d, 9, 1, non_blocking));
        assert_eq!(download::<u32>(d, 1), vec![8]);
        open_nb.send(()).unwrap();
        ok(cuStreamSynchronize(non_blocking));
        assert_eq!(download::<u32>(d, 1), vec![9]);
        ok(cuCtxDestroy_v2(ctx));
    }
}

#[test]
fn unsupported_features_say_so() {
    let ctx = context();
    unsafe {
        let mut d = 0;
        expect(cuMemAllocManaged(&mut d, 64, 1), CUDA_ERROR_NOT_SUPPORTED);
        let mut g = null_mut();
        expect(cuGraphCreate(&mut g, 0), CUDA_ERROR_NOT_SUPPORTED);
        let mut a = null_mut();
        expect(cuArray3DCreate_v2(&mut a, null()), CUDA_ERROR_NOT_SUPPORTED);
        ok(cuCtxDestroy_v2(ctx));
    }
}

#[test]
fn resources_are_released_from_threads_without_their_context() {
    let ctx = context();
    let (d, s) = (alloc(64), stream(0));
    let m = load_ptx(&store_index_ptx(false)).unwrap();
    let (s, m) = (s as usize, m as usize);
    let other = std::thread::spawn(move || unsafe {
        let mut p = 0;
        // No context is current here: allocating needs one...
        expect(cuMemAlloc_v2(&mut p, 64), CUDA_ERROR_INVALID_CONTEXT);
        // ...freeing, destroying and unloading find theirs from the handle (UVA).
        ok(cuMemFree_v2(d));
        ok(cuStreamDestroy_v2(s as CUstream));
        ok(cuModuleUnload(m as CUmodule));
        expect(cuMemFree_v2(d), CUDA_ERROR_INVALID_VALUE);
    });
    other.join().unwrap();
    unsafe {
        let mut host = [0u8; 4];
        expect(cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), d, 4), CUDA_ERROR_INVALID_VALUE);
        expect(cuStreamQuery(s as CUstream), CUDA_ERROR_INVALID_HANDLE);
        ok(cuCtxDestroy_v2(ctx));
    }
}
