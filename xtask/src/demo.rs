//! `cargo xtask demo`: the README's main job. Builds ccoll-bench, brings up the
//! emulated cluster, measures plain MPI against the compressed algorithms for each
//! operation and size in several passes (`passes.rs`), prints a progress line per
//! measurement and the result table, writes the CSV, the table and a latency plot, and
//! tears the cluster down. Its text files are replaced atomically
//! (`codec_host::atomic_file`), so an interrupted or failed demo leaves each whole.

use collectives::bench_csv::{RankTimes, Row};
use crate::cluster::{Cluster, MpiDuplex};
use crate::passes::{self, Passes};
use crate::units::{fmt_size, parse_size, us_per_mb};
use crate::{model, plot, signals, workspace, Shape};
use clap::Args;
use codec_host::atomic_file;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct DemoArgs {
    #[command(flatten)]
    shape: Shape,
    /// Operations to measure.
    #[arg(long, value_delimiter = ',', default_value = "allreduce,bcast,scatter,allgather,alltoall")]
    ops: Vec<String>,
    /// Algorithms (the first is the baseline of the speedup column).
    #[arg(long, default_value = "mpi,cpr-p2p,c-coll")]
    algos: String,
    /// Message sizes.
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_value = "16M,32M,64M,128M,256M")]
    sizes: Vec<u64>,
    #[arg(long, default_value = "szx-rel=1e-3")]
    codec: String,
    #[arg(long, default_value = "rtm")]
    dataset: String,
    #[arg(long, default_value_t = 3)]
    iters: u32,
    /// Seconds of timed calls per point at least (ccoll-bench's --min-time): the fast
    /// compressed points take the median of many more calls than --iters.
    #[arg(long, default_value_t = 1.0)]
    min_time: f64,
    #[arg(long, default_value_t = 1)]
    warmup: u32,
    /// Passes over the points: every algorithm runs every point in each pass, and each
    /// point reports its middle pass (`passes.rs`).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=9))]
    passes: u32,
    /// Where the CSV, table and plot go.
    #[arg(long, default_value = "out/demo")]
    out: PathBuf,
    /// Wall-clock limit of each ccoll-bench run, seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// A ccoll-bench binary to use instead of building one.
    #[arg(long)]
    program: Option<PathBuf>,
}

