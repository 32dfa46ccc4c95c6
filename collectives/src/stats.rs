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
