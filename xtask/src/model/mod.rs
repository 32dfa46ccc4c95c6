//! `cargo xtask model`: the LogGP-style cost model of every collective algorithm,
//! calibrated from the codec's measured speed and ratio, validated against a
//! ccoll-bench CSV from the emulated cluster, and used to predict large-scale runs
//! (see docs/cost-model.md).

mod calibrate;

use crate::bench_csv::{self, Row};
use crate::units::{fmt_rate, fmt_size, parse_duration, parse_rate, parse_size};
use crate::workspace;
use calibrate::Calibration;
use clap::Args;
use collectives::model::{break_even_bits, time_s, BreakEven, Params};
use collectives::{Algorithm, CollOp};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct ModelArgs {
    /// ccoll-bench CSV from an emulated run to validate against (e.g. out/demo/results.csv).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Link rate of that run.
    #[arg(long, default_value = "1gbit", value_parser = parse_rate)]
    link: u64,
    /// Per-message latency of that run (one-way, including software overhead).
    #[arg(long, default_value = "50us", value_parser = parse_duration)]
    latency: Duration,
    /// Payload share of the link rate that TCP achieves on the emulated links
    /// (`cluster probe` measures it).
    #[arg(long, default_value_t = 0.96)]
    efficiency: f64,
    /// Cores shared by all ranks of the emulated run (default: this machine's).
    #[arg(long)]
    host_cores: Option<f64>,
    /// Load average of other work on the machine during that run (the demo records it).
    #[arg(long, default_value_t = 0.0)]
    background_load: f64,
    /// Data set and codec of the calibration.
    #[arg(long, default_value = "rtm")]
    dataset: String,
    #[arg(long, default_value = "szx-rel=1e-3")]
    codec: String,
    /// Use these instead of measuring (MB/s of uncompressed data, one core).
    #[arg(long)]
    comp_mbps: Option<f64>,
    #[arg(long)]
    decomp_mbps: Option<f64>,
    #[arg(long)]
    ratio: Option<f64>,
    /// Message size of the large-scale predictions.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    size: u64,
    /// Cores each rank's codec uses in the predictions (the calibration is one core);
    /// one prediction table per value.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    codec_cores: Vec<f64>,
    /// One-way per-message latency of the predicted network.
    #[arg(long, default_value = "2us", value_parser = parse_duration)]
    predict_latency: Duration,
}

