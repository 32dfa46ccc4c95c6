//! How far a polling rank holds a core against computing ones (`Params::poller_hold`).
//!
//! The emulated ranks are processes of sessions of their own (each node's Open MPI
//! daemon starts one), and the kernel's scheduler groups a session's threads
//! (autogroup): a rank that loops on `sched_yield` in Open MPI's progress loop yields to
//! nothing inside its group, so how much of a core it keeps is the scheduler's and the
//! kernel's business, not Open MPI's. The probe reproduces that: as many processes as
//! cores compute a fixed chain of arithmetic (no memory traffic, so no contention)
//! beside one process that polls as Open MPI's loop does, each in a session of its own,
//! against one of them alone.

use collectives::model::Params;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// Runs each way; the probe alternates them (this machine's pace switches between two
/// levels every few seconds, `super::pace`).
const RUNS: usize = 7;
/// Iterations of one worker's arithmetic: about 80 ms alone on a 2026 core, a score of
/// time slices.
const WORK: u64 = 50_000_000;
/// How long the poller polls before the workers start, so that the scheduler has
/// placed it.
const SETTLE: Duration = Duration::from_millis(50);

/// The measured hold (0-1) on `cores` cores: where the workers' share of a core beside
/// the poller falls between the model's two cases ([`Params::beside_share`] with a hold
/// of 1 and of 0). 1 (the model's default) where the two cases agree (one core).
pub fn measure_hold(cores: usize) -> Result<f64, String> {
    let cores = cores.max(1);
    let ranks = cores + 1;
    let p = Params { ranks, ranks_per_host: ranks, host_cores: cores as f64, ..Params::IDEAL };
    let others = (cores - 1) as f64;
    let kept = Params { poller_hold: 1.0, ..p }.beside_share(others, 1.0);
    let alike = Params { poller_hold: 0.0, ..p }.beside_share(others, 1.0);
    if (alike - kept).abs() < 1e-9 {
        return Ok(Params::IDEAL.poller_hold);
    }
    let share = measure_share(cores)?;
    Ok(hold_of(share, kept, alike))
}

/// The hold whose share (`kept` at 1, `alike` at 0, linear between) is `share`.
fn hold_of(share: f64, kept: f64, alike: f64) -> f64 {
    ((alike - share) / (alike - kept)).clamp(0.0, 1.0)
}

/// A computing process's share of a core (wall time alone over wall time beside), with
/// `cores` of them beside one poller: the fastest run alone, the median run beside.
fn measure_share(cores: usize) -> Result<f64, String> {
    let mut children = Children(Vec::new());
    let alone = Workers::start(1, &mut children)?;
    let beside = Workers::start(cores, &mut children)?;
    let (mut solo, mut together) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        solo.push(alone.run()?);
        let poller = children.spawn(|| poll_forever())?;
        std::thread::sleep(SETTLE);
        let run = beside.run();
        children.kill(poller);
        together.push(run?);
    }
    solo.sort_by(f64::total_cmp);
    together.sort_by(f64::total_cmp);
    Ok(solo[0] / together[RUNS / 2])
}

/// Child processes, killed and reaped when dropped.
struct Children(Vec<libc::pid_t>);

impl Children {
    /// Forks a child that starts a session of its own, runs `body` and exits. The child
    /// only makes system calls and arithmetic: nothing that allocates or takes a lock
    /// another thread of this process may have held at the fork.
    fn spawn(&mut self, body: impl FnOnce()) -> Result<libc::pid_t, String> {
        // SAFETY: the child runs `body` (system calls and arithmetic only, see above)
        // and then `_exit`, never returning into this process's code.
        match unsafe { libc::fork() } {
            -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
            0 => {
                // SAFETY: setsid takes no arguments; failing, the child stays in this
                // session, which only changes the measurement.
                unsafe { libc::setsid() };
                body();
                // SAFETY: ends the child without running this process's exit handlers.
                unsafe { libc::_exit(0) }
            }
            pid => {
                self.0.push(pid);
                Ok(pid)
            }
        }
    }

    fn kill(&mut self, pid: libc::pid_t) {
        // SAFETY: `pid` is a child of this process not reaped yet (it is in the list).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        self.0.retain(|&p| p != pid);
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for pid in std::mem::take(&mut self.0) {
            self.kill(pid);
        }
    }
}

