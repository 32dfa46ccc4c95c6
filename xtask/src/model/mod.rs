//! `cargo xtask model`: the LogGP-style cost model of every collective algorithm,
//! calibrated from the codec's measured speed and ratio, validated against a
//! ccoll-bench CSV from the emulated cluster, and used to predict large-scale runs
//! (see docs/cost-model.md).

mod calibrate;
mod poller;
pub mod pace;

use collectives::bench_csv::{self, Row};
use crate::cluster::launch;
use crate::units::{fmt_rate, fmt_size, parse_duration, parse_rate, parse_size, s_per_byte, us_per_mb};
use crate::workspace;
use calibrate::Calibration;
use clap::Args;
use collectives::model::{break_even_bits, pacing_ratio, time_s, BreakEven, Params, Ratios};
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
    /// The machine's pace during that run (the demo's `pace.csv`): the points are priced
    /// with the calibration scaled by the median of its runs' pace over the
    /// calibration's own (docs/cost-model.md, Calibration).
    #[arg(long)]
    pace: Option<PathBuf>,
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
    /// Share of that payload rate each direction keeps while the other direction carries
    /// data too (one flow each way) on the emulated links: plain MPI's two-way rate over
    /// its one-way rate, which the demo's MPI probe measures and passes; needed with --csv.
    #[arg(long)]
    duplex_efficiency: Option<f64>,
    /// The same for C-Coll's streams of pipeline chunks (the demo's chunk probe: its
    /// pipelined ring allgather with every chunk raw); default: --duplex-efficiency.
    #[arg(long)]
    chunk_duplex_efficiency: Option<f64>,
    /// Slowdown of CPU work when all ranks of the emulated host run at once against the
    /// calibration alone (default: measured, see docs/cost-model.md).
    #[arg(long)]
    contention: Option<f64>,
    /// The scheduler's time slice between two threads on one core, which a rank sharing
    /// its core gains half of at the start of every burst of whole-message codec work
    /// (default: measured, see docs/cost-model.md).
    #[arg(long, value_parser = parse_duration)]
    slice: Option<Duration>,
    /// How far a rank done with a call and polling holds a core against the ranks that
    /// compute beside it, 0-1 (`Params::poller_hold`; default: measured, see
    /// docs/cost-model.md).
    #[arg(long)]
    poller_hold: Option<f64>,
    /// Cores shared by all ranks of the emulated run (default: this machine's).
    #[arg(long)]
    host_cores: Option<f64>,
    /// Load average of other work on the machine during that run (the demo records it).
    #[arg(long, default_value_t = 0.0)]
    background_load: f64,
    /// CPU time a rank of that run spent per MB it sent or received, microseconds (the
    /// demo's MPI probe measures it; default 0: not priced).
    #[arg(long, default_value_t = 0.0)]
    net_cpu_us_per_mb: f64,
    /// Data set and codec of the calibration.
    #[arg(long, default_value = "rtm")]
    dataset: String,
    #[arg(long, default_value = "szx-rel=1e-3")]
    codec: String,
    /// Use these instead of measuring (MB/s of uncompressed data, one core, at every ratio).
    #[arg(long)]
    comp_mbps: Option<f64>,
    #[arg(long)]
    decomp_mbps: Option<f64>,
    #[arg(long)]
    ratio: Option<f64>,
    /// Message size of the large-scale predictions.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    size: u64,
    /// CPU cores each rank's codec uses in the predictions (the calibration is one core);
    /// one prediction table per value.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    codec_cores: Vec<f64>,
    /// Memory bandwidth of a predicted node, GB/s: multi-core codec and reduction passes
    /// are capped by the bytes they move through memory (default: the calibration's
    /// per-core memory traffic with every core streaming, times the codec's cores).
    #[arg(long)]
    node_mem_gbps: Option<f64>,
    /// ESTIMATED GPU codec throughput, GB/s of f32 input (default: the H100 "local DRAM"
    /// estimates of `cargo xtask gpu-estimate` for SZx in docs/gpu.md); 0 leaves the GPU
    /// table out.
    #[arg(long, default_value_t = 64.3)]
    gpu_comp_gbps: f64,
    #[arg(long, default_value_t = 285.5)]
    gpu_decomp_gbps: f64,
    /// Fixed cost of one GPU codec pass (kernel launches).
    #[arg(long, default_value = "20us", value_parser = parse_duration)]
    gpu_call: Duration,
    /// GPU memory bandwidth, GB/s (H100 SXM5: 3350): the reduction's throughput is a third.
    #[arg(long, default_value_t = 3350.0)]
    gpu_mem_gbps: f64,
    /// One-way per-message latency of the predicted network.
    #[arg(long, default_value = "2us", value_parser = parse_duration)]
    predict_latency: Duration,
}

