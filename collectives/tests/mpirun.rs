//! The collectives on 1, 2, 3, 4, 5, 7 and 8 ranks: one `mpirun` per rank count runs the
//! whole matrix of `ccoll-selftest` (every operation and algorithm, sizes from 0 and 1
//! value to megabytes, f32 and f64, every codec setting, misuse and NaN/Inf cases).

mod common;

use std::time::Duration;

/// The codec settings of the matrix (see `ccoll-selftest --codecs`).
const CODECS: &str = "raw,szx:1e-3,szx-rel:1e-4,zfp-acc:1e-3";

fn selftest(ranks: usize) {
    let launch = common::mpirun(ranks, env!("CARGO_BIN_EXE_ccoll-selftest"), &["--codecs", CODECS], &[], Duration::from_secs(600));
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