pub fn run(a: &DemoArgs) -> Result<ExitCode, String> {
    if cfg!(debug_assertions) {
        // The machine's pace is probed in this process: a debug build's codec would
        // measure nothing of the machine.
        return workspace::rerun_in_release();
    }
    // Other work on the machine, before this command's own build: the 1-minute load
    // average for the report, and what runs now for the model's background load (the
    // average still counts work that ended within the last minutes).
    let load_before = load_average();
    let runnable_before = other_runnable(std::time::Duration::from_secs(2));
    let program = match &a.program {
        Some(p) => p.clone(),
        None => {
            println!("building ccoll-bench (release)");
            workspace::build_release_bin("collectives", "ccoll-bench")?
        }
    };
    let out = if a.out.is_absolute() { a.out.clone() } else { workspace::root().join(&a.out) };
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let (topo, link) = a.shape.topology();
    let cluster = Cluster::up(topo, link)?;
    println!("cluster up: {}", cluster.describe());
    let probe = cluster.probe(64 << 20)?;
    println!(
        "link probe: rtt {:.1} us, {:.1} MB/s payload, {:.1} MB/s each way with both busy (duplex efficiency {:.3})",
        probe.rtt.as_secs_f64() * 1e6,
        probe.bytes_per_s / 1e6,
        probe.two_way_bytes_per_s / 1e6,
        probe.duplex_efficiency()
    );
    let duplex = cluster.mpi_duplex(&program)?;
    println!("{}", duplex.describe());

    let algos = a.algos.split(',').filter(|s| !s.is_empty()).count();
    let mut total = a.passes as usize * a.ops.len() * a.sizes.len() * algos;
    let mut passes = Passes::default();
    // ccoll-bench's per-rank times by pass, from its stderr (read on another thread):
    // the ranks on the other nodes are not this process's children, so only they can say.
    let costs: std::sync::Mutex<Vec<(u32, RankTimes)>> = Default::default();
    let mut failures = Vec::new();
    let (csv_path, passes_path) = (out.join("results.csv"), out.join("passes.csv"));
    // The machine's pace before each run and after the last, for the model
    // (`model::pace`).
    let pace_probe = model::pace::Probe::new()?;
    let mut paces = Vec::new();
    let mut runs = Vec::new();
    let mut probe_pace = || -> Result<(), String> {
        let p = pace_probe.measure()?;
        println!("    machine pace (one thread, CPU time): compress {:.0} MB/s, decode {:.0} MB/s, reduce {:.0} MB/s; every core compressing: {:.0} MB/s a thread", p.comp / 1e6, p.decomp / 1e6, p.reduce / 1e6, p.shared / 1e6);
        paces.push(p);
        Ok(())
    };
    // One ccoll-bench run: every algorithm at one operation and size.
    let mut measure = |passes: &mut Passes, pass: u32, op: &str, size: u64, total: usize| -> Result<(), String> {
        probe_pace()?;
        runs.push((op.to_string(), size));
        let args: Vec<String> = [
            "--op", op, "--algo", &a.algos, "--codec", &a.codec, "--sizes", &fmt_size(size), "--iters", &a.iters.to_string(), "--min-time", &a.min_time.to_string(),
            "--warmup", &a.warmup.to_string(), "--dataset", &a.dataset, "--check", "--format", "csv", "--time-codec",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let on_err = |line: &str| {
            eprintln!("{line}");
            if let Some(t) = RankTimes::parse(line) {
                costs.lock().expect("not poisoned").push((pass, t));
            }
        };
        let status = cluster.run_mpi_both(&program, &args, Duration::from_secs(a.timeout), |line| {
            if let Some(r) = Row::parse(line) {
                passes.push(pass, r.clone());
                println!("{}", progress(passes.len(), total, &r, &passes.middle()));
            } else if !line.starts_with("op,") && !line.trim().is_empty() {
                println!("    {line}");
            }
        }, on_err)?;
        if !status.success() {
            let why = format!("{op} {}: ccoll-bench exited with {status}", fmt_size(size));
            println!("    FAILED: {why}");
            failures.push(why);
        }
        atomic_file::write(&csv_path, passes.middle_csv().as_bytes())?;
        atomic_file::write(&passes_path, passes.to_csv().as_bytes())?;
        Ok(())
    };
    'passes: for pass in 1..=a.passes {
        if a.passes > 1 {
            println!("pass {pass} of {}: {}", a.passes, a.algos);
        }
        for (op, &size) in a.ops.iter().flat_map(|op| a.sizes.iter().map(move |size| (op, size))) {
            if signals::interrupted() {
                break 'passes;
            }
            measure(&mut passes, pass, op, size, total)?;
        }
    }
    // A run with a point that met host steal in every pass runs again, up to
    // `STEAL_RETRIES` times, until each of its points has a pass without (`passes`).
    for (op, size) in passes.stolen_runs() {
        for retry in 1..=STEAL_RETRIES {
            if signals::interrupted() || !passes.stolen_runs().contains(&(op.clone(), size)) {
                break;
            }
            println!("again ({retry} of at most {STEAL_RETRIES}): {op} {}, measured under host steal in every pass", fmt_size(size));
            total += algos;
            measure(&mut passes, a.passes + retry, &op, size, total)?;
        }
    }
    probe_pace()?;
    let rows = passes.middle();
    let pace_path = out.join("pace.csv");
    atomic_file::write(&pace_path, model::pace::to_csv(&runs, &paces).as_bytes())?;
    let (description, latency_emulated) = (cluster.describe(), cluster.latency_emulated);
    drop(cluster);
    println!("cluster down");

    let baseline = a.algos.split(',').next().unwrap_or("mpi");
    let mut report = String::new();
    let _ = writeln!(
        report,
        "cluster: {description}\nlink probe: rtt {:.1} us, {:.1} MB/s payload, {:.1} MB/s each way with both busy\n{}\nmachine load average (1 min) before the build: {load_before}, after the run: {}; other runnable threads before the build (mean of 2 s): {runnable_before:.2}\n",
        probe.rtt.as_secs_f64() * 1e6,
        probe.bytes_per_s / 1e6,
        probe.two_way_bytes_per_s / 1e6,
        duplex.describe(),
        load_average()
    );
    report.push_str(&table(&rows, baseline));
    report.push('\n');
    report.push_str(&passes.report());
    report.push('\n');
    report.push_str(&cpu_table(&costs.into_inner().expect("not poisoned")));
    report.push('\n');
    report.push_str(&goals(&rows));
    println!("\n{report}");
    atomic_file::write(&out.join("table.md"), report.as_bytes())?;
    let title = format!("{} on {description}", a.dataset);
    let png = out.join("latency.png");
    let compared = a.algos.split(',').next_back().unwrap_or("c-coll");
    match plot::latency_plot(&png, &title, &a.ops, &rows, baseline, compared)? {
        plot::Labels::Drawn => println!("plot: {}", png.display()),
        plot::Labels::NoFont => println!("plot: {} (no text: install fonts-dejavu-core for labels)", png.display()),
    }
    println!("csv: {}", csv_path.display());
    let efficiency = probe.bytes_per_s * 8.0 / a.shape.link as f64;
    // The model is told the latency the links had: none added where the kernel lacks
    // netem.
    let emulated = Shape { latency: if latency_emulated { a.shape.latency } else { Duration::ZERO }, ..a.shape.clone() };
    match model_report((&csv_path, &pace_path), &emulated, (efficiency, &duplex), runnable_before) {
        Ok(text) => {
            println!("\n{text}");
            atomic_file::write(&out.join("model.md"), text.as_bytes())?;
        }
        Err(e) => failures.push(format!("cost model: {e}")),
    }
    if failures.is_empty() && passes.len() == total {
        Ok(ExitCode::SUCCESS)
    } else {
        println!("incomplete: {} of {total} measurements; {}", passes.len(), failures.join("; "));
        Ok(ExitCode::FAILURE)
    }
}

