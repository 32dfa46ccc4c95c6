//! `ccoll-bench`: OSU-style latency of the compressed collectives against their
//! baselines, run under mpirun. See `docs/collectives.md` for the options and columns.
//!
//! ```text
//! mpirun -np 4 ccoll-bench --op allreduce --algo mpi,cpr-p2p,c-coll --codec szx:1e-3 \
//!     --sizes 1M,16M --iters 10 --warmup 2 --check --format csv
//! ```

mod data;
mod report;
mod workload;

use clap::Parser;
use collectives::{config, first_excess, value_allowance, Algorithm, CodecBackend, CodecCpu, CollConfig, CollOp, NodeGroups, Value};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use collectives::bench_csv::{CodecWork, Pass, RankTimes, Row};
use report::Format;
use workload::{Buffers, Workload};

#[derive(Parser, Debug)]
#[command(name = "ccoll-bench", about = "Latency of compressed MPI collectives against their baselines (run under mpirun)")]
struct Args {
    /// allreduce, reduce-scatter, reduce, bcast, scatter, gather, allgather, alltoall or p2p.
    #[arg(long)]
    op: String,
    /// Comma-separated algorithms: mpi, cpr-p2p, c-coll, ring, rd, hier, cdr (those that
    /// to the operation); default: all that apply.
    #[arg(long)]
    algo: Option<String>,
    /// Codec: szx:ABS, szx-rel:REL, zfp-acc:TOL or zfp-rate:BITS.
    #[arg(long)]
    codec: String,
    /// Comma-separated message sizes in bytes, with optional K, M or G (powers of 1024).
    #[arg(long)]
    sizes: String,
    /// Timed iterations per (algorithm, size).
    #[arg(long, default_value_t = 10)]
    iters: usize,
    /// Untimed iterations before them.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Seconds of timed calls per (algorithm, size) at least: after --iters, more
    /// iterations until the slowest rank's timed calls add up to this.
    #[arg(long, default_value_t = 0.0)]
    min_time: f64,
    /// Input field of every rank: a data set name (smooth3d, grad16m, rtm, hurricane,
    /// cesm, grad, grad-bf16) or raw:PATH:DIMS[:f32|f64].
    #[arg(long, default_value = "smooth3d")]
    dataset: String,
    /// Compare every rank's result with the uncompressed MPI result of the same run;
    /// exit non-zero on every rank if a value exceeds the stated bound.
    #[arg(long)]
    check: bool,
    /// table or csv.
    #[arg(long, default_value = "table")]
    format: String,
    /// Element type: f32 or f64.
    #[arg(long = "type", default_value = "f32")]
    elem: String,
    /// Messages and chunks below this many bytes travel uncompressed (a size as in
    /// --sizes: 32K, 1M, ...).
    #[arg(long, default_value_t = config::DEFAULT_MIN_BYTES_TO_COMPRESS, value_parser = parse_size)]
    min_bytes: usize,
    /// Pipeline chunk size in bytes, or with K, M or G as in --sizes (0: chosen from the
    /// message size).
    #[arg(long, default_value_t = 0, value_parser = parse_size)]
    chunk: usize,
    /// Node groups of `hier`: ranks per group (0: ranks that share memory).
    #[arg(long, default_value_t = 0)]
    node_size: usize,
    /// Where the send and receive buffers live: cpu (host memory, CPU codec backend) or
    /// cuda (device memory, CUDA backend; needs the `cuda` feature).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Time the codec's passes (`CollConfig::time_codec`) and report them in the CSV's
    /// codec columns (empty without; a few microseconds a pass).
    #[arg(long)]
    time_codec: bool,
}

/// Parses `16M`, `512K`, `1G`, `100`.
fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("size {s:?}: unit must be K, M or G")),
    };
    let n: usize = digits.parse().map_err(|_| format!("size {s:?} is not a number"))?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("size {s:?} is too large"))
}

/// Everything the command line asks for, checked (identically on every rank).
struct Plan {
    op: CollOp,
    algos: Vec<Algorithm>,
    sizes: Vec<usize>,
    cfg: CollConfig,
    format: Format,
}

