//! `cargo xtask fuzz-corpus`: seeds the fuzz targets of `fuzz/` with real streams
//! written by the codecs (small arrays of every element type, dimensionality, mode and
//! SZx block layout), so that the fuzzer starts from inputs that pass the headers'
//! checks. Written under `fuzz/corpus/<target>/` (not committed; `.ci/fuzz.sh` runs it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use codec_host::szx::{pipelined, ErrorBound, SzxOptions};
use codec_host::{Backend, BackendElem, Codec, CpuExecutor, Element, Shape};

#[derive(Args)]
pub struct FuzzCorpusArgs {
    /// Where to write the corpus (default: fuzz/corpus of the workspace).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Block sizes the `szx_frames` target chooses from, indexed by its first input byte.
const FRAME_BLOCKS: [usize; 6] = [1, 3, 8, 32, 128, 4096];

/// Values of a smooth field with a few zeros, a constant run and an outlier, so that
/// every SZx block kind and both zfp paths appear.
fn field<T: Element>(n: usize) -> Vec<T> {
    (0..n)
        .map(|i| {
            let v = match i % 97 {
                0..=9 => 0.0,
                10..=19 => 2.5,
                50 => 1e6,
                _ => (i as f64 * 0.05).sin() * (1.0 + i as f64 * 1e-3),
            };
            T::from_f64(v)
        })
        .collect()
}

/// Inputs of a fuzz target.
type Inputs = Vec<Vec<u8>>;

/// Streams of `T` of every codec on a few shapes: the zfp ones, then the SZx ones.
fn streams<T: BackendElem>(exec: &CpuExecutor) -> Result<(Inputs, Inputs), String> {
    let err = |e: codec_host::Error| e.to_string();
    let mut zfp = Vec::new();
    for shape in [Shape::d1(37), Shape::d2(9, 7), Shape::d3(5, 4, 6), Shape::d1(300)] {
        let x = field::<T>(shape.len());
        for codec in [Codec::zfp_rate(4.0), Codec::zfp_rate(13.0), Codec::zfp_accuracy(1e-3)] {
            zfp.push(codec.compress(&x, shape, &Backend::cpu()).map_err(err)?);
        }
    }
    let mut szx_streams = Vec::new();
    for (n, block, e) in [(300usize, 128usize, 1e-3), (257, 16, 0.0), (64, 3, 1e-2), (1000, 32, 1e-6)] {
        let x = field::<T>(n);
        let opts = SzxOptions { block_size: block, chunk_values: block * 2 };
        szx_streams.push(pipelined::Encoder::plain(&x, Shape::d1(n), ErrorBound::Abs(e), opts.block_size, exec).and_then(|e| e.into_vec(exec)).map_err(err)?);
        szx_streams.push(pipelined::Encoder::new(&x, Shape::d1(n), ErrorBound::Rel(e), &opts, exec).and_then(|e| e.into_vec(exec)).map_err(err)?);
    }
    Ok((zfp, szx_streams))
}

/// Inputs of the `szx_frames` target: its 3 layout bytes, then one chunk's frame.
fn frames<T: Element>(exec: &CpuExecutor, f64_flag: u8) -> Result<Inputs, String> {
    let mut out = Vec::new();
    for (bi, n, e) in [(4usize, 500usize, 1e-3), (2, 77, 0.0), (3, 200, 1e-5), (0, 9, 0.5), (1, 40, 1e-2)] {
        let block = FRAME_BLOCKS[bi];
        let opts = SzxOptions { block_size: block, chunk_values: n.div_ceil(block) * block };
        let stream = pipelined::Encoder::new(&field::<T>(n), Shape::d1(n), ErrorBound::Abs(e), &opts, exec).and_then(|e| e.into_vec(exec)).map_err(|e| e.to_string())?;
        let prefix = pipelined::prefix_len(&stream).map_err(|e| e.to_string())?;
        let count = (n - 1) as u16;
        let mut input = vec![bi as u8, count as u8, (count >> 8) as u8 | f64_flag];
        input.extend_from_slice(&stream[prefix..]);
        out.push(input);
    }
    Ok(out)
}

fn write_all(dir: &Path, name: &str, inputs: &[Vec<u8>]) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (i, bytes) in inputs.iter().enumerate() {
        let path = dir.join(format!("{name}-{i:02}"));
        fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

pub fn run(a: &FuzzCorpusArgs) -> Result<ExitCode, String> {
    let root = a.out.clone().unwrap_or_else(|| crate::workspace::root().join("fuzz").join("corpus"));
    let exec = CpuExecutor::new(1).map_err(|e| e.to_string())?;
    let (z32, s32) = streams::<f32>(&exec)?;
    let (z64, s64) = streams::<f64>(&exec)?;
    let zfp: Inputs = z32.into_iter().chain(z64).collect();
    let szx_streams: Inputs = s32.into_iter().chain(s64).collect();
    // The pipelined target's first byte picks where the stream is split.
    let split: Inputs = szx_streams.iter().enumerate().map(|(i, s)| [&[(i * 37 % 256) as u8][..], s].concat()).collect();
    let frames: Inputs = frames::<f32>(&exec, 0)?.into_iter().chain(frames::<f64>(&exec, 0x80)?).collect();
    write_all(&root.join("zfp_decode"), "zfp", &zfp)?;
    write_all(&root.join("szx_decode"), "szx", &szx_streams)?;
    write_all(&root.join("szx_pipelined"), "szx", &split)?;
    write_all(&root.join("szx_frames"), "frame", &frames)?;
    write_all(&root.join("inspect"), "zfp", &zfp)?;
    write_all(&root.join("inspect"), "szx", &szx_streams)?;
    let total = zfp.len() * 2 + szx_streams.len() * 3 + frames.len();
    println!("fuzz corpus: {total} inputs under {}", root.display());
    Ok(ExitCode::SUCCESS)
}