/// Points within this fraction of the measurement count as matched.
const TOLERANCE: f64 = 0.15;

pub fn run(a: &ModelArgs) -> Result<ExitCode, String> {
    if cfg!(debug_assertions) {
        // Codec and reduction speeds measured in a debug build would mean nothing.
        return workspace::rerun_in_release();
    }
    let host_cores = a.host_cores.unwrap_or_else(|| std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64));
    let read = |path: &PathBuf| std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()));
    let rows = match &a.csv {
        Some(csv) => bench_csv::parse_all(&read(csv)?),
        None => Vec::new(),
    };
    let paces = match &a.pace {
        Some(path) => pace::parse_all(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))?,
        None => Vec::new(),
    };
    let ranks = rows.iter().map(|r| r.ranks).max().unwrap_or(1);
    // The predictions scale one thread's speed on the codec's parallel path (what a rank
    // of several cores runs) by the cores; the emulated ranks run the codec on the
    // threads the cluster launcher gives them, their node's share of the cores.
    let host_threads = host_cores.max(1.0) as usize;
    let threads = launch::codec_threads(host_threads, ranks);
    // The calibration's fields, generated once for the calibrations and the contention
    // probe that need them.
    let fields = std::cell::OnceCell::new();
    let fields = || -> Result<&calibrate::Fields, String> {
        if let Some(f) = fields.get() {
            return Ok(f);
        }
        let loaded = calibrate::Fields::load(&a.dataset)?;
        Ok(fields.get_or_init(|| loaded))
    };
    // The machine's pace, probed around the codec-independent figures (measured once
    // for both calibrations) and around each calibration's codec passes.
    let probe = pace::Probe::new()?;
    let machine = calibrate::Machine::measure(&probe)?;
    let calibrate_on = |n: usize, why: &str| -> Result<Calibration, String> {
        let cal = match (a.comp_mbps, a.decomp_mbps, a.ratio) {
            (Some(c), Some(d), Some(r)) => Calibration::given(c * 1e6, d * 1e6, r, machine.clone()),
            _ => {
                println!(
                    "calibrating: {} on {} ({}; codec on {n} threads {why})",
                    a.codec,
                    a.dataset,
                    calibrate::INPUTS
                );
                Calibration::measure(fields()?, &a.codec, n, machine.clone(), &probe)?
            }
        };
        println!("{}", cal.describe());
        Ok(cal)
    };
    let cal = calibrate_on(host_threads, "for the predictions' per-core speed")?;
    let mut ok = true;
    if a.csv.is_some() {
        let duplex = a.duplex_efficiency.ok_or("--csv needs --duplex-efficiency: plain MPI's two-way rate over its one-way rate, which the demo's MPI probe measures (docs/cost-model.md, Calibration)")?;
        let contention = match a.contention {
            Some(k) => k,
            None => {
                let k = calibrate::measure_contention(fields()?, &a.codec, threads, ranks, host_threads)?;
                println!("contention (measured, wall time): {ranks} ranks of {threads} codec threads compressing at once on {host_threads} cores take {k:.2}x the perfectly shared time");
                k
            }
        };
        let slice_s = match a.slice {
            Some(d) => d.as_secs_f64(),
            None => {
                let s = calibrate::measure_slice()?;
                println!("time slice (measured, wall time): two spinning threads on one core take turns of {:.2} ms", s * 1e3);
                s
            }
        };
        let poller_hold = match a.poller_hold {
            Some(h) if (0.0..=1.0).contains(&h) => h,
            Some(h) => return Err(format!("--poller-hold {h}: expected a hold from 0 to 1")),
            None => {
                let h = poller::measure_hold(host_threads)?;
                println!("poller hold (measured, wall time): {host_threads} processes computing beside one that polls, each in a session of its own, on {host_threads} cores: {h:.2} (1: it keeps a core of its own, 0: all share the cores alike)");
                h
            }
        };
        let emulated = Emulated {
            codec_threads: threads as f64,
            link_bytes_per_s: a.link as f64 / 8.0 * a.efficiency,
            link_burst_bytes: crate::cluster::burst_bytes(a.link) as f64,
            duplex_efficiency: duplex,
            chunk_duplex_efficiency: a.chunk_duplex_efficiency.unwrap_or(duplex),
            contention,
            slice_s,
            poller_hold,
            alpha_s: a.latency.as_secs_f64(),
            host_cores,
            background_load: a.background_load,
            net_cpu_s_per_byte: s_per_byte(a.net_cpu_us_per_mb),
        };
        let ranks_cal = if threads == host_threads { None } else { Some(calibrate_on(threads, "as the emulated ranks run it")?) };
        let measured = ranks_cal.as_ref().unwrap_or(&cal);
        let priced = match (pace::typical(&paces), measured.pace) {
            (Some(now), Some(then)) => {
                let [c, d, r, sh] = now.over(&then);
                println!(
                    "machine pace during the run (median of {} runs' probes, one thread, CPU time): compress {:.0} MB/s, decode {:.0} MB/s, reduce {:.0} MB/s: {c:.2}, {d:.2} and {r:.2} times the calibration's, by which its codec and memory passes are priced (every core compressing at once: {:.0} MB/s a thread, {sh:.2} times the calibration's, not priced)",
                    paces.len(),
                    now.comp / 1e6,
                    now.decomp / 1e6,
                    now.reduce / 1e6,
                    now.shared / 1e6
                );
                measured.at_pace(&now)
            }
            _ => measured.clone(),
        };
        let (report, within) = validate(&rows, &Pricing { paced: &priced, measured }, &emulated);
        println!("{report}");
        ok = within;
    }
    let bytes = a.size as f64;
    let ratios = op_ratios(&rows, cal.ratio);
    let alpha = a.predict_latency.as_secs_f64();
    for &cores in &a.codec_cores {
        let mem = a.node_mem_gbps.map_or(cal.machine.core_mem_bytes_per_s * cores, |g| g * 1e9);
        // The buffers the collectives allocate inside a call (an application's own are
        // mapped already) are faulted in by the codec's threads: fresh memory scales
        // with the cores too.
        let base = Params { alpha_s: alpha, ..cal.params(cal.ratio, cores, mem) };
        let codec = Codec { name: format!("CPU, {cores} core(s) per rank (measured one-core speed x cores, capped by {:.1} GB/s of memory)", mem / 1e9), base, cal: Some((&cal, cores, mem)) };
        println!("{}", predictions(&codec, &ratios, bytes));
    }
    if a.gpu_comp_gbps > 0.0 && a.gpu_decomp_gbps > 0.0 {
        let base = Params {
            alpha_s: alpha,
            comp_bytes_per_s: a.gpu_comp_gbps * 1e9,
            decomp_bytes_per_s: a.gpu_decomp_gbps * 1e9,
            codec_call_s: a.gpu_call.as_secs_f64(),
            reduce_bytes_per_s: a.gpu_mem_gbps * 1e9 / 3.0,
            scan_bytes_per_s: a.gpu_mem_gbps * 1e9,
            copy_bytes_per_s: a.gpu_mem_gbps * 1e9 / 2.0,
            ratio: cal.ratio,
            // The device buffers a call allocates are not estimated: free (IDEAL).
            ..Params::IDEAL
        };
        let name = format!(
            "GPU ESTIMATE (not measured: roofline of the emulated device, `cargo xtask gpu-estimate`): {:.1} / {:.1} GB/s, {} us per pass",
            a.gpu_comp_gbps,
            a.gpu_decomp_gbps,
            a.gpu_call.as_micros()
        );
        println!("{}", predictions(&Codec { name, base, cal: None }, &ratios, bytes));
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The emulated run a CSV came from.
pub struct Emulated {
    /// Codec threads of each rank ([`launch::codec_threads`]).
    pub codec_threads: f64,
    pub link_bytes_per_s: f64,
    /// The links' token bucket ([`crate::cluster::burst_bytes`]).
    pub link_burst_bytes: f64,
    pub duplex_efficiency: f64,
    pub chunk_duplex_efficiency: f64,
    pub contention: f64,
    /// The scheduler's time slice (`Params::slice_s`).
    pub slice_s: f64,
    /// How far a polling rank holds a core (`Params::poller_hold`).
    pub poller_hold: f64,
    pub alpha_s: f64,
    pub host_cores: f64,
    pub background_load: f64,
    /// CPU seconds a rank spent per byte it sent or received (the demo's MPI probe),
    /// priced at each point's mean ratio (`Params::net_cpu_s_per_coded_byte`).
    pub net_cpu_s_per_byte: f64,
}

impl Emulated {
    /// The model's parameters for one measured point: its ranks share the host's cores
    /// and poll while they wait (Open MPI's TCP progress), the collectives' own
    /// allocations cost the calibrated fresh-memory speed (ccoll-bench reuses its
    /// buffers), the codec runs at its calibrated speed for the point's pacing `ratio`,
    /// and the network's CPU is priced at the call's `mean_ratio`.
    fn params(&self, cal: &Calibration, ranks: usize, ratio: f64, mean_ratio: f64) -> Params {
        // Together the ranks code at the call's mean ratio: the others' codec work per
        // byte against that of the rank priced at `ratio`.
        let cost = |r: f64| 1.0 / cal.compress.bytes_per_s(r) + 1.0 / cal.decompress.bytes_per_s(r);
        let others = ranks.saturating_sub(1).max(1) as f64;
        let peer_work = ((ranks as f64 * cost(mean_ratio) - cost(ratio)) / (others * cost(ratio))).clamp(0.0, 1.0);
        Params {
            peer_work,
            ranks,
            link_bytes_per_s: self.link_bytes_per_s,
            link_burst_bytes: self.link_burst_bytes,
            duplex_efficiency: self.duplex_efficiency,
            chunk_duplex_efficiency: self.chunk_duplex_efficiency,
            contention: self.contention,
            alpha_s: self.alpha_s,
            eager_bytes: launch::EAGER_LIMIT as f64,
            host_cores: self.host_cores,
            ranks_per_host: ranks,
            codec_threads: self.codec_threads,
            background_load: self.background_load,
            net_cpu_s_per_coded_byte: self.net_cpu_s_per_byte / mean_ratio.max(1.0),
            busy_wait: true,
            slice_s: self.slice_s,
            poller_hold: self.poller_hold,
            ..cal.params(ratio, 1.0, f64::INFINITY)
        }
    }
}

/// How the validation prices the codec of a measured point.
pub struct Pricing<'a> {
    /// The calibration at the machine's pace during the run: every figure of a point
    /// without codec columns, and the memory figures of every point.
    pub paced: &'a Calibration,
    /// The calibration as measured, whose codec lines a point with codec columns takes at
    /// its own ranks' speeds ([`Calibration::in_situ`]).
    pub measured: &'a Calibration,
}

