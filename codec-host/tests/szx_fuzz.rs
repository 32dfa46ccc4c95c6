//! Fuzz-style tests of the SZx decoders: random bytes, every truncation, bit flips and
//! absurd header fields give typed errors, never a panic or a huge allocation.

mod szx_common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use codec_host::szx::{self, pipelined, ErrorBound, SzxOptions, HEADER_LEN};
use codec_host::{CpuExecutor, Error, Shape};
use szx_common::{as_f32, as_f64, data, Rng, KINDS};

/// Records the largest single allocation, to catch decoders trusting a lying header.
struct Tracking;
static LARGEST: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
}
#[global_allocator]
static GLOBAL: Tracking = Tracking;

fn exec() -> CpuExecutor {
    CpuExecutor::new(1).unwrap()
}

/// Runs every decoding entry point on `bytes`; returns whether the plain decoder
/// accepted them. Panics only if a decoder panics.
fn decode_everything(bytes: &[u8], ex: &CpuExecutor) -> bool {
    let _ = szx::inspect(bytes);
    let _ = szx::describe(bytes);
    if szx::is_szx(bytes) {
        // (Other bytes go to the zfp decoder, which these tests do not cover.)
        let _ = codec_host::inspect(bytes);
    }
    let mut out32 = vec![0f32; 4096];
    let mut out64 = vec![0f64; 4096];
    let ok32 = szx::decompress_into(bytes, &mut out32, ex).is_ok();
    let ok64 = szx::decompress_into(bytes, &mut out64, ex).is_ok();
    let _ = pipelined::decompress_into(bytes, &mut out32, ex, |_| {});
    if let Ok(mut dec) = pipelined::Decoder::new(bytes) {
        let _ = dec.decode_available(bytes, &mut out64, ex, |_| {});
        let _ = dec.decode_available(bytes, &mut out32, ex, |_| {});
        if let Some(chunk) = bytes.get(dec.header().prefix_len()..) {
            let _ = dec.decode_chunk(0, chunk, &mut out32, ex);
            let _ = dec.decode_chunk(0, chunk, &mut out64, ex);
        }
    }
    if bytes.len() < 1 << 16 {
        let _ = szx::decompress::<f32>(bytes);
        let _ = szx::decompress::<f64>(bytes);
    }
    ok32 || ok64
}

/// A few valid streams of each kind.
fn sample_streams() -> Vec<Vec<u8>> {
    let ex = exec();
    let mut out = Vec::new();
    for (kind, n, e, block) in [(0usize, 300usize, 1e-3, 128usize), (6, 257, 1e-4, 16), (9, 40, 0.0, 8), (2, 100, 1e-2, 3), (5, 64, 1e-40, 32), (8, 33, 1.0, 128)] {
        let x32: Vec<f32> = data(kind, n, kind as u64, as_f32).into_iter().map(|v| v as f32).collect();
        let x64: Vec<f64> = data(kind, n, kind as u64 + 1, as_f64);
        let opts = SzxOptions { block_size: block, chunk_values: block * 2 };
        out.push(szx::compress_with_options(&x32, Shape::d1(n), ErrorBound::Abs(e), &opts, &ex).unwrap());
        out.push(pipelined::compress(&x64, Shape::d1(n), ErrorBound::Abs(e), &opts, &ex).unwrap());
    }
    out
}

