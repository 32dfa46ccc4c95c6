//! One codec in one direction on the CUDA backend, over a fixed small field: the
//! workload `cargo xtask gpu-estimate` runs on the emulated device (with
//! `CCOLL_EMU_STATS`) to count each kernel's work. The device's result is checked
//! against the CPU codec byte for byte.
//!
//! `gpu_codec_workload CODEC compress|decompress [EDGE]`: CODEC in the form `ccoll`
//! parses (e.g. `zfp-rate=8`, `szx-pipelined=1e-3,65536`); the field is smooth3d,
//! EDGE^3 f32 (default 64). Needs `--features cuda` and a device (or the emulator).

use codec_host::{Backend, Codec, CpuExecutor, Shape};
use std::process::ExitCode;

fn run() -> Result<String, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: gpu_codec_workload CODEC compress|decompress [EDGE]";
    let codec: Codec = args.next().ok_or(usage)?.parse()?;
    let phase = args.next().ok_or(usage)?;
    let edge: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(64);
    let field = datasets::smooth3d_field(edge, 1e-3, datasets::generate::DEFAULT_SEED);
    let shape = Shape::d3(edge, edge, edge);
    let exec = CpuExecutor::new(1)?;
    let gpu = Backend::cuda()?;
    let cpu_stream = codec.compress_with(&field, shape, &exec)?;
    match phase.as_str() {
        "compress" => {
            let stream = gpu.compress(&codec, &field, shape)?;
            if stream != cpu_stream {
                return Err(format!("{codec}: the device's stream differs from the CPU's").into());
            }
        }
        "decompress" => {
            let (mut got, mut want) = (vec![0f32; field.len()], vec![0f32; field.len()]);
            gpu.decompress_into(&cpu_stream, &mut got)?;
            codec_host::decompress_into_with(&cpu_stream, &mut want, &exec)?;
            if got.iter().zip(&want).any(|(a, b)| a.to_bits() != b.to_bits()) {
                return Err(format!("{codec}: the device decoded other values than the CPU").into());
            }
        }
        _ => return Err(usage.into()),
    }
    Ok(format!("{codec} {phase}: {} values, {} stream bytes, on {}", field.len(), cpu_stream.len(), gpu.describe()))
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gpu_codec_workload: {e}");
            ExitCode::FAILURE
        }
    }
}