/// Model against measurement for every row: the model's time is the critical path (the
/// last rank done), compared with ccoll-bench's slowest rank (`lat_max_us`). A row with
/// codec columns is priced at the codec speeds its own ranks reached, in CPU time (the
/// contention factor, a wall-time slowdown, still applies); the report also gives each
/// point priced at the calibration's pace instead. The report, and whether every point
/// is within [`TOLERANCE`] (the first pricing).
pub fn validate(rows: &[Row], pricing: &Pricing, run: &Emulated) -> (String, bool) {
    let mut s = String::from(
        "Validation against the emulated run (model against the slowest rank, the collective's completion; the ratio priced is the heaviest sender's for Alltoall, Scatter and C-Coll's Allgather and Allreduce, and the heaviest steps' for CPR-P2P's step-by-step rings (Allreduce, Allgather), `collectives::model::pacing_ratio`; a point with codec columns is priced at its own ranks' codec speeds, given as compression and decoding over the calibration's (and the value-range scan's, where it was timed), and the last column prices it at the calibration's pace instead):\n\n| op | size | algorithm | ratio priced | codec in the run | measured mean (ms) | measured slowest (ms) | model (ms) | model/slowest | at the calibration's pace |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    if run.net_cpu_s_per_byte > 0.0 {
        s.insert_str(0, &format!("network CPU (the demo's MPI probe): {:.0} us per MB a rank sends or receives\n", us_per_mb(run.net_cpu_s_per_byte)));
    }
    let (mut n, mut within, mut within_paced, mut in_situ) = (0, 0, 0, 0);
    let hit = |q: f64| (q - 1.0).abs() <= TOLERANCE;
    let mark = |q: f64| format!("{q:.2}{}", if hit(q) { "" } else { " (off)" });
    for r in rows {
        let (Ok(op), Ok(algo)) = (r.op.parse::<CollOp>(), r.algo.parse::<Algorithm>()) else { continue };
        if !validated(op, algo) {
            continue;
        }
        let ratio = if algo.compresses() { pacing_ratio(op, algo, Ratios { mean: r.comp_ratio, heaviest_sender: r.comp_ratio_min, heaviest_steps: r.comp_ratio_steps }).max(1.0) } else { 1.0 };
        let paced = run.params(pricing.paced, r.ranks, ratio, r.comp_ratio);
        let Some(at_pace) = time_s(op, algo, r.bytes as f64, &paced) else { continue };
        let own = r.codec_work.filter(|_| algo.compresses()).map(|w| pricing.measured.in_situ(&w, &pricing.paced.machine));
        let model = match &own {
            Some(cal) => time_s(op, algo, r.bytes as f64, &run.params(cal, r.ranks, ratio, r.comp_ratio)).unwrap_or(at_pace),
            None => at_pace,
        };
        let measured = r.lat_max_us * 1e-6;
        let (q, q_paced) = (model / measured, at_pace / measured);
        n += 1;
        within += usize::from(hit(q));
        within_paced += usize::from(hit(q_paced));
        in_situ += usize::from(own.is_some());
        let speeds = own.map_or("-".to_string(), |c| {
            let [comp, decomp] = c.speed_over(pricing.measured, ratio);
            let timed_scan = r.codec_work.is_some_and(|w| w.scan.raw_bytes > 0.0);
            let scan = if timed_scan { format!(", scan {:.2}", c.machine.scan_bytes_per_s / pricing.measured.machine.scan_bytes_per_s) } else { String::new() };
            format!("{comp:.2}, {decomp:.2}{scan}")
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2} | {speeds} | {:.1} | {:.1} | {:.1} | {} | {} |",
            r.op,
            fmt_size(r.bytes),
            r.algo,
            ratio,
            r.lat_avg_us / 1e3,
            measured * 1e3,
            model * 1e3,
            mark(q),
            mark(q_paced)
        );
    }
    let _ = writeln!(
        s,
        "\n{within} of {n} points within {:.0}% of the measurement ({in_situ} priced at their ranks' own codec speeds); priced at the calibration's pace, {within_paced} of {n}.",
        TOLERANCE * 100.0
    );
    (s, within == n)
}