/// Recomputes the header checksum so that deeper checks are reached.
fn resign(stream: &mut [u8]) {
    let sum = stream[..60].iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193));
    stream[60..64].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn random_bytes_are_rejected_without_panic() {
    let ex = exec();
    let mut r = Rng::new(11);
    let template = &sample_streams()[0];
    for i in 0..20_000 {
        let len = r.below(400) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
        // Some start like a stream, some carry a whole valid header.
        match i % 3 {
            1 if len >= 4 => bytes[..4].copy_from_slice(&szx::MAGIC),
            2 if len >= HEADER_LEN => bytes[..HEADER_LEN].copy_from_slice(&template[..HEADER_LEN]),
            _ => {}
        }
        assert!(!decode_everything(&bytes, &ex) || i % 3 == 2, "random bytes accepted: {bytes:?}");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let ex = exec();
    for stream in sample_streams() {
        assert!(decode_everything(&stream, &ex));
        for cut in 0..stream.len() {
            let prefix = &stream[..cut];
            assert!(!decode_everything(prefix, &ex), "prefix of {cut} of {} bytes accepted", stream.len());
            let mut out = vec![0f64; 4096];
            let err = szx::decompress_into(prefix, &mut out, &ex).unwrap_err();
            assert!(matches!(err, Error::Truncated { .. } | Error::Corrupt(_) | Error::TypeMismatch { .. }), "{err:?}");
        }
    }
}

#[test]
fn bit_flips_never_panic_and_header_flips_are_caught() {
    let ex = exec();
    for stream in sample_streams() {
        for bit in 0..stream.len() * 8 {
            let mut s = stream.clone();
            s[bit / 8] ^= 1 << (bit % 8);
            let accepted = decode_everything(&s, &ex);
            if bit < HEADER_LEN * 8 {
                assert!(!accepted, "header bit {bit} flipped and accepted");
            }
        }
    }
}

#[test]
fn payload_garbage_behind_a_valid_header_is_handled() {
    let ex = exec();
    let mut r = Rng::new(5);
    for stream in sample_streams() {
        let prefix = szx::pipelined::prefix_len(&stream).unwrap();
        for _ in 0..300 {
            let mut s = stream.clone();
            for b in &mut s[prefix..] {
                *b = r.next_u64() as u8;
            }
            decode_everything(&s, &ex);
            // A table that fits but states that lie.
            let mut s = stream.clone();
            let at = prefix + r.below((s.len() - prefix) as u64) as usize;
            s[at] = r.next_u64() as u8;
            decode_everything(&s, &ex);
        }
    }
}

#[test]
fn absurd_header_fields_give_typed_errors() {
    let ex = exec();
    let base = sample_streams().swap_remove(0);
    let patch = |at: usize, bytes: &[u8]| {
        let mut s = base.clone();
        s[at..at + bytes.len()].copy_from_slice(bytes);
        resign(&mut s);
        let mut out = vec![0f32; 4096];
        szx::decompress_into(&s, &mut out, &ex).unwrap_err()
    };
    // Version 1 (before the repeat code) and unknown versions.
    assert!(matches!(patch(4, &[1]), Error::UnsupportedHeader(_)));
    assert!(matches!(patch(4, &[3]), Error::UnsupportedHeader(_)));
    assert!(matches!(patch(5, &[3]), Error::Corrupt(_)));
    assert!(matches!(patch(5, &[2]), Error::TypeMismatch { .. }));
    assert!(matches!(patch(6, &[0x80]), Error::Corrupt(_)));
    assert!(matches!(patch(7, &[0]), Error::Corrupt(_)));
    assert!(matches!(patch(7, &[4]), Error::Corrupt(_)));
    assert!(matches!(patch(16, &7u64.to_le_bytes()), Error::Corrupt(_)), "unused extent");
    assert!(matches!(patch(8, &u64::MAX.to_le_bytes()), Error::Corrupt(_)), "count vs chunks");
    assert!(matches!(patch(32, &f64::NAN.to_le_bytes()), Error::Corrupt(_)));
    assert!(matches!(patch(32, &(-1.0f64).to_le_bytes()), Error::Corrupt(_)));
    assert!(matches!(patch(40, &1.0f64.to_le_bytes()), Error::Corrupt(_)), "relative factor on an absolute stream");
    assert!(matches!(patch(48, &0u32.to_le_bytes()), Error::Corrupt(_)));
    assert!(matches!(patch(48, &5000u32.to_le_bytes()), Error::Corrupt(_)));
    assert!(matches!(patch(52, &100u32.to_le_bytes()), Error::Corrupt(_)), "chunk not a block multiple");
    assert!(matches!(patch(56, &9u32.to_le_bytes()), Error::Corrupt(_)));
    // The checksum itself.
    let mut s = base.clone();
    s[20] ^= 1;
    assert!(matches!(szx::inspect(&s), Err(Error::Corrupt(_))));
    // Caller errors.
    let mut small = vec![0f32; 3];
    assert!(matches!(szx::decompress_into(&base, &mut small, &ex), Err(Error::BufferTooSmall { .. })));
}

#[test]
fn a_lying_element_count_allocates_nothing_large() {
    // 2^40 values in chunks of 2^28: 4096 chunks, whose table the stream does not hold.
    let mut s = sample_streams().swap_remove(0);
    s[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    s[48..52].copy_from_slice(&128u32.to_le_bytes());
    s[52..56].copy_from_slice(&(1u32 << 28).to_le_bytes());
    s[56..60].copy_from_slice(&4096u32.to_le_bytes());
    resign(&mut s);
    LARGEST.store(0, Ordering::Relaxed);
    assert!(matches!(szx::decompress::<f32>(&s), Err(Error::Truncated { .. })));
    assert!(matches!(szx::inspect(&s), Err(Error::Truncated { .. })));
    // A table that claims the stream holds 2^28 values per chunk with a byte each.
    let mut s = s[..HEADER_LEN].to_vec();
    s[8..16].copy_from_slice(&(1u64 << 28).to_le_bytes());
    s[56..60].copy_from_slice(&1u32.to_le_bytes());
    resign(&mut s);
    s.extend_from_slice(&1u32.to_le_bytes());
    s.push(0);
    assert!(matches!(szx::decompress::<f32>(&s), Err(Error::Corrupt(_))));
    assert!(LARGEST.load(Ordering::Relaxed) < 1 << 20, "allocated {} bytes", LARGEST.load(Ordering::Relaxed));
}

#[test]
fn every_kind_of_stream_decodes_after_the_fuzzing_helpers() {
    // The helpers accept what the encoder writes (guards the tests above).
    let ex = exec();
    for kind in 0..KINDS {
        let x: Vec<f64> = data(kind, 500, 3, as_f64);
        let s = szx::compress(&x, Shape::d1(500), ErrorBound::Abs(1e-6)).unwrap();
        assert!(decode_everything(&s, &ex));
    }
}