/// The most extra runs of an operation and size whose passes all met host steal.
const STEAL_RETRIES: u32 = 2;

/// `xtask model` (release build) validated against this run's CSV and the machine's
/// pace during it, with the link's measured payload efficiency and the MPI probe's
/// duplex efficiencies.
fn model_report((csv, pace): (&std::path::Path, &std::path::Path), shape: &Shape, (efficiency, duplex): (f64, &MpiDuplex), background_load: f64) -> Result<String, String> {
    let exe = workspace::build_release_bin("xtask", "xtask")?;
    let out = std::process::Command::new(&exe)
        .arg("model")
        .arg("--csv")
        .arg(csv)
        .arg("--pace")
        .arg(pace)
        .args(["--link", &shape.link.to_string(), "--latency", &format!("{}us", shape.latency.as_micros()), "--efficiency", &format!("{efficiency:.4}")])
        .args(["--duplex-efficiency", &format!("{:.4}", duplex.efficiency()), "--chunk-duplex-efficiency", &format!("{:.4}", duplex.chunk_efficiency())])
        .args(["--background-load", &format!("{background_load:.2}")])
        .args(["--net-cpu-us-per-mb", &format!("{:.1}", us_per_mb(duplex.chunk_cpu_s_per_byte.unwrap_or(0.0)))])
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if text.trim().is_empty() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    // A non-zero exit only says some point is off by more than 15%: keep the report.
    Ok(text)
}

/// Threads of other work runnable on the machine, the mean of `procs_running` in
/// /proc/stat sampled every 20 ms over `span`, less the sampling thread itself.
fn other_runnable(span: std::time::Duration) -> f64 {
    let step = std::time::Duration::from_millis(20);
    let samples = (span.as_millis() / step.as_millis()).max(1) as u32;
    let mut sum = 0.0;
    for _ in 0..samples {
        sum += procs_running().unwrap_or(1.0) - 1.0;
        std::thread::sleep(step);
    }
    (sum / f64::from(samples)).max(0.0)
}

fn procs_running() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().find_map(|l| l.strip_prefix("procs_running ")).and_then(|v| v.trim().parse().ok())
}

/// The 1-minute load average: other work on the machine skews every timing.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg").ok().and_then(|l| l.split_whitespace().next().and_then(|v| v.parse().ok())).unwrap_or(0.0)
}

fn progress(k: usize, total: usize, r: &Row, rows: &[Row]) -> String {
    let base = rows.iter().find(|b| b.op == r.op && b.bytes == r.bytes && b.algo == "mpi");
    let speedup = base.map_or(String::new(), |b| format!("  x{:.2} vs mpi", b.lat_avg_us / r.lat_avg_us));
    let steal = if passes::disturbed(r) { format!("  host steal {:.1}%", r.host_steal.unwrap_or(0.0) * 100.0) } else { String::new() };
    format!(
        "[{k:>3}/{total}] {:<10} {:<8} {:>5}: {:>9.1} ms{speedup}  ratio {:.2}  err {}  {}{steal}",
        r.op,
        r.algo,
        fmt_size(r.bytes),
        r.lat_avg_us / 1e3,
        r.comp_ratio,
        fmt_err(r),
        match r.bound_ok {
            Some(true) => "ok",
            Some(false) => "BOUND EXCEEDED",
            None => "not checked",
        }
    )
}

/// A row's error, `-` where it was not checked.
fn fmt_err(r: &Row) -> String {
    r.max_abs_err.map_or("-".to_string(), |e| format!("{e:.2e}"))
}

