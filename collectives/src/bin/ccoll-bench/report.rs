//! The two output formats: the CSV of [`collectives::bench_csv`] (its columns fixed,
//! relied upon by the benchmark drivers) and a table for people.

use collectives::bench_csv::{Row, HEADER};

use crate::Args;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
}

/// The header; `device` describes the codec backend. The CSV keeps its one header line
/// for host buffers (what its readers expect) and gets a `#` comment line naming the
/// device before it for device buffers.
pub fn print_header(format: Format, args: &Args, ranks: usize, device: &str) {
    match format {
        Format::Csv => {
            if args.device != "cpu" {
                println!("# ccoll-bench --device {} ({device})", args.device);
            }
            println!("{HEADER}")
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

pub fn print_row(format: Format, r: &Row) {
    match format {
        Format::Csv => println!("{}", r.to_csv()),
        Format::Table => println!(
            "{:<15} {:<8} {:>12} {:>12.1} {:>12.1} {:>12.1} {:>8.2} {:>11} {:>11.3e} {:>8}",
            r.op,
            r.algo,
            r.bytes,
            r.lat_avg_us,
            r.lat_min_us,
            r.lat_max_us,
            r.comp_ratio,
            r.err_field(),
            r.bound,
            r.verdict_field()
        ),
    }
}
