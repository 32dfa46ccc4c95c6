//! Device buffers on 2, 3, 4 and 5 ranks (feature `cuda`): one `mpirun` per rank count
//! runs `ccoll-selftest --device`, in which every operation, algorithm and codec family
//! (raw, ZFP fixed rate, ZFP fixed accuracy, SZx absolute, SZx relative), f32 and f64,
//! sizes 0, 1, odd and several pipeline chunks, runs on host buffers (checked within
//! the stated bound against MPI's own result) and again on device buffers with the CUDA
//! backend, which must give the same result bit for bit, the same accounting, and
//! kernel launches wherever values were coded.
//!
//! Needs a CUDA device: run it under `cargo xtask emulate` (docs/gpu.md). Without one
//! it is skipped with a message, unless `CCOLL_REQUIRE_GPU=1`, which makes it fail.

mod common;

use std::time::Duration;

/// The codec settings of the matrix (see `ccoll-selftest --codecs`).
const CODECS: &str = "raw,zfp-rate:12,zfp-acc:1e-3,szx:1e-3,szx-rel:1e-4";

/// True if a CUDA device answers; fails the test where one is required and none does.
fn device_present() -> bool {
    match codec_host::Backend::cuda() {
        Ok(_) => true,
        Err(e) if std::env::var("CCOLL_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("CCOLL_REQUIRE_GPU=1 but the CUDA backend does not start: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no CUDA device ({e}); run under `cargo xtask emulate`, or set CCOLL_REQUIRE_GPU=1 to fail instead");
            false
        }
    }
}

fn device_matrix(ranks: usize) {
    if !device_present() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_ccoll-selftest");
    let launch = common::mpirun(ranks, exe, &["--device", "--codecs", CODECS], &[], Duration::from_secs(300));
    common::assert_every_rank_passed(&launch, ranks, "ccoll-selftest");
}

#[test]
fn device_matrix_on_2_ranks() {
    device_matrix(2);
}

#[test]
fn device_matrix_on_3_ranks() {
    device_matrix(3);
}

#[test]
fn device_matrix_on_4_ranks() {
    device_matrix(4);
}

#[test]
fn device_matrix_on_5_ranks() {
    device_matrix(5);
}

/// A device that runs out of memory inside a call (rank 0's emulated device of 4 holds
/// 256 KiB, `CCOLL_EMU_MEM_BYTES`; see `ccoll-selftest --device-oom`): every rank returns a
/// typed error within seconds, none is left to the watchdog (`CCOLL_TIMEOUT=60` would
/// abort the job).
#[test]
fn device_out_of_memory_fails_the_call_on_every_rank() {
    if !device_present() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_ccoll-selftest");
    let app = |ranks| ccoll_tests::App::new(ranks, &[exe, "--device-oom"]).var("CCOLL_TIMEOUT", "60");
    let small = app(1).var("CCOLL_EMU_MEM_BYTES", "262144");
    let launch = ccoll_tests::Job::new(vec![small, app(3)]).run(Duration::from_secs(240));
    common::assert_every_rank_passed(&launch, 4, "ccoll-selftest");
    assert!(launch.elapsed < Duration::from_secs(60), "took {:?}\n{}", launch.elapsed, launch.context());
}
