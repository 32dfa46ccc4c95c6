//! The collectives on 1, 2, 3, 4, 5, 7 and 8 ranks: one `mpirun` per rank count runs the
//! whole matrix of `ccoll-selftest` (every operation and algorithm, sizes from 0 and 1
//! value to megabytes, f32 and f64, every codec setting, misuse and NaN/Inf cases).

mod common;

use std::time::Duration;

/// The codec settings of the matrix (see `ccoll-selftest --codecs`).
const CODECS: &str = "raw,szx:1e-3,szx-rel:1e-4,zfp-acc:1e-3";

/// The launcher tells MPI to yield while idle, so ranks wait by sleeping between tests
/// (`CCOLL_WAIT=auto`); the odd rank counts wait in MPI's blocking calls instead.
fn selftest(ranks: usize) {
    let wait = if ranks % 2 == 1 { "spin" } else { "auto" };
    let launch = common::mpirun(ranks, env!("CARGO_BIN_EXE_ccoll-selftest"), &["--codecs", CODECS], &[("CCOLL_WAIT", wait)], Duration::from_secs(600));
    common::assert_every_rank_passed(&launch, ranks, "ccoll-selftest");
}

#[test]
fn matrix_on_1_rank() {
    selftest(1);
}

#[test]
fn matrix_on_2_ranks() {
    selftest(2);
}

#[test]
fn matrix_on_3_ranks() {
    selftest(3);
}

#[test]
fn matrix_on_4_ranks() {
    selftest(4);
}

#[test]
fn matrix_on_5_ranks() {
    selftest(5);
}

#[test]
fn matrix_on_7_ranks() {
    selftest(7);
}

#[test]
fn matrix_on_8_ranks() {
    selftest(8);
}

/// `CCOLL_ALGORITHM` as the launcher passes it to every rank steers the automatic
/// selection, and an unusable value of it or of `CCOLL_WAIT` fails the call on every
/// rank.
#[test]
fn algorithm_override_from_the_environment() {
    let exe = env!("CARGO_BIN_EXE_ccoll-selftest");
    let limit = Duration::from_secs(120);
    let launch = common::mpirun(3, exe, &["--env-case", "ring"], &[("CCOLL_ALGORITHM", "bcast=mpi,allreduce=ring")], limit);
    common::assert_every_rank_passed(&launch, 3, "ccoll-selftest");
    let launch = common::mpirun(3, exe, &["--env-case", "bad"], &[("CCOLL_ALGORITHM", "allreduce=warp")], limit);
    common::assert_every_rank_passed(&launch, 3, "ccoll-selftest");
    let launch = common::mpirun(3, exe, &["--env-case", "bad"], &[("CCOLL_WAIT", "nap")], limit);
    common::assert_every_rank_passed(&launch, 3, "ccoll-selftest");
}

/// The watchdog: rank 1 never joins the broadcast; with `CCOLL_TIMEOUT=2` rank 0 names
/// what it waits for and the job is aborted within seconds (rank 1 would sleep 60 s).
#[test]
fn watchdog_ends_a_job_whose_rank_never_joins() {
    let exe = env!("CARGO_BIN_EXE_ccoll-selftest");
    let launch = common::mpirun(2, exe, &["--absent-rank"], &[("CCOLL_TIMEOUT", "2")], Duration::from_secs(50));
    let context = format!("stdout:\n{}\nstderr:\n{}", launch.stdout, launch.stderr);
    assert!(!launch.success, "{context}");
    assert!(launch.elapsed < Duration::from_secs(30), "took {:?}\n{context}", launch.elapsed);
    assert!(!launch.stdout.contains("ccoll-selftest: rank"), "a rank reached its verdict\n{context}");
    let report = "ccoll watchdog: rank 0: bcast (c-coll) on a communicator of 2 ranks has not completed after";
    assert!(launch.stderr.contains(report), "{context}");
    assert!(launch.stderr.contains("waiting for every rank of 2 to join the call agreement"), "{context}");
}

/// A panic after `MPI_Finalize` unwinds as in any program (exit 101): the panic hook of
/// `abort_job_on_panic` must not call `MPI_Abort` then (Open MPI rejects it and exits 1).
#[test]
fn a_panic_after_finalize_is_a_plain_panic() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ccoll-selftest"))
        .arg("--panic-after-finalize")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("run ccoll-selftest");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stderr}");
    assert!(stderr.contains("a panic after MPI_Finalize") && !stderr.contains("MPI_Abort"), "{stderr}");
}
