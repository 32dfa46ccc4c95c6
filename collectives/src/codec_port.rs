//! The one door to the codecs: compress a slice of values to bytes, decompress bytes
//! into a slice. The algorithms cut their messages into pieces and call this per piece,
//! so they are written once for every codec; the implementation calls codec-host's
//! public API through a [`Backend`] (see [`CodecBackend`]).

use codec_host::{Backend, BackendKind, Codec, CpuExecutor, OutputWrites, Shape, ZfpMode};

use std::cell::Cell;

use crate::stats::{CodecCpu, CodecPass};
use crate::{CollError, ReduceOp, Value};

/// What [`PieceCodec::compress`] made of a piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Encoded {
    /// The codec's stream, as it made it (not copied), which decodes within the codec's
    /// promise.
    Stream(Vec<u8>),
    /// The codec cannot keep its promise for these values (NaN or infinity in the input,
    /// a finite value that would decode as infinity, an error above the ZFP tolerance):
    /// the piece must travel raw.
    Refused,
}

/// Compression of one piece of a message.
pub(crate) trait PieceCodec {
    /// The compressed form of `values` (at least one value), or a refusal.
    fn compress<T: Value>(&self, values: &[T]) -> codec_host::Result<Encoded>;
    /// Decodes `bytes`, which must hold exactly `out.len()` values of type `T`, written as
    /// `writes` says.
    fn decompress<T: Value>(&self, bytes: &[u8], out: &mut [T], writes: OutputWrites) -> codec_host::Result<()>;
}

/// A codec-host codec on a backend.
#[derive(Clone, Copy)]
pub(crate) struct HostCodec {
    pub codec: Codec,
    pub backend: &'static Backend,
    /// Tally the CPU backend's passes ([`tally`], [`crate::CollConfig::time_codec`]).
    pub timed: bool,
}

impl PieceCodec for HostCodec {
    fn compress<T: Value>(&self, values: &[T]) -> codec_host::Result<Encoded> {
        self.tallied(
            Direction::Compress,
            || {
                let stream = match self.codec.compress(values, Shape::d1(values.len()), self.backend) {
                    Ok(stream) => stream,
                    // Values zfp cannot code (non-finite, or so large they may decode to
                    // infinity) travel raw.
                    Err(codec_host::Error::NonFinite { .. } | codec_host::Error::NearOverflow { .. }) => return Ok(Encoded::Refused),
                    Err(e) => return Err(e),
                };
                if !self.keeps_promise(values, &stream)? {
                    return Ok(Encoded::Refused);
                }
                Ok(Encoded::Stream(stream))
            },
            |made| match made {
                Ok(Encoded::Stream(stream)) => Some(CodecPass { raw_bytes: size_of_val(values) as u64, coded_bytes: stream.len() as u64, ..CodecPass::default() }),
                _ => None,
            },
        )
    }

    fn decompress<T: Value>(&self, bytes: &[u8], out: &mut [T], writes: OutputWrites) -> codec_host::Result<()> {
        let raw_bytes = size_of_val(out) as u64;
        self.tallied(
            Direction::Decompress,
            || {
                self.check_stream::<T>(bytes, out.len())?;
                codec_host::decompress_into_with(bytes, out, writes, self.backend)?;
                Ok(())
            },
            |done| done.is_ok().then_some(CodecPass { raw_bytes, coded_bytes: bytes.len() as u64, ..CodecPass::default() }),
        )
    }
}

/// The kind of a codec pass, for this thread's tally ([`tally`]).
#[derive(Clone, Copy)]
enum Direction {
    Compress,
    Decompress,
    Scan,
}

/// Runs `pass` and, where `timed`, adds its process CPU time, the memory it faulted in
/// and the bytes `counted` gives for its result (`None`: a pass that made nothing, such
/// as a refusal, is left out) to this thread's tally of `direction`.
fn tally_pass<R>(timed: bool, direction: Direction, pass: impl FnOnce() -> R, counted: impl FnOnce(&R) -> Option<CodecPass>) -> R {
    if !timed {
        return pass();
    }
    let (t0, f0) = process_now();
    let result = pass();
    if let Some(bytes) = counted(&result) {
        let (t1, f1) = process_now();
        let done = CodecPass { cpu_s: t1 - t0, faulted_bytes: f1 - f0, ..bytes };
        TALLY.with(|t| {
            let mut all = t.get();
            let tally = match direction {
                Direction::Compress => &mut all.compress,
                Direction::Decompress => &mut all.decompress,
                Direction::Scan => &mut all.scan,
            };
            *tally = tally.plus(&done);
            t.set(all);
        });
    }
    result
}

