//! Fuzz-style tests of the zfp decoder: no input bytes make it panic, and damage it can
//! recognise gets the right typed error. Thousands of cases, deterministic seeds.

mod common;
mod crafted;

use codec_host::{Backend, Codec, CpuExecutor, ElemType, Error, Shape};
use common::{Kind, Rng, Values};
use crafted::zfp_header as header;

/// Decodes `stream` as whatever its header claims (`elem` and `cap` values if it cannot
/// be inspected), both single- and multi-threaded, and checks the two agree. Any error
/// is fine; a panic fails the test.
fn decode_any(stream: &[u8], elem: ElemType, cap: usize, execs: &[Backend; 2]) -> Result<Values, Error> {
    let (elem, n) = match codec_host::inspect(stream) {
        Ok(i) => (i.elem, i.shape.len().min(cap)),
        Err(_) => (elem, cap),
    };
    let a = Values::decompress(stream, elem, n, &execs[0]);
    let b = Values::decompress(stream, elem, n, &execs[1]);
    match (&a, &b) {
        (Ok(x), Ok(y)) => assert_eq!(x.to_bytes(), y.to_bytes(), "thread counts disagree"),
        (Err(x), Err(y)) => assert_eq!(x, y, "thread counts disagree"),
        _ => panic!("thread counts disagree: {a:?} vs {b:?}"),
    }
    a
}

fn execs() -> [Backend; 2] {
    [Backend::with_executor(CpuExecutor::new(1).unwrap()), Backend::with_executor(CpuExecutor::new(2).unwrap())]
}

/// A few valid streams of both modes, types and all dimensionalities.
fn samples() -> Vec<(Values, Vec<u8>)> {
    let exec = Backend::with_executor(CpuExecutor::new(1).unwrap());
    let mut rng = Rng::new(3);
    let mut out = Vec::new();
    for (elem, dims, codec) in [
        (ElemType::F32, &[37][..], Codec::zfp_rate(7.0)),
        (ElemType::F64, &[9, 7][..], Codec::zfp_accuracy(1e-4)),
        (ElemType::F32, &[5, 6, 7][..], Codec::zfp_accuracy(1e-2)),
        (ElemType::F64, &[6, 5, 3][..], Codec::zfp_rate(40.0)),
    ] {
        let shape = Shape::from_dims(dims).unwrap();
        let values = Values::generate(Kind::Noisy, elem, shape, &mut rng);
        let stream = values.compress(&codec, shape, &exec).unwrap();
        out.push((values, stream));
    }
    out
}

/// Bytes up to the end of the last block: everything shorter is truncated, everything
/// longer (zero padding) decodes the same.
fn data_len(stream: &[u8], values: &Values, exec: &Backend) -> usize {
    let full = Values::decompress(stream, values.elem(), values.len(), exec).unwrap();
    (0..=stream.len())
        .find(|&l| Values::decompress(&stream[..l], values.elem(), values.len(), exec).as_ref() == Ok(&full))
        .unwrap()
}

#[test]
fn every_truncation_is_detected() {
    let execs = execs();
    for (values, stream) in samples() {
        let full = Values::decompress(&stream, values.elem(), values.len(), &execs[0]).unwrap();
        let need = data_len(&stream, &values, &execs[0]);
        assert!(need > 12 && need <= stream.len() && stream.len() - need < 8, "data ends at {need} of {}", stream.len());
        for l in 0..stream.len() {
            match decode_any(&stream[..l], values.elem(), values.len(), &execs) {
                Ok(v) => {
                    assert!(l >= need, "length {l} < {need} decoded");
                    assert_eq!(v, full);
                }
                Err(e) => {
                    assert!(l < need, "length {l} >= {need} refused: {e}");
                    assert!(matches!(e, Error::Truncated { .. }), "length {l}: {e}");
                }
            }
        }
    }
}

#[test]
fn bit_flips_never_panic() {
    let execs = execs();
    let mut cases = 0;
    for (values, stream) in samples() {
        for bit in 0..stream.len() * 8 {
            let mut s = stream.clone();
            s[bit / 8] ^= 1 << (bit % 8);
            let _ = decode_any(&s, values.elem(), values.len(), &execs);
            cases += 1;
        }
    }
    assert!(cases > 4000, "{cases} cases");
}

#[test]
fn random_bytes_never_panic() {
    let execs = execs();
    let mut rng = Rng::new(77);
    let magic = [0x7a, 0x66, 0x70, 0x05];
    for i in 0..6000 {
        let len = (rng.next_u64() % 160) as usize;
        let mut s: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        // Most cases start with the magic (so the header parser is exercised) and have
        // a plausible type/dimension nibble.
        if i % 4 != 0 && len >= 5 {
            s[..4].copy_from_slice(&magic);
            s[4] = (s[4] & 0xf0) | [2u8, 3, 6, 7, 10, 11][(rng.next_u64() % 6) as usize];
        }
        let _ = decode_any(&s, ElemType::F32, 4096, &execs);
    }
}

