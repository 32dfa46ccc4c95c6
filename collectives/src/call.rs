//! One call in progress: its resolved codec, its counters, and the first error it met.
//!
//! Errors met after the agreement (an undecodable message, a codec failure) do not stop
//! the schedule: the rank records the error, keeps sending and receiving what the
//! schedule says, and flags every frame it sends from then on (`FAILED`), so that no peer
//! blocks and every rank downstream reports the failure too.

use codec_host::szx::ErrorBound;
use core::ops::Range;

use codec_host::{Backend, BackendKind, Codec, OutputWrites, ZfpMode};

use crate::accuracy;
use crate::agree::{agree, Signature};
use crate::codec_port::{self, HostCodec, PieceCodec};
use crate::stats::CodecCpu;
use crate::place::{Coded, Place};
use crate::spare;
use crate::frame::{self, codec_fingerprint, Expect, Header, ANNOUNCE, FAILED, FALLBACK, HEADER_LEN, RAW};
use crate::transport::{self, Buf, Comm, Pending};
use crate::{config, watchdog, Algorithm, CodecBackend, CollConfig, CollError, CollOp, CollStats, NodeGroups, ReduceOp, Result, Value};

/// What a call states about itself before the agreement.
pub(crate) struct Setup<'a> {
    pub op: CollOp,
    pub cfg: &'a CollConfig,
    /// Bytes the algorithm selection looks at.
    pub bytes: usize,
    /// The count every rank must pass (or a digest of the counts).
    pub count: u64,
    pub root: Option<usize>,
    pub reduce: Option<ReduceOp>,
    /// An error in this rank's own arguments, found before any communication.
    pub local_error: Option<CollError>,
}

impl Setup<'_> {
    /// The algorithm to run (selection errors count as this rank's argument errors).
    pub fn algorithm(&mut self, ranks: usize) -> Algorithm {
        let env = std::env::var(config::ENV_ALGORITHM).ok();
        config::select(self.op, self.bytes, ranks, self.cfg, env.as_deref()).unwrap_or_else(|e| {
            self.local_error.get_or_insert(e);
            Algorithm::Mpi
        })
    }
}

/// The stages of [`Call::ring_stage`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RingStage {
    ReduceScatter,
    Last,
}

/// A call past its agreement.
pub(crate) struct Call {
    pub comm: Comm,
    pub op: CollOp,
    /// What this rank compresses with (`None`: everything travels raw).
    encoder: Option<HostCodec>,
    /// What decodes compressed frames: streams describe themselves, so this needs only
    /// the configured codec (a receiver of a relative bound does not know the sender's
    /// range, and need not).
    decoder: HostCodec,
    /// Where the codec work and the reductions run.
    pub backend: &'static Backend,
    fingerprint: u32,
    min_bytes: usize,
    chunk_bytes: usize,
    /// Compressions a device pipeline keeps in flight.
    streams: usize,
    pub stats: CollStats,
    fault: Option<CollError>,
    /// True when no rank compresses anything in this call (known the same on every rank).
    exact: bool,
    /// The call's registration with the watchdog (cleared when the call ends).
    _watch: Option<watchdog::Guard>,
    /// This thread's codec tally when the call began (for `codec_cpu`).
    codec_before: CodecCpu,
    /// The process's kernel launches when the call began (for `device_launches`).
    #[cfg(feature = "cuda")]
    launches_before: u64,
    /// True when the call's buffers are on the device (its stream is waited for at the end).
    #[cfg(feature = "cuda")]
    device: bool,
}

