//! `MPI_Init` and `MPI_Finalize`: the settings agreement and the report.

use std::sync::OnceLock;

use collectives::CollConfig;
use mpi::ffi;

use crate::report;
use crate::settings::{InvalidSetting, Settings};

/// The library's state once `MPI_Init` has passed the agreement.
pub struct Active {
    pub settings: Settings,
    /// The collectives' settings (`None`: `CCOLL_CODEC` unset, nothing is compressed).
    pub cfg: Option<CollConfig>,
    pub world_rank: i32,
    pub world_size: i32,
}

static ACTIVE: OnceLock<Active> = OnceLock::new();

/// The active state; `None` before `MPI_Init` (or if the program initialised MPI by a
/// path the library does not see): every call then goes to MPI unchanged.
pub fn active() -> Option<&'static Active> {
    ACTIVE.get()
}

/// Exit status of a job stopped at `MPI_Init`.
const STOP_STATUS: i32 = 1;

/// After a successful `PMPI_Init`: reads this rank's settings, compares them with every
/// other rank's, and stops every rank (after `PMPI_Finalize`, so that no rank hangs) if
/// a value is invalid on some rank or differs between ranks.
pub fn after_init() {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: MPI is initialised.
    unsafe {
        ffi::PMPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut rank);
        ffi::PMPI_Comm_size(ffi::RSMPI_COMM_WORLD, &mut size);
    }
    let parsed = Settings::from_env();
    match agree(&parsed, rank) {
        Verdict::Agreed => {}
        Verdict::Invalid { rank: bad } => {
            if let (true, Err(e)) = (bad == rank, &parsed) {
                say!("ccoll-mpi: rank {rank}: {e}; stopping every rank at MPI_Init");
            }
            stop();
        }
        Verdict::Differ { var } => {
            let value = parsed.as_ref().ok().and_then(|s| s.canonical().into_iter().find(|(n, _)| *n == var)).map(|(_, v)| v);
            say!(
                "ccoll-mpi: rank {rank}: {var} differs between the ranks (here {}); every rank needs the same CCOLL_* \
                 settings (mpirun -x {var}=...); stopping every rank at MPI_Init",
                value.unwrap_or_default()
            );
            stop();
        }
    }
    let settings = parsed.expect("the agreement stops a rank with invalid settings");
    if settings.verbose > 0 && rank == 0 {
        let vars: Vec<String> = settings.canonical().iter().map(|(n, v)| format!("{n}={v}")).collect();
        say!("ccoll-mpi: active on {size} ranks: {}", vars.join(" "));
    }
    let cfg = settings.coll_config();
    let _ = ACTIVE.set(Active { settings, cfg, world_rank: rank, world_size: size });
}

enum Verdict {
    Agreed,
    /// The lowest rank whose settings are invalid.
    Invalid { rank: i32 },
    /// The first variable whose value differs between ranks.
    Differ { var: &'static str },
}

/// One `PMPI_Allreduce(MIN)` over every variable's fingerprint and its complement (so
/// every rank learns the minimum and the maximum) and the lowest invalid rank.
fn agree(parsed: &Result<Settings, InvalidSetting>, rank: i32) -> Verdict {
    let fingerprints = match parsed {
        Ok(s) => s.fingerprints(),
        Err(_) => Settings::from_lookup(|_| None).expect("the defaults are valid").fingerprints(),
    };
    let n = fingerprints.len();
    let mut words: Vec<u64> = fingerprints.iter().map(|&(_, h)| h).collect();
    words.extend(fingerprints.iter().map(|&(_, h)| !h));
    words.push(if parsed.is_err() { rank as u64 } else { u64::MAX });
    let mut agreed = vec![0u64; words.len()];
    // SAFETY: both buffers hold `words.len()` u64; MPI is initialised.
    unsafe {
        ffi::PMPI_Allreduce(
            words.as_ptr().cast(),
            agreed.as_mut_ptr().cast(),
            words.len() as i32,
            ffi::RSMPI_UINT64_T,
            ffi::RSMPI_MIN,
            ffi::RSMPI_COMM_WORLD,
        )
    };
    if agreed[2 * n] != u64::MAX {
        return Verdict::Invalid { rank: agreed[2 * n] as i32 };
    }
    match fingerprints.iter().enumerate().find(|&(i, _)| agreed[i] != !agreed[n + i]) {
        Some((_, &(var, _))) => Verdict::Differ { var },
        None => Verdict::Agreed,
    }
}

fn stop() -> ! {
    // SAFETY: every rank reaches this after the same agreement, so all finalise.
    unsafe { ffi::PMPI_Finalize() };
    std::process::exit(STOP_STATUS);
}

/// Before `PMPI_Finalize`: with `CCOLL_REPORT=1`, rank 0 prints the report summed over
/// the ranks (every rank takes part in the reduction).
pub fn before_finalize() {
    let Some(active) = active().filter(|a| a.settings.report) else { return };
    if let Some(total) = report::sum_over_world() {
        for line in report::lines(&total, &active.settings, active.world_size) {
            say!("{line}");
        }
    }
}