#[test]
fn absurd_headers_get_typed_errors() {
    let rate8_3d = 511; // mode word: 512 bits per block
    let tol_3d = 2177 + 1074 - 10; // minexp -10
    for (h, what) in [
        (header(2, &[1 << 48], 31), "1D with 2^48 values"),
        (header(3, &[65536, 65536, 65536], rate8_3d), "3D 65536^3 fixed rate"),
        (header(2, &[65536, 65536, 65536], tol_3d), "3D 65536^3 fixed accuracy"),
        (header(2, &[1 << 24, 1 << 24], tol_3d), "2D 2^24 x 2^24"),
    ] {
        // Fixed accuracy too: at least one bit per block does not fit 12 bytes.
        let e = codec_host::inspect(&h).unwrap_err();
        assert!(matches!(e, Error::Truncated { .. }), "{what}: {e}");
        let mut small = vec![0f64; 16];
        let mut small32 = vec![0f32; 16];
        let r64 = codec_host::decompress_into(&h, &mut small, &Backend::cpu());
        let r32 = codec_host::decompress_into(&h, &mut small32, &Backend::cpu());
        for r in [r64.map(|_| ()), r32.map(|_| ())] {
            assert!(
                matches!(r, Err(Error::Truncated { .. })),
                "{what}: {r:?}"
            );
        }
    }
    // Plausible dims, but the blocks are missing.
    let h = header(2, &[100, 100], tol_3d);
    let mut out = vec![0f32; 10_000];
    assert!(matches!(codec_host::decompress_into(&h, &mut out, &Backend::cpu()), Err(Error::Truncated { .. })));
    // The length check's boundary: 625 blocks of zeros take one bit each, so 96 + 625
    // bits (91 bytes) are a valid stream of zeros, and 90 bytes are not.
    let mut s = h.clone();
    s.resize((96 + 625usize).div_ceil(8), 0);
    out.fill(1.0);
    assert_eq!(codec_host::inspect(&s).unwrap().shape, Shape::d2(100, 100));
    codec_host::decompress_into(&s, &mut out, &Backend::cpu()).unwrap();
    assert!(out.iter().all(|&v| v == 0.0));
    s.pop();
    assert_eq!(codec_host::inspect(&s).unwrap_err(), Error::Truncated { needed: 91, got: 90 });
    // Long-form modes that are not fixed rate or accuracy, or are inconsistent.
    let long = |minbits: u64, maxbits: u64, maxprec: u64, minexp: i64| {
        0xfff | (minbits - 1) << 12 | (maxbits - 1) << 27 | (maxprec - 1) << 42 | ((minexp + 16495) as u64) << 49
    };
    for (mode, want) in [
        (long(600, 500, 64, -1074), "corrupt"),
        (long(1, 16658, 128, -1074), "corrupt"),
        (long(1, 16658, 20, -1074), "unsupported"),
        (long(1, 16658, 64, -1075), "unsupported"),
        (long(1, 16658, 64, -1074), "unsupported"),
        (long(100, 200, 64, -1074), "unsupported"),
        (2048 + 10, "unsupported"),
        (2176, "unsupported"),
        (3, "unsupported"), // 4 bits per block: below the exponent's 9
    ] {
        let h = header(2, &[16], mode);
        let e = codec_host::inspect(&h).unwrap_err();
        let ok = match want {
            "corrupt" => matches!(e, Error::Corrupt(_)),
            _ => matches!(e, Error::UnsupportedHeader(_)),
        };
        assert!(ok, "mode {mode:#x}: {e}");
    }
    // A long-form fixed-rate header is fine (3D f64 at rate 64 needs one).
    let stream = Codec::zfp_rate(64.0).compress(&[1.5f64; 64], Shape::d3(4, 4, 4), &Backend::cpu()).unwrap();
    let mut out = [0f64; 64];
    codec_host::decompress_into(&stream, &mut out, &Backend::cpu()).unwrap();
    assert_eq!(out, [1.5; 64]);
}

#[test]
fn truncated_multi_slab_streams_fail_in_parallel_decodes_too() {
    // 3 x 2048 blocks of 1D (several slabs), decoded with 4 threads: the parallel path.
    let exec = Backend::with_executor(CpuExecutor::new(4).unwrap());
    let values = Values::generate(Kind::Smooth, ElemType::F32, Shape::d1(3 * 2048 * 4), &mut Rng::new(8));
    let stream = values.compress(&Codec::zfp_accuracy(1e-4), Shape::d1(values.len()), &exec).unwrap();
    let full = Values::decompress(&stream, ElemType::F32, values.len(), &exec).unwrap();
    assert!(values.max_abs_diff(&full) <= 1e-4);
    let mut rng = Rng::new(9);
    for _ in 0..40 {
        let l = 12 + (rng.next_u64() as usize) % (stream.len() - 20);
        let r = Values::decompress(&stream[..l], ElemType::F32, values.len(), &exec);
        assert!(matches!(r, Err(Error::Truncated { .. })), "length {l}: {r:?}");
    }
}
