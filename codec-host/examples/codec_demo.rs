//! The codec part of the main job: generates the smooth3d field, compresses and
//! decompresses it with every codec mode, and prints ratio, max error and throughput.
//!
//! `cargo run --release -p codec-host --example codec_demo [-- EDGE]` (EDGE: grid edge,
//! default 256, i.e. the 64 MiB reference field).

use codec_host::{Backend, Codec, CpuExecutor, ErrorBound, Shape};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let edge: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(256);
    eprintln!("generating smooth3d {edge}^3 f32 ...");
    let field = datasets::smooth3d_field(edge, 1e-3, datasets::generate::DEFAULT_SEED);
    let shape = Shape::d3(edge, edge, edge);
    let bytes = (field.len() * 4) as f64;
    let exec = CpuExecutor::global();
    let codecs = [
        Codec::zfp_rate(4.0),
        Codec::zfp_rate(8.0),
        Codec::zfp_rate(16.0),
        Codec::zfp_accuracy(1e-2),
        Codec::zfp_accuracy(1e-3),
        Codec::zfp_accuracy(1e-4),
        Codec::szx(ErrorBound::Rel(1e-2)),
        Codec::szx(ErrorBound::Rel(1e-3)),
        Codec::szx(ErrorBound::Rel(1e-4)),
    ];
    println!("field: smooth3d {shape} f32, {:.1} MiB, {} threads", bytes / (1 << 20) as f64, exec.threads());
    println!("{:<22} {:>8} {:>12} {:>14} {:>14}", "codec", "ratio", "max err", "comp MB/s", "decomp MB/s");
    let mut back = vec![0f32; field.len()];
    for codec in codecs {
        let t = Instant::now();
        let stream = codec.compress(&field, shape, &Backend::cpu())?;
        let tc = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let info = codec_host::decompress_into(&stream, &mut back, &Backend::cpu())?;
        let td = t.elapsed().as_secs_f64();
        println!(
            "{:<22} {:>8.2} {:>12.3e} {:>14.0} {:>14.0}",
            codec.to_string(),
            info.ratio(),
            datasets::max_abs_error(&field, &back),
            bytes / tc / 1e6,
            bytes / td / 1e6
        );
    }
    Ok(())
}
