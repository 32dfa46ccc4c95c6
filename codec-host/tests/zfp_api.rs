//! The zfp codec's contract apart from byte identity: typed errors for bad input, the
//! fixed-accuracy error bound, and identical results for any thread count.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use codec_host::zfp::{params_for, Header};
use codec_host::{Backend, Codec, CpuExecutor, ElemType, Error, Shape, ZfpMode};
use codec_kernels::bitstream::BitWriter;
use codec_kernels::grid::LaunchConfig;
use codec_kernels::zfp::fixed_rate::encode_fixed_rate_body;
use codec_kernels::zfp::{Field, FixedRate, D3};
use common::{Kind, Rng, Values};

const RATE: Codec = Codec::zfp_rate(8.0);
const TOL: Codec = Codec::zfp_accuracy(1e-3);

#[test]
fn bad_input_gets_typed_errors() {
    let data = vec![1.0f32; 64];
    for codec in [RATE, TOL] {
        assert_eq!(codec.compress(&data, Shape::d3(4, 0, 16), &Backend::cpu()), Err(Error::ZeroSize));
        assert_eq!(codec.compress::<f32>(&[], Shape::d1(0), &Backend::cpu()), Err(Error::ZeroSize));
        assert!(matches!(codec.compress(&data, Shape::d2(8, 9), &Backend::cpu()), Err(Error::BadDims(_))));
        assert!(matches!(codec.compress(&data[..63], Shape::d1(64), &Backend::cpu()), Err(Error::BadDims(_))));
        let mut bad = data.clone();
        bad[37] = f32::NAN;
        assert_eq!(codec.compress(&bad, Shape::d3(4, 4, 4), &Backend::cpu()), Err(Error::NonFinite { index: 37 }));
        bad[37] = 1.0;
        bad[63] = f32::NEG_INFINITY;
        assert_eq!(codec.compress(&bad, Shape::d1(64), &Backend::cpu()), Err(Error::NonFinite { index: 63 }));
    }
    // A 3D extent above 65536 does not fit zfp's header.
    let big = vec![0f64; 65537];
    assert!(matches!(RATE.compress(&big, Shape::d3(65537, 1, 1), &Backend::cpu()), Err(Error::BadDims(_))));
    for codec in [
        Codec::zfp_rate(0.0),
        Codec::zfp_rate(f64::NAN),
        Codec::zfp_rate(1e6),
        Codec::zfp_accuracy(0.0),
        Codec::zfp_accuracy(-1.0),
        Codec::zfp_accuracy(f64::INFINITY),
    ] {
        assert!(matches!(codec.compress(&data, Shape::d1(64), &Backend::cpu()), Err(Error::ParamOutOfRange(_))), "{codec:?}");
    }
}

#[test]
fn decoding_checks_type_and_room() {
    let data: Vec<f64> = (0..100).map(|i| i as f64 * 0.5).collect();
    for codec in [RATE, TOL] {
        let stream = codec.compress(&data, Shape::d2(10, 10), &Backend::cpu()).unwrap();
        let mut f32s = vec![0f32; 100];
        assert_eq!(
            codec_host::decompress_into(&stream, &mut f32s, &Backend::cpu()),
            Err(Error::TypeMismatch { stream: ElemType::F64, requested: ElemType::F32 })
        );
        let mut short = vec![0f64; 99];
        assert_eq!(codec_host::decompress_into(&stream, &mut short, &Backend::cpu()), Err(Error::BufferTooSmall { needed: 100, got: 99 }));
        let mut long = vec![7f64; 101];
        let info = codec_host::decompress_into(&stream, &mut long, &Backend::cpu()).unwrap();
        assert_eq!(info.shape, Shape::d2(10, 10));
        assert_eq!(info.stream_bytes, stream.len());
        assert_eq!(long[100], 7.0, "values past the array stay untouched");
        assert_eq!(codec_host::inspect(&stream).unwrap().elem, ElemType::F64);
    }
}

#[test]
fn inspect_reports_the_effective_parameters() {
    let data = vec![0.5f32; 1000];
    let info = codec_host::inspect(&Codec::zfp_rate(1.0).compress(&data, Shape::d1(1000), &Backend::cpu()).unwrap()).unwrap();
    // 4 bits per block raised to 1 + 8 bits.
    assert_eq!(info.codec, Codec::zfp_rate(2.25));
    let info = codec_host::inspect(&TOL.compress(&data, Shape::d1(1000), &Backend::cpu()).unwrap()).unwrap();
    assert_eq!(info.codec, Codec::zfp_accuracy(2f64.powi(-10)));
    assert!(info.ratio() > 2.0, "ratio {}", info.ratio());
}

