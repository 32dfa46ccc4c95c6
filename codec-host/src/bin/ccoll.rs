//! `ccoll`: compress and decompress raw little-endian arrays, inspect streams.
//!
//! ```text
//! ccoll compress --codec zfp-rate=R|zfp-tol=T|szx=E|szx-rel=R [--pipelined]
//!                --type f32|f64 --dims NX[xNY[xNZ]] [--threads N] IN OUT
//! ccoll decompress [--threads N] IN OUT
//! ccoll info IN
//! ```
//!
//! A thin shell over the library: codecs are named by [`Codec`]'s `FromStr`, so a new
//! codec needs no change here. Any error ends the program with a non-zero status and a
//! one-line reason on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use codec_host::szx::ErrorBound;
use codec_host::{Codec, CpuExecutor, ElemType, Element, Shape, StreamInfo};

#[derive(Parser)]
#[command(name = "ccoll", version, about = "Lossy compression of floating-point arrays (zfp 1.0 compatible streams)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compress a raw little-endian array into a stream with a full header.
    Compress(CompressArgs),
    /// Decompress a stream into a raw little-endian array (type and dims from the header).
    Decompress(DecompressArgs),
    /// Print what a stream holds: codec, type, dims, mode parameters, sizes, ratio.
    Info {
        /// The stream.
        input: PathBuf,
    },
}

#[derive(Args)]
struct CompressArgs {
    /// Codec and parameter: zfp-rate=R, zfp-tol=T, szx=E (absolute bound) or szx-rel=R
    /// (bound R x value range).
    #[arg(long, value_parser = parse::<Codec>)]
    codec: Codec,
    /// With szx=E or szx-rel=R: write a pipelined stream of independently decodable
    /// chunks of 5120 values (see docs/formats/szx.md).
    #[arg(long)]
    pipelined: bool,
    /// Element type: f32 or f64.
    #[arg(long = "type", value_parser = parse::<ElemType>)]
    elem: ElemType,
    /// Extents, fastest-varying first, as in zfp's tool: NX[xNY[xNZ]].
    #[arg(long, value_parser = parse::<Shape>)]
    dims: Shape,
    #[command(flatten)]
    threads: Threads,
    /// Raw little-endian values.
    input: PathBuf,
    /// The stream to write.
    output: PathBuf,
}

#[derive(Args)]
struct DecompressArgs {
    #[command(flatten)]
    threads: Threads,
    /// The stream.
    input: PathBuf,
    /// Raw little-endian values to write.
    output: PathBuf,
}

#[derive(Args)]
struct Threads {
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

impl Threads {
    fn executor(&self) -> Result<CpuExecutor, String> {
        CpuExecutor::new(self.threads).map_err(|e| e.to_string())
    }
}

/// clap adapter for the library's `FromStr` impls (their errors are one line).
fn parse<T: std::str::FromStr<Err = codec_host::Error>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: codec_host::Error| e.to_string())
}

/// Raw little-endian encoding of the element types.
trait Raw: Element {
    const SIZE: usize;
    fn from_le(bytes: &[u8]) -> Self;
    fn put_le(self, out: &mut Vec<u8>);
}

macro_rules! raw {
    ($t:ty) => {
        impl Raw for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().unwrap_or_default())
            }
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
raw!(f32);
raw!(f64);