/// Starts a call whose input on this rank is `input`, to run `algorithm`. With `agree`,
/// runs the call agreement first (see `agree`); without (point-to-point), this rank's
/// own argument errors become the call's fault, which the transfer's handshake tells
/// the peer (`p2p`), so that neither side waits for the other.
/// `input[range]` is what this rank contributes (its value range sets a relative bound).
pub(crate) fn begin<T: Value, W: Place<T> + ?Sized>(
    comm: Comm,
    mut setup: Setup,
    algorithm: Algorithm,
    input: &W,
    range: Range<usize>,
    agree_first: bool,
) -> Result<Call> {
    let cfg = setup.cfg;
    // Before the scan below, which the tally counts.
    let codec_before = codec_port::tally();
    let watch = watchdog::enter(|| format!("{} ({algorithm}) on a communicator of {} ranks", setup.op, comm.size)).unwrap_or_else(|e| {
        setup.local_error.get_or_insert(e);
        None
    });
    if let Err(e) = crate::idle::policy() {
        setup.local_error.get_or_insert(e);
    }
    // A backend that cannot start is this rank's argument error (every rank then fails
    // the agreement); the call keeps the CPU so that it can still run it.
    let backend = cfg.backend.resolve().unwrap_or_else(|e| {
        setup.local_error.get_or_insert(e);
        CodecBackend::Cpu.resolve().expect("the CPU backend always starts")
    });
    // Device buffers: the codec work must run on the device, after what the caller
    // queued there.
    #[cfg(feature = "cuda")]
    if W::DEVICE {
        let entered = match backend.cuda_backend() {
            Some(_) => crate::place::device::enter().map_err(CollError::from),
            None => Err(CollError::Config(format!("device buffers need the CUDA backend; this is {}", backend.describe()))),
        };
        if let Err(e) = entered {
            setup.local_error.get_or_insert(e);
        }
    }
    // Parameters the codec cannot keep (a negative or infinite bound, a zfp rate out of
    // range) are this rank's argument error, before any data: a negative relative bound
    // would otherwise resolve to sending everything raw.
    if let Err(e) = cfg.codec.check_params(T::TYPE, 1) {
        setup.local_error.get_or_insert(e.into());
    }
    let local_range = if needs_range(&cfg.codec) {
        // Timed like the codec's passes on the CPU backend (device buffers need the
        // CUDA backend): it reads the whole input.
        let timed = cfg.time_codec && backend.kind() == BackendKind::Cpu;
        codec_port::tally_scan(timed, range.len() * size_of::<T>(), || input.finite_range(range)).unwrap_or_else(|e| {
            setup.local_error.get_or_insert(e.into());
            None
        })
    } else {
        None
    };
    #[cfg(feature = "cuda")]
    let launches_before = codec_host::cuda::launch_count();
    let range = if agree_first {
        let sig = Signature {
            fields: vec![
                ("operation", setup.op as u64),
                ("algorithm", algorithm_code(algorithm)),
                ("element type", T::TYPE as u64),
                ("count", setup.count),
                ("root", setup.root.map_or(u64::MAX, |r| r as u64)),
                ("reduction operator", setup.reduce.map_or(u64::MAX, |r| r as u64)),
                ("codec", u64::from(codec_fingerprint(&cfg.codec))),
                ("pipeline chunk bytes", cfg.pipeline_chunk_bytes as u64),
                ("min bytes to compress", cfg.min_bytes_to_compress as u64),
                (
                    "node groups",
                    match cfg.node_groups {
                        NodeGroups::SharedMemory => u64::MAX,
                        NodeGroups::Blocks(n) => n as u64,
                    },
                ),
            ],
        };
        agree(comm, &sig, setup.local_error.take(), local_range)?.range
    } else {
        local_range
    };
    // No piece of a call is larger than the call's size (`Setup::bytes`): below the
    // threshold nothing is compressed on any rank. With the agreement, a codec resolved
    // to none (a relative bound on constant data) is none on every rank too.
    let below_threshold = setup.bytes < cfg.min_bytes_to_compress;
    let (encoder, abs_error) = if below_threshold { (None, Some(0.0)) } else { resolve_codec(cfg.codec, range) };
    // Timing the codec's passes costs a few system calls each (docs/collectives.md).
    let host = |codec| HostCodec { codec, backend, timed: cfg.time_codec };
    let exact = below_threshold || (agree_first && encoder.is_none());
    let mut stats = CollStats::new(algorithm);
    stats.abs_error = abs_error;
    Ok(Call {
        #[cfg(feature = "cuda")]
        launches_before,
        #[cfg(feature = "cuda")]
        device: W::DEVICE,
        comm,
        op: setup.op,
        // The configured codec (which every rank shares), not the resolved one: a
        // relative bound resolves to the sender's own range in point-to-point calls.
        fingerprint: codec_fingerprint(&cfg.codec),
        encoder: encoder.map(host),
        decoder: host(cfg.codec),
        backend,
        min_bytes: cfg.min_bytes_to_compress,
        chunk_bytes: cfg.pipeline_chunk_bytes,
        streams: cfg.device_streams,
        stats,
        fault: setup.local_error,
        exact,
        _watch: watch,
        codec_before,
    })
}

/// True if the codec's bound is relative to the data's value range.
fn needs_range(codec: &Codec) -> bool {
    matches!(codec, Codec::Szx { bound: ErrorBound::Rel(_), .. })
}

/// The codec a call runs and its absolute bound per compression. A relative bound becomes
/// absolute with the agreed value range (every rank then compresses with the same
/// absolute bound, so the accounting in k x E holds); where that leaves no room for
/// error (constant or empty data), the call sends everything uncompressed. The
/// framework cuts messages into pipeline chunks itself, so a pipelined SZx codec runs
/// as plain SZx per chunk.
fn resolve_codec(codec: Codec, range: Option<(f64, f64)>) -> (Option<Codec>, Option<f64>) {
    let absolute = |abs_error: f64| (Some(Codec::szx(ErrorBound::Abs(abs_error))), Some(abs_error));
    let relative = |rel_error: f64| match range.map(|(lo, hi)| rel_error * (hi - lo)) {
        Some(e) if e > 0.0 && e.is_finite() => absolute(e),
        _ => (None, Some(0.0)),
    };
    match codec {
        Codec::Zfp { mode: ZfpMode::FixedRate { .. } } => (Some(codec), None),
        Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => (Some(codec), Some(tolerance)),
        Codec::Szx { bound: ErrorBound::Abs(abs_error), .. } => absolute(abs_error),
        Codec::Szx { bound: ErrorBound::Rel(rel_error), .. } => relative(rel_error),
    }
}

impl Call {
    /// Values per pipeline chunk for a message of `len` values.
    pub fn chunk_values<T: Value>(&self, len: usize) -> usize {
        config::pipeline_chunk_values(len, T::SIZE, self.chunk_bytes)
    }

    /// Records the first error of the call.
    pub fn fail(&mut self, e: CollError) {
        self.fault.get_or_insert(e);
    }

    /// True once the call has an error.
    pub fn failed(&self) -> bool {
        self.fault.is_some()
    }

    /// Ends the call: the stats with `k` compressions per value, or the first error.
    pub fn finish(mut self, k: u32, reduce: Option<ReduceOp>) -> Result<CollStats> {
        #[cfg(feature = "cuda")]
        if self.device {
            if let Err(e) = crate::place::device::leave() {
                self.fail(e.into());
            }
        }
        if let Some(e) = self.fault {
            return Err(e);
        }
        // A call in which no rank compresses moves every value exactly.
        let k = if self.exact { 0 } else { k };
        self.stats.compressions_per_value = k;
        self.stats.codec_cpu = codec_port::tally().since(&self.codec_before);
        #[cfg(feature = "cuda")]
        {
            self.stats.device_launches = codec_host::cuda::launch_count() - self.launches_before;
        }
        self.stats.error_bound = if k == 0 {
            Some(0.0)
        } else if reduce == Some(ReduceOp::Prod) {
            None
        } else {
            self.stats.abs_error.map(|e| e * f64::from(k))
        };
        Ok(self.stats)
    }

