//! The collectives' mpirun launches: `ccoll_tests`'s launcher with the caller's
//! environment passed on (the emulated device's variables included), and the check of
//! every rank's verdict.

// Each test file uses part of this module.
#![allow(dead_code)]

use std::time::Duration;

pub use ccoll_tests::Launch;
use ccoll_tests::{App, Job};

/// Runs `exe args` on `ranks` ranks with the variables of `env` set on every rank; fails
/// the test after `timeout`.
pub fn mpirun(ranks: usize, exe: &str, args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Launch {
    mpirun_apps(&[(ranks, exe, args)], env, timeout)
}

/// Runs several programs in one job (MPMD: `mpirun -np N1 exe1 args1 : -np N2 ...`),
/// as [`mpirun`] runs one.
pub fn mpirun_apps(apps: &[(usize, &str, &[&str])], env: &[(&str, &str)], timeout: Duration) -> Launch {
    let apps = apps
        .iter()
        .map(|&(ranks, exe, args)| {
            let argv: Vec<&str> = std::iter::once(exe).chain(args.iter().copied()).collect();
            env.iter().fold(App::new(ranks, &argv), |app, (name, value)| app.var(name, value))
        })
        .collect();
    Job::new(apps).run(timeout)
}

/// Asserts that the launch succeeded and that every rank printed its
/// `PREFIX: rank R of P: ... 0 failures` verdict.
pub fn assert_every_rank_passed(launch: &Launch, ranks: usize, prefix: &str) {
    assert!(launch.success, "mpirun reported a failed rank\n{}", launch.context());
    for r in 0..ranks {
        let head = format!("{prefix}: rank {r} of {ranks}:");
        let line = launch.stdout.lines().find(|l| l.starts_with(&head));
        let line = line.unwrap_or_else(|| panic!("rank {r} printed no verdict\n{}", launch.context()));
        assert!(line.ends_with(" 0 failures"), "rank {r}: {line}\n{}", launch.context());
    }
}
