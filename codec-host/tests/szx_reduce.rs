//! Compressed-domain reduction of SZx streams (`codec_host::szx::reduce`): the reduced
//! stream decodes to the reduction of the decoded operands (exactly where no block was
//! coded again, else within the tolerance), within its stated bound of the exact
//! reduction of the original arrays; mismatched or corrupt streams are typed errors.

mod szx_common;

use codec_host::elementwise::{self, ReduceOp};
use codec_host::szx::{self, pipelined, reduce, ErrorBound, SzxOptions};
use codec_host::{Backend, BackendElem, Codec, CpuExecutor, Error, Shape};
use szx_common::{as_f32, as_f64, check_all, data, Rng, KINDS};

const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

fn compress<T: BackendElem>(x: &[T], e: f64, opts: &SzxOptions, exec: &CpuExecutor) -> Vec<u8> {
    pipelined::Encoder::new(x, Shape::d1(x.len()), ErrorBound::Abs(e), opts, exec).and_then(|e| e.into_vec(exec)).unwrap()
}

/// `op` over the decoded operands, as an uncompressed reduction computes it.
fn reference<T: BackendElem>(op: ReduceOp, a: &[u8], b: &[u8], exec: &CpuExecutor) -> Vec<T> {
    let (mut acc, _) = szx::decompress::<T>(a).unwrap();
    let (src, _) = szx::decompress::<T>(b).unwrap();
    elementwise::reduce(exec, op, &mut acc, &src).unwrap();
    acc
}

/// Reduces the streams of `x` and `y` (bound `e`, layout `opts`) and checks the result.
/// Returns how its blocks were made.
fn check_pair<T: BackendElem>(op: ReduceOp, x: &[T], y: &[T], e: f64, opts: &SzxOptions, eps: f64) -> reduce::ReduceSummary {
    let exec = CpuExecutor::new(1).unwrap();
    let (a, b) = (compress(x, e, opts, &exec), compress(y, e, opts, &exec));
    let reduced = reduce::reduce::<T>(op, &a, &b, e).unwrap();
    let (back, header) = szx::decompress::<T>(&reduced.stream).unwrap();
    let want = reference::<T>(op, &a, &b, &exec);
    let s = reduced.summary;
    assert_eq!(s.copied + s.exact + s.requantized, x.len().div_ceil(opts.block_size));
    if s.requantized == 0 {
        for (i, (g, w)) in back.iter().zip(&want).enumerate() {
            let (g, w) = (g.to_f64(), w.to_f64());
            assert!(g == w || (g.is_nan() && w.is_nan()), "{op:?} value {i}: {g} where the decoded reduction is {w}");
        }
    } else {
        check_all(&want, &back, e).unwrap_or_else(|m| panic!("{op:?}: {m}"));
    }
    // The stated bound, against the exact reduction of the original values.
    let inputs = if op == ReduceOp::Sum { 2.0 * e } else { e };
    let stated = inputs + if s.requantized > 0 { e } else { 0.0 };
    assert!(header.abs_error >= stated && header.abs_error <= stated * (1.0 + 1e-12), "{} for {stated}", header.abs_error);
    for (i, ((&x, &y), &r)) in x.iter().zip(y).zip(&back).enumerate() {
        let (x, y, r) = (x.to_f64(), y.to_f64(), r.to_f64());
        let exact = match op {
            ReduceOp::Sum => x + y,
            ReduceOp::Min => x.min(y),
            _ => x.max(y),
        };
        if exact.is_finite() && r.is_finite() {
            // The reduction of decoded values rounds once, by half a unit of the result.
            let slack = eps * r.abs().max(exact.abs());
            assert!((r - exact).abs() <= header.abs_error + slack, "{op:?} value {i}: {r} for {exact}");
        }
    }
    s
}

#[test]
fn every_kind_of_field_reduces_within_its_bound() {
    let opts = [SzxOptions { block_size: 128, chunk_values: 1280 }, SzxOptions { block_size: 37, chunk_values: 37 * 20 }];
    let mut seed = 1u64;
    for ka in 0..KINDS {
        for kb in [ka, (ka + 3) % KINDS] {
            for opt in &opts {
                for rel in [0.0, 1e-3, 1e-1] {
                    seed += 1;
                    let n = 3000 + (seed as usize * 7) % 500;
                    let (x, y) = (data(ka, n, seed, as_f32), data(kb, n, seed + 1000, as_f32));
                    let range = x.iter().chain(&y).filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
                    let e = (rel * range).min(1e30);
                    let (xf, yf): (Vec<f32>, Vec<f32>) = (x.iter().map(|&v| v as f32).collect(), y.iter().map(|&v| v as f32).collect());
                    let (xd, yd) = (data(ka, n, seed, as_f64), data(kb, n, seed + 1000, as_f64));
                    for op in OPS {
                        check_pair(op, &xf, &yf, e, opt, f32::EPSILON as f64);
                        check_pair(op, &xd, &yd, e, opt, f64::EPSILON);
                    }
                }
            }
        }
    }
}