    /// Enters `stage` of a ring reduce-scatter followed by one more compression of each
    /// reduced block on `ranks` ranks: this rank compresses at that stage's share of the
    /// call's budget ([`accuracy::ring_stage_bounds`]) from here on. Only an SZx encoder
    /// (whose bound the call made absolute) and a 1-Lipschitz `op` split it; ZFP, raw
    /// calls and PROD keep E throughout.
    pub fn ring_stage(&mut self, stage: RingStage, ranks: usize, op: ReduceOp) {
        let (Some(e), Some(encoder)) = (self.stats.abs_error, self.encoder.as_mut()) else { return };
        if !matches!(encoder.codec, Codec::Szx { bound: ErrorBound::Abs(_), .. }) || op == ReduceOp::Prod {
            return;
        }
        let (first, last) = accuracy::ring_stage_bounds(e, ranks);
        let bound = match stage {
            RingStage::ReduceScatter => first,
            RingStage::Last => last,
        };
        encoder.codec = Codec::szx(ErrorBound::Abs(bound));
    }

    /// Counts the uncompressed input as sent (the library's collectives, whose own traffic
    /// is not visible).
    pub fn count_uncompressed<T: Value>(&mut self, values: usize) {
        self.stats.bytes_sent += (values * T::SIZE) as u64;
        self.stats.raw_bytes_sent += (values * T::SIZE) as u64;
    }

    /// Frames the pieces `ranges` of `work` in order (`ranges[i]` as frame `index(i)` of
    /// `pieces`) and hands each to `emit` as soon as it is made; on the device the
    /// following pieces compress meanwhile, on up to `CollConfig::device_streams`
    /// streams.
    pub fn frames_each<T: Value, W: Place<T> + ?Sized>(
        &mut self,
        work: &W,
        ranges: &[Range<usize>],
        index: impl Fn(usize) -> usize,
        pieces: usize,
        emit: impl FnMut(&mut Call, usize, Vec<u8>),
    ) {
        self.frames_labeled(work, ranges, |i| (index(i), pieces), emit);
    }

    /// [`Call::frames_each`] where `label(i)` gives each piece's own frame index and
    /// piece count (pieces of several blocks in one pipeline).
    pub fn frames_labeled<T: Value, W: Place<T> + ?Sized>(
        &mut self,
        work: &W,
        ranges: &[Range<usize>],
        label: impl Fn(usize) -> (usize, usize),
        mut emit: impl FnMut(&mut Call, usize, Vec<u8>),
    ) {
        let plan: Vec<(Range<usize>, bool)> =
            ranges.iter().map(|r| (r.clone(), self.encoder.is_some() && !r.is_empty() && r.len() * T::SIZE >= self.min_bytes)).collect();
        let codec = self.encoder.unwrap_or(self.decoder);
        work.compress_each(&codec, &plan, self.streams, &mut |i, coded| {
            let (index, pieces) = label(i);
            let frame = self.frame_coded(work, plan[i].0.clone(), index, pieces, coded);
            emit(self, i, frame);
        });
    }

    /// The frame of `work[range]` from what the codec made of it.
    fn frame_coded<T: Value, W: Place<T> + ?Sized>(
        &mut self,
        work: &W,
        range: Range<usize>,
        index: usize,
        pieces: usize,
        coded: codec_host::Result<Coded>,
    ) -> Vec<u8> {
        let count = range.len();
        let raw_len = count * T::SIZE;
        // A stream travels if it is smaller than the values; else they go raw.
        let stream = match &coded {
            Ok(Coded::Stream(stream)) if stream.len() < raw_len => Some(*stream),
            _ => None,
        };
        // A spare buffer, else one of the frame's final size: one sized for the raw
        // values would be mapped afresh for every large message (glibc maps what it
        // cannot reuse).
        let mut out = spare::take(HEADER_LEN + stream.map_or(raw_len, <[u8]>::len));
        out.resize(HEADER_LEN, 0);
        let mut flags = if self.failed() { FAILED } else { 0 };
        if !matches!(coded, Ok(Coded::Skip)) {
            self.stats.values_compressed += count as u64;
        }
        if let Some(stream) = stream {
            out.extend_from_slice(stream);
        } else {
            match coded {
                Ok(Coded::Refused) => {
                    flags |= FALLBACK;
                    self.stats.raw_fallbacks += 1;
                }
                Err(e) => self.fail(e.into()),
                Ok(_) => {}
            }
            if let Err(e) = work.write_le(range, &mut out) {
                self.fail(e.into());
            }
            flags |= RAW;
        }
        self.write_header::<T>(&mut out, flags, index, pieces, count);
        out
    }

    /// Writes the header of the frame `out` (its payload after [`HEADER_LEN`] bytes).
    fn write_header<T: Value>(&self, out: &mut [u8], flags: u8, index: usize, pieces: usize, count: usize) {
        let header = Header {
            flags,
            op: self.op,
            elem: T::TYPE,
            codec: self.fingerprint,
            index: index as u32,
            pieces: pieces as u32,
            payload: (out.len() - HEADER_LEN) as u32,
            count: count as u64,
        };
        let mut head = Vec::with_capacity(HEADER_LEN);
        header.write(&mut head);
        out[..HEADER_LEN].copy_from_slice(&head);
    }

    /// The frame of `values` alone.
    #[cfg(test)]
    pub fn frame<T: Value>(&mut self, values: &[T], index: usize, pieces: usize) -> Vec<u8> {
        self.frame_at(values, 0..values.len(), index, pieces)
    }

    /// The frame of `work[range]` alone: compressed if it is at least the compression
    /// threshold, the codec accepts it and the result is smaller than the values; else
    /// the values, raw.
    pub fn frame_at<T: Value, W: Place<T> + ?Sized>(&mut self, work: &W, range: Range<usize>, index: usize, pieces: usize) -> Vec<u8> {
        let mut out = Vec::new();
        self.frames_each(work, &[range], |_| index, pieces, |_, _, frame| out = frame);
        out
    }