/// The markdown result table: one line per (op, size, algorithm).
pub fn table(rows: &[Row], baseline: &str) -> String {
    let mut s = String::from("| op | size | algorithm | latency (ms) | speedup vs ");
    let _ = writeln!(s, "{baseline} | ratio | max abs err | bound | within bound |\n|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let base = rows.iter().find(|b| b.op == r.op && b.bytes == r.bytes && b.algo == baseline);
        let speedup = base.map_or("-".to_string(), |b| format!("{:.2}", b.lat_avg_us / r.lat_avg_us));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} | {speedup} | {:.2} | {} | {:.2e} | {} |",
            r.op,
            fmt_size(r.bytes),
            r.algo,
            r.lat_avg_us / 1e3,
            r.comp_ratio,
            fmt_err(r),
            r.bound,
            match r.bound_ok {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "not checked",
            }
        );
    }
    s
}

/// Where each timed call's time went, from ccoll-bench's per-rank line: the slowest
/// rank's wall time against the CPU time of all ranks (every thread of each, user and
/// system), and the cores kept busy on average.
fn cpu_table(costs: &[(u32, RankTimes)]) -> String {
    let mut s = String::from(
        "CPU use per timed call (ccoll-bench's per-rank times; all ranks, every thread):\n\n| op | size | algorithm | pass | slowest wall (ms) | user CPU (ms) | system CPU (ms) | cores busy |\n|---|---|---|---|---|---|---|---|\n",
    );
    for (pass, c) in costs {
        let (wall, user, system) = c.totals();
        let _ = writeln!(s, "| {} | {} | {} | {} | {wall:.1} | {user:.1} | {system:.1} | {:.2} |", c.op, fmt_size(c.bytes), c.algo, pass, (user + system) / wall.max(1e-9));
    }
    s
}

/// Issue 13's goals on the emulated 4-node, 1 Gbit/s cluster at 64 MiB: C-Coll's
/// speedup over a baseline algorithm of the same operation.
const GOALS: [(&str, &str, f64); 6] = [
    ("bcast", "mpi", 8.0),
    ("scatter", "mpi", 5.0),
    ("allgather", "mpi", 5.0),
    ("allreduce", "mpi", 3.5),
    ("allreduce", "cpr-p2p", 2.0),
    ("alltoall", "mpi", 3.0),
];

/// The goals at 64 MiB, each with how far it is met or missed.
pub fn goals(rows: &[Row]) -> String {
    let at = |op: &str, algo: &str| rows.iter().find(|r| r.op == op && r.algo == algo && r.bytes == 64 << 20).map(|r| r.lat_avg_us);
    let mut s = String::from("Goals at 64M:\n");
    for (op, vs, want) in GOALS {
        let line = match (at(op, "c-coll"), at(op, vs)) {
            (Some(c), Some(b)) => {
                let got = b / c;
                let verdict = if got >= want { "met".to_string() } else { format!("MISSED by {:.0}%", (1.0 - got / want) * 100.0) };
                format!("- C-{op} vs {vs}: {got:.2}x (goal {want}x): {verdict}\n")
            }
            _ => format!("- C-{op} vs {vs}: not measured\n"),
        };
        s.push_str(&line);
    }
    let bad = rows.iter().filter(|r| r.bound_ok != Some(true)).count();
    let _ = writeln!(s, "- results within their stated bound: {} of {}", rows.len() - bad, rows.len());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_runnable_threads_count_a_spinning_one() {
        // A thread that spins is runnable at every sample (on a core or queued for one).
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let spinner = std::thread::spawn(move || while !flag.load(std::sync::atomic::Ordering::Relaxed) {});
        let busy = other_runnable(std::time::Duration::from_millis(400));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        assert!(procs_running().is_some_and(|n| n >= 1.0));
        assert!(busy >= 0.9, "with a spinning thread: {busy}");
    }

    fn at_64m(op: &str, algo: &str, ms: f64) -> Row {
        Row::parse(&format!("{op},{algo},szx-rel=1e-3,4,67108864,{},0,0,10,0,0,true", ms * 1e3)).unwrap()
    }

    #[test]
    fn goals_are_issue_13s_table_with_verdicts() {
        let rows = [
            at_64m("bcast", "mpi", 800.0),
            at_64m("bcast", "c-coll", 100.0),
            at_64m("allreduce", "mpi", 1500.0),
            at_64m("allreduce", "cpr-p2p", 450.0),
            at_64m("allreduce", "c-coll", 500.0),
        ];
        let s = goals(&rows);
        assert!(s.contains("- C-bcast vs mpi: 8.00x (goal 8x): met"), "{s}");
        assert!(s.contains("- C-allreduce vs mpi: 3.00x (goal 3.5x): MISSED by 14%"), "{s}");
        assert!(s.contains("- C-allreduce vs cpr-p2p: 0.90x (goal 2x): MISSED by 55%"), "{s}");
        for missing in ["scatter vs mpi", "allgather vs mpi", "alltoall vs mpi"] {
            assert!(s.contains(&format!("- C-{missing}: not measured")), "{s}");
        }
        assert!(s.contains("- results within their stated bound: 5 of 5"), "{s}");
    }
}
