//! A field uploaded to the device once, then compressed and decompressed there with
//! every codec, each stream and each decoded array checked byte for byte against the
//! CPU codec. Prints the device it ran on; exits 1 without a device or on a mismatch.
//!
//! ```text
//! cargo run -p codec-host --features cuda --example gpu_roundtrip
//! cargo xtask emulate -- cargo run -p codec-host --features cuda --example gpu_roundtrip
//! ```

use std::process::ExitCode;

use codec_host::{decompress_into, decompress_on, Backend, Codec, ErrorBound, Result, Shape, SzxLayout};

/// A smooth 3D field with a ragged shape (no extent a multiple of 4).
fn field(shape: Shape) -> Vec<f32> {
    let d = shape.dims();
    (0..shape.len())
        .map(|i| {
            let (x, y, z) = (i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1]));
            ((x as f32 * 0.21).sin() + (y as f32 * 0.13).cos()) * (1.0 + z as f32 * 0.05)
        })
        .collect()
}

/// Compresses and decompresses `data` (already on the device) with `codec`; true if the
/// stream and the values equal the CPU's.
fn roundtrip(backend: &Backend, codec: &Codec, host: &[f32], data: &cust::memory::DeviceSlice<f32>, shape: Shape) -> Result<bool> {
    let cpu = Backend::cpu();
    let want = codec.compress(host, shape, &cpu)?;
    let mut want_values = vec![0f32; host.len()];
    decompress_into(&want, &mut want_values, &cpu)?;

    let gpu = backend.cuda_backend().expect("a CUDA backend");
    let stream = gpu.stream()?;
    let compressed = codec.compress_on(data, shape, backend, &stream)?.wait()?;
    let mut out = gpu.zeroed_on::<f32>(&stream, host.len())?;
    decompress_on(&compressed, &mut out, backend, &stream)?.wait()?;
    let mut values = vec![0f32; host.len()];
    gpu.download_on(&stream, &out, &mut values)?;

    let same_stream = compressed.to_host()? == want;
    let same_values = values.iter().zip(&want_values).all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "{:<48} {:>8} bytes (ratio {:>6.2})  stream {}  values {}",
        format!("{codec:?}"),
        compressed.len(),
        (host.len() * 4) as f64 / compressed.len() as f64,
        if same_stream { "identical" } else { "DIFFERS" },
        if same_values { "identical" } else { "DIFFER" },
    );
    Ok(same_stream && same_values)
}

fn main() -> ExitCode {
    let backend = match Backend::cuda() {
        Ok(backend) => backend,
        Err(e) => {
            eprintln!("gpu_roundtrip: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shape = Shape::d3(45, 31, 17);
    let host = field(shape);
    let gpu = backend.cuda_backend().expect("a CUDA backend");
    println!("device: {}; field {shape} f32, uploaded once", gpu.describe());
    let codecs = [
        Codec::zfp_rate(8.0),
        Codec::zfp_accuracy(1e-3),
        Codec::szx(ErrorBound::Abs(1e-3)),
        Codec::szx(ErrorBound::Rel(1e-4)),
        Codec::Szx { bound: ErrorBound::Abs(1e-3), layout: SzxLayout::Pipelined { chunk_values: 5120 } },
    ];
    let run = || -> Result<bool> {
        let stream = gpu.stream()?;
        let data = gpu.upload_on(&stream, &host)?;
        stream.synchronize()?;
        let mut all = true;
        for codec in &codecs {
            all &= roundtrip(&backend, codec, &host, &data, shape)?;
        }
        Ok(all)
    };
    match run() {
        Ok(true) => {
            println!("every codec matches the CPU byte for byte");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!("gpu_roundtrip: mismatch with the CPU codec");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("gpu_roundtrip: {e}");
            ExitCode::FAILURE
        }
    }
}