    /// A frame announcing `count` values in `pieces` frames of at most `chunk` values;
    /// its payload is this call's absolute error bound (f64, NaN for none) and algorithm
    /// (u64, its index in [`Algorithm::ALL`]).
    pub fn announce<T: Value>(&self, count: usize, chunk: usize, pieces: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + ANNOUNCE_PAYLOAD);
        Header {
            flags: ANNOUNCE | if self.failed() { FAILED } else { 0 },
            op: self.op,
            elem: T::TYPE,
            codec: self.fingerprint,
            index: chunk as u32,
            pieces: pieces as u32,
            payload: ANNOUNCE_PAYLOAD as u32,
            count: count as u64,
        }
        .write(&mut out);
        out.extend_from_slice(&self.stats.abs_error.unwrap_or(f64::NAN).to_le_bytes());
        out.extend_from_slice(&algorithm_code(self.stats.algorithm).to_le_bytes());
        out
    }

    /// What a frame of `count` values at `index` of `pieces` must say.
    pub fn expect<T: Value>(&self, index: Option<usize>, pieces: Option<usize>, count: usize) -> Expect {
        Expect {
            op: self.op,
            elem: T::TYPE,
            codec: self.fingerprint,
            index: index.map(|i| i as u32),
            pieces: pieces.map(|p| p as u32),
            count: Some(count as u64),
        }
    }

    /// [`Call::decode_at`] into all of `out`.
    #[cfg(test)]
    pub fn decode<T: Value>(&mut self, peer: usize, bytes: &[u8], want: &Expect, out: &mut [T]) -> bool {
        self.decode_at(peer, bytes, want, out, 0..out.len())
    }

    /// Checks the frame `bytes` from `peer` and decodes it into `work[range]`. Returns
    /// false (and records the error) if the frame is not what `want` says or does not
    /// decode; `work[range]` is then unspecified.
    pub fn decode_at<T: Value, W: Place<T> + ?Sized>(&mut self, peer: usize, bytes: &[u8], want: &Expect, work: &mut W, range: Range<usize>) -> bool {
        self.decode_frame(peer, bytes, want, range.len(), |codec, payload, raw| match raw {
            true => work.read_le(payload, range),
            false => work.decompress(codec, payload, range),
        })
    }

    /// Checks the frame `bytes` from `peer`, of `values` values, and hands its payload to
    /// `decode` with the decoder and whether the payload is raw. Returns false (and
    /// records the error) if the frame is not what `want` says or `decode` fails.
    fn decode_frame(&mut self, peer: usize, bytes: &[u8], want: &Expect, values: usize, decode: impl FnOnce(&HostCodec, &[u8], bool) -> codec_host::Result<()>) -> bool {
        let Some(header) = self.checked_header(peer, bytes, want) else { return false };
        let raw = header.flags & RAW != 0;
        if !raw {
            self.stats.values_decompressed += values as u64;
        }
        match decode(&self.decoder, &bytes[HEADER_LEN..], raw) {
            Ok(()) => true,
            // A raw payload's length was checked with the header; the device failed this
            // rank (an allocation, a launch): not the peer's doing.
            Err(e) if raw => self.reject(e.into()),
            Err(e @ codec_host::Error::Gpu(_)) => self.reject(e.into()),
            Err(e) => self.reject(CollError::BadMessage { peer, reason: format!("payload does not decode: {e}") }),
        }
    }

    /// The header of the frame `bytes` from `peer` if it is what `want` says, exactly
    /// `bytes` long and not flagged `FAILED`; else `None`, the error recorded.
    fn checked_header(&mut self, peer: usize, bytes: &[u8], want: &Expect) -> Option<Header> {
        let bad = |reason: String| CollError::BadMessage { peer, reason };
        let header = match Header::read(bytes).and_then(|h| h.check(want).map(|()| h)) {
            Ok(h) if h.frame_len() == bytes.len() => h,
            Ok(h) => {
                self.fail(bad(format!("{} bytes after a frame of {}", bytes.len(), h.frame_len())));
                return None;
            }
            Err(reason) => {
                self.fail(bad(reason));
                return None;
            }
        };
        if header.flags & FAILED != 0 {
            self.fail(CollError::PeerFailed { peer });
            return None;
        }
        Some(header)
    }

    /// Reduces `own`, this rank's frame of a piece, and `bytes`, the frame of the same
    /// piece from `peer` (both as `want` says), with `op` into one frame of that piece.
    /// Two SZx streams reduced with SUM, MIN or MAX are reduced in the compressed domain
    /// (`codec_host::szx::reduce`: the blocks it cannot reduce exactly are coded again
    /// within the call's bound); anything else is decoded, reduced and framed again. Returns the frame and whether
    /// any of its values was coded again (one more compression on their path). An
    /// error is recorded, and the frame returned then carries `FAILED`.
    pub fn reduce_frames<T: Value>(&mut self, peer: usize, own: &[u8], bytes: &[u8], want: &Expect, op: ReduceOp) -> (Vec<u8>, bool) {
        let (n, index, pieces) = (want.count.unwrap_or(0) as usize, want.index.unwrap_or(0) as usize, want.pieces.unwrap_or(1) as usize);
        let rank = self.comm.rank;
        let (Some(mine), Some(theirs)) = (self.checked_header(rank, own, want), self.checked_header(peer, bytes, want)) else {
            return (self.failed_copy(own), false);
        };
        let szx = matches!(self.encoder, Some(HostCodec { codec: Codec::Szx { .. }, .. }));
        let bounded_op = matches!(op, ReduceOp::Sum | ReduceOp::Min | ReduceOp::Max);
        if szx && bounded_op && (mine.flags | theirs.flags) & RAW == 0 {
            let tolerance = self.stats.abs_error.unwrap_or(0.0);
            match codec_host::szx::reduce::reduce::<T>(op, &own[HEADER_LEN..], &bytes[HEADER_LEN..], tolerance) {
                Ok(r) if r.stream.len() < n * T::SIZE => {
                    let mut out = vec![0u8; HEADER_LEN];
                    out.extend_from_slice(&r.stream);
                    let flags = if self.failed() { FAILED } else { 0 };
                    self.write_header::<T>(&mut out, flags, index, pieces, n);
                    return (out, r.summary.requantized > 0);
                }
                // Larger than the values: framed again below, raw.
                Ok(_) => {}
                Err(e) => {
                    self.fail(CollError::BadMessage { peer, reason: format!("payload does not reduce with this rank's: {e}") });
                    return (self.failed_copy(own), false);
                }
            }
        }
        let (mut acc, mut src) = (vec![T::default(); n], vec![T::default(); n]);
        if self.decode_at(rank, own, want, &mut acc[..], 0..n) && self.decode_at(peer, bytes, want, &mut src[..], 0..n) {
            if let Err(e) = self.backend.reduce(op, &mut acc, &src) {
                self.fail(e.into());
            }
        }
        let frame = self.frame_at(&acc[..], 0..n, index, pieces);
        let coded = frame.get(FLAGS_AT).is_some_and(|&flags| flags & RAW == 0);
        (frame, coded)
    }

    /// `frame` flagged `FAILED` (for the frames a failed call still sends).
    fn failed_copy(&self, frame: &[u8]) -> Vec<u8> {
        let mut out = frame.to_vec();
        if let Some(flags) = out.get_mut(FLAGS_AT) {
            *flags |= FAILED;
        }
        out
    }

    /// Reduces the values of `frames` (from the peers given with them, each as `want`
    /// says) into `work[range]` in order, `((x op v0) op v1) ...`, `x` being
    /// `addend[range]` where given (the caller's values, out of place: not copied in
    /// first), else `work[range]`'s own. Where the codec reduces as it decodes
    /// (`Place::decompress_reduce`), the values are reduced as they are decoded, every
    /// frame at once when all are coded: one pass over `work[range]`, not one per frame.
    /// Else each frame is decoded into `scratch`, a buffer beside `work`, and reduced
    /// from it with the backend's reduction kernel. The scratch is made on first use and
    /// grown to the largest piece, so that the pieces of a schedule reuse one buffer (a
    /// fresh one per piece is zeroed, or page-faulted in, every time).
    #[allow(clippy::too_many_arguments)]
    pub fn decode_reduce<T: Value, W: Place<T> + ?Sized>(
        &mut self,
        frames: &[(usize, &[u8])],
        want: &Expect,
        work: &mut W,
        range: Range<usize>,
        addend: Option<&W>,
        op: ReduceOp,
        scratch: &mut Option<W::Owned>,
    ) {
        let n = range.len();
        // Every header first: a frame that is not what `want` says fails the call.
        let Some(headers) = frames.iter().map(|&(peer, bytes)| self.checked_header(peer, bytes, want)).collect::<Option<Vec<_>>>() else { return };
        if headers.iter().all(|h| h.flags & RAW == 0) {
            let streams: Vec<&[u8]> = frames.iter().map(|f| &f.1[HEADER_LEN..]).collect();
            match work.decompress_reduce(&self.decoder, &streams, range.clone(), addend, op) {
                Some(Ok(())) => {
                    self.stats.values_decompressed += (n * frames.len()) as u64;
                    return;
                }
                Some(Err(e)) => {
                    // The peer named is the first whose stream does not decode alone.
                    let mut alone = vec![T::default(); n];
                    let bad = frames.iter().find(|f| self.decoder.decompress(&f.1[HEADER_LEN..], &mut alone, OutputWrites::BySize).is_err());
                    let peer = bad.unwrap_or(&frames[0]).0;
                    return self.fail(CollError::BadMessage { peer, reason: format!("payload does not decode: {e}") });
                }
                None => {}
            }
        }
        // Frame by frame.
        let backend = self.backend;
        if let Some(x) = addend {
            self.copy(work, range.clone(), x, range.clone());
        }
        for &(peer, bytes) in frames {
            self.decode_frame(peer, bytes, want, n, |codec, payload, raw| {
                if !raw {
                    if let Some(done) = work.decompress_reduce(codec, &[payload], range.clone(), None, op) {
                        return done;
                    }
                }
                if scratch.as_deref().is_none_or(|s| s.len() < n) {
                    // The smaller one goes before the larger one is made.
                    *scratch = None;
                    *scratch = Some(work.zeros(n)?);
                }
                let scratch = scratch.as_deref_mut().expect("made above");
                match raw {
                    true => scratch.read_le(payload, 0..n)?,
                    false => scratch.decompress(codec, payload, 0..n)?,
                }
                scratch.view(0..n, |x| work.reduce(backend, op, range.clone(), x))
            });
        }
    }

    fn reject(&mut self, e: CollError) -> bool {
        self.fail(e);
        false
    }

    /// Decodes a bundle of consecutive pieces (as [`Call::frames_of`] made them) into
    /// `work[range]`.
    pub fn decode_pieces<T: Value, W: Place<T> + ?Sized>(&mut self, peer: usize, bundle: &[u8], work: &mut W, range: Range<usize>) {
        self.each_piece::<T>(peer, bundle, range, |call, want, bytes, r| {
            call.decode_at(peer, bytes, want, work, r);
        });
    }

    /// Decodes a bundle of the pieces of `0..head.len() + tail.len()` values (as
    /// [`Call::frames_of`] made them) into `head` and, from value `head.len()` on,
    /// `tail`, each piece straight into its place (one across the seam through a buffer
    /// of its size). So a rank decodes its own values into its output and only the rest
    /// into a buffer of its own.
    pub fn decode_pieces_split<T: Value, W: Place<T> + ?Sized>(&mut self, peer: usize, bundle: &[u8], head: &mut W, tail: &mut W) {
        let (seam, n) = (head.len(), head.len() + tail.len());
        self.each_piece::<T>(peer, bundle, 0..n, |call, want, bytes, r| {
            if r.end <= seam {
                call.decode_at(peer, bytes, want, head, r);
            } else if r.start >= seam {
                call.decode_at(peer, bytes, want, tail, r.start - seam..r.end - seam);
            } else {
                // The seam's piece: decoded whole into a buffer of its own, then split.
                let Some(mut piece) = call.zeros(head, r.len()) else { return };
                if call.decode_at(peer, bytes, want, &mut *piece, 0..r.len()) {
                    let first = seam - r.start;
                    call.copy(head, r.start..seam, &piece, 0..first);
                    call.copy(tail, 0..r.end - seam, &piece, first..r.len());
                }
            }
        });
    }

    /// Checks that `bundle` holds the pieces of `range` and hands each to `decode` with
    /// what its frame must say.
    fn each_piece<T: Value>(&mut self, peer: usize, bundle: &[u8], range: Range<usize>, mut decode: impl FnMut(&mut Self, &Expect, &[u8], Range<usize>)) {
        let chunk = self.chunk_values::<T>(range.len());
        let ranges = pieces(range, chunk);
        match frame::split_bundle(bundle) {
            // The sender failed with nothing to frame (`frame` module docs).
            Ok(frames) if frames.is_empty() => self.fail(CollError::PeerFailed { peer }),
            Ok(frames) if frames.len() == ranges.len() => {
                for (i, ((_, bytes), r)) in frames.into_iter().zip(&ranges).enumerate() {
                    let want = self.expect::<T>(Some(i), Some(ranges.len()), r.len());
                    decode(self, &want, bytes, r.clone());
                }
            }
            Ok(frames) => self.fail(CollError::BadMessage {
                peer,
                reason: format!("{} pieces where {} were expected", frames.len(), ranges.len()),
            }),
            Err(reason) => self.fail(CollError::BadMessage { peer, reason }),
        }
    }

    /// The pieces of `work[range]` (pipeline chunks), framed back to back.
    pub fn frames_of<T: Value, W: Place<T> + ?Sized>(&mut self, work: &W, range: Range<usize>) -> Vec<u8> {
        let n = range.len();
        let ranges = pieces(range, self.chunk_values::<T>(n));
        let mut out = Vec::with_capacity(ranges.len() * HEADER_LEN + n * T::SIZE);
        self.frames_each(work, &ranges, |i| i, ranges.len(), |_, _, frame| out.extend_from_slice(&frame));
        out
    }

    /// Copies `src[from]` into `dst[to]` (an error is recorded like any other).
    pub fn copy<T: Value, W: Place<T> + ?Sized>(&mut self, dst: &mut W, to: Range<usize>, src: &W, from: Range<usize>) {
        if let Err(e) = dst.copy_range(to, src, from) {
            self.fail(e.into());
        }
    }

    /// `n` zeros beside `like` (a failure is recorded, and leaves an empty buffer).
    pub fn zeros<T: Value, W: Place<T> + ?Sized>(&mut self, like: &W, n: usize) -> Option<W::Owned> {
        like.zeros(n).map_err(|e| self.fail(e.into())).ok()
    }

    /// [`Call::zeros`] for a buffer the caller overwrites whole ([`Place::scratch`]);
    /// hand it to [`Place::keep`] when done. Should the call fail before it is
    /// overwritten, what it sends is flagged failed (a receiver decodes none of it).
    pub fn scratch<T: Value, W: Place<T> + ?Sized>(&mut self, like: &W, n: usize) -> Option<W::Owned> {
        like.scratch(n).map_err(|e| self.fail(e.into())).ok()
    }

    /// Starts sending frames that carry `values` values, counting them.
    pub fn isend<T: Value>(&mut self, dest: usize, tag: i32, buf: impl Into<Buf>, values: usize) -> Pending {
        let buf = buf.into();
        self.count_sent::<T>(buf.bytes().len(), values);
        self.comm.isend(dest, tag, buf)
    }

    /// One CPR-P2P exchange: sends `frame` (bytes, values) to `dest` while receiving the next frame from
    /// `src`, then decodes it into `out`.
    #[allow(clippy::too_many_arguments)]
    pub fn exchange<T: Value, W: Place<T> + ?Sized>(&mut self, dest: usize, src: usize, tag: i32, frame: (Vec<u8>, usize), want: &Expect, work: &mut W, range: Range<usize>) {
        let mut tx = self.isend::<T>(dest, tag, frame.0, frame.1);
        let bytes = self.comm.recv(src, tag);
        self.decode_at(src, &bytes, want, work, range);
        transport::recycle(bytes);
        tx.wait();
    }

    /// Sends frames that carry `values` values and waits, counting them.
    pub fn send<T: Value>(&mut self, dest: usize, tag: i32, bytes: &[u8], values: usize) {
        self.count_sent::<T>(bytes.len(), values);
        self.comm.send(dest, tag, bytes);
    }

    /// Counts a message of `len` bytes that carries `values` values (which the caller
    /// knows from its schedule: nothing is parsed again).
    fn count_sent<T: Value>(&mut self, len: usize, values: usize) {
        let (len, raw) = (len as u64, (values * T::SIZE) as u64);
        self.stats.messages_sent += 1;
        self.stats.bytes_sent += len;
        self.stats.raw_bytes_sent += raw;
        self.stats.message_sizes.push((len, raw));
    }
}

