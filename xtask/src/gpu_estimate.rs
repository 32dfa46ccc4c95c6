//! `cargo xtask gpu-estimate`: an *estimated* A100 / H100 throughput per kernel and per
//! codec, from the work the emulated device counts (docs/gpu.md, "Throughput estimate").
//!
//! Runs codec-host's `gpu_workload` example on the emulated device, once per codec
//! and direction, with `CCOLL_EMU_STATS` collecting one line of counters per launch, and
//! applies a simple roofline to each launch. Nothing here is a measurement.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode};

use crate::{emulate, workspace};

#[derive(clap::Args)]
pub struct EstimateArgs {
    /// Edge of the smooth3d f32 field (EDGE^3 values).
    #[arg(long, default_value_t = 64)]
    edge: usize,
}

/// The codecs estimated, as `ccoll` spells them.
const CODECS: [&str; 4] = ["zfp-rate=8", "zfp-tol=1e-3", "szx=1e-3", "szx-pipelined=1e-3,65536"];

/// A device's published peaks. Per-SM rates are thread-operations per clock from the
/// CUDA C++ Programming Guide's arithmetic-throughput table (compute capability 8.0 and
/// 9.0); SM counts, boost clocks and memory bandwidths from NVIDIA's A100 (SXM4 80 GB)
/// and H100 (SXM5) datasheets.
pub struct Device {
    name: &'static str,
    sms: f64,
    clock_hz: f64,
    dram_bytes_per_s: f64,
    fp32_per_sm: f64,
    fp64_per_sm: f64,
}

pub const DEVICES: [Device; 2] = [
    Device { name: "A100", sms: 108.0, clock_hz: 1.41e9, dram_bytes_per_s: 2.039e12, fp32_per_sm: 64.0, fp64_per_sm: 32.0 },
    Device { name: "H100", sms: 132.0, clock_hz: 1.98e9, dram_bytes_per_s: 3.35e12, fp32_per_sm: 128.0, fp64_per_sm: 64.0 },
];
/// Four warp schedulers per SM, one warp instruction (32 lanes) each per clock.
const ISSUE_PER_SM: f64 = 128.0;
/// 32-bit integer, logic, compare and select (both architectures).
const INT_PER_SM: f64 = 64.0;
/// Type conversions (both architectures).
const CVT_PER_SM: f64 = 16.0;
/// Load/store units: one warp-wide memory instruction per clock per SM.
const LSU_PER_SM: f64 = 32.0;
/// Clocks between dependent instructions of one warp (the floor for a kernel with too
/// few threads to hide it).
const DEPENDENT_ISSUE_CLOCKS: f64 = 4.0;

/// One launch's counters, as the emulator's CCOLL_EMU_STATS line gives them.
#[derive(Clone, Default)]
pub struct Launch {
    kernel: String,
    c: BTreeMap<String, f64>,
}

impl Launch {
    fn get(&self, k: &str) -> f64 {
        self.c.get(k).copied().unwrap_or(0.0)
    }

    /// Parses `{"kernel":"NAME","grid":[..],"block":[..],"key":N,...}`.
    pub fn parse(line: &str) -> Option<Launch> {
        let kernel = line.split("\"kernel\":\"").nth(1)?.split('"').next()?.to_owned();
        let mut c = BTreeMap::new();
        for part in line.trim().trim_start_matches('{').trim_end_matches('}').split(',') {
            if let Some((k, v)) = part.split_once(':') {
                if let Ok(v) = v.parse::<f64>() {
                    c.insert(k.trim_matches('"').to_owned(), v);
                }
            }
        }
        c.contains_key("threads").then_some(Launch { kernel, c })
    }

    fn lsu(&self, with_local: bool) -> f64 {
        let global = self.get("global_load") + self.get("global_store") + self.get("global_atomic");
        global + if with_local { self.local_ops() } else { 0.0 }
    }

    fn local_ops(&self) -> f64 {
        self.get("local_load") + self.get("local_store")
    }

    fn global_bytes(&self) -> f64 {
        self.get("global_load_bytes") + self.get("global_store_bytes")
    }

    fn local_bytes(&self) -> f64 {
        self.get("local_load_bytes") + self.get("local_store_bytes")
    }
}

/// The estimate of one launch on one device.
pub struct Estimate {
    pub seconds: f64,
    pub bound: &'static str,
}

/// What an estimate assumes.
#[derive(Clone, Copy)]
pub struct Model {
    /// Count local-memory instructions (the spilled stack, taken as L1 hits: their
    /// load/store-unit issue only).
    pub with_local: bool,
    /// Local bytes also cross DRAM (the stack spilled out of L1 and L2).
    pub local_in_dram: bool,
    /// A field large enough to fill every SM: the work per value as counted, spread
    /// over the whole machine (no dependent-issue floor).
    pub full_machine: bool,
}

pub const AS_RUN: Model = Model { with_local: true, local_in_dram: false, full_machine: false };
pub const LARGE: Model = Model { with_local: true, local_in_dram: false, full_machine: true };
pub const LARGE_NO_LOCAL: Model = Model { with_local: false, local_in_dram: false, full_machine: true };
pub const LARGE_LOCAL_IN_DRAM: Model = Model { with_local: true, local_in_dram: true, full_machine: true };

