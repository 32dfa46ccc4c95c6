//! The share of the link rate plain MPI keeps in each direction while both directions
//! carry data, measured with MPI itself on the emulated cluster: a ping-pong (one
//! direction at a time) and a recursive-doubling allgather (every rank exchanging with a
//! partner both ways at once, the pattern of Open MPI's Allreduce, Allgather and
//! Alltoall). The raw TCP probe keeps nearly its whole rate both ways; MPI kept 0.5-0.6
//! of it while it sent a large message's rest as one fragment (Open MPI's default; the
//! launcher now asks for 128 KiB fragments, and it keeps about 0.98), so the cost
//! model's duplex efficiency comes from MPI itself, not from the link. A third run,
//! C-Coll's pipelined ring allgather with every chunk raw (no codec work), measures the
//! same for a stream of pipeline chunks, which keeps the link busier both ways, and the
//! CPU time those streams cost the ranks per byte.

use super::Cluster;
use collectives::bench_csv::Row;
use crate::units::{fmt_size, us_per_mb};
use std::path::Path;
use std::time::Duration;

/// Message size of the probe: between the demo's sizes (16 MiB and up) and above the
/// eager limit, so that it moves as the demo's plain-MPI messages do. Plain MPI's
/// recursive-doubling allgather on the emulated 4 nodes moved 118.3, 118.6 and 117.4
/// MB/s each way at 4, 8 and 24 MiB (2026-11-27, 128 KiB fragments; with one fragment,
/// 62, 60 and 72 on 2026-11-26).
pub const PROBE_BYTES: u64 = 24 << 20;

/// What the MPI probe measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpiDuplex {
    /// Payload bytes per second of a message with the reverse direction idle.
    pub one_way_bytes_per_s: f64,
    /// Payload bytes per second of each direction while both carry data.
    pub two_way_bytes_per_s: f64,
    /// The same for streams of pipeline chunks, one each way.
    pub chunk_two_way_bytes_per_s: f64,
    /// CPU seconds a rank of the chunk streams spent per byte it sent or received (the
    /// kernel's TCP path, the MPI library's copies, and its own copy of each raw chunk
    /// into the output); `None` where ccoll-bench did not report CPU time.
    pub chunk_cpu_s_per_byte: Option<f64>,
}

/// The cost model's duplex efficiency: the share of the one-way rate each direction
/// keeps while the other one is busy too (of a link, [`super::Probe`], or of MPI).
pub fn efficiency(one_way_bytes_per_s: f64, two_way_bytes_per_s: f64) -> f64 {
    (two_way_bytes_per_s / one_way_bytes_per_s).clamp(0.0, 1.0)
}

impl MpiDuplex {
    /// The cost model's duplex efficiency of plain MPI, [`efficiency`].
    pub fn efficiency(&self) -> f64 {
        efficiency(self.one_way_bytes_per_s, self.two_way_bytes_per_s)
    }

    /// The cost model's duplex efficiency of chunk streams.
    pub fn chunk_efficiency(&self) -> f64 {
        efficiency(self.one_way_bytes_per_s, self.chunk_two_way_bytes_per_s)
    }

    /// One line for logs and reports.
    pub fn describe(&self) -> String {
        format!(
            "MPI probe: {:.1} MB/s one way, {:.1} MB/s each way with both busy (duplex efficiency {:.3}), chunk streams {:.1} MB/s each way (chunk duplex efficiency {:.3}){}",
            self.one_way_bytes_per_s / 1e6,
            self.two_way_bytes_per_s / 1e6,
            self.efficiency(),
            self.chunk_two_way_bytes_per_s / 1e6,
            self.chunk_efficiency(),
            self.chunk_cpu_s_per_byte.map_or(String::new(), |c| format!(", {:.0} us of CPU per MB a rank sends or receives", us_per_mb(c)))
        )
    }

