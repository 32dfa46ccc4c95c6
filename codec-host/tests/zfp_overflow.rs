//! Values near the largest float: zfp (the library as well as this codec) can decode
//! them as infinities, so compression refuses every value at or above
//! `zfp::overflow_limit` with `Error::NearOverflow`, and everything below it decodes to
//! finite values in every mode.

mod common;

use std::fs;

use codec_host::zfp::overflow_limit;
use codec_host::{Backend, Codec, ElemType, Error, Shape};
use common::{run_zfp, Rng};

/// Rates and tolerances from the coarsest (where a truncated coefficient overshoots the
/// most) to fine ones.
fn codecs() -> Vec<Codec> {
    let rates = [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0].map(Codec::zfp_rate);
    let tols = [1e37, 1e35, 1e30, 1e10, 1e-3].map(Codec::zfp_accuracy);
    rates.into_iter().chain(tols).collect()
}

#[test]
fn the_limit_is_2_to_the_126_for_f32_and_2_to_the_1022_for_f64() {
    assert_eq!(overflow_limit(ElemType::F32), f32::from_bits(0x7e80_0000) as f64);
    assert_eq!(overflow_limit(ElemType::F64), f64::from_bits(0x7fd0_0000_0000_0000));
}

#[test]
fn values_at_or_above_the_limit_are_refused_with_their_index() {
    let limit = f32::from_bits(0x7e80_0000); // 2^126
    for codec in [Codec::zfp_rate(8.0), Codec::zfp_accuracy(1e-3)] {
        for big in [limit, -limit, 1.2e38, f32::MAX, f32::MIN] {
            let mut x = vec![1.0f32; 64];
            x[21] = big;
            x[40] = f32::MAX;
            let e = codec.compress(&x, Shape::d2(8, 8), &Backend::cpu()).unwrap_err();
            assert_eq!(e, Error::NearOverflow { index: 21, value: big as f64, limit: limit as f64 }, "{codec} {big:e}");
        }
        // The first offending value decides the error.
        let mut x = vec![1.0f32; 64];
        x[3] = f32::NAN;
        x[5] = f32::MAX;
        assert_eq!(codec.compress(&x, Shape::d1(64), &Backend::cpu()), Err(Error::NonFinite { index: 3 }));
        x.swap(3, 5);
        assert!(matches!(codec.compress(&x, Shape::d1(64), &Backend::cpu()), Err(Error::NearOverflow { index: 3, .. })));
        let limit64 = f64::from_bits(0x7fd0_0000_0000_0000); // 2^1022
        let mut x = vec![1.0f64; 16];
        x[15] = -limit64;
        assert!(matches!(codec.compress(&x, Shape::d1(16), &Backend::cpu()), Err(Error::NearOverflow { index: 15, .. })));
    }
}

#[test]
fn values_just_below_the_limit_decode_finite_in_every_mode() {
    let below = f32::from_bits(0x7e7f_ffff); // the largest f32 below 2^126
    let below64 = f64::from_bits(0x7fcf_ffff_ffff_ffff);
    let mut rng = Rng::new(126);
    for codec in codecs() {
        for dims in [Shape::d1(4), Shape::d2(4, 4), Shape::d3(4, 4, 4)] {
            let n = dims.len();
            // Constant blocks of either sign, alternating signs, and random magnitudes
            // and signs up to the limit.
            let mut cases: Vec<Vec<f32>> = vec![vec![below; n], vec![-below; n]];
            cases.push((0..n).map(|i| if i % 2 == 0 { below } else { -below }).collect());
            for _ in 0..20 {
                cases.push((0..n).map(|_| (rng.unit() * 2.0 - 1.0) as f32 * below).collect());
            }
            for x in cases {
                let stream = codec.compress(&x, dims, &Backend::cpu()).unwrap();
                let mut back = vec![0f32; n];
                codec_host::decompress_into(&stream, &mut back, &Backend::cpu()).unwrap();
                assert!(back.iter().all(|v| v.is_finite()), "{codec} {dims}: {x:?} -> {back:?}");
            }
            let x64: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { below64 } else { -below64 }).collect();
            let stream = codec.compress(&x64, dims, &Backend::cpu()).unwrap();
            let mut back = vec![0f64; n];
            codec_host::decompress_into(&stream, &mut back, &Backend::cpu()).unwrap();
            assert!(back.iter().all(|v| v.is_finite()), "{codec} {dims}: f64 {back:?}");
        }
    }
}

#[test]
fn the_zfp_library_decodes_values_above_the_limit_as_infinity() {
    // Why the limit exists: zfp 1.0's own tool turns four values of -1.2e38 (block
    // exponent 127) at rate 3 into -inf, and so does this decoder on its stream.
    let dir = tempfile::tempdir().unwrap();
    let [raw, zfp, out] = ["in.raw", "in.zfp", "out.raw"].map(|n| dir.path().join(n).to_str().unwrap().to_string());
    fs::write(&raw, [-1.2e38f32; 4].map(f32::to_le_bytes).concat()).unwrap();
    run_zfp(&["-f", "-1", "4", "-r", "3", "-h", "-i", &raw, "-z", &zfp, "-o", &out]);
    let library: Vec<f32> = fs::read(&out).unwrap().chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(library, [f32::NEG_INFINITY; 4]);
    let mut ours = [0f32; 4];
    codec_host::decompress_into(&fs::read(&zfp).unwrap(), &mut ours, &Backend::cpu()).unwrap();
    assert_eq!(ours, [f32::NEG_INFINITY; 4]);
    // This codec refuses to write such a stream.
    let e = Codec::zfp_rate(3.0).compress(&[-1.2e38f32; 4], Shape::d1(4), &Backend::cpu()).unwrap_err();
    assert!(matches!(e, Error::NearOverflow { index: 0, .. }));
}
