//! What a call did, returned beside its data.

use crate::Algorithm;

/// What one call did on this rank.
#[derive(Clone, Debug, PartialEq)]
pub struct CollStats {
    /// The algorithm that ran (after [`Algorithm::Auto`] was resolved).
    pub algorithm: Algorithm,
    /// Bytes of data messages this rank sent (message headers included, forwarded
    /// compressed bytes included; the few bytes of control messages are not counted).
    /// For [`Algorithm::Mpi`] the library's traffic is not visible: this is the input size.
    pub bytes_sent: u64,
    /// What those messages would have taken uncompressed.
    pub raw_bytes_sent: u64,
    /// The data messages of `bytes_sent` (0 for [`Algorithm::Mpi`]): a pipelined
    /// schedule sends one per chunk and hop.
    pub messages_sent: u64,
    /// Bytes and uncompressed bytes of each of those messages, in the order this rank
    /// sent them: in a step-by-step schedule (CPR-P2P's rings) the `i`-th messages of all
    /// ranks make step `i`, which lasts as long as its heaviest one.
    pub message_sizes: Vec<(u64, u64)>,
    /// Compressions on the path of the most-compressed value of the result: the result's
    /// error is at most this times the per-compression bound (see `docs/collectives.md`).
    /// 0 when no rank compresses anything in the call (it is below the compression
    /// threshold, or a relative bound meets a value range of zero).
    pub compressions_per_value: u32,
    /// The absolute error bound of one compression (`None`: the codec gives none, as
    /// ZFP fixed-rate; `Some(0)`: the call sent every value uncompressed).
    pub abs_error: Option<f64>,
    /// Bound on |result - exact result| for every value (`compressions_per_value *
    /// abs_error`), floating-point rounding of the reduction aside. `None` where no bound
    /// holds a priori (no codec bound, or PROD, whose error scales with the factors).
    pub error_bound: Option<f64>,
    /// Values this rank passed to the compressor.
    pub values_compressed: u64,
    /// Values this rank decompressed.
    pub values_decompressed: u64,
    /// Messages this rank sent uncompressed because the codec could not encode them
    /// (ZFP and NaN/Inf: the piece travels raw, exactly).
    pub raw_fallbacks: u32,
    /// Kernel launches this process queued on the CUDA device during the call (codec
    /// and reduction kernels; 0 on the CPU backend, and without the `cuda` feature).
    pub device_launches: u64,
    /// What this rank's codec passes cost on the CPU backend (zeros on a device, whose
    /// passes run asynchronously): where a call's time goes, and the speed the codec
    /// reached inside the call (the cost model's validation prices it by that).
    pub codec_cpu: CodecCpu,
}

/// The CPU time and bytes of a call's codec passes on one rank: each direction, and the
/// value-range scan a relative bound needs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CodecCpu {
    /// Compressions (ZFP's check that a stream keeps its promise included).
    pub compress: CodecPass,
    /// Decodes, alone or with the reduction that adds the decoded values as they come
    /// (SZx on the CPU): [`CodecPass::reduced_bytes`] counts the latter's values.
    pub decompress: CodecPass,
    /// The scan of this rank's input for its finite value range, which a relative
    /// bound resolves against: [`CodecPass::raw_bytes`] counts the bytes read (nothing
    /// is coded, so the other byte counts stay 0).
    pub scan: CodecPass,
}

/// One kind of codec pass in a call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CodecPass {
    /// Uncompressed bytes the passes read (compression, scan) or wrote (decoding).
    pub raw_bytes: u64,
    /// Compressed bytes they wrote or read.
    pub coded_bytes: u64,
    /// Of [`CodecPass::raw_bytes`], the bytes decoded and reduced in the same pass.
    pub reduced_bytes: u64,
    /// Memory the passes wrote for the first time (the process's minor page faults
    /// meanwhile, times the page size): decodes into a buffer the call allocated.
    pub faulted_bytes: u64,
    /// The process's CPU time over the passes, user and system, every thread (the
    /// codec's workers too; page faults of output written for the first time included).
    pub cpu_s: f64,
}

impl CodecPass {
    /// The sum of two tallies.
    pub fn plus(&self, o: &CodecPass) -> CodecPass {
        CodecPass {
            raw_bytes: self.raw_bytes + o.raw_bytes,
            coded_bytes: self.coded_bytes + o.coded_bytes,
            reduced_bytes: self.reduced_bytes + o.reduced_bytes,
            faulted_bytes: self.faulted_bytes + o.faulted_bytes,
            cpu_s: self.cpu_s + o.cpu_s,
        }
    }

    /// What was added to `earlier` to make this tally.
    pub fn since(&self, earlier: &CodecPass) -> CodecPass {
        CodecPass {
            raw_bytes: self.raw_bytes - earlier.raw_bytes,
            coded_bytes: self.coded_bytes - earlier.coded_bytes,
            reduced_bytes: self.reduced_bytes - earlier.reduced_bytes,
            faulted_bytes: self.faulted_bytes - earlier.faulted_bytes,
            cpu_s: self.cpu_s - earlier.cpu_s,
        }
    }
}

impl CodecCpu {
    /// The sum of two tallies, each pass.
    pub fn plus(&self, o: &CodecCpu) -> CodecCpu {
        CodecCpu { compress: self.compress.plus(&o.compress), decompress: self.decompress.plus(&o.decompress), scan: self.scan.plus(&o.scan) }
    }

    /// What was added to `earlier` to make this tally, each pass.
    pub fn since(&self, earlier: &CodecCpu) -> CodecCpu {
        CodecCpu { compress: self.compress.since(&earlier.compress), decompress: self.decompress.since(&earlier.decompress), scan: self.scan.since(&earlier.scan) }
    }
}

impl CollStats {
    /// Stats of a call that has not sent anything yet.
    pub(crate) fn new(algorithm: Algorithm) -> Self {
        CollStats {
            algorithm,
            bytes_sent: 0,
            raw_bytes_sent: 0,
            messages_sent: 0,
            message_sizes: Vec::new(),
            compressions_per_value: 0,
            abs_error: None,
            error_bound: None,
            values_compressed: 0,
            values_decompressed: 0,
            raw_fallbacks: 0,
            device_launches: 0,
            codec_cpu: CodecCpu::default(),
        }
    }

    /// Uncompressed over sent bytes (1 when nothing was sent).
    pub fn compression_ratio(&self) -> f64 {
        if self.bytes_sent == 0 {
            1.0
        } else {
            self.raw_bytes_sent as f64 / self.bytes_sent as f64
        }
    }
}
