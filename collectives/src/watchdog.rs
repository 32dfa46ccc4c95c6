//! The watchdog: with [`ENV_TIMEOUT`] set, a call that has not completed within that many
//! seconds prints which rank waits for what, and aborts the job (`MPI_Abort`), so a dead
//! or stuck peer ends the job with a message instead of an endless hang.
//!
//! Each call registers itself on entry and names every blocking wait (the peer, and the
//! step of the schedule from the message tag); a thread started with the first watched
//! call checks the deadline of the call in progress ten times per second. Off by default:
//! then nothing is registered and no thread runs. It watches one call at a time per
//! process (the calls of a process are not run concurrently from several threads).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::CollError;

/// Environment variable: seconds a call may take before the watchdog aborts the job
/// (unset or empty: no watchdog).
pub const ENV_TIMEOUT: &str = "CCOLL_TIMEOUT";

/// Exit code the job is aborted with.
pub const ABORT_CODE: i32 = 124;

/// The call in progress on this process.
struct Watch {
    call: String,
    started: Instant,
    waiting: String,
}

static STATE: Mutex<Option<Watch>> = Mutex::new(None);

/// The limit [`ENV_TIMEOUT`] sets, read once.
fn limit() -> Result<Option<Duration>, CollError> {
    static LIMIT: OnceLock<Result<Option<Duration>, String>> = OnceLock::new();
    LIMIT
        .get_or_init(|| match std::env::var(ENV_TIMEOUT) {
            Err(_) => Ok(None),
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => match v.trim().parse::<f64>() {
                Ok(s) if s > 0.0 && s.is_finite() => Ok(Some(Duration::from_secs_f64(s))),
                _ => Err(format!("{ENV_TIMEOUT}={v:?}: expected a positive number of seconds")),
            },
        })
        .clone()
        .map_err(CollError::Config)
}

/// Clears the registration of a call when the call ends (or fails).
pub(crate) struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        *lock() = None;
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<Watch>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a call described by `call` if the watchdog is on (starting its thread on
/// first use). An unusable [`ENV_TIMEOUT`] is an error of the call.
pub(crate) fn enter(call: impl FnOnce() -> String) -> Result<Option<Guard>, CollError> {
    let Some(limit) = limit()? else { return Ok(None) };
    static THREAD: OnceLock<()> = OnceLock::new();
    THREAD.get_or_init(|| {
        let rank = world_rank();
        std::thread::spawn(move || watch(limit, rank));
    });
    *lock() = Some(Watch { call: call(), started: Instant::now(), waiting: "nothing yet".into() });
    Ok(Some(Guard(())))
}

/// Records what the call in progress waits for now (no-op without a watchdog).
pub(crate) fn waiting(what: impl FnOnce() -> String) {
    if matches!(limit(), Ok(Some(_))) {
        if let Some(w) = lock().as_mut() {
            w.waiting = what();
        }
    }
}

fn world_rank() -> i32 {
    let mut rank = -1;
    // SAFETY: called on the calling thread of a collective, so MPI is initialised.
    unsafe { mpi::ffi::MPI_Comm_rank(mpi::ffi::RSMPI_COMM_WORLD, &mut rank) };
    rank
}

fn watch(limit: Duration, rank: i32) {
    let tick = (limit / 10).min(Duration::from_millis(100));
    loop {
        std::thread::sleep(tick);
        let state = lock();
        if let Some(w) = state.as_ref().filter(|w| w.started.elapsed() > limit) {
            eprintln!(
                "ccoll watchdog: rank {rank}: {} has not completed after {:.1} s ({ENV_TIMEOUT}); waiting for {}; aborting the job",
                w.call,
                w.started.elapsed().as_secs_f64(),
                w.waiting
            );
            // SAFETY: MPI is initialised (a call is in progress). MPI_Abort from another
            // thread than the one blocked in MPI is what ends the job here; should it ever
            // return, the process exits, which makes mpirun end the job too.
            unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, ABORT_CODE) };
            std::process::exit(ABORT_CODE);
        }
    }
}