/// Roofline: the slowest of the busiest pipe (over the SMs the launch's warps can
/// occupy), one thread's dependent-issue chain, and DRAM traffic (global bytes, each
/// moved once).
pub fn estimate(l: &Launch, d: &Device, m: Model) -> Estimate {
    let threads = l.get("threads").max(1.0);
    let instructions = l.get("instructions") - if m.with_local { 0.0 } else { l.local_ops() };
    let warps = (threads / 32.0).ceil();
    let sms = if m.full_machine { d.sms } else { (warps / 4.0).ceil().clamp(1.0, d.sms) };
    let pipes = [
        instructions / ISSUE_PER_SM,
        (l.get("int_alu") + l.get("predicate")) / INT_PER_SM,
        l.get("fp32") / d.fp32_per_sm,
        l.get("fp64") / d.fp64_per_sm,
        l.get("conversion") / CVT_PER_SM,
        l.lsu(m.with_local) / LSU_PER_SM,
    ];
    let pipe_s = pipes.iter().fold(0.0f64, |a, &b| a.max(b)) / (sms * d.clock_hz);
    let chain_s = if m.full_machine { 0.0 } else { instructions / threads * DEPENDENT_ISSUE_CLOCKS / d.clock_hz };
    let bytes = l.global_bytes() + if m.local_in_dram { l.local_bytes() } else { 0.0 };
    let dram_s = bytes / d.dram_bytes_per_s;
    let compute_s = pipe_s.max(chain_s);
    if dram_s > compute_s {
        Estimate { seconds: dram_s, bound: "memory" }
    } else if chain_s > pipe_s {
        Estimate { seconds: chain_s, bound: "latency" }
    } else {
        Estimate { seconds: compute_s, bound: "compute" }
    }
}

