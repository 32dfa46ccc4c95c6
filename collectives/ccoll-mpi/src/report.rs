//! Per-collective counters of this process, summed over the ranks at `MPI_Finalize` into
//! the `ccoll-report:` lines.

use std::sync::Mutex;

use collectives::CollStats;
use mpi::ffi;

use crate::ops::Collective;
use crate::settings::Settings;

/// What one collective did on this rank (or, once summed, on all ranks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub calls: u64,
    pub compressed: u64,
    /// Message bytes of the calls (the size compared with `CCOLL_MIN_BYTES`).
    pub bytes: u64,
    /// Bytes on the wire: what compressed calls sent; a call MPI ran counts its message
    /// bytes (MPI's own traffic is not visible).
    pub sent: u64,
    /// What `sent` would have been uncompressed.
    pub raw: u64,
    /// Largest error bound of a compressed call (infinite where a call had none).
    pub bound: f64,
}

impl Tally {
    /// Uncompressed over sent bytes (1 when nothing was sent).
    pub fn ratio(&self) -> f64 {
        if self.sent == 0 {
            1.0
        } else {
            self.raw as f64 / self.sent as f64
        }
    }
}

static TALLIES: Mutex<[Tally; Collective::ALL.len()]> = Mutex::new(
    [Tally { calls: 0, compressed: 0, bytes: 0, sent: 0, raw: 0, bound: 0.0 }; Collective::ALL.len()],
);

fn with_tally(coll: Collective, f: impl FnOnce(&mut Tally)) {
    let mut all = TALLIES.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut all[coll as usize]);
}

/// Counts a call that MPI ran.
pub fn record_passed(coll: Collective, bytes: usize) {
    with_tally(coll, |t| {
        t.calls += 1;
        t.bytes += bytes as u64;
        t.sent += bytes as u64;
        t.raw += bytes as u64;
    });
}

/// Counts a call that the compressed collectives ran.
pub fn record_compressed(coll: Collective, bytes: usize, stats: &CollStats) {
    with_tally(coll, |t| {
        t.calls += 1;
        t.bytes += bytes as u64;
        t.sent += stats.bytes_sent;
        t.raw += stats.raw_bytes_sent;
        if stats.algorithm.compresses() {
            t.compressed += 1;
            t.bound = t.bound.max(stats.error_bound.unwrap_or(f64::INFINITY));
        }
    });
}

/// This process's tallies, summed (maximum for the bound) over the ranks of
/// `MPI_COMM_WORLD` into rank 0; `None` on the other ranks.
pub fn sum_over_world() -> Option<[Tally; Collective::ALL.len()]> {
    let mine = *TALLIES.lock().unwrap_or_else(|e| e.into_inner());
    let words: Vec<u64> = mine.iter().flat_map(|t| [t.calls, t.compressed, t.bytes, t.sent, t.raw]).collect();
    let bounds: Vec<f64> = mine.iter().map(|t| t.bound).collect();
    let (mut words_sum, mut bounds_max) = (vec![0u64; words.len()], vec![0f64; bounds.len()]);
    let mut rank = 0;
    // SAFETY: buffers of the stated lengths; MPI is initialised and not yet finalised.
    unsafe {
        let world = ffi::RSMPI_COMM_WORLD;
        ffi::PMPI_Comm_rank(world, &mut rank);
        ffi::PMPI_Reduce(words.as_ptr().cast(), words_sum.as_mut_ptr().cast(), words.len() as i32, ffi::RSMPI_UINT64_T, ffi::RSMPI_SUM, 0, world);
        ffi::PMPI_Reduce(bounds.as_ptr().cast(), bounds_max.as_mut_ptr().cast(), bounds.len() as i32, ffi::RSMPI_DOUBLE, ffi::RSMPI_MAX, 0, world);
    }
    (rank == 0).then(|| {
        core::array::from_fn(|i| {
            let w = &words_sum[5 * i..5 * i + 5];
            Tally { calls: w[0], compressed: w[1], bytes: w[2], sent: w[3], raw: w[4], bound: bounds_max[i] }
        })
    })
}

/// The report: one line per collective that was called, then the settings line.
pub fn lines(tallies: &[Tally; Collective::ALL.len()], settings: &Settings, ranks: i32) -> Vec<String> {
    let mut out: Vec<String> = Collective::ALL
        .iter()
        .zip(tallies)
        .filter(|(_, t)| t.calls > 0)
        .map(|(c, t)| {
            format!(
                "ccoll-report: op={} calls={} compressed={} bytes={} sent={} ratio={:.2} bound={}",
                c.name(),
                t.calls,
                t.compressed,
                t.bytes,
                t.sent,
                t.ratio(),
                format_bound(t),
            )
        })
        .collect();
    let vars: Vec<String> = settings.canonical().iter().map(|(name, value)| format!("{name}={value}")).collect();
    let note = if settings.codec.is_none() { " (CCOLL_CODEC unset: nothing compressed)" } else { "" };
    out.push(format!("ccoll-report: settings ranks={ranks} {}{note}", vars.join(" ")));
    out
}

fn format_bound(t: &Tally) -> String {
    if t.compressed == 0 || t.bound == 0.0 {
        "0".into()
    } else if t.bound.is_infinite() {
        "inf".into()
    } else {
        format!("{:.3e}", t.bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_follow_the_format() {
        let settings = Settings::from_lookup(|_| None).unwrap();
        let mut t = [Tally::default(); Collective::ALL.len()];
        t[0] = Tally { calls: 8, compressed: 4, bytes: 4000, sent: 1500, raw: 3000, bound: 4e-3 };
        t[3] = Tally { calls: 2, compressed: 0, bytes: 16, sent: 16, raw: 16, bound: 0.0 };
        t[7] = Tally { calls: 1, compressed: 1, bytes: 64, sent: 40, raw: 60, bound: f64::INFINITY };
        let lines = lines(&t, &settings, 4);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "ccoll-report: op=allreduce calls=8 compressed=4 bytes=4000 sent=1500 ratio=2.00 bound=4.000e-3");
        assert_eq!(lines[1], "ccoll-report: op=bcast calls=2 compressed=0 bytes=16 sent=16 ratio=1.00 bound=0");
        assert_eq!(lines[2], "ccoll-report: op=alltoall calls=1 compressed=1 bytes=64 sent=40 ratio=1.50 bound=inf");
        assert!(lines[3].starts_with("ccoll-report: settings ranks=4 CCOLL_CODEC=unset CCOLL_MIN_BYTES=1048576"));
        assert!(lines[3].ends_with("(CCOLL_CODEC unset: nothing compressed)"), "{}", lines[3]);
    }
}
