//! What `ccoll info` reads: `inspect`, the zfp header parser and the SZx description.
//! A header that passes must declare no more values than the stream can hold (zfp: a
//! bit per block of 4^d values; SZx: a state byte per block of at most 4096 values).
#![no_main]

use codec_host::szx::{self, MAX_BLOCK_SIZE};
use codec_host::zfp::Header;
use codec_host_fuzz::typed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let info = typed("inspect", codec_host::inspect(data));
    let most = if szx::is_szx(data) {
        // describe also reads every block state, so it may refuse what inspect takes.
        let described = typed("describe", szx::describe(data));
        assert!(described.is_none() || info.is_some(), "describe took a stream inspect refused");
        data.len().saturating_mul(MAX_BLOCK_SIZE)
    } else {
        let _ = typed("Header::parse", Header::parse(data));
        data.len().saturating_mul(8 * 64)
    };
    if let Some(info) = info {
        assert!(info.shape.len() <= most, "{} values declared by {} bytes", info.shape.len(), data.len());
        assert!(info.stream_bytes <= data.len());
    }
});