/// Runs the workload for one codec and direction; returns its launches.
fn run_workload(exe: &Path, env: &[(&'static str, std::ffi::OsString)], codec: &str, phase: &str, edge: usize) -> Result<Vec<Launch>, String> {
    let stats = std::env::temp_dir().join(format!("ccoll-gpu-estimate-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&stats);
    let out = Command::new(exe)
        .args([phase, codec, "--edge", &edge.to_string()])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("CCOLL_EMU_STATS", &stats)
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{codec} {phase} on the emulated device failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = std::fs::read_to_string(&stats).map_err(|e| format!("{}: {e}", stats.display()))?;
    let _ = std::fs::remove_file(&stats);
    let launches: Vec<Launch> = text.lines().filter_map(Launch::parse).collect();
    if launches.is_empty() {
        return Err(format!("{codec} {phase}: no launch was recorded"));
    }
    Ok(launches)
}

/// Launches grouped by kernel: (kernel, launches, summed counters), in first-launch order.
fn by_kernel(launches: &[Launch]) -> Vec<(String, usize, Vec<&Launch>)> {
    let mut out: Vec<(String, usize, Vec<&Launch>)> = Vec::new();
    for l in launches {
        match out.iter_mut().find(|k| k.0 == l.kernel) {
            Some(k) => {
                k.1 += 1;
                k.2.push(l);
            }
            None => out.push((l.kernel.clone(), 1, vec![l])),
        }
    }
    out
}

fn seconds(ls: &[&Launch], d: &Device, m: Model) -> f64 {
    ls.iter().map(|l| estimate(l, d, m).seconds).sum()
}

/// The bound of the launch that takes longest.
fn bound(ls: &[&Launch], d: &Device, m: Model) -> &'static str {
    ls.iter().map(|l| estimate(l, d, m)).max_by(|a, b| a.seconds.total_cmp(&b.seconds)).map_or("", |e| e.bound)
}

pub fn run(args: &EstimateArgs) -> Result<ExitCode, String> {
    let env = emulate::prepare()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace::root())
        .args(["build", "--release", "--quiet", "-p", "codec-host", "--features", "cuda", "--example", "gpu_workload"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err("building the gpu_workload example failed".into());
    }
    let exe = emulate::target_dir().join("release/examples/gpu_workload");
    let field_bytes = (args.edge.pow(3) * 4) as f64;
    println!("ESTIMATES, not measurements: a roofline over the work the emulated device counted.");
    println!("Field: smooth3d {0}x{0}x{0} f32 ({1:.1} MiB). Per launch, the slowest of the busiest pipe, one", args.edge, field_bytes / (1 << 20) as f64);
    println!("thread's dependent-issue chain and DRAM traffic; 'large' spreads the same work per value over");
    println!("every SM. Launch overhead is not included. Model and sources: docs/gpu.md, \"Throughput estimate\".\n");
    let models = [AS_RUN, LARGE, LARGE_NO_LOCAL, LARGE_LOCAL_IN_DRAM];
    let mut summary = Vec::new();
    for codec in CODECS {
        for phase in ["compress", "decompress"] {
            let launches = run_workload(&exe, &env, codec, phase, args.edge)?;
            println!("{codec} {phase}");
            println!(
                "  {:<24} {:>4} {:>11} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}",
                "kernel", "runs", "thr-instr", "global MB", "local MB", "local%", "A100 us", "H100 us", "bound", "A100 us", "bound"
            );
            println!("  {:<24} {:>4} {:>11} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}", "", "", "", "", "", "", "as run", "as run", "as run", "large", "large");
            for (kernel, runs, ls) in by_kernel(&launches) {
                let sum = |f: &dyn Fn(&Launch) -> f64| ls.iter().map(|l| f(l)).sum::<f64>();
                let instr = sum(&|l| l.get("instructions"));
                let [a100, h100] = &DEVICES;
                println!(
                    "  {kernel:<24} {runs:>4} {instr:>11.3e} {:>9.3} {:>9.3} {:>6.1}% {:>8.1} {:>8.1} {:>8} {:>8.2} {:>8}",
                    sum(&|l| l.global_bytes()) / 1e6,
                    sum(&|l| l.local_bytes()) / 1e6,
                    100.0 * sum(&|l| l.local_ops()) / instr.max(1.0),
                    seconds(&ls, a100, AS_RUN) * 1e6,
                    seconds(&ls, h100, AS_RUN) * 1e6,
                    bound(&ls, a100, AS_RUN),
                    seconds(&ls, a100, LARGE) * 1e6,
                    bound(&ls, a100, LARGE),
                );
            }
            let all: Vec<&Launch> = launches.iter().collect();
            let row: Vec<f64> = DEVICES.iter().flat_map(|d| models.map(|m| field_bytes / seconds(&all, d, m) / 1e9)).collect();
            summary.push((codec, phase, row));
            println!();
        }
    }
    println!("ESTIMATED GB/s of f32 input (as run: the {0}^3 field; large: a field filling every SM)", args.edge);
    let cols = ["as run", "large", "no local", "local DRAM"];
    let header: Vec<String> = DEVICES.iter().flat_map(|d| cols.map(|c| format!("{} {c}", d.name))).collect();
    println!("{:<26} {:<10} {}", "codec", "direction", header.iter().map(|h| format!("{h:>16}")).collect::<String>());
    for (codec, phase, r) in summary {
        println!("{codec:<26} {phase:<10} {}", r.iter().map(|v| format!("{v:>16.1}")).collect::<String>());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(pairs: &[(&str, f64)]) -> Launch {
        Launch { kernel: "k".into(), c: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect() }
    }

    #[test]
    fn stats_lines_parse() {
        let l = Launch::parse(r#"{"kernel":"zfp_x","grid":[4,1,1],"block":[256,1,1],"threads":1024,"instructions":5000,"local_store":7}"#).unwrap();
        assert_eq!(l.kernel, "zfp_x");
        assert_eq!((l.get("threads"), l.get("instructions"), l.get("local_store")), (1024.0, 5000.0, 7.0));
        assert!(Launch::parse("{}").is_none());
    }

    #[test]
    fn roofline_picks_the_binding_limit() {
        let a100 = &DEVICES[0];
        // 1 GB of global traffic, almost no instructions: DRAM-bound at 1e9 / 2.039e12 s.
        let mem = launch(&[("threads", 1e6), ("instructions", 1e6), ("global_load", 1e6), ("global_load_bytes", 1e9)]);
        let e = estimate(&mem, a100, AS_RUN);
        assert_eq!(e.bound, "memory");
        assert!((e.seconds - 1e9 / 2.039e12).abs() < 1e-12);
        // Pure integer work on a full machine: the integer pipe, 64 per SM per clock.
        let alu = launch(&[("threads", 1e6), ("instructions", 1e9), ("int_alu", 1e9)]);
        let e = estimate(&alu, a100, AS_RUN);
        assert_eq!(e.bound, "compute");
        assert!((e.seconds - 1e9 / (64.0 * 108.0 * 1.41e9)).abs() < 1e-12);
        // One thread: its dependent chain, 4 clocks per instruction.
        let one = launch(&[("threads", 1.0), ("instructions", 1000.0), ("int_alu", 1000.0)]);
        let e = estimate(&one, a100, AS_RUN);
        assert_eq!(e.bound, "latency");
        assert!((e.seconds - 4000.0 / 1.41e9).abs() < 1e-15);
        // Spread over the whole machine the chain floor goes.
        assert_eq!(estimate(&one, a100, LARGE).bound, "compute");
        // Local-memory instructions cost load/store issue; dropping them is faster.
        let local = launch(&[("threads", 1e6), ("instructions", 2e9), ("int_alu", 1e9), ("local_store", 1e9), ("local_store_bytes", 8e9)]);
        let (with, without, dram) = (estimate(&local, a100, LARGE), estimate(&local, a100, LARGE_NO_LOCAL), estimate(&local, a100, LARGE_LOCAL_IN_DRAM));
        assert!(with.seconds > without.seconds);
        assert!((dram.seconds - 8e9 / 2.039e12).abs() < 1e-12);
    }
}
