//! Project automation, run as `cargo xtask <command>`.

mod build_ptx;
mod cluster;
mod datasets_cmd;
mod demo;
mod emulate;
mod gpu_estimate;
mod fuzz_corpus;
mod model;
mod passes;
mod plot;
mod ptxas;
mod signals;
mod szx_exhaustive;
mod units;
mod workspace;

use clap::{Args, Parser, Subcommand};
use cluster::{Cluster, LinkSpec, Topology};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ccoll project automation")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Builds codec-kernels as PTX for each architecture (nightly, -Zbuild-std=core) and
    /// checks it with ptxas, printing each kernel's registers, spills and shared memory.
    BuildPtx(build_ptx::Args),
    /// The emulated multi-node cluster (network namespaces; needs root).
    #[command(subcommand)]
    Cluster(ClusterCmd),
    /// Statistics of the built-in data sets (see docs/datasets.md).
    Datasets(datasets_cmd::DatasetsArgs),
    /// Runs a command with the emulated CUDA device (a PTX interpreter behind a libcuda.so)
    /// first on the library path: `cargo xtask emulate -- CMD [ARGS]`.
    Emulate(emulate::EmulateArgs),
    /// ESTIMATED A100/H100 throughput per kernel and codec: a roofline over the work the
    /// emulated device counts (docs/gpu.md, "Throughput estimate").
    GpuEstimate(gpu_estimate::EstimateArgs),
    /// The README's main job: plain MPI vs compressed collectives on the emulated cluster.
    Demo(demo::DemoArgs),
    /// Seeds fuzz/corpus with real streams for the fuzz targets (see .ci/fuzz.sh).
    FuzzCorpus(fuzz_corpus::FuzzCorpusArgs),
    /// Every f32 bit pattern through SZx at several bounds, checked exactly.
    SzxExhaustive(szx_exhaustive::SzxExhaustiveArgs),
    /// The cost model: calibration, validation against a run, large-scale predictions.
    Model(model::ModelArgs),
}

/// The cluster's shape, shared by `cluster` and `demo`.
#[derive(Args, Clone)]
pub struct Shape {
    /// Number of nodes (one MPI rank each).
    #[arg(long, default_value_t = 4)]
    nodes: usize,
    /// Link rate, both directions of every node's link (e.g. 1gbit, 100mbit).
    #[arg(long, default_value = "1gbit", value_parser = units::parse_rate)]
    link: u64,
    /// One-way node-to-node latency added to the links (e.g. 50us); needs netem.
    #[arg(long, default_value = "50us", value_parser = units::parse_duration)]
    latency: Duration,
    /// Prefix of the namespaces (lets tests run beside a user's cluster).
    #[arg(long, default_value = "ccoll")]
    prefix: String,
}

impl Shape {
    pub fn topology(&self) -> (Topology, LinkSpec) {
        (Topology { prefix: self.prefix.clone(), nodes: self.nodes }, LinkSpec { rate_bps: self.link, latency: self.latency })
    }
}

#[derive(Subcommand)]
enum ClusterCmd {
    /// Creates the nodes and links and leaves them up.
    Up(Shape),
    /// Removes every namespace, link and process of the cluster.
    Down {
        #[arg(long, default_value = "ccoll")]
        prefix: String,
    },
    /// Lists the cluster's namespaces.
    Status {
        #[arg(long, default_value = "ccoll")]
        prefix: String,
    },
    /// Measures round-trip time and throughput between nodes 0 and 1 of a cluster that is up.
    Probe {
        #[arg(long, default_value = "ccoll")]
        prefix: String,
        /// Bytes of the bulk transfer.
        #[arg(long, default_value = "64M", value_parser = units::parse_size)]
        bytes: u64,
    },
    /// Brings the cluster up, runs ccoll-bench (or --program) with one rank per node,
    /// and tears the cluster down, also on error or ctrl-c. Stdout is the program's own
    /// (CSV pipes cleanly); the status lines go to stderr.
    Run {
        #[command(flatten)]
        shape: Shape,
        /// Program to run instead of ccoll-bench (built in release mode when not given).
        #[arg(long)]
        program: Option<PathBuf>,
        /// Wall-clock limit of the MPI run in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        /// Measure the link between nodes 0 and 1 before the run and print it.
        #[arg(long)]
        probe: bool,
        /// Arguments passed to the program.
        #[arg(last = true)]
        args: Vec<String>,
    },
    #[command(hide = true)]
    ProbeServe {
        #[arg(long)]
        port: u16,
    },
    #[command(hide = true)]
    ProbeClient {
        #[arg(long)]
        to: String,
        #[arg(long)]
        port: u16,
        #[arg(long)]
        bytes: u64,
    },
}