fn plan(args: &Args) -> Result<Plan, String> {
    let op: CollOp = args.op.parse().map_err(|e| format!("--op: {e}"))?;
    let algos = match &args.algo {
        None => op.algorithms().to_vec(),
        Some(list) => list
            .split(',')
            .map(|a| {
                let algo: Algorithm = a.trim().parse().map_err(|e| format!("--algo: {e}"))?;
                if algo == Algorithm::Auto || !algo.applies_to(op) {
                    return Err(format!("--algo: {algo} does not apply to {op}"));
                }
                Ok(algo)
            })
            .collect::<Result<_, String>>()?,
    };
    let sizes = args.sizes.split(',').map(parse_size).collect::<Result<_, _>>()?;
    let codec = config::parse_codec(&args.codec).map_err(|e| format!("--codec: {e}"))?;
    let mut cfg = CollConfig::new(codec);
    cfg.min_bytes_to_compress = args.min_bytes;
    cfg.pipeline_chunk_bytes = args.chunk;
    cfg.time_codec = args.time_codec;
    if args.node_size > 0 {
        cfg.node_groups = NodeGroups::Blocks(args.node_size);
    }
    cfg.backend = match args.device.as_str() {
        "cpu" => CodecBackend::Cpu,
        "cuda" if cfg!(feature = "cuda") => CodecBackend::Cuda,
        "cuda" => return Err("--device cuda: this ccoll-bench is built without the `cuda` feature".into()),
        d => return Err(format!("--device {d:?}: cpu or cuda")),
    };
    let format = match args.format.as_str() {
        "table" => Format::Table,
        "csv" => Format::Csv,
        f => return Err(format!("--format {f:?}: table or csv")),
    };
    if args.iters == 0 {
        return Err("--iters must be at least 1".into());
    }
    if !(args.min_time.is_finite() && (0.0..=MAX_MIN_TIME_S).contains(&args.min_time)) {
        return Err(format!("--min-time {}: seconds from 0 to {MAX_MIN_TIME_S}", args.min_time));
    }
    Ok(Plan { op, algos, sizes, cfg, format })
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI initialises");
    collectives::abort_job_on_panic();
    collectives::fatal_mpi_errors();
    let world = universe.world();
    let rank = world.rank();
    let fail = |msg: String| -> ! {
        if rank == 0 {
            eprintln!("ccoll-bench: {msg}");
        }
        std::process::exit(2);
    };
    let plan = plan(&args).unwrap_or_else(|e| fail(e));
    let rows = match args.elem.as_str() {
        "f32" => bench::<f32>(&world, &args, &plan),
        "f64" => bench::<f64>(&world, &args, &plan),
        t => fail(format!("--type {t:?}: f32 or f64")),
    }
    .unwrap_or_else(|e| {
        // A failed call fails on every rank, each with its own view of why (one write,
        // so that the ranks' lines do not interleave).
        let line = format!("ccoll-bench: rank {rank}: {e}\n");
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        std::process::exit(2);
    });
    let all_ok = rows.iter().all(|r| r.bound_ok != Some(false));
    if !all_ok {
        fail("--check: some values exceed the stated bound".into());
    }
}

