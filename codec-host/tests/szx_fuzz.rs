//! Fuzz-style tests of the SZx decoders: random bytes, every truncation, bit flips and
//! absurd header fields give typed errors (never a panic or a huge allocation), every
//! decoding entry point agrees on what it accepts and decodes, and valid streams come
//! back within their bound.

mod crafted;
mod szx_common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use codec_host::szx::{self, pipelined, ErrorBound, SzxOptions, HEADER_LEN};
use codec_host::{Backend, Codec, CpuExecutor, Error, Shape};
use crafted::{resign, zero_blocks_stream};
use szx_common::{as_f32, as_f64, check_all, data, Rng, KINDS};

/// Records each thread's largest single allocation (tests run on threads of their own),
/// to catch decoders trusting a lying header, and refuses any above [`REFUSED_ABOVE`] (as
/// a machine without the memory would), so that fallible allocations can be tested on
/// any machine.
struct Tracking;
thread_local! {
    // Const-initialised, no destructor: usable inside the allocator.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}
const REFUSED_ABOVE: usize = 1 << 30;

fn record(size: usize) {
    LARGEST.with(|l| l.set(l.get().max(size)));
}
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        if layout.size() > REFUSED_ABOVE {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        if layout.size() > REFUSED_ABOVE {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(layout)
    }
}
#[global_allocator]
static GLOBAL: Tracking = Tracking;

fn exec() -> CpuExecutor {
    CpuExecutor::new(1).unwrap()
}

/// What the decoders made of some bytes: rejected with a typed error, or the values
/// (as bit patterns) that every entry point agreed on.
#[derive(Debug, PartialEq)]
enum Outcome {
    Rejected,
    Values(Vec<u64>),
}

/// The errors a decoder may give for bad bytes.
fn is_decode_error(e: &Error) -> bool {
    matches!(e, Error::Truncated { .. } | Error::Corrupt(_) | Error::UnsupportedHeader(_) | Error::TypeMismatch { .. } | Error::BufferTooSmall { .. })
}

/// `r` is fine or a decode error (anything else fails the test); true if fine.
fn accepted<T>(what: &str, r: codec_host::Result<T>) -> bool {
    if let Err(e) = &r {
        assert!(is_decode_error(e), "{what}: untyped failure {e:?}");
    }
    r.is_ok()
}

/// Decodes `bytes` with every decoding entry point for `T` (into room for 4096 values)
/// and checks that they agree: the same verdict, the same values bit for bit, and an
/// `inspect` and `describe` that report the shape decoded.
fn decode_as<T: codec_host::BackendElem>(bytes: &[u8], ex: &CpuExecutor, bits: fn(T) -> u64) -> Outcome {
    let values = |out: &[T], n: usize| out[..n].iter().map(|&v| bits(v)).collect::<Vec<_>>();
    let mut plain = vec![T::default(); 4096];
    let plain_ok = accepted("decompress_into", codec_host::decompress_into(bytes, &mut plain, &Backend::cpu()));
    let mut piped = vec![T::default(); 4096];
    let piped_ok = accepted("pipelined::decompress_into", pipelined::decompress_into(bytes, &mut piped, ex, |_| {}));
    assert_eq!(plain_ok, piped_ok, "plain and pipelined decoders disagree");
    let mut incremental = vec![T::default(); 4096];
    let incremental_ok = match pipelined::Decoder::new(bytes) {
        Ok(mut dec) => accepted("decode_available", dec.decode_available(bytes, &mut incremental, ex, |_| {})) && dec.is_done(),
        Err(e) => accepted::<()>("Decoder::new", Err(e)),
    };
    if bytes.len() < 1 << 16 {
        // Sizes its own output: accepts what fits 4096 values exactly when the others do.
        match szx::decompress::<T>(bytes) {
            Ok((v, _)) if v.len() <= 4096 => {
                assert!(plain_ok, "only decompress accepted the bytes");
                assert_eq!(values(&v, v.len()), values(&plain, v.len()), "decompress differs from decompress_into");
            }
            Ok(_) => {}
            Err(e) => assert!(!plain_ok && !accepted::<()>("decompress", Err(e)), "only decompress rejected the bytes"),
        }
    }
    if !plain_ok {
        return Outcome::Rejected;
    }
    let info = szx::inspect(bytes).expect("a decodable stream inspects");
    let n = info.shape.len();
    assert_eq!(codec_host::inspect(bytes), Ok(info));
    assert_eq!(szx::describe(bytes).expect("a decodable stream is described").header.len(), n);
    assert!(incremental_ok, "decode_available did not finish a stream the others decode");
    let v = values(&plain, n);
    assert_eq!(v, values(&piped, n), "pipelined values differ");
    assert_eq!(v, values(&incremental, n), "incremental values differ");
    Outcome::Values(v)
}

/// [`decode_as`] for both element types (a stream holds one or the other).
fn decode_everything(bytes: &[u8], ex: &CpuExecutor) -> Outcome {
    match (decode_as::<f32>(bytes, ex, |v| v.to_bits() as u64), decode_as::<f64>(bytes, ex, f64::to_bits)) {
        (Outcome::Rejected, b) => b,
        (a, Outcome::Rejected) => a,
        (a, b) => panic!("decoded as both f32 and f64: {a:?} {b:?}"),
    }
}

/// The values a sample stream was compressed from, and its bound.
enum Source {
    F32(Vec<f32>, f64),
    F64(Vec<f64>, f64),
}

/// The exact round trip of a valid stream: every decoder agrees, and the values are
/// within the bound of those compressed (NaN and infinities bit for bit).
fn assert_round_trip(stream: &[u8], source: &Source, ex: &CpuExecutor) {
    let Outcome::Values(got) = decode_everything(stream, ex) else { panic!("valid stream rejected") };
    let r = match source {
        Source::F32(x, e) => check_all(x, &got.iter().map(|&b| f32::from_bits(b as u32)).collect::<Vec<_>>(), *e),
        Source::F64(x, e) => check_all(x, &got.iter().map(|&b| f64::from_bits(b)).collect::<Vec<_>>(), *e),
    };
    assert_eq!(r, Ok(()));
}

/// A few valid streams of each kind, with their sources.
fn sample_streams() -> Vec<(Vec<u8>, Source)> {
    let ex = exec();
    let mut out = Vec::new();
    for (kind, n, e, block) in [(0usize, 300usize, 1e-3, 128usize), (6, 257, 1e-4, 16), (9, 40, 0.0, 8), (2, 100, 1e-2, 3), (5, 64, 1e-40, 32), (8, 33, 1.0, 128)] {
        let x32: Vec<f32> = data(kind, n, kind as u64, as_f32).into_iter().map(|v| v as f32).collect();
        let x64: Vec<f64> = data(kind, n, kind as u64 + 1, as_f64);
        let opts = SzxOptions { block_size: block, chunk_values: block * 2 };
        out.push((pipelined::Encoder::plain(&x32, Shape::d1(n), ErrorBound::Abs(e), opts.block_size, &ex).and_then(|e| e.into_vec(&ex)).unwrap(), Source::F32(x32, e)));
        out.push((pipelined::Encoder::new(&x64, Shape::d1(n), ErrorBound::Abs(e), &opts, &ex).and_then(|e| e.into_vec(&ex)).unwrap(), Source::F64(x64, e)));
    }
    out
}

#[test]
fn random_bytes_are_rejected_without_panic() {
    let ex = exec();
    let mut r = Rng::new(11);
    let template = &sample_streams()[0].0;
    for i in 0..20_000 {
        let len = r.below(400) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
        // Some start like a stream, some carry a whole valid header.
        match i % 3 {
            1 if len >= 4 => bytes[..4].copy_from_slice(&szx::MAGIC),
            2 if len >= HEADER_LEN => bytes[..HEADER_LEN].copy_from_slice(&template[..HEADER_LEN]),
            _ => {}
        }
        assert!(decode_everything(&bytes, &ex) == Outcome::Rejected || i % 3 == 2, "random bytes accepted: {bytes:?}");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let ex = exec();
    for (stream, source) in sample_streams() {
        assert_round_trip(&stream, &source, &ex);
        for cut in 0..stream.len() {
            let prefix = &stream[..cut];
            assert_eq!(decode_everything(prefix, &ex), Outcome::Rejected, "prefix of {cut} of {} bytes accepted", stream.len());
            let mut out = vec![0f64; 4096];
            let err = codec_host::decompress_into(prefix, &mut out, &Backend::cpu()).unwrap_err();
            assert!(matches!(err, Error::Truncated { .. } | Error::Corrupt(_) | Error::TypeMismatch { .. }), "{err:?}");
        }
    }
}

#[test]
fn bit_flips_never_panic_and_header_flips_are_caught() {
    let ex = exec();
    for (stream, _) in sample_streams() {
        for bit in 0..stream.len() * 8 {
            let mut s = stream.clone();
            s[bit / 8] ^= 1 << (bit % 8);
            let accepted = decode_everything(&s, &ex) != Outcome::Rejected;
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
    for (stream, _) in sample_streams() {
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
    let base = sample_streams().swap_remove(0).0;
    let patch = |at: usize, bytes: &[u8]| {
        let mut s = base.clone();
        s[at..at + bytes.len()].copy_from_slice(bytes);
        resign(&mut s);
        let mut out = vec![0f32; 4096];
        codec_host::decompress_into(&s, &mut out, &Backend::cpu()).unwrap_err()
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
    assert!(matches!(codec_host::decompress_into(&base, &mut small, &Backend::cpu()), Err(Error::BufferTooSmall { .. })));
}

#[test]
fn a_lying_element_count_allocates_nothing_large() {
    // 2^40 values in chunks of 2^28: 4096 chunks, whose table the stream does not hold.
    let mut s = sample_streams().swap_remove(0).0;
    s[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    s[48..52].copy_from_slice(&128u32.to_le_bytes());
    s[52..56].copy_from_slice(&(1u32 << 28).to_le_bytes());
    s[56..60].copy_from_slice(&4096u32.to_le_bytes());
    resign(&mut s);
    LARGEST.with(|l| l.set(0));
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
    let largest = LARGEST.with(Cell::get);
    assert!(largest < 1 << 20, "allocated {largest} bytes");
}

#[test]
fn a_valid_stream_declaring_more_than_memory_is_an_error_not_an_abort() {
    // 2^20 zero blocks of 4096 f64 values: a consistent 1 MiB stream of 32 GiB of zeros.
    let s = zero_blocks_stream(4096, 1 << 28, 1 << 20);
    assert_eq!(szx::inspect(&s).unwrap().shape.len(), 1 << 32);
    assert_eq!(szx::decompress::<f64>(&s).unwrap_err(), Error::OutOfMemory { bytes: 1 << 35 });
    // The same layout at a size that fits decodes to zeros.
    let small = zero_blocks_stream(4096, 1 << 28, 4);
    let (values, _) = szx::decompress::<f64>(&small).unwrap();
    assert_eq!(values, vec![0.0; 4 * 4096]);
}

#[test]
fn every_kind_of_stream_decodes_after_the_fuzzing_helpers() {
    // The helpers accept what the encoder writes (guards the tests above).
    let ex = exec();
    for kind in 0..KINDS {
        let x: Vec<f64> = data(kind, 500, 3, as_f64);
        let s = Codec::szx(ErrorBound::Abs(1e-6)).compress(&x, Shape::d1(500), &Backend::cpu()).unwrap();
        assert_round_trip(&s, &Source::F64(x, 1e-6), &ex);
    }
}