fn main() -> ExitCode {
    signals::install();
    let result = match Cli::parse().cmd {
        Cmd::BuildPtx(args) => build_ptx::run(&args).map(|()| ExitCode::SUCCESS),
        Cmd::Cluster(c) => cluster_cmd(c),
        Cmd::Datasets(a) => datasets_cmd::run(&a),
        Cmd::Demo(a) => demo::run(&a),
        Cmd::Emulate(a) => emulate::run(&a),
        Cmd::GpuEstimate(a) => gpu_estimate::run(&a),
        Cmd::FuzzCorpus(a) => fuzz_corpus::run(&a),
        Cmd::SzxExhaustive(a) => szx_exhaustive::run(&a),
        Cmd::Model(a) => model::run(&a),
    };
    match result {
        Ok(code) if signals::interrupted() => {
            eprintln!("xtask: interrupted");
            let _ = code;
            ExitCode::from(130)
        }
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cluster_cmd(c: ClusterCmd) -> Result<ExitCode, String> {
    match c {
        ClusterCmd::Up(shape) => {
            let (topo, link) = shape.topology();
            let cl = Cluster::up(topo, link)?;
            println!("cluster up: {}", cl.describe());
            cl.keep();
        }
        ClusterCmd::Down { prefix } => {
            let removed = cluster::down(&prefix)?;
            println!("cluster down: removed {} namespaces", removed.len());
        }
        ClusterCmd::Status { prefix } => {
            let names = cluster::list(&prefix)?;
            println!("{}", if names.is_empty() { "no cluster is up".to_string() } else { names.join("\n") });
        }
        ClusterCmd::Probe { prefix, bytes } => {
            let nodes = cluster::list(&prefix)?.iter().filter(|n| n.contains("-n")).count();
            let p = cluster::probe_measure(&Topology { prefix, nodes }, bytes)?;
            println!("{}", probe_line(&p));
        }
        ClusterCmd::Run { shape, program, timeout, probe, args } => {
            let program = match program {
                Some(p) => p,
                None => workspace::build_release_bin("collectives", "ccoll-bench")?,
            };
            let (topo, link) = shape.topology();
            // Status on stderr: stdout carries only the program's output.
            let cl = Cluster::up(topo, link)?;
            eprintln!("cluster up: {}", cl.describe());
            if probe {
                // About two seconds of traffic, 4 to 64 MiB.
                let bytes = (link.rate_bps / 4).clamp(4 << 20, 64 << 20);
                eprintln!("{}", probe_line(&cl.probe(bytes)?));
            }
            let status = cl.run_mpi(&program, &args, Duration::from_secs(timeout), |l| println!("{l}"))?;
            drop(cl);
            eprintln!("cluster down");
            return Ok(exit_code(status, timeout));
        }
        ClusterCmd::ProbeServe { port } => cluster::probe_serve(port).map_err(|e| e.to_string())?,
        ClusterCmd::ProbeClient { to, port, bytes } => {
            cluster::probe_client(&to, port, bytes).map_err(|e| e.to_string())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn probe_line(p: &cluster::Probe) -> String {
    format!(
        "link probe n0 -> n1: rtt {:.1} us, {} bytes at {:.1} MB/s ({:.3} Gbit/s payload); both ways at once {:.1} MB/s each (duplex efficiency {:.3})",
        p.rtt.as_secs_f64() * 1e6,
        p.bytes,
        p.bytes_per_s / 1e6,
        p.bytes_per_s * 8.0 / 1e9,
        p.two_way_bytes_per_s / 1e6,
        p.duplex_efficiency()
    )
}

/// The MPI run's exit code; `timeout` reports 124 when the limit was hit.
fn exit_code(status: std::process::ExitStatus, limit_s: u64) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(124) | Some(137) => {
            eprintln!("cluster run: killed after the {limit_s} s limit");
            ExitCode::from(124)
        }
        Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
        None => ExitCode::FAILURE,
    }
}