/// Runs the plan with element type `T`; rank 0 prints every row as it completes.
fn bench<T: Value>(world: &SimpleCommunicator, args: &Args, plan: &Plan) -> Result<Vec<Row>, String> {
    let (p, rank) = (world.size() as usize, world.rank());
    // The device's name (and that it answers) before anything runs.
    let device = match plan.cfg.backend.resolve() {
        Ok(b) => b.describe(),
        Err(e) => return Err(e.to_string()),
    };
    if rank == 0 {
        report::print_header(plan.format, args, p, &device);
    }
    let mut rows = Vec::new();
    for &bytes in &plan.sizes {
        let work: Workload<T> = Workload::new(plan.op, bytes, world, &args.dataset)?;
        // With --check: the MPI library's result, and each result value's magnitude.
        let reference = if args.check {
            let mpi = plan.cfg.with_algorithm(Algorithm::Mpi);
            let result = |work: &Workload<T>| -> Result<Vec<T>, String> {
                let mut b = Buffers::default();
                work.prepare(world, &mut b);
                run_once(world, work, &mpi, &mut b)?;
                Ok(b.out)
            };
            Some((result(&work)?, result(&work.magnitudes())?))
        } else {
            None
        };
        for &algo in &plan.algos {
            if rank == 0 {
                let more = if args.min_time > 0.0 { format!(" (more until {} s)", args.min_time) } else { String::new() };
                eprintln!("[ccoll-bench] {} {algo} {bytes} B: {} + {}{more} iterations", plan.op, args.warmup, args.iters);
            }
            let cfg = plan.cfg.with_algorithm(algo);
            // One set of result buffers for every iteration (`prepare` maps them first).
            let mut bufs = Buffers::default();
            for _ in 0..args.warmup {
                work.prepare(world, &mut bufs);
                run_once(world, &work, &cfg, &mut bufs)?;
            }
            let (mut times, mut cpu, mut codec) = (Vec::with_capacity(args.iters), Cpu::default(), Vec::with_capacity(args.iters));
            let mut stats = None;
            let host0 = HostTicks::now();
            while times.len() < args.iters || short_of_min_time(world, args, &times) {
                work.prepare(world, &mut bufs);
                world.barrier();
                let (t0, c0) = (mpi::time(), process_cpu());
                stats = run_once(world, &work, &cfg, &mut bufs)?;
                times.push(mpi::time() - t0);
                cpu += process_cpu() - c0;
                codec.push(stats.as_ref().map_or_else(CodecCpu::default, |s| s.codec_cpu));
            }
            let steal = host0.zip(HostTicks::now()).map_or(-1.0, |(a, b)| b.steal_since(&a));
            let host_steal = Some(all_max(world, steal)).filter(|s| *s >= 0.0);
            let out = &bufs.out;
            // Point-to-point is a ping-pong: half a round trip, as osu_latency reports.
            let trips = if plan.op == CollOp::P2p { 2.0 } else { 1.0 };
            // The median iteration: one disturbed by other work on the machine does not
            // move it. The codec columns are that call's, so that they price the call the
            // latency reports (a mean over the calls took a disturbed one's codec time,
            // three times the others', beside the median's latency).
            let codec = codec.get(median_index(&times)).copied().unwrap_or_default();
            let lat_us = median(&mut times) / trips * 1e6;
            let per_call = times.len() as f64;
            // CPU times are totals over the iterations, so this line pairs them with the mean.
            let mean = times.iter().sum::<f64>() / per_call;
            let cpu_s = report_ranks(world, plan.op, algo, bytes, times.len(), mean, Cpu { user: cpu.user / per_call, system: cpu.system / per_call });
            let err = reference.as_ref().map(|(want, _)| all_max(world, datasets::max_abs_error(out, want)));
            let own_bound = stats.as_ref().map_or(0.0, |s| s.error_bound.unwrap_or(f64::INFINITY));
            let bound = all_max(world, own_bound);
            // Every value against this rank's bound plus its own rounding allowance.
            let within = reference.as_ref().map(|(want, magnitude)| {
                let k = stats.as_ref().map_or(0, |s| s.compressions_per_value);
                let allowed = |i: usize| value_allowance(plan.op, true, p, k, T::EPSILON, own_bound, magnitude[i].to_f64());
                let ok = first_excess(out, want, allowed).is_none();
                all_reduce(world, f64::from(u8::from(ok)), SystemOperation::min()) == 1.0
            });
            let (sent, raw) = stats.as_ref().map_or((0, 0), |s| (s.bytes_sent, s.raw_bytes_sent));
            // Ranks that sat out (the odd one of p2p) do not count.
            let active = stats.is_some();
            let ranks_active = all_reduce(world, f64::from(u8::from(active)), SystemOperation::sum());
            let row = Row {
                op: args.op.clone(),
                algo: algo.to_string(),
                codec: args.codec.clone(),
                ranks: p,
                bytes: bytes as u64,
                lat_avg_us: all_reduce(world, if active { lat_us } else { 0.0 }, SystemOperation::sum()) / ranks_active.max(1.0),
                lat_min_us: all_reduce(world, if active { lat_us } else { f64::INFINITY }, SystemOperation::min()),
                lat_max_us: all_reduce(world, if active { lat_us } else { 0.0 }, SystemOperation::max()),
                comp_ratio: ratio(all_reduce(world, raw as f64, SystemOperation::sum()), all_reduce(world, sent as f64, SystemOperation::sum())),
                // The heaviest sender's own ratio (ranks that sent nothing left out).
                comp_ratio_min: Some(all_reduce(world, if sent > 0 { ratio(raw as f64, sent as f64) } else { f64::INFINITY }, SystemOperation::min()))
                    .filter(|r| r.is_finite())
                    .unwrap_or(1.0),
                comp_ratio_steps: steps_ratio(world, stats.as_ref().map_or(&[], |s| &s.message_sizes)),
                cpu_us: Some(cpu_s * 1e6),
                codec_work: args.time_codec.then(|| codec_of_ranks(world, &codec)),
                host_steal,
                max_abs_err: err,
                bound,
                bound_ok: within,
            };
            if rank == 0 {
                report::print_row(plan.format, &row);
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

/// One run on buffers [`Workload::prepare`] set up; its stats, `None` on a rank that
/// idles (odd rank out of p2p).
fn run_once<T: Value>(world: &SimpleCommunicator, work: &Workload<T>, cfg: &CollConfig, b: &mut Buffers<T>) -> Result<Option<collectives::CollStats>, String> {
    #[cfg(feature = "cuda")]
    let ran = if cfg.backend == CodecBackend::Cuda { work.run_device(world, cfg, b) } else { work.run(world, cfg, b) };
    #[cfg(not(feature = "cuda"))]
    let ran = work.run(world, cfg, b);
    ran.map_err(|e| format!("{} {} with {}: {e}", work.op, cfg.algorithm, work.n))
}

/// CPU seconds this process has used so far (all its threads): user and system (the
/// kernel's share: socket copies and TCP, page faults, sleeps).
fn process_cpu() -> Cpu {
    // SAFETY: getrusage fills the zeroed struct we pass; RUSAGE_SELF always exists.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Cpu { user: s(ru.ru_utime), system: s(ru.ru_stime) }
}

/// The host's CPU time so far, all cores (/proc/stat's first line, clock ticks): what
/// the hypervisor stole for other guests, and every kind of time in all.
struct HostTicks {
    steal: u64,
    total: u64,
}

impl HostTicks {
    /// `None` where /proc/stat cannot be read (not Linux) or lacks the steal column.
    fn now() -> Option<HostTicks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let times: Vec<u64> = stat.lines().next()?.strip_prefix("cpu ")?.split_whitespace().map(|t| t.parse().ok()).collect::<Option<_>>()?;
        // user nice system idle iowait irq softirq steal [guest guest_nice, counted in user]
        Some(HostTicks { steal: *times.get(7)?, total: times.iter().take(8).sum() })
    }

    /// The share of the host's CPU time stolen since `before`.
    fn steal_since(&self, before: &HostTicks) -> f64 {
        let total = self.total.saturating_sub(before.total);
        if total == 0 { 0.0 } else { self.steal.saturating_sub(before.steal) as f64 / total as f64 }
    }
}

/// User and system CPU seconds.
#[derive(Clone, Copy, Default)]
struct Cpu {
    user: f64,
    system: f64,
}

impl std::ops::Sub for Cpu {
    type Output = Cpu;
    fn sub(self, o: Cpu) -> Cpu {
        Cpu { user: self.user - o.user, system: self.system - o.system }
    }
}

impl std::ops::AddAssign for Cpu {
    fn add_assign(&mut self, o: Cpu) {
        self.user += o.user;
        self.system += o.system;
    }
}

/// Rank 0 prints one stderr line with every rank's wall, user CPU and system CPU time
/// per call: where a call's time goes on each rank (a rank that computes shows CPU
/// time near its wall time times its threads' share; one that sleeps in its waits,
/// little). Returns the ranks' mean CPU time (user and system) per call, seconds.
fn report_ranks(world: &SimpleCommunicator, op: CollOp, algo: Algorithm, bytes: usize, calls: usize, wall_s: f64, cpu: Cpu) -> f64 {
    let mut all = vec![0.0f64; 3 * world.size() as usize];
    world.all_gather_into(&[wall_s, cpu.user, cpu.system][..], &mut all[..]);
    if world.rank() == 0 {
        let ranks = all.chunks(3).map(|t| (t[0] * 1e3, t[1] * 1e3, t[2] * 1e3)).collect();
        eprintln!("{}", RankTimes { op: op.to_string(), algo: algo.to_string(), bytes: bytes as u64, calls, ranks });
    }
    all.chunks(3).map(|t| t[1] + t[2]).sum::<f64>() / world.size() as f64
}

fn ratio(raw: f64, sent: f64) -> f64 {
    if sent > 0.0 {
        raw / sent
    } else {
        1.0
    }
}

/// The ratio of a step-by-step schedule's heaviest messages, step `i` being every
/// rank's `i`-th message that carries values (announcements do not): the largest of each
/// step (and the largest uncompressed size), summed over the steps. 1 where no rank sent
/// any values.
fn steps_ratio(world: &SimpleCommunicator, sizes: &[(u64, u64)]) -> f64 {
    let data: Vec<_> = sizes.iter().filter(|&&(_, raw)| raw > 0).collect();
    let steps = all_max(world, data.len() as f64) as usize;
    // This rank's bytes of each step, then its uncompressed bytes (0 past its last).
    let mut mine = vec![0.0; 2 * steps];
    for (i, &&(sent, raw)) in data.iter().enumerate() {
        (mine[i], mine[steps + i]) = (sent as f64, raw as f64);
    }
    let mut heaviest = vec![0.0; 2 * steps];
    world.all_reduce_into(&mine[..], &mut heaviest[..], SystemOperation::max());
    ratio(heaviest[steps..].iter().sum(), heaviest[..steps].iter().sum())
}

/// The codec passes of all ranks together, from this rank's `mine`: bytes and CPU
/// seconds, each direction and the scan.
fn codec_of_ranks(world: &SimpleCommunicator, mine: &CodecCpu) -> CodecWork {
    let (c, d, s) = (&mine.compress, &mine.decompress, &mine.scan);
    let mine = [
        c.raw_bytes as f64,
        c.coded_bytes as f64,
        c.faulted_bytes as f64,
        c.cpu_s,
        d.raw_bytes as f64,
        d.coded_bytes as f64,
        d.reduced_bytes as f64,
        d.faulted_bytes as f64,
        d.cpu_s,
        s.raw_bytes as f64,
        s.cpu_s,
    ];
    let mut all = [0.0; 11];
    world.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
    let [cr, cc, cf, ct, dr, dc, dx, df, dt, sr, st] = all;
    CodecWork {
        compress: Pass { raw_bytes: cr, coded_bytes: cc, reduced_bytes: 0.0, faulted_bytes: cf, cpu_s: ct },
        decompress: Pass { raw_bytes: dr, coded_bytes: dc, reduced_bytes: dx, faulted_bytes: df, cpu_s: dt },
        scan: Pass { raw_bytes: sr, cpu_s: st, ..Pass::default() },
    }
}

fn all_reduce(world: &SimpleCommunicator, v: f64, op: SystemOperation) -> f64 {
    let mut out = 0.0;
    world.all_reduce_into(&v, &mut out, op);
    out
}

/// The largest --min-time: an hour of timed calls per point.
const MAX_MIN_TIME_S: f64 = 3600.0;

/// Whether the slowest rank's timed calls of one point, `times`, add up to less than
/// --min-time (collective: every rank gets the same answer, so all run the same calls).
fn short_of_min_time(world: &SimpleCommunicator, args: &Args, times: &[f64]) -> bool {
    args.min_time > 0.0 && all_max(world, times.iter().sum()) < args.min_time
}

fn all_max(world: &SimpleCommunicator, v: f64) -> f64 {
    all_reduce(world, v, SystemOperation::max())
}

/// The index of `v`'s median (the lower of the middle two for an even count; 0 when
/// empty).
fn median_index(v: &[f64]) -> usize {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    order.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

/// The median of `v` (the mean of the middle two for an even count; 0 when empty).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::{median, median_index};

    #[test]
    fn median_ignores_one_slow_iteration() {
        assert_eq!(median(&mut [3.0, 1.0, 90.0]), 3.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 90.0]), 3.0);
        assert_eq!(median(&mut [7.5]), 7.5);
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn median_index_names_the_median_call() {
        assert_eq!(median_index(&[3.0, 1.0, 90.0]), 0);
        assert_eq!(median_index(&[4.0, 1.0, 2.0, 90.0]), 2);
        assert_eq!(median_index(&[7.5]), 0);
        assert_eq!(median_index(&[]), 0);
    }
}