    /// From ccoll-bench's plain-MPI rows at one size: `p2p` reports half a ping-pong's
    /// round trip, which the ranks that start it (the slowest) time whole: one message
    /// of `bytes`; `allgather` on `p` ranks (a power of two below 32, where Open MPI runs
    /// recursive doubling) moves `(p - 1) bytes` each way per rank, done when the slowest
    /// rank is. At one size MPI's per-message overheads weigh alike on both, so their
    /// ratio is what the reverse direction's traffic costs. `chunked` is the C-Coll
    /// ring allgather's row at the same size (each rank's `(p - 1) bytes` each way too),
    /// whose CPU time per call is spread over those `2 (p - 1) bytes`.
    pub fn from_rows(p2p: &Row, allgather: &Row, chunked: &Row) -> Result<MpiDuplex, String> {
        let p = allgather.ranks;
        if !(2..32).contains(&p) || !p.is_power_of_two() {
            return Err(format!("the two-way probe needs a power of two below 32 ranks (recursive doubling), not {p}"));
        }
        if p2p.bytes != allgather.bytes || chunked.bytes != allgather.bytes || chunked.ranks != p {
            return Err(format!("the MPI probe's runs differ: {} / {} / {} bytes", p2p.bytes, allgather.bytes, chunked.bytes));
        }
        if p2p.lat_max_us <= 0.0 || allgather.lat_max_us <= 0.0 || chunked.lat_max_us <= 0.0 {
            return Err("the MPI probe measured no time".into());
        }
        let each_way = |r: &Row| (p - 1) as f64 * r.bytes as f64 / (r.lat_max_us * 1e-6);
        Ok(MpiDuplex {
            one_way_bytes_per_s: p2p.bytes as f64 / (p2p.lat_max_us * 1e-6),
            two_way_bytes_per_s: each_way(allgather),
            chunk_two_way_bytes_per_s: each_way(chunked),
            chunk_cpu_s_per_byte: chunked.cpu_us.map(|us| us * 1e-6 / (2.0 * (p - 1) as f64 * chunked.bytes as f64)),
        })
    }
}

