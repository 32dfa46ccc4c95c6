//! Ctrl-C and SIGTERM handling: the signal is passed on to the child process that is
//! running (an mpirun under `timeout`), and the command then unwinds normally so that
//! the cluster's teardown runs.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static CHILD: AtomicI32 = AtomicI32::new(0);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler once, at start-up.
pub fn install() {
    let result = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        let pid = CHILD.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) on the pid of a child this process spawned and still waits on.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    });
    if let Err(e) = result {
        eprintln!("xtask: cannot install the signal handler ({e}); ctrl-c may skip teardown");
    }
}

/// Whether ctrl-c or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Registers the running child (0 when none) for the handler to signal.
pub fn set_child(pid: u32) {
    CHILD.store(pid as i32, Ordering::SeqCst);
}