pub fn run(a: &ModelArgs) -> Result<ExitCode, String> {
    if cfg!(debug_assertions) {
        // Codec and reduction speeds measured in a debug build would mean nothing.
        return workspace::rerun_in_release();
    }
    let given = (a.comp_mbps, a.decomp_mbps, a.ratio);
    let cal = match given {
        (Some(c), Some(d), Some(r)) => Calibration::given(c * 1e6, d * 1e6, r),
        _ => {
            println!("calibrating: {} on {} (64 MiB, one thread)", a.codec, a.dataset);
            Calibration::measure(&a.dataset, &a.codec)?
        }
    };
    println!("{}", cal.describe());
    let host_cores = a.host_cores.unwrap_or_else(|| std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64));
    let mut ok = true;
    if let Some(csv) = &a.csv {
        let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
        let rows = bench_csv::parse_all(&text);
        let base = Params {
            ranks: 1,
            link_bytes_per_s: a.link as f64 / 8.0 * a.efficiency,
            alpha_s: a.latency.as_secs_f64(),
            host_cores,
            ranks_per_host: usize::MAX,
            background_load: a.background_load,
            ..cal.params()
        };
        let (report, within) = validate(&rows, &base);
        println!("{report}");
        ok = within;
    }
    for &cores in &a.codec_cores {
        let large = Params {
            ranks: 1,
            link_bytes_per_s: 1.0,
            alpha_s: a.predict_latency.as_secs_f64(),
            host_cores: 1.0,
            ranks_per_host: 1,
            background_load: 0.0,
            comp_bytes_per_s: cal.comp_bytes_per_s * cores,
            decomp_bytes_per_s: cal.decomp_bytes_per_s * cores,
            reduce_bytes_per_s: cal.reduce_bytes_per_s * cores,
            ..cal.params()
        };
        println!("{}", predictions(&large, a.size as f64, cores));
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Model against measurement for every row; the report and whether every compressed
/// point is within 25%.
pub fn validate(rows: &[Row], base: &Params) -> (String, bool) {
    let mut s = String::from("Validation against the emulated run (model / measured):\n\n| op | size | algorithm | ratio | measured (ms) | model (ms) | model/measured |\n|---|---|---|---|---|---|---|\n");
    let (mut n, mut within) = (0, 0);
    for r in rows {
        let (Ok(op), Ok(algo)) = (r.op.parse::<CollOp>(), r.algo.parse::<Algorithm>()) else { continue };
        if !validated(op, algo) {
            continue;
        }
        // Each point uses the ratio it achieved; ranks share the host (ranks_per_host).
        let p = Params { ranks: r.ranks, ratio: r.comp_ratio.max(1.0), ranks_per_host: r.ranks, ..*base };
        let Some(model) = time_s(op, algo, r.bytes as f64, &p) else { continue };
        let measured = r.lat_avg_us * 1e-6;
        let q = model / measured;
        n += 1;
        if (0.75..=1.25).contains(&q) {
            within += 1;
        }
        let _ = writeln!(s, "| {} | {} | {} | {:.2} | {:.1} | {:.1} | {q:.2} |", r.op, fmt_size(r.bytes), r.algo, p.ratio, measured * 1e3, model * 1e3);
    }
    let _ = writeln!(s, "\n{within} of {n} points within 25% of the measurement.");
    (s, within == n)
}

/// Large-scale predictions and break-even link speeds.
pub fn predictions(base: &Params, bytes: f64, codec_cores: f64) -> String {
    const NODES: [usize; 4] = [16, 64, 256, 1024];
    const LINKS: [f64; 3] = [10e9, 100e9, 200e9];
    const EFFICIENCY: f64 = 0.95;
    let ops = [CollOp::Allreduce, CollOp::Bcast, CollOp::Scatter, CollOp::Allgather, CollOp::Alltoall];
    let mut s = format!(
        "Predictions: {} per rank, one rank per node, codec at {:.0} MB/s compress / {:.0} MB/s decompress ({codec_cores} core(s)), ratio {:.2}, {:.0} us per message.\nSpeedup of the best compressed algorithm over plain MPI (which one in brackets):\n\n| op | link |",
        fmt_size(bytes as u64),
        base.comp_bytes_per_s / 1e6,
        base.decomp_bytes_per_s / 1e6,
        base.ratio,
        base.alpha_s * 1e6
    );
    s.push_str(&node_columns(&NODES, 2));
    for op in ops {
        for link in LINKS {
            let _ = write!(s, "| {} | {} |", op.name(), fmt_rate(link as u64));
            for ranks in NODES {
                let p = Params { ranks, ..base.with_link_bits(link, EFFICIENCY) };
                let plain = time_s(op, Algorithm::Mpi, bytes, &p).unwrap_or(f64::NAN);
                let best = compressed(op)
                    .filter_map(|a| time_s(op, a, bytes, &p).map(|t| (a, t)))
                    .min_by(|x, y| x.1.total_cmp(&y.1));
                match best {
                    Some((a, t)) => {
                        let _ = write!(s, " {:.2} ({}) |", plain / t, a.name());
                    }
                    None => s.push_str(" - |"),
                }
            }
            s.push('\n');
        }
    }
    s.push_str("\nBreak-even link speed (compression pays below it), best compressed algorithm:\n\n| op |");
    s.push_str(&node_columns(&NODES, 1));
    for op in ops {
        let _ = write!(s, "| {} |", op.name());
        for ranks in NODES {
            let p = Params { ranks, ..*base };
            let best = compressed(op).filter_map(|a| break_even_bits(op, a, bytes, &p, EFFICIENCY)).fold(None, |acc: Option<BreakEven>, b| match (acc, b) {
                (Some(BreakEven::Always), _) | (_, BreakEven::Always) => Some(BreakEven::Always),
                (Some(BreakEven::At(x)), BreakEven::At(y)) => Some(BreakEven::At(x.max(y))),
                (Some(BreakEven::At(x)), BreakEven::Never) | (Some(BreakEven::Never), BreakEven::At(x)) => Some(BreakEven::At(x)),
                (None, b) => Some(b),
                (Some(BreakEven::Never), BreakEven::Never) => Some(BreakEven::Never),
            });
            let cell = match best {
                Some(BreakEven::At(bits)) => fmt_rate(bits as u64),
                Some(BreakEven::Never) => "never pays".to_string(),
                Some(BreakEven::Always) => "> 10 Tbit/s".to_string(),
                None => "-".to_string(),
            };
            let _ = write!(s, " {cell} |");
        }
        s.push('\n');
    }
    s
}

/// The compressed algorithms of `op` the predictions compare with plain MPI: one rank
/// per node, so not `hier` (which would be the flat ring).
fn compressed(op: CollOp) -> impl Iterator<Item = Algorithm> {
    op.algorithms().iter().copied().filter(|&a| a.compresses() && a != Algorithm::Hierarchical)
}

/// The rows the validation compares: the CSV does not record the node groups that
/// `hier` ran with, and point-to-point rows are no collective.
fn validated(op: CollOp, algo: Algorithm) -> bool {
    op != CollOp::P2p && algo != Algorithm::Hierarchical
}

/// The rest of a markdown header row: one column per node count, then the separator
/// row for `lead` leading columns.
fn node_columns(nodes: &[usize], lead: usize) -> String {
    let mut s: String = nodes.iter().map(|p| format!(" {p} nodes |")).collect();
    s.push('\n');
    s.push_str(&"|---".repeat(lead + nodes.len()));
    s.push_str("|\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Params {
        Params {
            ranks: 4,
            link_bytes_per_s: 120e6,
            alpha_s: 50e-6,
            comp_bytes_per_s: 800e6,
            decomp_bytes_per_s: 900e6,
            codec_call_s: 0.0,
            reduce_bytes_per_s: 2e9,
            ratio: 1.0,
            host_cores: 2.0,
            ranks_per_host: 4,
            background_load: 0.0,
            group_ranks: 1,
            intra_bytes_per_s: f64::INFINITY,
            intra_alpha_s: 0.0,
        }
    }

    fn row(op: CollOp, algo: Algorithm, bytes: u64, ratio: f64, secs: f64) -> Row {
        Row {
            op: op.name().into(),
            algo: algo.name().into(),
            codec: "szx-rel=1e-3".into(),
            ranks: 4,
            bytes,
            lat_avg_us: secs * 1e6,
            lat_min_us: secs * 1e6,
            lat_max_us: secs * 1e6,
            comp_ratio: ratio,
            max_abs_err: 0.0,
            bound: 0.0,
            bound_ok: true,
        }
    }

    #[test]
    fn validation_counts_points_within_a_quarter() {
        let b = base();
        let at = |op, algo, ratio: f64| time_s(op, algo, (64u64 << 20) as f64, &Params { ratio, ..b }).unwrap();
        let exact = [
            row(CollOp::Allreduce, Algorithm::CColl, 64 << 20, 10.0, at(CollOp::Allreduce, Algorithm::CColl, 10.0)),
            row(CollOp::Bcast, Algorithm::Mpi, 64 << 20, 1.0, at(CollOp::Bcast, Algorithm::Mpi, 1.0)),
        ];
        let (report, ok) = validate(&exact, &b);
        assert!(ok, "{report}");
        assert!(report.contains("2 of 2 points within 25%"), "{report}");
        assert!(report.contains("| allreduce | 64M | c-coll | 10.00 |"), "{report}");
        // A measurement 1.5x the model is outside; unknown names, `hier` (node groups
        // unknown) and point-to-point rows are skipped.
        let mut off = exact.to_vec();
        off[1].lat_avg_us *= 1.5;
        off.push(Row { algo: "hier".into(), ..exact[0].clone() });
        off.push(Row { algo: "warp".into(), ..exact[0].clone() });
        off.push(Row { op: "p2p".into(), ..exact[0].clone() });
        let (report, ok) = validate(&off, &b);
        assert!(!ok && report.contains("1 of 2 points within 25%"), "{report}");
    }

    #[test]
    fn predictions_cover_every_op_link_and_node_count() {
        let p = Params { ratio: 17.0, host_cores: 1.0, ranks_per_host: 1, ..base() };
        let s = predictions(&p, 64.0 * 1048576.0, 1.0);
        for op in ["allreduce", "bcast", "scatter", "allgather", "alltoall"] {
            assert_eq!(s.matches(&format!("| {op} | ")).count(), 4, "{op}:\n{s}");
        }
        assert!(s.contains("| op | link | 16 nodes | 64 nodes | 256 nodes | 1024 nodes |\n|---|---|---|---|---|---|"), "{s}");
        assert!(s.contains("10 Gbit/s") && s.contains("200 Gbit/s"));
    }
}