/// Runs the three measurements with `program` (ccoll-bench) on `cluster`, the two-way
/// ones [`PROBE_RUNS`] times each (their fastest runs).
pub fn measure(cluster: &Cluster, program: &Path) -> Result<MpiDuplex, String> {
    let row = |op: &str, algo: &str| -> Result<Row, String> {
        // Below the compression threshold (the whole message), C-Coll's frames are raw.
        let raw = (PROBE_BYTES + 1).to_string();
        let args: Vec<String> = [
            "--op", op, "--algo", algo, "--codec", "szx-rel:1e-3", "--sizes", &fmt_size(PROBE_BYTES), "--iters", "10", "--warmup", "1", "--format", "csv", "--min-bytes", &raw,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut got = None;
        let status = cluster.run_mpi(program, &args, Duration::from_secs(120), |line| got = got.take().or_else(|| Row::parse(line)))?;
        match got {
            Some(r) if status.success() => Ok(r),
            _ => Err(format!("MPI probe ({op}): ccoll-bench exited with {status} and no result")),
        }
    };
    let best = |algo: &str| (0..PROBE_RUNS).map(|_| row("allgather", algo)).collect::<Result<Vec<_>, _>>().map(fastest);
    MpiDuplex::from_rows(&row("p2p", "mpi")?, &best("mpi")?, &best("c-coll")?)
}

/// Separate runs of each two-way probe, of which the fastest counts (as the codec
/// calibration takes the best of five): MPI's two-way rate settles per run, at 61 or
/// 71 MB/s each way at 24 MiB (four runs, 2026-11-26), while the demo's 64 MiB
/// allgathers ran at 71 MB/s in five demos of seven and at 67 in the other two. Three
/// runs all settled at 60 MB/s in one main job whose own allgathers moved 68 MB/s (and
/// priced its plain MPI Allreduce 1.20-1.29 over); the slow level came up in 2 of 8
/// runs, with BBR or Reno alike.
const PROBE_RUNS: usize = 5;

/// The row of `rows` (non-empty) whose slowest rank was fastest.
fn fastest(rows: Vec<Row>) -> Row {
    rows.into_iter().min_by(|a, b| a.lat_max_us.total_cmp(&b.lat_max_us)).expect("at least one run")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, ranks: usize, avg_ms: f64, max_ms: f64) -> Row {
        Row::parse(&format!("{op},mpi,szx-rel=1e-3,{ranks},4194304,{},0,{},1,0,0,true", avg_ms * 1e3, max_ms * 1e3)).unwrap()
    }

    #[test]
    fn the_two_way_probe_takes_the_fastest_run() {
        let runs = [1230.0, 1056.0, 1063.0].map(|ms| row("allgather", 4, ms, ms)).to_vec();
        assert_eq!(fastest(runs).lat_max_us, 1056.0e3);
        assert_eq!(fastest(vec![row("allgather", 4, 9.0, 9.0)]).lat_max_us, 9.0e3);
    }

    #[test]
    fn duplex_efficiency_is_the_two_way_rate_over_the_one_way_rate() {
        // 4 MiB one way in 35 ms (the slowest rank; the echoing ones report less): 119.8
        // MB/s. Recursive doubling on 4 ranks moves 12 MiB each way; 175 ms for the
        // slowest rank is 71.9 MB/s: 0.6 of the one-way rate.
        // The chunked ring moves the same 12 MiB each way in 140 ms: 0.75 of one way.
        let chunked = row("allgather", 4, 130.0, 140.0);
        let d = MpiDuplex::from_rows(&row("p2p", 4, 26.0, 35.0), &row("allgather", 4, 170.0, 175.0), &chunked).unwrap();
        assert!((d.one_way_bytes_per_s - 4194304.0 / 0.035).abs() < 1.0, "{d:?}");
        assert!((d.two_way_bytes_per_s - 3.0 * 4194304.0 / 0.175).abs() < 1.0, "{d:?}");
        assert!((d.efficiency() - 0.6).abs() < 1e-12, "{d:?}");
        assert!((d.chunk_efficiency() - 0.75).abs() < 1e-12, "{d:?}");
        assert_eq!(d.chunk_cpu_s_per_byte, None);
        // Each chunked rank sends and receives 12 MiB: 50.3 ms of CPU a call is 2 ns a byte.
        let timed = Row { cpu_us: Some(2e-3 * 2.0 * 3.0 * 4194304.0), ..chunked.clone() };
        let d = MpiDuplex::from_rows(&row("p2p", 4, 26.0, 35.0), &row("allgather", 4, 170.0, 175.0), &timed).unwrap();
        assert!((d.chunk_cpu_s_per_byte.unwrap() - 2e-9).abs() < 1e-15, "{d:?}");
        // Not recursive doubling, different sizes, or nothing measured: an error.
        let mut other = row("allgather", 4, 170.0, 175.0);
        other.bytes *= 2;
        assert!(MpiDuplex::from_rows(&row("p2p", 4, 35.0, 36.0), &other, &chunked).is_err());
        assert!(MpiDuplex::from_rows(&row("p2p", 4, 35.0, 36.0), &row("allgather", 4, 170.0, 175.0), &other).is_err());
        assert!(MpiDuplex::from_rows(&row("p2p", 4, 35.0, 36.0), &row("allgather", 6, 170.0, 175.0), &chunked).is_err());
        assert!(MpiDuplex::from_rows(&row("p2p", 4, 0.0, 0.0), &row("allgather", 4, 170.0, 175.0), &chunked).is_err());
        assert!(MpiDuplex::from_rows(&row("p2p", 4, 35.0, 36.0), &row("allgather", 4, 170.0, 175.0), &row("allgather", 4, 0.0, 0.0)).is_err());
    }
}