/// Runs `scan`, the finite value range of `bytes` bytes of host input, and where
/// `timed` adds it to this thread's tally ([`CodecCpu::scan`]; a failed scan is left
/// out).
pub(crate) fn tally_scan<R, E>(timed: bool, bytes: usize, scan: impl FnOnce() -> Result<R, E>) -> Result<R, E> {
    tally_pass(timed, Direction::Scan, scan, |done| done.is_ok().then_some(CodecPass { raw_bytes: bytes as u64, ..CodecPass::default() }))
}

thread_local! {
    /// This thread's codec passes on the CPU backend so far.
    static TALLY: Cell<CodecCpu> = Cell::new(CodecCpu::default());
}

/// This thread's codec passes on the CPU backend so far: a call takes the difference
/// over its span (a rank runs its calls, and their codec passes, on one thread).
pub(crate) fn tally() -> CodecCpu {
    TALLY.with(Cell::get)
}

/// The whole process's CPU seconds (user and system, every thread: the codec's worker
/// threads run inside a pass, nothing else of the rank does meanwhile) and bytes of
/// minor page faults so far.
fn process_now() -> (f64, u64) {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime and getrusage write the structs we pass; the process CPU
    // clock and RUSAGE_SELF exist on every Linux system.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t);
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
    }
    (t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9, ru.ru_minflt as u64 * page_bytes())
}

/// The page size, in bytes.
fn page_bytes() -> u64 {
    static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    // SAFETY: sysconf only reads a system constant.
    *PAGE.get_or_init(|| u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096))
}

impl HostCodec {
    /// True where [`decompress_reduce`](Self::decompress_reduce) needs no buffer for
    /// the decoded values: SZx on the CPU (see `codec_host::decompress_reduce`).
    pub fn reduces_as_it_decodes(&self) -> bool {
        matches!(self.codec, Codec::Szx { .. }) && self.backend.kind() == BackendKind::Cpu
    }

    /// `acc[i] = ((x[i] op v0[i]) op v1[i]) ...`, `vk` the values of `streams[k]`, each
    /// one stream of exactly `acc.len()` values of type `T`, and `x` `init` (as long as
    /// `acc`), or `acc` where that is None (`codec_host::decompress_reduce_all`).
    pub fn decompress_reduce<T: Value>(&self, streams: &[&[u8]], init: Option<&[T]>, acc: &mut [T], op: ReduceOp) -> codec_host::Result<()> {
        let raw_bytes = (size_of_val(acc) * streams.len()) as u64;
        let coded_bytes = streams.iter().map(|s| s.len() as u64).sum();
        self.tallied(
            Direction::Decompress,
            || {
                for s in streams {
                    self.check_stream::<T>(s, acc.len())?;
                }
                codec_host::decompress_reduce_all(streams, init, acc, op, self.backend)
            },
            |done| done.is_ok().then_some(CodecPass { raw_bytes, coded_bytes, reduced_bytes: raw_bytes, ..CodecPass::default() }),
        )
    }

    /// [`tally_pass`] where timed on the CPU backend.
    fn tallied<R>(&self, direction: Direction, pass: impl FnOnce() -> R, counted: impl FnOnce(&R) -> Option<CodecPass>) -> R {
        tally_pass(self.timed && self.backend.kind() == BackendKind::Cpu, direction, pass, counted)
    }

    /// Checks that `bytes` is one stream of exactly `values` values of type `T`.
    pub fn check_stream<T: Value>(&self, bytes: &[u8], values: usize) -> codec_host::Result<()> {
        let info = codec_host::inspect(bytes)?;
        if info.elem != T::TYPE {
            return Err(codec_host::Error::TypeMismatch { stream: info.elem, requested: T::TYPE });
        }
        if info.shape.len() != values || info.stream_bytes != bytes.len() {
            return Err(codec_host::Error::Corrupt(format!(
                "stream of {} values in {} bytes where the frame says {} values in {} bytes",
                info.shape.len(),
                info.stream_bytes,
                values,
                bytes.len()
            )));
        }
        Ok(())
    }

