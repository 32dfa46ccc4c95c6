//! Launching a binary under `mpirun` from a test: every rank's verdict checked, a
//! deadline enforced (the whole process group is killed on expiry).

// Each test file uses part of this module.
#![allow(dead_code)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One launch at a time: the ranks of two launches would share the same few cores.
static LAUNCH: Mutex<()> = Mutex::new(());

/// What a launch printed and how it ended.
pub struct Launch {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
    /// From the start of mpirun to its end.
    pub elapsed: Duration,
}

/// Runs `exe args` on `ranks` ranks over shared memory (no network needed), with the
/// `CCOLL_*` variables of `env` passed to every rank; fails the test after `timeout`.
pub fn mpirun(ranks: usize, exe: &str, args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Launch {
    mpirun_apps(&[(ranks, exe, args)], env, timeout)
}

/// Runs several programs in one job (MPMD: `mpirun -np N1 exe1 args1 : -np N2 ...`),
/// as [`mpirun`] runs one.
pub fn mpirun_apps(apps: &[(usize, &str, &[&str])], env: &[(&str, &str)], timeout: Duration) -> Launch {
    let _one_at_a_time = LAUNCH.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1"]);
    for (name, value) in env {
        cmd.env(name, value).args(["-x", name]);
    }
    for (i, (ranks, exe, args)) in apps.iter().enumerate() {
        if i > 0 {
            cmd.arg(":");
        }
        cmd.args(["-np", &ranks.to_string()]).arg(exe).args(*args);
    }
    let (ranks, exe, args) = (apps.iter().map(|a| a.0).sum::<usize>(), apps[0].1, apps[0].2);
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().expect("mpirun is on PATH (Debian package openmpi-bin)");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let deadline = start + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting on mpirun") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    let Some(status) = status else {
        panic!("mpirun -np {ranks} {exe} {args:?} timed out after {timeout:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    };
    Launch { stdout, stderr, success: status.success(), elapsed: start.elapsed() }
}

/// Asserts that the launch succeeded and that every rank printed its
/// `PREFIX: rank R of P: ... 0 failures` verdict.
pub fn assert_every_rank_passed(launch: &Launch, ranks: usize, prefix: &str) {
    let context = || format!("stdout:\n{}\nstderr:\n{}", launch.stdout, launch.stderr);
    assert!(launch.success, "mpirun reported a failed rank\n{}", context());
    for r in 0..ranks {
        let head = format!("{prefix}: rank {r} of {ranks}:");
        let line = launch.stdout.lines().find(|l| l.starts_with(&head));
        let line = line.unwrap_or_else(|| panic!("rank {r} printed no verdict\n{}", context()));
        assert!(line.ends_with(" 0 failures"), "rank {r}: {line}\n{}", context());
    }
}
