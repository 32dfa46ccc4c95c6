//! Test support shared by the workspace's mpirun-driven tests (`collectives/tests/`,
//! `collectives/ccoll-mpi/tests/`): one launcher for `mpirun` jobs. Those tests live
//! beside the binaries they launch, because Cargo exposes a binary's path
//! (`CARGO_BIN_EXE_*`) only to its own package's tests.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One launch at a time per test binary: the ranks of two launches would share the same
/// few cores.
static LAUNCH: Mutex<()> = Mutex::new(());

/// One application context of an mpirun command line (`-np N [-x NAME=VALUE ...] argv`).
pub struct App {
    ranks: usize,
    env: Vec<(String, String)>,
    argv: Vec<String>,
}

impl App {
    /// `argv` (the program first) on `ranks` ranks.
    pub fn new(ranks: usize, argv: &[&str]) -> App {
        App { ranks, env: Vec::new(), argv: argv.iter().map(|s| s.to_string()).collect() }
    }

    /// With `NAME=VALUE` in the environment of this application's ranks only.
    pub fn var(mut self, name: &str, value: &str) -> App {
        self.env.push((name.to_string(), value.to_string()));
        self
    }
}

/// An mpirun job over shared memory (no network needed): one or more applications
/// (MPMD with more than one), run as root where need be, with a deadline after which
/// the whole process group is killed and the test fails.
pub struct Job {
    apps: Vec<App>,
    dir: Option<PathBuf>,
    scrub_ccoll: bool,
}

/// What a launch printed and how it ended.
pub struct Launch {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
    /// From the start of mpirun to its end.
    pub elapsed: Duration,
}

impl Launch {
    /// Both outputs, for an assertion's message.
    pub fn context(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

impl Job {
    /// The job of `apps`; the ranks inherit the test's environment and directory unless
    /// told otherwise.
    pub fn new(apps: Vec<App>) -> Job {
        Job { apps, dir: None, scrub_ccoll: false }
    }

    /// Runs mpirun (and so every rank) in `dir`.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> Job {
        self.dir = Some(dir.into());
        self
    }

    /// Removes every `CCOLL_*` variable of the test's own environment, so that only the
    /// applications' own `var`s reach the ranks.
    pub fn without_ccoll_env(mut self) -> Job {
        self.scrub_ccoll = true;
        self
    }

    /// Runs the job; panics with both outputs if it is still running after `timeout`.
    pub fn run(self, timeout: Duration) -> Launch {
        let _one_at_a_time = LAUNCH.lock().unwrap_or_else(|e| e.into_inner());
        let mut cmd = Command::new("mpirun");
        cmd.args(["--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1"]);
        for (i, app) in self.apps.iter().enumerate() {
            if i > 0 {
                cmd.arg(":");
            }
            cmd.args(["-np", &app.ranks.to_string()]);
            for (name, value) in &app.env {
                cmd.args(["-x", &format!("{name}={value}")]);
            }
            cmd.args(&app.argv);
        }
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        if self.scrub_ccoll {
            for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("CCOLL_")) {
                cmd.env_remove(name);
            }
        }
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn().expect("mpirun is on PATH (Debian package openmpi-bin)");
        // Drained while the job runs: a full pipe would block the ranks.
        let drain = |mut pipe: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = pipe.read_to_string(&mut s);
                s
            })
        };
        let out = drain(Box::new(child.stdout.take().expect("piped")));
        let err = drain(Box::new(child.stderr.take().expect("piped")));
        let deadline = start + timeout;
        let status = loop {
            if let Some(status) = child.try_wait().expect("waiting on mpirun") {
                break Some(status);
            }
            if Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let elapsed = start.elapsed();
        // The whole process group: on expiry mpirun and its ranks, and after a normal end
        // any rank that outlived mpirun (the pipes close only when every rank is gone).
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).stderr(Stdio::null()).status();
        let _ = child.wait();
        let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
        let launch = Launch { stdout, stderr, success: status.is_some_and(|s| s.success()), elapsed };
        if status.is_none() {
            let argv: Vec<_> = self.apps.iter().map(|a| format!("-np {} {}", a.ranks, a.argv.join(" "))).collect();
            panic!("mpirun {} ran into its {timeout:?} limit\n{}", argv.join(" : "), launch.context());
        }
        launch
    }
}