/// Open MPI's progress loop with `mpi_yield_when_idle`: yield, then poll nothing.
fn poll_forever() -> ! {
    loop {
        // SAFETY: neither call takes memory of this process (poll of 0 descriptors).
        unsafe {
            libc::sched_yield();
            libc::poll(std::ptr::null_mut(), 0, 0);
        }
    }
}

/// Worker processes that each run [`WORK`] on every byte written to `go` and write its
/// wall time back (f64 seconds, native bytes) to `done`: this process's ends of the
/// two pipes (the children's ends close when `start` returns; the children keep their
/// copies).
struct Workers {
    count: usize,
    go: OwnedFd,
    done: OwnedFd,
}

impl Workers {
    fn start(count: usize, children: &mut Children) -> Result<Workers, String> {
        let ((go_read, go), (done, done_write)) = (pipe()?, pipe()?);
        let (from, to) = (go_read.as_raw_fd(), done_write.as_raw_fd());
        for _ in 0..count {
            children.spawn(|| worker(from, to))?;
        }
        Ok(Workers { count, go, done })
    }

    /// Starts every worker at once; their mean wall time.
    fn run(&self) -> Result<f64, String> {
        let start = vec![0u8; self.count];
        write_all(self.go.as_raw_fd(), &start)?;
        let mut sum = 0.0;
        for _ in 0..self.count {
            let mut t = [0u8; 8];
            read_exact(self.done.as_raw_fd(), &mut t)?;
            sum += f64::from_ne_bytes(t);
        }
        Ok(sum / self.count as f64)
    }
}

/// A worker: until `go` closes, one run of the arithmetic per byte read.
fn worker(go: libc::c_int, done: libc::c_int) {
    let mut byte = [0u8; 1];
    while read_exact(go, &mut byte).is_ok() {
        let t = Instant::now();
        let mut x = 1.0f64;
        for _ in 0..WORK {
            x = std::hint::black_box(x * 1.000_000_1 + 1e-9);
        }
        std::hint::black_box(x);
        if write_all(done, &t.elapsed().as_secs_f64().to_ne_bytes()).is_err() {
            break;
        }
    }
}

/// A pipe's read and write ends.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just opened by pipe and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Whole-buffer I/O on a pipe without allocating (the workers run it after a fork).
fn write_all(fd: libc::c_int, mut buf: &[u8]) -> Result<(), &'static str> {
    while !buf.is_empty() {
        // SAFETY: writes at most buf.len() bytes from buf.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n <= 0 {
            return Err("poller probe: a pipe closed");
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

fn read_exact(fd: libc::c_int, mut buf: &mut [u8]) -> Result<(), &'static str> {
    while !buf.is_empty() {
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return Err("poller probe: a pipe closed");
        }
        buf = &mut buf[n as usize..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hold_places_the_share_between_the_two_cases() {
        // 2 cores: a kept core leaves the two computing processes half a core each, alike
        // they get two thirds.
        let (kept, alike) = (0.5, 2.0 / 3.0);
        assert_eq!(hold_of(0.5, kept, alike), 1.0);
        assert_eq!(hold_of(2.0 / 3.0, kept, alike), 0.0);
        assert!((hold_of(7.0 / 12.0, kept, alike) - 0.5).abs() < 1e-12);
        // Noise beyond either case is clamped.
        assert_eq!(hold_of(0.4, kept, alike), 1.0);
        assert_eq!(hold_of(0.9, kept, alike), 0.0);
    }

    #[test]
    fn workers_run_on_every_start_and_are_reaped() {
        // Two workers, started twice: two mean times a run, each of the arithmetic's
        // order (80 ms alone; far slower only on a machine loaded beyond reason), and no
        // child left once dropped.
        let pids = {
            let mut children = Children(Vec::new());
            let workers = Workers::start(2, &mut children).unwrap();
            for _ in 0..2 {
                let t = workers.run().unwrap();
                assert!(t > 1e-3 && t < 30.0, "{t}");
            }
            assert_eq!(children.0.len(), 2);
            children.0.clone()
        };
        for pid in pids {
            // SAFETY: signal 0 only asks whether the process exists.
            assert_eq!(unsafe { libc::kill(pid, 0) }, -1, "worker {pid} was left behind");
        }
    }
}
