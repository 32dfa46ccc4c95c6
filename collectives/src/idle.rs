//! How a rank waits for its transfers ([`ENV_WAIT`]). MPI's blocking calls spin: Open
//! MPI polls its sockets, at best yielding the core between polls. Where ranks share
//! cores, the waiting ones take CPU from the ones with codec work: on the emulated
//! 4-node cluster (two cores) spinning ranks spent about a tenth of the machine's CPU
//! in polls, yields and context switches during a C-Coll Allreduce. So there a wait
//! tests its requests in a loop, without pause for [`SPIN`] (a transfer about to
//! complete is taken at once), then sleeping between tests, from [`FIRST_NAP`] doubling
//! up to [`LONGEST_NAP`], which bounds how late a completion is noticed. While a rank
//! sleeps its transfers do not progress, but the kernel's socket buffers keep both
//! directions moving: a nap of 100 us is 12.5 KB at 1 Gbit/s.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::CollError;

/// Environment variable: how waiting ranks wait: `spin` (MPI's blocking calls),
/// `sleep` (test, then sleep between tests), or `auto` (the default: `sleep` where
/// the ranks share cores, see [`cores_shared`]).
pub const ENV_WAIT: &str = "CCOLL_WAIT";

/// How long a sleeping wait tests without pause.
const SPIN: Duration = Duration::from_micros(20);
/// Its first and longest sleep between two tests.
const FIRST_NAP: Duration = Duration::from_micros(10);
const LONGEST_NAP: Duration = Duration::from_micros(100);

/// How a rank waits for its transfers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// In MPI's blocking calls.
    Spin,
    /// Testing, then sleeping between tests.
    Sleep,
}

impl Wait {
    /// The way [`ENV_WAIT`]'s value (`None`: unset) asks for, `shared` telling whether
    /// the ranks share cores.
    fn parse(value: Option<&str>, shared: bool) -> Result<Wait, String> {
        match value.map(str::trim) {
            None | Some("" | "auto") => Ok(if shared { Wait::Sleep } else { Wait::Spin }),
            Some("spin") => Ok(Wait::Spin),
            Some("sleep") => Ok(Wait::Sleep),
            Some(v) => Err(format!("{ENV_WAIT}={v:?}: expected auto, spin or sleep")),
        }
    }
}

/// True if this process's ranks share cores: MPI was told to yield while idle
/// (`OMPI_MCA_mpi_yield_when_idle`, what Open MPI does itself when it sees more ranks
/// than cores, and what the emulated cluster sets, whose ranks Open MPI sees on
/// separate nodes), or the launcher's count of ranks on this node (Open MPI's
/// `OMPI_COMM_WORLD_LOCAL_SIZE`, MPICH's `MPI_LOCALNRANKS`) exceeds the cores this
/// process may run on.
fn cores_shared() -> bool {
    let var = |k: &str| std::env::var(k).ok();
    let yields = var("OMPI_MCA_mpi_yield_when_idle").is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "enabled"));
    let local = var("OMPI_COMM_WORLD_LOCAL_SIZE").or_else(|| var("MPI_LOCALNRANKS")).and_then(|v| v.trim().parse::<usize>().ok());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    yields || local.is_some_and(|n| n > cores)
}

/// The way [`ENV_WAIT`] sets, read once; an unusable value is an error of every call.
pub(crate) fn policy() -> Result<Wait, CollError> {
    static POLICY: OnceLock<Result<Wait, String>> = OnceLock::new();
    POLICY.get_or_init(|| Wait::parse(std::env::var(ENV_WAIT).ok().as_deref(), cores_shared())).clone().map_err(CollError::Config)
}

/// True if waits sleep (an unusable [`ENV_WAIT`] fails the call before it waits).
pub(crate) fn sleeps() -> bool {
    matches!(policy(), Ok(Wait::Sleep))
}

/// Calls `done` until it says so, pausing between calls as described above.
pub(crate) fn until(mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    let mut naps = naps();
    while !done() {
        if started.elapsed() >= SPIN {
            std::thread::sleep(naps.next().unwrap_or(LONGEST_NAP));
        }
    }
}

/// The sleeps of a wait after its spin: doubling from [`FIRST_NAP`], then
/// [`LONGEST_NAP`] for ever.
fn naps() -> impl Iterator<Item = Duration> {
    std::iter::successors(Some(FIRST_NAP), |&d| Some((d * 2).min(LONGEST_NAP)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_sleeps_only_where_cores_are_shared() {
        for unset in [None, Some(""), Some(" auto ")] {
            assert_eq!(Wait::parse(unset, true), Ok(Wait::Sleep));
            assert_eq!(Wait::parse(unset, false), Ok(Wait::Spin));
        }
        assert_eq!(Wait::parse(Some("spin"), true), Ok(Wait::Spin));
        assert_eq!(Wait::parse(Some("sleep"), false), Ok(Wait::Sleep));
        let err = Wait::parse(Some("nap"), true).unwrap_err();
        assert!(err.contains("CCOLL_WAIT=\"nap\"") && err.contains("auto, spin or sleep"), "{err}");
    }

    #[test]
    fn naps_double_from_10_us_to_at_most_100_us() {
        let us: Vec<u128> = naps().take(6).map(|d| d.as_micros()).collect();
        assert_eq!(us, [10, 20, 40, 80, 100, 100]);
    }

    #[test]
    fn a_wait_sleeps_between_tests_after_its_spin() {
        // A wait of 3 ms: after the spin, every test follows a nap of at least 10 us,
        // so at most 300 of them (a spinning loop makes millions).
        let (mut late, t) = (0, Instant::now());
        until(|| {
            late += usize::from(t.elapsed() > SPIN + Duration::from_micros(5));
            t.elapsed() >= Duration::from_millis(3)
        });
        assert!((1..=300).contains(&late), "{late} tests after the spin");
    }
}
