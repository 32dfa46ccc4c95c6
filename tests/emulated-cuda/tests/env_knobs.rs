//! The environment knobs CCOLL_EMU_STREAM_DELAY_US, CCOLL_EMU_CC, CCOLL_EMU_STATS and
//! CCOLL_EMU_MAX_INSTRUCTIONS.
//! The driver reads them once, so they get a test binary (a process) of their own with
//! a single test that sets them before the first driver call.

mod common;

use std::ffi::c_void;
use std::ptr::null_mut;

use common::*;
use cuda::abi::*;
use cuda::*;

const N: usize = 1000;

#[test]
fn stream_delay_exposes_a_missing_synchronisation_and_cc_stats_and_budget_are_honoured() {
    let stats = std::env::temp_dir().join(format!("ccoll-emu-stats-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&stats);
    // SAFETY (set_var): this binary's only test, before anything reads the environment.
    std::env::set_var("CCOLL_EMU_STREAM_DELAY_US", "20000");
    std::env::set_var("CCOLL_EMU_CC", "70");
    std::env::set_var("CCOLL_EMU_STATS", &stats);
    std::env::set_var("CCOLL_EMU_MAX_INSTRUCTIONS", "1e6");
    let ctx = context();
    unsafe {
        let attr = |a| {
            let mut v = -1;
            ok(cuDeviceGetAttribute(&mut v, a, 0));
            v
        };
        assert_eq!((attr(75), attr(76)), (7, 0));
        // An sm_80 module cannot be JIT-compiled for an sm_70 device.
        let newer = store_index_ptx(false).replace(".target sm_70", ".target sm_80");
        expect(load_ptx(&newer).unwrap_err(), CUDA_ERROR_INVALID_PTX);

        let m = load_ptx(&store_index_ptx(false)).unwrap();
        let f = function(m, "store_index");
        let s = stream(CU_STREAM_NON_BLOCKING);
        let (mut out, mut n) = (alloc(N * 4), N as u64);
        let mut host: *mut c_void = null_mut();
        ok(cuMemAllocHost_v2(&mut host, N * 4));
        let host = std::slice::from_raw_parts_mut(host.cast::<u32>(), N);

        // The kernel and the copy back are queued on a non-blocking stream; a host read
        // without synchronising sees the stale zeros...
        let mut args = [(&mut out as *mut u64).cast::<c_void>(), (&mut n as *mut u64).cast()];
        ok(launch(f, 4, 256, s, &mut args));
        ok(cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), out, N * 4, s));
        let unsynchronised: Vec<u32> = host.iter().map(|v| std::ptr::read_volatile(v)).collect();
        assert!(unsynchronised.iter().all(|&v| v == 0), "read before the stream ran, yet saw results");
        expect(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
        // ...and after synchronising, the kernel's values.
        ok(cuStreamSynchronize(s));
        assert_eq!(host.to_vec(), (0..N as u32).collect::<Vec<_>>());

        // The same for an async copy alone.
        ok(cuMemsetD32Async(out, 0x0102_0304, N, s));
        ok(cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), out, N * 4, s));
        assert_eq!(std::ptr::read_volatile(&host[N - 1]), N as u32 - 1, "stale value expected");
        ok(cuStreamSynchronize(s));
        assert!(host.iter().all(|&v| v == 0x0102_0304));

        // One JSON line for the one completed launch.
        let text = std::fs::read_to_string(&stats).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        for want in ["\"kernel\":\"store_index\"", "\"grid\":[4,1,1]", "\"block\":[256,1,1]", "\"threads\":1024", "\"global_store\":1000,", "\"global_store_bytes\":4000,"] {
            assert!(lines[0].contains(want), "stats line lacks {want}: {}", lines[0]);
        }
        let _ = std::fs::remove_file(&stats);

        // A kernel that never ends hits the instruction budget: a sticky launch timeout.
        let spin = function(m, "spin");
        ok(launch(spin, 1, 1, s, &mut []));
        expect(cuStreamSynchronize(s), 702);
        ok(cuCtxDestroy_v2(ctx));
    }
}
