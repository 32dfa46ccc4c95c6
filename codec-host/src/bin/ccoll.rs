//! `ccoll`: compress and decompress raw little-endian arrays, inspect streams.
//!
//! ```text
//! ccoll compress --codec zfp-rate=R|zfp-tol=T|szx=E|szx-rel=R [--pipelined]
//!                --type f32|f64 --dims NX[xNY[xNZ]] [--backend B] [--threads N] [-v] IN OUT
//! ccoll decompress [--backend B] [--threads N] [-v] IN OUT
//! ccoll info IN
//! ```
//!
//! A thin shell over the library: codecs are named by [`Codec`]'s `FromStr`, so a new
//! codec needs no change here. Any error ends the program with a non-zero status and a
//! one-line reason on stderr (1, or 2 for bad arguments). Outputs are replaced
//! atomically ([`codec_host::atomic_file`]): a failed run leaves the old file as it
//! was, so the output may also be the input.

use codec_host::atomic_file;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use codec_host::{Backend, BackendElem, Codec, CpuExecutor, ElemType, Shape, StreamInfo, SzxLayout};

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
    #[command(flatten)]
    run_on: RunOn,
    /// Raw little-endian values.
    input: PathBuf,
    /// The stream to write.
    output: PathBuf,
}

#[derive(Args)]
struct DecompressArgs {
    #[command(flatten)]
    threads: Threads,
    #[command(flatten)]
    run_on: RunOn,
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

/// Where the codec runs.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendChoice {
    /// A CUDA device if one answers, else the CPU.
    Auto,
    /// The CPU executor.
    Cpu,
    /// A CUDA device, or an error saying why there is none.
    Cuda,
}

#[derive(Args)]
struct RunOn {
    /// Where the codec runs; the stream is the same on every backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Print the backend and device that ran (on stderr).
    #[arg(short, long)]
    verbose: bool,
}

impl RunOn {
    /// The backend asked for: `cuda` never falls back; the CPU runs `threads` threads.
    fn backend(&self, threads: &Threads) -> Result<Backend, String> {
        let cpu = || threads.executor().map(Backend::with_executor);
        let (backend, fallback) = match self.backend {
            BackendChoice::Cpu => (cpu()?, None),
            BackendChoice::Cuda => (Backend::cuda().map_err(|e| format!("--backend cuda: {e}"))?, None),
            BackendChoice::Auto => match Backend::cuda() {
                Ok(b) => (b, None),
                Err(why) => (cpu()?, Some(why)),
            },
        };
        if self.verbose {
            let why = fallback.map_or(String::new(), |e| format!(" (cuda not used: {e})"));
            eprintln!("ccoll: backend {}{why}", backend.describe());
        }
        Ok(backend)
    }
}

/// clap adapter for the library's `FromStr` impls (their errors are one line).
fn parse<T: std::str::FromStr<Err = codec_host::Error>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: codec_host::Error| e.to_string())
}

fn read(path: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn compress_as<T: BackendElem>(raw: &[u8], a: &CompressArgs, backend: &Backend) -> Result<Vec<u8>, String> {
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
    let values: Vec<T> = raw.chunks_exact(T::SIZE).map(T::get_le).collect();
    codec(a)?.compress(&values, a.dims, backend).map_err(|e| e.to_string())
}

/// The codec of `compress`: `--pipelined` sets the layout of a plain SZx codec (one
/// named with its chunk keeps it).
fn codec(a: &CompressArgs) -> Result<Codec, String> {
    match a.codec {
        _ if !a.pipelined => Ok(a.codec),
        Codec::Szx { bound, layout: SzxLayout::Plain } => {
            Ok(Codec::Szx { bound, layout: SzxLayout::Pipelined { chunk_values: SzxLayout::DEFAULT_CHUNK_VALUES } })
        }
        Codec::Szx { layout: SzxLayout::Pipelined { .. }, .. } => Ok(a.codec),
        other => Err(format!("--pipelined applies to szx=E and szx-rel=R, not {other}")),
    }
}

/// Decodes `stream` on `backend` into one buffer of values, then writes them to `output`
/// as raw little-endian bytes through a small buffer: the peak is the stream plus the
/// values. The buffer is reserved fallibly, so a stream declaring more values than memory
/// (or `ulimit -v`) allows is an error, not an abort.
fn decompress_as<T: BackendElem>(stream: &[u8], info: &StreamInfo, backend: &Backend, output: &Path) -> Result<(), String> {
    let n = info.shape.len();
    let mut values: Vec<T> = Vec::new();
    values.try_reserve_exact(n).map_err(|_| {
        format!("cannot allocate {} bytes for the {n} values the stream declares", n.saturating_mul(T::SIZE))
    })?;
    values.resize(n, T::default());
    codec_host::decompress_into(stream, &mut values, backend).map_err(|e| e.to_string())?;
    atomic_file::write_atomically(output, |w| {
        let mut bytes = [0u8; 1 << 16];
        for vs in values.chunks(bytes.len() / T::SIZE) {
            let part = &mut bytes[..vs.len() * T::SIZE];
            for (v, b) in vs.iter().zip(part.chunks_exact_mut(T::SIZE)) {
                v.put_le(b);
            }
            w.write_all(part)?;
        }
        Ok(())
    })
}

/// Codec-specific lines for `info`.
fn mode_lines(stream: &[u8], info: &StreamInfo) -> Vec<String> {
    match info.codec {
        Codec::Zfp { .. } => match codec_host::zfp::Header::parse(stream) {
            Ok((h, bits)) => vec![
                format!(
                    "mode: minbits {} maxbits {} maxprec {} minexp {}",
                    h.params.minbits, h.params.maxbits, h.params.maxprec, h.params.minexp
                ),
                format!("header: {bits} bits"),
            ],
            Err(_) => Vec::new(),
        },
        Codec::Szx { .. } => match codec_host::szx::describe(stream) {
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
            let backend = a.run_on.backend(&a.threads)?;
            let stream = match a.elem {
                ElemType::F32 => compress_as::<f32>(&raw, &a, &backend)?,
                ElemType::F64 => compress_as::<f64>(&raw, &a, &backend)?,
            };
            atomic_file::write(&a.output, &stream)
        }
        Command::Decompress(a) => {
            let stream = read(&a.input)?;
            let info = codec_host::inspect(&stream).map_err(|e| e.to_string())?;
            let backend = a.run_on.backend(&a.threads)?;
            match info.elem {
                ElemType::F32 => decompress_as::<f32>(&stream, &info, &backend, &a.output),
                ElemType::F64 => decompress_as::<f64>(&stream, &info, &backend, &a.output),
            }
        }
        Command::Info { input } => {
            let stream = read(&input)?;
            let info = codec_host::inspect(&stream).map_err(|e| match e {
                // The header parses but declares more than the stream holds: no size
                // from it is real.
                codec_host::Error::Truncated { .. } | codec_host::Error::Corrupt(_) => {
                    format!("{} is inconsistent with its header: {e}", input.display())
                }
                e => e.to_string(),
            })?;
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
    atomic_file::install_signal_handlers();
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