fn read(path: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &PathBuf, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn compress_as<T: Raw>(raw: &[u8], a: &CompressArgs) -> Result<Vec<u8>, String> {
    if a.dims.is_empty() {
        return Err(codec_host::Error::ZeroSize.to_string());
    }
    let n = a.dims.checked_len().ok_or("dims overflow")?;
    if Some(raw.len()) != n.checked_mul(T::SIZE) {
        return Err(format!(
            "{} holds {} bytes, but {} {} values need {}",
            a.input.display(),
            raw.len(),
            a.dims,
            a.elem,
            n.saturating_mul(T::SIZE)
        ));
    }
    let values: Vec<T> = raw.chunks_exact(T::SIZE).map(T::from_le).collect();
    codec(a)?.compress_with(&values, a.dims, &a.threads.executor()?).map_err(|e| e.to_string())
}

/// The codec of `compress`, with `--pipelined` applied.
fn codec(a: &CompressArgs) -> Result<Codec, String> {
    if !a.pipelined {
        return Ok(a.codec);
    }
    let chunk_values = codec_host::szx::SzxOptions::default().chunk_values;
    match a.codec {
        Codec::Szx { abs_error } => Ok(Codec::SzxPipelined { bound: ErrorBound::Abs(abs_error), chunk_values }),
        Codec::SzxRelative { rel_error } => Ok(Codec::SzxPipelined { bound: ErrorBound::Rel(rel_error), chunk_values }),
        Codec::SzxPipelined { .. } => Ok(a.codec),
        other => Err(format!("--pipelined applies to szx=E and szx-rel=R, not {other}")),
    }
}

fn decompress_as<T: Raw>(stream: &[u8], info: &StreamInfo, exec: &CpuExecutor) -> Result<Vec<u8>, String> {
    let mut values = vec![T::default(); info.shape.len()];
    codec_host::decompress_into_with(stream, &mut values, exec).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    values.into_iter().for_each(|v| v.put_le(&mut out));
    Ok(out)
}

/// Codec-specific lines for `info`.
fn mode_lines(stream: &[u8], info: &StreamInfo) -> Vec<String> {
    match info.codec {
        Codec::ZfpFixedRate { .. } | Codec::ZfpFixedAccuracy { .. } => match codec_host::zfp::Header::parse(stream) {
            Ok((h, bits)) => vec![
                format!(
                    "mode: minbits {} maxbits {} maxprec {} minexp {}",
                    h.params.minbits, h.params.maxbits, h.params.maxprec, h.params.minexp
                ),
                format!("header: {bits} bits"),
            ],
            Err(_) => Vec::new(),
        },
        Codec::Szx { .. } | Codec::SzxRelative { .. } | Codec::SzxPipelined { .. } => match codec_host::szx::describe(stream) {
            Ok(d) => {
                let h = &d.header;
                let b = &d.blocks;
                vec![
                    format!(
                        "bound: abs {:e}{}",
                        h.abs_error,
                        h.rel_error.map_or(String::new(), |r| format!(" (rel {r:e} of the value range)"))
                    ),
                    format!("pipelined: {}", if h.pipelined { "yes" } else { "no" }),
                    format!("block size: {} values", h.block_size),
                    format!("chunks: {} of {} values", h.chunk_count, h.chunk_values),
                    format!(
                        "blocks: {} zero, {} constant, {} offset-coded, {} direct-coded, {} fixed-point, {} raw",
                        b.zero, b.constant, b.offset, b.direct, b.quantized, b.raw
                    ),
                ]
            }
            Err(_) => Vec::new(),
        },
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Compress(a) => {
            let raw = read(&a.input)?;
            let stream = match a.elem {
                ElemType::F32 => compress_as::<f32>(&raw, &a)?,
                ElemType::F64 => compress_as::<f64>(&raw, &a)?,
            };
            write(&a.output, &stream)
        }
        Command::Decompress(a) => {
            let stream = read(&a.input)?;
            let info = codec_host::inspect(&stream).map_err(|e| e.to_string())?;
            let exec = a.threads.executor()?;
            let raw = match info.elem {
                ElemType::F32 => decompress_as::<f32>(&stream, &info, &exec)?,
                ElemType::F64 => decompress_as::<f64>(&stream, &info, &exec)?,
            };
            write(&a.output, &raw)
        }
        Command::Info { input } => {
            let stream = read(&input)?;
            let info = codec_host::inspect(&stream).map_err(|e| e.to_string())?;
            println!("codec: {}", info.codec);
            println!("type: {}", info.elem);
            println!("dims: {}", info.shape);
            for line in mode_lines(&stream, &info) {
                println!("{line}");
            }
            println!("uncompressed: {} bytes", info.shape.len().saturating_mul(info.elem.size()));
            println!("compressed: {} bytes", info.stream_bytes);
            println!("ratio: {:.3}", info.ratio());
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // clap's first paragraph, on one line (usage and hints dropped).
            let msg = e.to_string();
            let first = msg.split("\n\n").next().unwrap_or("bad arguments");
            let line = first.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("ccoll: {}", line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ccoll: {}", e.replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}