/// Blocks holding exact zeros are coded in fixed point, on the grid of the bound: their
/// sums, minima and maxima are coded again without any rounding.
#[test]
fn fixed_point_fields_reduce_without_requantization() {
    let opts = SzxOptions::default();
    for seed in 0..6 {
        let x: Vec<f32> = data(6, 10_000, seed, as_f32).into_iter().map(|v| v as f32).collect();
        let y: Vec<f32> = data(6, 10_000, seed + 99, as_f32).into_iter().map(|v| v as f32).collect();
        let e = 1e-3 * x.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
        for op in OPS {
            let s = check_pair(op, &x, &y, e, &opts, f32::EPSILON as f64);
            assert_eq!(s.requantized, 0, "{op:?} {s:?}");
        }
        // A sum with a zero field copies the other operand's blocks.
        let zeros = vec![0f32; x.len()];
        let s = check_pair(ReduceOp::Sum, &zeros, &y, e, &opts, f32::EPSILON as f64);
        assert_eq!(s.copied, x.len().div_ceil(opts.block_size));
    }
}

/// An RTM-like wavefield (exact zeros where no wave has arrived) against another shot:
/// nearly every block reduces in the compressed domain.
#[test]
fn rtm_wavefields_reduce_mostly_in_the_compressed_domain() {
    let dims = [48, 48, 48];
    let (x, y) = (datasets::seismic::rtm_wavefield(dims, 1), datasets::seismic::rtm_wavefield(dims, 2));
    let (lo, hi) = x.iter().fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let e = 1e-3 * (hi - lo) as f64;
    let s = check_pair(ReduceOp::Sum, &x, &y, e, &SzxOptions::default(), f32::EPSILON as f64);
    let blocks = (s.copied + s.exact + s.requantized) as f64;
    assert!(s.requantized as f64 <= 0.05 * blocks, "{s:?}");
}

#[test]
fn mismatched_operands_are_rejected() {
    let exec = CpuExecutor::new(1).unwrap();
    let x: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.1).sin()).collect();
    let opts = SzxOptions::default();
    let a = compress(&x, 1e-3, &opts, &exec);
    let shorter = compress(&x[..999], 1e-3, &opts, &exec);
    let blocks64 = compress(&x, 1e-3, &SzxOptions { block_size: 64, chunk_values: 5120 }, &exec);
    let plain = Codec::szx(ErrorBound::Abs(1e-3)).compress(&x, Shape::d2(100, 10), &Backend::cpu()).unwrap();
    let wide = Codec::szx(ErrorBound::Abs(1e-3)).compress(&x.iter().map(|&v| v as f64).collect::<Vec<_>>(), Shape::d1(1000), &Backend::cpu()).unwrap();
    for other in [&shorter, &blocks64, &plain] {
        assert!(matches!(reduce::reduce::<f32>(ReduceOp::Sum, &a, other, 1e-3), Err(Error::BadDims(_))));
    }
    assert!(matches!(reduce::reduce::<f32>(ReduceOp::Sum, &a, &wide, 1e-3), Err(Error::TypeMismatch { .. })));
    assert!(reduce::reduce::<f64>(ReduceOp::Sum, &wide, &wide, 1e-3).is_ok());
    assert!(matches!(reduce::reduce::<f32>(ReduceOp::Prod, &a, &a, 1e-3), Err(Error::ParamOutOfRange(_))));
    for tol in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(reduce::reduce::<f32>(ReduceOp::Sum, &a, &a, tol), Err(Error::ParamOutOfRange(_))));
    }
}

/// The reducer accepts exactly the streams the decoder accepts, and never panics.
#[test]
fn corrupt_operands_are_errors_exactly_when_they_do_not_decode() {
    let exec = CpuExecutor::new(1).unwrap();
    let opts = SzxOptions { block_size: 32, chunk_values: 320 };
    let x: Vec<f32> = data(9, 1500, 5, as_f32).into_iter().map(|v| v as f32).collect();
    let y: Vec<f32> = data(6, 1500, 6, as_f32).into_iter().map(|v| v as f32).collect();
    let (a, b) = (compress(&x, 1e-2, &opts, &exec), compress(&y, 1e-2, &opts, &exec));
    let mut r = Rng::new(77);
    let mut rejected = 0;
    for case in 0..3000 {
        let mut m = a.clone();
        match case % 3 {
            0 => m.truncate(r.below(a.len() as u64) as usize),
            1 => {
                let at = szx::HEADER_LEN + r.below((a.len() - szx::HEADER_LEN) as u64) as usize;
                m[at] ^= 1 << r.below(8);
            }
            _ => {
                let at = r.below(a.len() as u64) as usize;
                m[at] = r.next_u64() as u8;
            }
        }
        let decodes = szx::decompress::<f32>(&m).is_ok();
        for (p, q) in [(&m, &b), (&b, &m)] {
            match reduce::reduce::<f32>(ReduceOp::Sum, p, q, 1e-2) {
                Ok(red) => {
                    assert!(decodes, "case {case}: a stream the decoder rejects was reduced");
                    szx::decompress::<f32>(&red.stream).unwrap();
                }
                Err(_) => {
                    assert!(!decodes, "case {case}: a stream that decodes was rejected");
                    rejected += 1;
                }
            }
        }
    }
    assert!(rejected > 1000, "{rejected}");
}