#[test]
fn fixed_accuracy_error_stays_within_tolerance() {
    let mut rng = Rng::new(99);
    let exec = Backend::with_executor(CpuExecutor::new(1).unwrap());
    for elem in [ElemType::F32, ElemType::F64] {
        let tolerances: &[f64] = if elem == ElemType::F32 { &[1e-1, 1e-2, 1e-3, 1e-4, 1e-5] } else { &[1e-1, 1e-3, 1e-5, 1e-7, 1e-9] };
        for dims in [&[1000][..], &[37, 29][..], &[13, 11, 9][..]] {
            let shape = Shape::from_dims(dims).unwrap();
            for kind in [Kind::Smooth, Kind::Noisy, Kind::Constant] {
                let values = Values::generate(kind, elem, shape, &mut rng);
                for &tolerance in tolerances {
                    let codec = Codec::zfp_accuracy(tolerance);
                    let stream = values.compress(&codec, shape, &exec).unwrap();
                    let back = Values::decompress(&stream, elem, values.len(), &exec).unwrap();
                    let err = values.max_abs_diff(&back);
                    assert!(err <= tolerance, "{elem} {shape} {kind:?} tol {tolerance}: error {err}");
                }
            }
        }
    }
}

#[test]
fn fixed_accuracy_is_not_strict_below_a_blocks_precision() {
    // zfp codes a block as integers relative to its largest value (30 bits for f32), so
    // small values next to large ones keep only the large ones' absolute precision: a
    // tolerance finer than that is not met. Values in [1, 2) and in [1e-4, 2e-4) (the
    // case of issue 12), alternating: f32 itself holds the small ones to 7.3e-12.
    let mut rng = Rng::new(12);
    let x: Vec<f32> = (0..4096).map(|i| (1.0 + rng.unit() as f32) * if i % 2 == 0 { 1.0 } else { 1e-4 }).collect();
    let shape = Shape::d3(16, 16, 16);
    let small_values_error = |tolerance: f64| {
        let stream = Codec::zfp_accuracy(tolerance).compress(&x, shape, &Backend::cpu()).unwrap();
        let mut back = vec![0f32; x.len()];
        codec_host::decompress_into(&stream, &mut back, &Backend::cpu()).unwrap();
        let small = x.iter().zip(&back).skip(1).step_by(2);
        small.map(|(a, b)| (*a as f64 - *b as f64).abs()).fold(0.0, f64::max)
    };
    // Measured: 3.540e-8 at both tolerances (the blocks' precision floor).
    for tolerance in [1e-8, 1e-9] {
        let e = small_values_error(tolerance);
        assert!(e > 3.0 * tolerance && e < 4e-8, "tolerance {tolerance:e}: error {e:e}");
    }
    // Coarser tolerances hold (2.331e-7 at 1e-6).
    assert!(small_values_error(1e-6) <= 1e-6);
    assert!(small_values_error(1e-7) <= 1e-7);
}

#[test]
fn thread_count_does_not_change_streams_or_values() {
    let mut rng = Rng::new(5);
    let one = Backend::with_executor(CpuExecutor::new(1).unwrap());
    let three = Backend::with_executor(CpuExecutor::new(3).unwrap());
    for elem in [ElemType::F32, ElemType::F64] {
        for dims in [&[100_003][..], &[301, 97][..], &[41, 37, 23][..]] {
            let shape = Shape::from_dims(dims).unwrap();
            let values = Values::generate(Kind::Smooth, elem, shape, &mut rng);
            for codec in [RATE, Codec::zfp_rate(5.5), TOL, Codec::zfp_accuracy(1e-6)] {
                let a = values.compress(&codec, shape, &one).unwrap();
                let b = values.compress(&codec, shape, &three).unwrap();
                assert!(a == b, "{elem} {shape} {codec}: streams differ between 1 and 3 threads");
                let da = Values::decompress(&a, elem, values.len(), &one).unwrap();
                let db = Values::decompress(&a, elem, values.len(), &three).unwrap();
                assert_eq!(da.to_bytes(), db.to_bytes(), "{elem} {shape} {codec}: values differ");
            }
        }
    }
}

#[test]
fn the_one_block_per_thread_kernel_writes_what_compress_writes() {
    // The cuZFP-style body (one grid thread per block, edge words OR-ed into a shared
    // zeroed buffer), run by the CPU executor as a GPU would run it.
    let shape = Shape::d3(29, 17, 11);
    let data: Vec<f32> = (0..shape.len()).map(|i| ((i as f32) * 0.013).sin() * 3.0).collect();
    for rate in [3.0, 8.0, 11.5] {
        let codec = Codec::zfp_rate(rate);
        let header = Header { elem: ElemType::F32, shape, params: params_for(ZfpMode::FixedRate { rate }, ElemType::F32, 3).unwrap() };
        let layout = FixedRate { field: Field::new([29, 17, 11]), params: header.params, header_bits: header.bits() };
        let words: Vec<AtomicU64> = (0..layout.total_bits().div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        let mut w = BitWriter::new(&words[..], 0);
        header.write(&mut w).unwrap();
        w.flush();
        let exec = CpuExecutor::new(3).unwrap();
        for block_dim in [1, 32, 128] {
            let cfg = LaunchConfig::for_items(layout.field.block_count(), block_dim);
            exec.launch(cfg, |g| assert!(encode_fixed_rate_body::<f32, D3>(g, &data, &layout, &words)));
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()).collect();
        // Launched three times: OR-ing the same bits again changes nothing.
        assert_eq!(bytes, codec.compress(&data, shape, &Backend::cpu()).unwrap(), "rate {rate}");
    }
}