/// The ratio each operation's C-Coll rows reached (at their largest size), else `fallback`.
fn op_ratios(rows: &[Row], fallback: f64) -> Vec<(CollOp, f64)> {
    OPS.iter()
        .map(|&op| {
            let ratio = rows
                .iter()
                .filter(|r| r.op == op.name() && r.algo == Algorithm::CColl.name() && r.comp_ratio > 1.0)
                .max_by_key(|r| r.bytes)
                .map_or(fallback, |r| r.comp_ratio);
            (op, ratio)
        })
        .collect()
}

const OPS: [CollOp; 5] = [CollOp::Allreduce, CollOp::Bcast, CollOp::Scatter, CollOp::Allgather, CollOp::Alltoall];

/// One codec of the predictions: its parameters at the calibration's ratio and, for the
/// CPU, the calibration to re-derive its speed at another ratio (cores, memory cap).
pub struct Codec<'a> {
    pub name: String,
    pub base: Params,
    pub cal: Option<(&'a Calibration, f64, f64)>,
}

impl Codec<'_> {
    /// The parameters at `ratio`: the CPU codec's speed depends on it, the GPU estimate
    /// is one figure.
    fn at(&self, ratio: f64) -> Params {
        match self.cal {
            Some((cal, cores, mem)) => Params { alpha_s: self.base.alpha_s, ..cal.params(ratio, cores, mem) },
            None => Params { ratio, ..self.base },
        }
    }
}

