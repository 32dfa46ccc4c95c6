//! A fixed workload on the CUDA backend, checked against the CPU byte for byte: one
//! codec in one direction, or the reductions, or the half-precision conversions. Run on
//! the emulated device by `.ci/gpu-checks.sh` (with the codec tests, every entry point)
//! and by `cargo xtask gpu-estimate` (which reads the launch counters).
//!
//! ```text
//! gpu_workload compress|decompress CODEC [--edge N] [--type f32|f64] [--dims 1|2|3]
//! gpu_workload reduce|half [--edge N] [--type f32|f64]
//! ```
//! CODEC in the form `ccoll` parses (e.g. `zfp-rate=8`, `szx-pipelined=1e-3,65536`). The
//! field is smooth3d with EDGE^3 values (default 64), shaped as EDGE^3 (1D),
//! EDGE x EDGE^2 (2D) or EDGE^3 (3D). Needs `--features cuda` and a device or the emulator.

use clap::{Parser, Subcommand, ValueEnum};
use codec_host::elementwise::ReduceOp;
use codec_host::{Backend, BackendElem, Codec, CpuExecutor, Element, Shape};
use std::process::ExitCode;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    work: Work,
    /// Edge of the field: EDGE^3 values.
    #[arg(long, global = true, default_value_t = 64)]
    edge: usize,
    #[arg(long = "type", global = true, value_enum, default_value_t = Elem::F32)]
    elem: Elem,
    /// Dimensions of the codec's shape.
    #[arg(long, global = true, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
    dims: u8,
}

#[derive(Subcommand)]
enum Work {
    /// Compresses on the device; the stream must equal the CPU's.
    Compress { codec: Codec },
    /// Decompresses the CPU's stream on the device; the values must equal the CPU's.
    Decompress { codec: Codec },
    /// Every reduction (sum, product, min, max) of two fields.
    Reduce,
    /// f32 to and from f16 and bf16 (ignores --type).
    Half,
}

#[derive(Clone, Copy, ValueEnum)]
enum Elem {
    F32,
    F64,
}

/// Equal bit patterns (so NaNs compare too).
fn same_bits<T: Element>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_f64().to_bits() == y.to_f64().to_bits())
}

fn run_typed<T: BackendElem + Default>(cli: &Cli, gpu: &Backend, exec: &CpuExecutor, field: Vec<T>) -> Result<String, Box<dyn std::error::Error>> {
    let e = cli.edge;
    let shape = match cli.dims {
        1 => Shape::d1(e * e * e),
        2 => Shape::d2(e, e * e),
        _ => Shape::d3(e, e, e),
    };
    match &cli.work {
        Work::Compress { codec } => {
            let stream = codec.compress(&field, shape, gpu)?;
            if stream != codec.compress(&field, shape, &Backend::cpu())? {
                return Err(format!("{codec} {shape}: the device's stream differs from the CPU's").into());
            }
            Ok(format!("{codec} compress {shape}: {} stream bytes", stream.len()))
        }
        Work::Decompress { codec } => {
            let stream = codec.compress(&field, shape, &Backend::cpu())?;
            let (mut got, mut want) = (vec![T::default(); field.len()], vec![T::default(); field.len()]);
            codec_host::decompress_into(&stream, &mut got, gpu)?;
            codec_host::decompress_into(&stream, &mut want, &Backend::cpu())?;
            if !same_bits(&got, &want) {
                return Err(format!("{codec} {shape}: the device decoded other values than the CPU").into());
            }
            Ok(format!("{codec} decompress {shape}: {} values", got.len()))
        }
        Work::Reduce => {
            let src: Vec<T> = field.iter().rev().copied().collect();
            for op in ReduceOp::ALL {
                let (mut got, mut want) = (field.clone(), field.clone());
                gpu.reduce(op, &mut got, &src)?;
                codec_host::elementwise::reduce(exec, op, &mut want, &src)?;
                if !same_bits(&got, &want) {
                    return Err(format!("reduce {op:?}: the device differs from the CPU").into());
                }
            }
            Ok(format!("reduce: {} ops over {} values", ReduceOp::ALL.len(), field.len()))
        }
        Work::Half => unreachable!("handled before the element type"),
    }
}

fn half(gpu: &Backend, exec: &CpuExecutor, field: &[f32]) -> Result<String, Box<dyn std::error::Error>> {
    fn one<H: codec_host::elementwise::HalfElem + Default + PartialEq>(
        gpu: &Backend,
        exec: &CpuExecutor,
        field: &[f32],
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (mut got, mut want) = (vec![H::default(); field.len()], vec![H::default(); field.len()]);
        gpu.narrow(field, &mut got)?;
        codec_host::elementwise::narrow(exec, field, &mut want)?;
        if got != want {
            return Err("narrowing: the device differs from the CPU".into());
        }
        let (mut wide_got, mut wide_want) = (vec![0f32; field.len()], vec![0f32; field.len()]);
        gpu.widen(&want, &mut wide_got)?;
        codec_host::elementwise::widen(exec, &want, &mut wide_want)?;
        if !same_bits(&wide_got, &wide_want) {
            return Err("widening: the device differs from the CPU".into());
        }
        Ok(())
    }
    one::<half::f16>(gpu, exec, field)?;
    one::<half::bf16>(gpu, exec, field)?;
    Ok(format!("half: f16 and bf16, both ways, {} values", field.len()))
}

fn run(cli: &Cli) -> Result<String, Box<dyn std::error::Error>> {
    let field = datasets::smooth3d_field(cli.edge, 1e-3, datasets::generate::DEFAULT_SEED);
    let exec = CpuExecutor::new(1)?;
    let gpu = Backend::cuda()?;
    let line = match (&cli.work, cli.elem) {
        (Work::Half, _) => half(&gpu, &exec, &field)?,
        (_, Elem::F32) => run_typed(cli, &gpu, &exec, field)?,
        (_, Elem::F64) => run_typed(cli, &gpu, &exec, field.iter().map(|&v| v as f64).collect())?,
    };
    Ok(format!("{line} on {}", gpu.describe()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gpu_workload: {e}");
            ExitCode::FAILURE
        }
    }
}
