//! The two output formats. CSV columns (fixed, relied upon by the benchmark drivers):
//! `op,algo,codec,ranks,bytes,lat_avg_us,lat_min_us,lat_max_us,comp_ratio,max_abs_err,bound,bound_ok,comp_ratio_min,comp_ratio_steps,cpu_us,comp_raw_bytes,comp_coded_bytes,comp_faulted_bytes,comp_cpu_us,decomp_raw_bytes,decomp_coded_bytes,decomp_reduced_bytes,decomp_faulted_bytes,decomp_cpu_us`
//! (the columns from `comp_ratio_min` on added after the others, so that readers by
//! position keep working; the codec columns are docs/collectives.md's `codec_cpu`).

use collectives::Algorithm;

use crate::Args;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
}

/// One (algorithm, size) measurement, reduced over all ranks.
pub struct Row {
    pub algo: Algorithm,
    pub bytes: usize,
    pub lat_avg_us: f64,
    pub lat_min_us: f64,
    pub lat_max_us: f64,
    /// Uncompressed over sent bytes, summed over ranks.
    pub comp_ratio: f64,
    /// The lowest of the ranks' own ratios (uncompressed over sent bytes of one rank):
    /// the heaviest sender, whose link sets the pace where each rank sends its own data.
    pub comp_ratio_min: f64,
    /// The ratio of a step-by-step schedule's heaviest messages: the `i`-th messages of
    /// all ranks make step `i`; the largest of each step, summed, against their
    /// uncompressed sizes ([`crate::steps_ratio`]).
    pub comp_ratio_steps: f64,
    /// Process CPU time (user and system, all threads) per timed call, the mean over the
    /// ranks.
    pub cpu_us: f64,
    /// The codec passes of all ranks together per timed call (`CollStats::codec_cpu`):
    /// compression's uncompressed bytes, compressed bytes, bytes faulted in and CPU
    /// seconds, then decoding's uncompressed bytes, compressed bytes, bytes reduced as
    /// decoded, bytes faulted in and CPU seconds (`None`: not timed, `--time-codec`).
    pub codec: Option<[f64; 9]>,
    /// Largest |result - MPI result| over all ranks (with `--check`).
    pub max_abs_err: Option<f64>,
    /// The stated bound (`inf` where the codec gives none).
    pub bound: f64,
    /// `max_abs_err <= bound` plus the rounding allowance (with `--check`).
    pub bound_ok: Option<bool>,
}

const CSV_HEADER: &str = "op,algo,codec,ranks,bytes,lat_avg_us,lat_min_us,lat_max_us,comp_ratio,max_abs_err,bound,bound_ok,comp_ratio_min,comp_ratio_steps,cpu_us,comp_raw_bytes,comp_coded_bytes,comp_faulted_bytes,comp_cpu_us,decomp_raw_bytes,decomp_coded_bytes,decomp_reduced_bytes,decomp_faulted_bytes,decomp_cpu_us";

/// The header; `device` describes the codec backend. The CSV keeps its one header line
/// for host buffers (what its readers expect) and gets a `#` comment line naming the
/// device before it for device buffers.
pub fn print_header(format: Format, args: &Args, ranks: usize, device: &str) {
    match format {
        Format::Csv => {
            if args.device != "cpu" {
                println!("# ccoll-bench --device {} ({device})", args.device);
            }
            println!("{CSV_HEADER}")
        }
        Format::Table => {
            println!(
                "# ccoll-bench --op {} --codec {} ranks={ranks} dataset={} type={} iters={} min_time={} warmup={} device={} ({device})",
                args.op, args.codec, args.dataset, args.elem, args.iters, args.min_time, args.warmup, args.device
            );
            println!(
                "{:<15} {:<8} {:>12} {:>12} {:>12} {:>12} {:>8} {:>11} {:>11} {:>8}",
                "op", "algo", "bytes", "avg(us)", "min(us)", "max(us)", "ratio", "max_err", "bound", "ok"
            );
        }
    }
}

pub fn print_row(format: Format, args: &Args, ranks: usize, r: &Row) {
    let err = r.max_abs_err.map_or("nan".to_string(), |e| format!("{e:.3e}"));
    let ok = r.bound_ok.map_or("n/a", |ok| if ok { "true" } else { "false" });
    match format {
        Format::Csv => {
            // Nine empty fields where the codec was not timed.
            let codec = r.codec.map_or_else(|| ",".repeat(8), |[cr, cc, cf, ct, dr, dc, dx, df, dt]| {
                format!("{cr:.0},{cc:.0},{cf:.0},{:.1},{dr:.0},{dc:.0},{dx:.0},{df:.0},{:.1}", ct * 1e6, dt * 1e6)
            });
            println!(
                "{},{},{},{ranks},{},{:.2},{:.2},{:.2},{:.3},{err},{:.3e},{ok},{:.3},{:.3},{:.1},{codec}",
                args.op, r.algo, args.codec, r.bytes, r.lat_avg_us, r.lat_min_us, r.lat_max_us, r.comp_ratio, r.bound, r.comp_ratio_min, r.comp_ratio_steps, r.cpu_us
            )
        }
        Format::Table => println!(
            "{:<15} {:<8} {:>12} {:>12.1} {:>12.1} {:>12.1} {:>8.2} {:>11} {:>11.3e} {:>8}",
            args.op, r.algo, r.bytes, r.lat_avg_us, r.lat_min_us, r.lat_max_us, r.comp_ratio, err, r.bound, ok
        ),
    }
}