/// Large-scale predictions and break-even link speeds.
pub fn predictions(codec: &Codec, ratios: &[(CollOp, f64)], bytes: f64) -> String {
    const NODES: [usize; 4] = [64, 256, 1024, 4096];
    const LINKS: [f64; 2] = [25e9, 100e9];
    const EFFICIENCY: f64 = 0.95;
    let mut s = format!(
        "Predictions, {}: {} per rank, one rank per node, {:.0} us per message, each operation at the ratio its C-Coll rows reached ({}).\nSpeedup of the best compressed algorithm over Open MPI's choice (which one in brackets):\n\n| op | link |",
        codec.name,
        fmt_size(bytes as u64),
        codec.base.alpha_s * 1e6,
        ratios.iter().map(|(op, r)| format!("{} {r:.1}", op.name())).collect::<Vec<_>>().join(", ")
    );
    s.push_str(&node_columns(&NODES, 2));
    for &(op, ratio) in ratios {
        let base = codec.at(ratio);
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
    for &(op, ratio) in ratios {
        let _ = write!(s, "| {} |", op.name());
        for ranks in NODES {
            let p = Params { ranks, ..codec.at(ratio) };
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
    use calibrate::{Machine, PassCost};

    fn cal() -> Calibration {
        let flat = PassCost::flat;
        Calibration {
            compress: flat(800e6),
            decompress: flat(900e6),
            recompress: flat(1000e6),
            domain_reduce: Some(flat(1500e6)),
            machine: Machine { reduce_bytes_per_s: 2e9, fresh_bytes_per_s: 3e9, unmap_bytes_per_s: 15e9, reused_bytes_per_s: 12e9, copy_bytes_per_s: 4e9, scan_bytes_per_s: 6e9, core_mem_bytes_per_s: 5e9, reduce_pace: 2e9 },
            ratio: 30.0,
            other_ratios: Vec::new(),
            profile: collectives::model::Profile::UNIFORM,
            scatter_input: collectives::model::Profile::UNIFORM,
            pace: None,
            measured: false,
        }
    }

    fn run() -> Emulated {
        Emulated { codec_threads: 1.0, link_bytes_per_s: 120e6, link_burst_bytes: 0.0, duplex_efficiency: 0.5, chunk_duplex_efficiency: 0.5, contention: 1.0, slice_s: 0.0, poller_hold: 1.0, alpha_s: 50e-6, host_cores: 2.0, background_load: 0.0, net_cpu_s_per_byte: 0.0 }
    }

    fn row(op: CollOp, algo: Algorithm, bytes: u64, ratio: f64, secs: f64) -> Row {
        Row {
            op: op.name().into(),
            algo: algo.name().into(),
            codec: "szx-rel=1e-3".into(),
            ranks: 4,
            bytes,
            lat_avg_us: secs * 0.8e6,
            lat_min_us: secs * 0.5e6,
            lat_max_us: secs * 1e6,
            comp_ratio: ratio,
            max_abs_err: Some(0.0),
            bound: 0.0,
            bound_ok: Some(true),
            comp_ratio_min: ratio,
            comp_ratio_steps: ratio,
            cpu_us: None,
            codec_work: None,
            host_steal: None,
        }
    }

    #[test]
    fn validation_compares_the_slowest_rank_within_15_percent() {
        let (c, e) = (cal(), run());
        let at = |op, algo, ratio: f64| time_s(op, algo, (64u64 << 20) as f64, &e.params(&c, 4, ratio, ratio)).unwrap();
        let exact = [
            row(CollOp::Allreduce, Algorithm::CColl, 64 << 20, 10.0, at(CollOp::Allreduce, Algorithm::CColl, 10.0)),
            row(CollOp::Bcast, Algorithm::Mpi, 64 << 20, 1.0, at(CollOp::Bcast, Algorithm::Mpi, 1.0)),
        ];
        let (report, ok) = validate(&exact, &Pricing { paced: &c, measured: &c }, &e);
        assert!(ok, "{report}");
        assert!(report.contains("2 of 2 points within 15%"), "{report}");
        assert!(report.contains("| allreduce | 64M | c-coll | 10.00 |"), "{report}");
        // A measurement 1.2x the model is outside; unknown names, `hier` (node groups
        // unknown) and point-to-point rows are skipped.
        let mut off = exact.to_vec();
        off[1].lat_max_us *= 1.2;
        off.push(Row { algo: "hier".into(), ..exact[0].clone() });
        off.push(Row { algo: "warp".into(), ..exact[0].clone() });
        off.push(Row { op: "p2p".into(), ..exact[0].clone() });
        let (report, ok) = validate(&off, &Pricing { paced: &c, measured: &c }, &e);
        assert!(!ok && report.contains("1 of 2 points within 15%") && report.contains("0.83 (off)"), "{report}");
    }

    #[test]
    fn a_point_with_codec_columns_is_priced_at_its_ranks_speeds() {
        let (c, e) = (cal(), Emulated { contention: 1.5, ..run() });
        let bytes = 64u64 << 20;
        // The ranks compressed and decoded twice as fast as the calibration's flat lines;
        // both pricings take the contention.
        let pass = |bytes_per_s: f64| collectives::bench_csv::Pass { raw_bytes: 1e9, coded_bytes: 1e8, cpu_s: 1e9 / bytes_per_s / 2.0, ..Default::default() };
        let w = collectives::bench_csv::CodecWork { compress: pass(800e6), decompress: pass(900e6), scan: Default::default() };
        let own = c.in_situ(&w, &c.machine);
        let t = time_s(CollOp::Allreduce, Algorithm::CColl, bytes as f64, &e.params(&own, 4, 10.0, 10.0)).unwrap();
        let at_pace = time_s(CollOp::Allreduce, Algorithm::CColl, bytes as f64, &e.params(&c, 4, 10.0, 10.0)).unwrap();
        assert!(at_pace > 1.3 * t, "{at_pace} against {t}");
        let r = Row { codec_work: Some(w), ..row(CollOp::Allreduce, Algorithm::CColl, bytes, 10.0, t) };
        let (report, ok) = validate(std::slice::from_ref(&r), &Pricing { paced: &c, measured: &c }, &e);
        assert!(ok, "{report}");
        assert!(report.contains("1 of 1 points within 15% of the measurement (1 priced at their ranks' own codec speeds); priced at the calibration's pace, 0 of 1."), "{report}");
        assert!(report.contains("| allreduce | 64M | c-coll | 10.00 | 2.00, 2.00 |") && report.contains(" (off) |\n"), "{report}");
        // A timed scan twice as fast as the calibration's shortens the point's time.
        let scan = collectives::bench_csv::Pass { raw_bytes: 1e9, cpu_s: 0.5e9 / c.machine.scan_bytes_per_s, ..Default::default() };
        let scanned = collectives::bench_csv::CodecWork { scan, ..w };
        let faster = time_s(CollOp::Allreduce, Algorithm::CColl, bytes as f64, &e.params(&c.in_situ(&scanned, &c.machine), 4, 10.0, 10.0)).unwrap();
        assert!(faster < t, "{faster} against {t}");
        let (report, _) = validate(&[Row { codec_work: Some(scanned), ..r.clone() }], &Pricing { paced: &c, measured: &c }, &e);
        assert!(report.contains("| allreduce | 64M | c-coll | 10.00 | 2.00, 2.00, scan 2.00 |"), "{report}");
        // Without the columns, the calibration's pace prices it.
        let (report, ok) = validate(&[Row { codec_work: None, ..r }], &Pricing { paced: &c, measured: &c }, &e);
        assert!(!ok && report.contains("| allreduce | 64M | c-coll | 10.00 | - |") && report.contains("0 of 1 points within 15% of the measurement (0 priced"), "{report}");
    }

    #[test]
    fn emulated_points_poll_share_cores_and_price_the_calls_allocations() {
        let p = run().params(&cal(), 4, 12.0, 24.0);
        assert!(p.busy_wait && p.ranks_per_host == 4 && p.host_cores == 2.0 && p.ratio == 12.0);
        // The network's CPU at the call's mean ratio: 1.2 ns a byte on the wire.
        let net = Emulated { net_cpu_s_per_byte: 1.2e-9, ..run() }.params(&cal(), 4, 12.0, 24.0);
        assert!((net.net_cpu_s_per_coded_byte - 0.05e-9).abs() < 1e-24, "{net:?}");
        assert_eq!(p.net_cpu_s_per_coded_byte, 0.0);
        // A flat codec cost: every rank codes alike at any ratio.
        assert_eq!(p.peer_work, 1.0);
        // Coding costs 1 ns a byte plus 10 ns a compressed byte, each pass: at the mean
        // ratio 20 (1.5 ns) against the priced 10 (2 ns), the three others code
        // (4 x 1.5 - 2) / 3 = 4/3 ns a byte, 2/3 of the priced rank's work.
        let line = PassCost::through(&[(10.0, 2e-9), (20.0, 1.5e-9)]);
        let varied = Calibration { compress: line.clone(), decompress: line, ..cal() };
        let q = run().params(&varied, 4, 10.0, 20.0);
        assert!((q.peer_work - 2.0 / 3.0).abs() < 1e-9, "{}", q.peer_work);
        // Never above the priced rank's own, never below none.
        assert_eq!(run().params(&varied, 4, 20.0, 10.0).peer_work, 1.0);
        let steep = PassCost::through(&[(10.0, 2e-9), (20.0, 1e-9)]);
        let steep = Calibration { compress: steep.clone(), decompress: steep, ..cal() };
        assert_eq!(run().params(&steep, 4, 10.0, 1000.0).peer_work, 0.0);
        // Four emulated nodes on two cores: one codec thread each.
        assert_eq!(p.codec_threads, 1.0);
        let near = |x: Option<f64>, want: f64| x.is_some_and(|x| (x / want - 1.0).abs() < 1e-12);
        assert!(near(p.recomp_bytes_per_s, 1000e6) && near(p.domain_reduce_bytes_per_s, 1500e6), "{p:?}");
        assert_eq!((p.comp_bytes_per_s, p.fresh_bytes_per_s, p.duplex_efficiency), (800e6, 3e9, 0.5));
        // Fresh memory is what a call allocates itself: reduce-scatter's work buffer, one
        // 16 MB block faulted in per step, 3 steps at 3 GB/s x 0.5 (4 ranks of 1 thread
        // computing at once on 2 cores): 32 ms. The Allgather's output is ccoll-bench's,
        // mapped already: nothing.
        let free = Params { fresh_bytes_per_s: f64::INFINITY, ..p };
        let extra = |op, algo| time_s(op, algo, 64e6, &p).unwrap() - time_s(op, algo, 64e6, &free).unwrap();
        assert!((extra(CollOp::ReduceScatter, Algorithm::CprP2p) / 0.032 - 1.0).abs() < 1e-9);
        assert_eq!(extra(CollOp::Allgather, Algorithm::CColl), 0.0);
    }

    #[test]
    fn predictions_cover_every_op_link_and_node_count() {
        let c = cal();
        let base = Params { alpha_s: 2e-6, ..c.params(c.ratio, 16.0, 100e9) };
        let codec = Codec { name: "CPU".into(), base, cal: Some((&c, 16.0, 100e9)) };
        let rows = [row(CollOp::Allreduce, Algorithm::CColl, 16 << 20, 9.0, 1.0), row(CollOp::Allreduce, Algorithm::CColl, 64 << 20, 11.0, 1.0)];
        let ratios = op_ratios(&rows, 30.0);
        assert_eq!(ratios[0], (CollOp::Allreduce, 11.0));
        assert_eq!(ratios[1], (CollOp::Bcast, 30.0));
        let s = predictions(&codec, &ratios, 64.0 * 1048576.0);
        for op in ["allreduce", "bcast", "scatter", "allgather", "alltoall"] {
            assert_eq!(s.matches(&format!("| {op} | ")).count(), 3, "{op}:\n{s}");
        }
        assert!(s.contains("| op | link | 64 nodes | 256 nodes | 1024 nodes | 4096 nodes |\n|---|---|---|---|---|---|"), "{s}");
        assert!(s.contains("25 Gbit/s") && s.contains("100 Gbit/s") && s.contains("allreduce 11.0"), "{s}");
        // The memory cap holds the 16-core codec at 100 GB/s.
        assert_eq!(codec.at(11.0).comp_bytes_per_s, 100e9f64.min(800e6 * 16.0));
        // Recompression and the compressed-domain reduction scale with the cores too,
        // under the same memory cap (20 GB/s here).
        let capped = Codec { cal: Some((&c, 16.0, 20e9)), ..codec };
        let near = |x: Option<f64>, want: f64| x.is_some_and(|x| (x / want - 1.0).abs() < 1e-12);
        let at = capped.at(11.0);
        assert!(near(at.recomp_bytes_per_s, 16e9) && near(at.domain_reduce_bytes_per_s, 20e9), "{at:?}");
    }
}