/// Where a frame header keeps its flags (see [`crate::frame`]).
const FLAGS_AT: usize = 3;

/// Bytes of an announcement's payload: the bound (f64) and the algorithm (u64).
pub(crate) const ANNOUNCE_PAYLOAD: usize = 16;

/// The word that names `algorithm` in the agreement and in announcements.
pub(crate) fn algorithm_code(algorithm: Algorithm) -> u64 {
    Algorithm::ALL.iter().position(|&a| a == algorithm).expect("every algorithm is listed") as u64
}

/// Consecutive ranges of at most `chunk` values covering `range`; an empty range gives
/// one empty piece, so that every message has at least one frame.
pub(crate) fn pieces(range: core::ops::Range<usize>, chunk: usize) -> Vec<core::ops::Range<usize>> {
    if range.is_empty() {
        return vec![range];
    }
    let chunk = chunk.max(1);
    (range.start..range.end).step_by(chunk).map(|s| s..(s + chunk).min(range.end)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CollConfig;

    /// A call that never communicates (no agreement), for the frame round trips.
    fn call(cfg: &CollConfig) -> Call {
        let setup = Setup { op: CollOp::Bcast, cfg, bytes: 0, count: 0, root: None, reduce: None, local_error: None };
        begin::<f32, [f32]>(Comm::detached(0, 2), setup, Algorithm::CColl, &[], 0..0, false).unwrap()
    }

    fn raw_config() -> CollConfig {
        let mut cfg = CollConfig::new(Codec::zfp_accuracy(1e-3));
        cfg.min_bytes_to_compress = usize::MAX;
        cfg
    }

    #[test]
    fn ring_stages_change_the_szx_encoders_bound_only() {
        let e = 1.9 * 2f64.powi(-10);
        let (first, last) = accuracy::ring_stage_bounds(e, 4);
        let bound = |c: &Call| match c.encoder.map(|h| h.codec) {
            Some(Codec::Szx { bound: ErrorBound::Abs(b), .. }) => Some(b),
            _ => None,
        };
        let mut cfg = CollConfig::new(Codec::szx(ErrorBound::Abs(e)));
        cfg.min_bytes_to_compress = 0;
        let mut c = call(&cfg);
        c.ring_stage(RingStage::ReduceScatter, 4, ReduceOp::Sum);
        assert_eq!(bound(&c), Some(first));
        c.ring_stage(RingStage::Last, 4, ReduceOp::Max);
        assert_eq!(bound(&c), Some(last));
        // E per compression is what the PROD bound assumes, and what the call reports.
        let mut c = call(&cfg);
        c.ring_stage(RingStage::Last, 4, ReduceOp::Prod);
        assert_eq!((bound(&c), c.stats.abs_error), (Some(e), Some(e)));
        // ZFP keeps its tolerance.
        let mut c = call(&CollConfig { min_bytes_to_compress: 0, ..CollConfig::new(Codec::zfp_accuracy(e)) });
        c.ring_stage(RingStage::ReduceScatter, 4, ReduceOp::Sum);
        assert_eq!(c.encoder.map(|h| h.codec), Some(Codec::zfp_accuracy(e)));
    }

    #[test]
    fn pieces_cover_the_range() {
        assert_eq!(pieces(0..0, 4), vec![0..0]);
        assert_eq!(pieces(3..3, 4), vec![3..3]);
        assert_eq!(pieces(2..11, 4), vec![2..6, 6..10, 10..11]);
        assert_eq!(pieces(0..8, 4), vec![0..4, 4..8]);
    }

    #[test]
    fn raw_frames_round_trip_and_every_wrong_field_is_rejected() {
        let cfg = raw_config();
        let mut c = call(&cfg);
        let values = [1.5f32, -2.0, f32::NAN];
        let frame = c.frame(&values, 4, 9);
        assert_eq!(frame.len(), HEADER_LEN + 12);
        let mut out = [0f32; 3];
        assert!(c.decode(1, &frame, &c.expect::<f32>(Some(4), Some(9), 3), &mut out));
        assert!(out[..2] == values[..2] && out[2].is_nan());
        assert_eq!(c.stats.values_compressed, 0);

        let wrong = [
            c.expect::<f32>(Some(5), Some(9), 3),
            c.expect::<f32>(Some(4), Some(8), 3),
            c.expect::<f32>(Some(4), Some(9), 2),
            Expect { codec: 7, ..c.expect::<f32>(Some(4), Some(9), 3) },
            c.expect::<f64>(Some(4), Some(9), 3),
        ];
        for want in wrong {
            let mut c = call(&cfg);
            let mut out = vec![0f32; want.count.unwrap_or(0) as usize];
            assert!(!c.decode(1, &frame, &want, &mut out), "{want:?}");
            assert!(matches!(c.finish(0, None), Err(CollError::BadMessage { peer: 1, .. })));
        }
        let mut c = call(&cfg);
        assert!(!c.decode(1, &frame[..frame.len() - 1], &c.expect::<f32>(Some(4), Some(9), 3), &mut out));
    }

    #[test]
    fn a_compressed_frame_holds_no_room_for_the_raw_values() {
        // A buffer with room for the raw values is mapped afresh for every large message.
        let mut cfg = CollConfig::new(Codec::szx(ErrorBound::Abs(1e-3)));
        cfg.min_bytes_to_compress = 0;
        let mut c = call(&cfg);
        let values: Vec<f32> = (0..1 << 16).map(|i| (i as f32 * 1e-3).sin()).collect();
        let frame = c.frame(&values, 0, 1);
        assert!(frame.len() < values.len(), "compressed below a quarter of the raw bytes: {}", frame.len());
        assert_eq!(frame.capacity(), frame.len());
        let mut out = vec![0f32; values.len()];
        assert!(c.decode(1, &frame, &c.expect::<f32>(Some(0), Some(1), values.len()), &mut out));
        assert!(values.iter().zip(&out).all(|(x, y)| (x - y).abs() <= 1e-3));
    }

    #[test]
    fn a_failed_call_flags_its_frames_and_the_receiver_reports_it() {
        let cfg = raw_config();
        let mut sender = call(&cfg);
        sender.fail(CollError::Config("earlier trouble".into()));
        let frame = sender.frame(&[1.0f32], 0, 1);
        let mut receiver = call(&cfg);
        let mut out = [0f32];
        assert!(!receiver.decode(3, &frame, &receiver.expect::<f32>(Some(0), Some(1), 1), &mut out));
        assert_eq!(receiver.finish(0, None), Err(CollError::PeerFailed { peer: 3 }));
    }

    #[test]
    fn bundles_of_pieces_round_trip() {
        let mut cfg = raw_config();
        cfg.pipeline_chunk_bytes = 40;
        let mut c = call(&cfg);
        let values: Vec<f32> = (0..25).map(|i| i as f32 * 0.5).collect();
        let bundle = c.frames_of(&values[..], 0..25);
        assert_eq!(bundle.len(), 3 * HEADER_LEN + 100);
        let mut out = vec![0f32; 25];
        c.decode_pieces(0, &bundle, &mut out[..], 0..25);
        assert_eq!(out, values);
        assert!(c.finish(0, None).is_ok());
        // One value short: the piece layout differs and the bundle is refused.
        let mut c = call(&cfg);
        c.decode_pieces(0, &bundle, &mut out[..], 0..24);
        assert!(c.finish(0, None).is_err());
        // An empty bundle (a sender's holds a frame even for no values): it failed.
        for range in [0..25, 0..0] {
            let mut c = call(&cfg);
            c.decode_pieces::<f32, _>(3, &[], &mut out[..], range);
            assert_eq!(c.finish(0, None).unwrap_err(), CollError::PeerFailed { peer: 3 });
        }
    }

    /// Pieces of 10 values split at 10 (a piece boundary) and at 13 (inside the second
    /// piece) land in their places on both sides; a split bundle of the wrong total is
    /// refused.
    #[test]
    fn a_bundle_splits_into_a_head_and_a_tail_at_any_value() {
        let mut cfg = raw_config();
        cfg.pipeline_chunk_bytes = 40;
        let values: Vec<f32> = (0..25).map(|i| i as f32 * 0.5).collect();
        let bundle = call(&cfg).frames_of(&values[..], 0..25);
        for seam in [10, 13, 0, 25] {
            let mut c = call(&cfg);
            let (mut head, mut tail) = (vec![f32::NAN; seam], vec![f32::NAN; 25 - seam]);
            c.decode_pieces_split(0, &bundle, &mut head[..], &mut tail[..]);
            assert!(c.finish(0, None).is_ok(), "seam {seam}");
            assert_eq!((&head[..], &tail[..]), values.split_at(seam), "seam {seam}");
        }
        let mut c = call(&cfg);
        let (mut head, mut tail) = (vec![0f32; 13], vec![0f32; 11]);
        c.decode_pieces_split(0, &bundle, &mut head[..], &mut tail[..]);
        assert!(c.finish(0, None).is_err());
    }

    /// Frames reduced at once give the bits of reducing them one after the other, the
    /// owner's values first; where one frame's stream is corrupt, both fail the call
    /// naming the same peer (every byte of one stream set to 0xff in turn).
    #[test]
    fn frames_reduced_at_once_equal_frames_in_turn_and_name_a_bad_peer() {
        let mut cfg = CollConfig::new(Codec::szx(ErrorBound::Abs(1e-3)));
        cfg.min_bytes_to_compress = 0;
        let n = 1000;
        let field = |k: usize| (0..n).map(|i| if i % 97 < 20 { 0.0 } else { ((i * (k + 3)) as f32 * 0.013).sin() * 7.0 }).collect::<Vec<f32>>();
        let mut c = call(&cfg);
        let frames: Vec<Vec<u8>> = (1..4).map(|k| c.frame(&field(k), 0, 1)).collect();
        let own = field(0);
        let reduce = |frames: &[(usize, &[u8])], at_once: bool| {
            let mut c = call(&cfg);
            let want = c.expect::<f32>(Some(0), Some(1), n);
            let (mut out, mut scratch) = (vec![f32::NAN; n], None);
            if at_once {
                c.decode_reduce(frames, &want, &mut out[..], 0..n, Some(&own[..]), ReduceOp::Sum, &mut scratch);
            } else {
                out.copy_from_slice(&own);
                for f in frames {
                    c.decode_reduce(core::slice::from_ref(f), &want, &mut out[..], 0..n, None, ReduceOp::Sum, &mut scratch);
                }
            }
            (out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), c.finish(0, None).err())
        };
        let good: Vec<(usize, &[u8])> = frames.iter().enumerate().map(|(i, f)| (i + 1, f.as_slice())).collect();
        let (bits, err) = reduce(&good, true);
        assert_eq!((bits.clone(), err), reduce(&good, false));
        assert!(bits.iter().zip(&own).any(|(&b, x)| b != x.to_bits()));
        let mut failures = 0;
        for at in HEADER_LEN..frames[1].len() {
            let mut bad = frames[1].clone();
            bad[at] = 0xff;
            let some = [good[0], (2, bad.as_slice()), good[2]];
            let (at_once, in_turn) = (reduce(&some, true), reduce(&some, false));
            match (&at_once.1, &in_turn.1) {
                (None, None) => assert_eq!(at_once.0, in_turn.0, "byte {at}"),
                (Some(CollError::BadMessage { peer: 2, .. }), Some(CollError::BadMessage { peer: 2, .. })) => failures += 1,
                (a, b) => panic!("byte {at}: at once {a:?}, in turn {b:?}"),
            }
        }
        assert!(failures > 0);
    }

    #[test]
    fn decoding_random_bytes_never_panics() {
        let cfg = raw_config();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut c = call(&cfg);
        let template = c.frame(&[0.25f32; 16], 0, 1);
        for case in 0..20_000 {
            let mut bytes = template.clone();
            match case % 3 {
                0 => bytes = (0..next() % 120).map(|_| next() as u8).collect(),
                1 => bytes[next() as usize % template.len()] ^= 1 << (next() % 8),
                _ => bytes.truncate(next() as usize % template.len()),
            }
            let mut out = [0f32; 16];
            let want = c.expect::<f32>(Some(0), Some(1), 16);
            c.decode(0, &bytes, &want, &mut out);
            c.decode_pieces(0, &bytes, &mut out[..], 0..16);
        }
    }
}
