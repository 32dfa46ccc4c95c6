//! `cargo xtask datasets`: the statistics table of docs/datasets.md, with SZx's
//! compression ratio and speed at a 1e-3 relative bound.

use clap::Args;
use datasets::{field_stats, Named};
use std::process::ExitCode;
use codec_host::{Backend, Codec, CpuExecutor, ErrorBound, Shape};
use std::time::Instant;

#[derive(Args)]
pub struct DatasetsArgs {
    /// Data sets to describe (default: all).
    #[arg(long, value_delimiter = ',')]
    names: Vec<String>,
    /// Generate this many values instead of the default size.
    #[arg(long, value_parser = crate::units::parse_size)]
    len: Option<u64>,
}

pub fn run(a: &DatasetsArgs) -> Result<ExitCode, String> {
    if cfg!(debug_assertions) {
        // Generation times and full-size fields want optimised code.
        return crate::workspace::rerun_in_release();
    }
    let named: Vec<Named> = if a.names.is_empty() {
        Named::ALL.to_vec()
    } else {
        a.names.iter().map(|n| Named::from_name(n).ok_or_else(|| format!("unknown data set {n}"))).collect::<Result<_, _>>()?
    };
    let one = Backend::with_executor(CpuExecutor::new(1).map_err(|e| e.to_string())?);
    println!("| name | dims (x fastest) | type | min | max | std | zeros | near-zero | lag-1 corr | const blocks | kurtosis | SZx 1e-3 ratio | SZx MB/s | gen s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for n in named {
        let t = Instant::now();
        let d = match a.len {
            Some(len) => n.generate_len(len as usize, datasets::DEFAULT_SEED),
            None => n.generate_default(),
        };
        let gen_s = t.elapsed().as_secs_f64();
        let v = d.values.to_f64();
        let s = field_stats(&v, d.dims[0]);
        let (ratio, mbps) = szx_figures(&d.values.to_f32(), &one)?;
        let dims = d.dims.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("x");
        println!(
            "| {} | {dims} | {} | {:.4e} | {:.4e} | {:.3e} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {ratio:.2} | {mbps:.0} | {gen_s:.1} |",
            d.name,
            d.values.elem_name(),
            s.min,
            s.max,
            s.std,
            s.zero_fraction,
            s.near_zero_fraction,
            s.lag1_autocorr,
            s.const_block_fraction,
            s.excess_kurtosis
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// SZx at a 1e-3 relative bound, one thread: compression ratio and compression speed
/// (MB/s of input). Values go in as f32 (bf16 widened).
fn szx_figures(values: &[f32], backend: &Backend) -> Result<(f64, f64), String> {
    let shape = Shape::from_dims(&[values.len()]).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let stream = Codec::szx(ErrorBound::Rel(1e-3)).compress(values, shape, backend).map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    let bytes = std::mem::size_of_val(values) as f64;
    Ok((bytes / stream.len() as f64, bytes / secs / 1e6))
}