    /// True if a stream must be decoded again to check the codec's promise (ZFP).
    #[cfg(feature = "cuda")]
    pub fn needs_check(&self) -> bool {
        matches!(self.codec, Codec::Zfp { .. })
    }

    /// Decodes `stream` and checks it against `values`: every value finite (the input is,
    /// since ZFP refuses NaN and infinity) and, for ZFP fixed accuracy, within the
    /// tolerance. ZFP's block floating point keeps neither by construction: values near
    /// the largest finite one can round up to infinity, and small values in a block with
    /// large ones lose bits the tolerance asks for. SZx's bound holds by construction and
    /// keeps non-finite values as they are, so SZx streams are not decoded again.
    pub fn keeps_promise<T: Value>(&self, values: &[T], stream: &[u8]) -> codec_host::Result<bool> {
        let tolerance = match self.codec {
            Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => tolerance,
            Codec::Zfp { mode: ZfpMode::FixedRate { .. } } => f64::INFINITY,
            _ => return Ok(true),
        };
        let mut decoded = vec![T::default(); values.len()];
        codec_host::decompress_into(stream, &mut decoded, self.backend)?;
        Ok(values.iter().zip(&decoded).all(|(x, y)| {
            let (x, y) = (x.to_f64(), y.to_f64());
            y.is_finite() && (x - y).abs() <= tolerance
        }))
    }
}

/// Environment variable: worker threads of the CPU backend's executor.
pub const ENV_CODEC_THREADS: &str = "CCOLL_CODEC_THREADS";

/// Where a call's codec work runs: a small value in [`crate::CollConfig`] (so that the
/// configuration stays `Copy` and comparable), resolved once per process and thread to
/// a codec-host [`Backend`] by [`CodecBackend::resolve`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CodecBackend {
    /// The CPU executor: [`ENV_CODEC_THREADS`] threads if set, else the cores divided
    /// among the ranks of this node (from the launcher's local-size variable), so that
    /// oversubscribed ranks do not fight over cores.
    #[default]
    Cpu,
    /// The first CUDA device (feature `cuda`; a call fails with a configuration error
    /// where none answers). Needed for device buffers; host buffers give the same bytes.
    Cuda,
}

impl CodecBackend {
    /// The process's backend of this kind. Resolved once per thread (a CUDA context is
    /// used from the thread that made it; MPI ranks call from one thread) and kept for
    /// the life of the process.
    pub fn resolve(self) -> crate::Result<&'static Backend> {
        thread_local! {
            static CPU: std::cell::OnceCell<&'static Backend> = const { std::cell::OnceCell::new() };
            static CUDA: std::cell::OnceCell<Result<&'static Backend, CollError>> = const { std::cell::OnceCell::new() };
        }
        match self {
            CodecBackend::Cpu => Ok(CPU.with(|c| *c.get_or_init(|| Box::leak(Box::new(cpu_backend()))))),
            CodecBackend::Cuda => CUDA.with(|c| {
                c.get_or_init(|| {
                    Backend::cuda().map(|b| &*Box::leak(Box::new(b))).map_err(|e| CollError::Config(format!("the CUDA backend: {e}")))
                })
                .clone()
            }),
        }
    }
}

/// The CPU backend with [`ENV_CODEC_THREADS`] threads (see [`CodecBackend::Cpu`]).
fn cpu_backend() -> Backend {
    let env_usize = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<usize>().ok());
    let threads = env_usize(ENV_CODEC_THREADS).unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let local = env_usize("OMPI_COMM_WORLD_LOCAL_SIZE").or_else(|| env_usize("MPI_LOCALNRANKS")).unwrap_or(1);
        (cores / local.max(1)).max(1)
    });
    let exec = CpuExecutor::new(threads.max(1)).unwrap_or_else(|_| CpuExecutor::new(1).expect("a one-thread executor needs no pool"));
    Backend::with_executor(exec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use codec_host::BackendKind;

    #[test]
    fn the_cpu_backends_passes_are_tallied_by_direction_and_refusals_left_out() {
        let codec = HostCodec { codec: Codec::szx(codec_host::ErrorBound::Abs(1e-3)), backend: CodecBackend::Cpu.resolve().unwrap(), timed: true };
        let values: Vec<f32> = (0..100_000).map(|i| (i as f32 * 1e-3).sin()).collect();
        let before = tally();
        let Encoded::Stream(stream) = codec.compress(&values).unwrap() else { panic!("SZx refused finite values") };
        let mut out = vec![0f32; values.len()];
        codec.decompress(&stream, &mut out, OutputWrites::BySize).unwrap();
        let mut acc = vec![1f32; values.len()];
        codec.decompress_reduce(&[&stream[..], &stream[..]], None, &mut acc, ReduceOp::Sum).unwrap();
        let t = tally().since(&before);
        let (raw, coded) = (400_000, stream.len() as u64);
        assert_eq!((t.compress.raw_bytes, t.compress.coded_bytes, t.compress.reduced_bytes), (raw, coded, 0), "{t:?}");
        assert_eq!((t.decompress.raw_bytes, t.decompress.coded_bytes, t.decompress.reduced_bytes), (3 * raw, 3 * coded, 2 * raw), "{t:?}");
        assert!(t.compress.cpu_s > 0.0 && t.decompress.cpu_s > 0.0, "{t:?}");
        assert_eq!(t.scan, CodecPass::default(), "no scan ran");
        // A scan is its own pass; a failed one and an untimed one are not counted.
        let before = tally();
        let range = tally_scan(true, 400_000, || Ok::<_, ()>(<f32 as codec_host::Element>::finite_range(&values)));
        assert_eq!(tally_scan(true, 8, || Err::<(), _>(())), Err(()));
        assert_eq!(tally_scan(false, 8, || Ok::<_, ()>(())), Ok(()));
        let t = tally().since(&before);
        assert_eq!(range, Ok(<f32 as codec_host::Element>::finite_range(&values)), "the scan's own result");
        assert_eq!((t.scan.raw_bytes, t.scan.coded_bytes, t.compress, t.decompress), (400_000, 0, CodecPass::default(), CodecPass::default()), "{t:?}");
        assert!(t.scan.cpu_s > 0.0, "{t:?}");
        // Decoding into pages mapped but never written faults each in (the process's
        // faults: other test threads may add theirs).
        let len = values.len() * 4;
        // SAFETY: a private anonymous mapping of `len` bytes, unmapped below; zeroed
        // pages are valid f32s.
        let fresh = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        assert_ne!(fresh, libc::MAP_FAILED);
        let before = tally();
        codec.decompress(&stream, unsafe { std::slice::from_raw_parts_mut(fresh.cast::<f32>(), values.len()) }, OutputWrites::BySize).unwrap();
        let faulted = tally().since(&before).decompress.faulted_bytes;
        // SAFETY: the mapping above, no longer borrowed.
        unsafe { libc::munmap(fresh, len) };
        assert!(faulted >= (len as u64 / page_bytes()) * page_bytes(), "{faulted} bytes faulted in, {len} written");
        // A piece ZFP refuses (a NaN: it travels raw) and a stream that fails its check
        // made nothing: neither is counted.
        let zfp = HostCodec { codec: Codec::zfp_accuracy(1e-3), ..codec };
        let before = tally();
        assert_eq!(zfp.compress(&[1.0f32, f32::NAN, 2.0]).unwrap(), Encoded::Refused);
        assert!(codec.decompress(&stream[..stream.len() - 1], &mut out, OutputWrites::BySize).is_err());
        assert_eq!(tally(), before);
        // Untimed (the default), nothing is counted.
        let untimed = HostCodec { timed: false, ..codec };
        untimed.decompress(&stream, &mut out, OutputWrites::BySize).unwrap();
        assert_eq!(tally(), before);
    }

    #[test]
    fn backends_resolve_once_and_a_missing_device_is_a_config_error() {
        let cpu = CodecBackend::Cpu.resolve().unwrap();
        assert_eq!(cpu.kind(), BackendKind::Cpu);
        assert!(std::ptr::eq(cpu, CodecBackend::Cpu.resolve().unwrap()), "resolved once per thread");
        match CodecBackend::Cuda.resolve() {
            Ok(b) => assert_eq!(b.kind(), BackendKind::Cuda),
            Err(CollError::Config(m)) => assert!(m.starts_with("the CUDA backend: "), "{m}"),
            Err(e) => panic!("{e}"),
        }
    }
}
