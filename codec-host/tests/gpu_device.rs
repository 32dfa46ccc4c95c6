//! The CUDA backend on a device (a GPU, or the emulated one in CI): every entry point
//! launched, every codec on device arrays byte-identical with the CPU codec, in
//! f32/f64, 1D/2D/3D and ragged shapes, several streams in flight, corrupt streams
//! rejected, reductions and half conversions bit-exact.
//!
//! Without a device the tests print a visible skip; with `CCOLL_REQUIRE_GPU=1` they
//! fail instead, so a CI run that should have had a device cannot pass vacuously.
#![cfg(feature = "cuda")]

use codec_host::cuda::{launched_entry_points, CudaBackend, GpuElement};
use codec_host::{decompress_into, decompress_on, elementwise, Backend, Codec, CpuExecutor, ErrorBound, Error, Shape, SzxLayout, ZfpMode};
use codec_kernels::kernels::ENTRY_POINTS;
use codec_kernels::reduce::ReduceOp;

/// The CUDA backend, or `None` after a visible skip (a failure under
/// `CCOLL_REQUIRE_GPU=1`).
fn device() -> Option<Backend> {
    match Backend::cuda() {
        Ok(gpu) => {
            eprintln!("running on {}", gpu.describe());
            Some(gpu)
        }
        Err(e) => {
            assert!(std::env::var("CCOLL_REQUIRE_GPU").as_deref() != Ok("1"), "CCOLL_REQUIRE_GPU=1 but no usable CUDA device: {e}");
            // Without a device the backend must say so, not fail otherwise.
            assert!(matches!(e, Error::NoDevice(_)), "expected a device or NoDevice, got {e}");
            eprintln!("SKIPPED (no CUDA device: {e}); CCOLL_REQUIRE_GPU=1 makes this a failure");
            None
        }
    }
}

fn cpu() -> CpuExecutor {
    CpuExecutor::new(1).unwrap()
}

fn cpu_backend() -> Backend {
    Backend::with_executor(cpu())
}

fn same_bits<T: GpuElement>(a: &[T], b: &[T]) -> bool {
    use cust::memory::bytemuck::cast_slice;
    cast_slice::<T, u8>(a) == cast_slice::<T, u8>(b)
}

/// Values with smooth stretches, zero runs (SZx zero blocks), a constant run and noise;
/// `special` adds NaN, infinities and -0 (SZx keeps them, ZFP refuses them).
fn field<T: GpuElement>(n: usize, special: bool) -> Vec<T> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|i| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let noise = (s >> 40) as f64 / (1u64 << 24) as f64 - 0.5;
            let v = match (i / 300) % 4 {
                0 => (i as f64 * 0.05).sin() * 3.0,
                1 if i % 300 < 200 => 0.0,
                2 if i % 300 < 150 => 1.25,
                _ => noise * 10.0,
            };
            let v = match i % 251 {
                7 if special => f64::NAN,
                8 if special => f64::INFINITY,
                9 if special => f64::NEG_INFINITY,
                10 if special => -0.0,
                _ => v,
            };
            T::from_f64(v)
        })
        .collect()
}

/// Ragged shapes: nothing a multiple of the ZFP block's 4 or of the SZx block's 128.
fn shapes() -> [Shape; 3] {
    [Shape::d1(1003), Shape::d2(37, 19), Shape::d3(13, 9, 7)]
}

fn codecs() -> [Codec; 6] {
    [
        Codec::zfp_rate(11.0),
        Codec::zfp_accuracy(1e-3),
        Codec::szx(ErrorBound::Abs(1e-3)),
        Codec::szx(ErrorBound::Rel(1e-4)),
        Codec::Szx { bound: ErrorBound::Abs(1e-2), layout: SzxLayout::Pipelined { chunk_values: 256 } },
        Codec::Szx { bound: ErrorBound::Rel(1e-3), layout: SzxLayout::Pipelined { chunk_values: 384 } },
    ]
}

fn is_szx(codec: &Codec) -> bool {
    matches!(codec, Codec::Szx { .. })
}

/// One codec on one array: device in, device stream, device out; the stream and the
/// values equal the CPU's; the host wrappers and a re-uploaded CPU stream agree too.
fn codec_case<T: GpuElement>(b: &Backend, codec: &Codec, shape: Shape) {
    let gpu = b.cuda_backend().expect("a CUDA backend");
    let data: Vec<T> = field(shape.len(), is_szx(codec));
    let what = format!("{codec:?} {} {shape}", T::TYPE);
    let want = codec.compress(&data, shape, &cpu_backend()).unwrap();
    let mut values = vec![T::default(); data.len()];
    decompress_into(&want, &mut values, &cpu_backend()).unwrap();

    let stream = gpu.stream().unwrap();
    let d_data = gpu.upload_on(&stream, &data).unwrap();
    let pending = codec.compress_on(&d_data, shape, b, &stream).unwrap();
    let ds = pending.wait().unwrap();
    assert_eq!((ds.len(), ds.elem(), ds.shape()), (want.len(), T::TYPE, shape), "{what}");
    assert_eq!(ds.to_host().unwrap(), want, "{what}: device stream");

    let mut d_out = gpu.zeroed_on::<T>(&stream, data.len()).unwrap();
    decompress_on(&ds, &mut d_out, b, &stream).unwrap().wait().unwrap();
    let mut got = vec![T::default(); data.len()];
    gpu.download_on(&stream, &d_out, &mut got).unwrap();
    assert!(same_bits(&got, &values), "{what}: values from the device stream");

    // The CPU's stream uploaded: ZFP fixed accuracy then rebuilds its index on the device.
    let up = gpu.upload_stream(&stream, &want).unwrap();
    let mut d_out2 = gpu.zeroed_on::<T>(&stream, data.len()).unwrap();
    decompress_on(&up, &mut d_out2, b, &stream).unwrap().wait().unwrap();
    gpu.download_on(&stream, &d_out2, &mut got).unwrap();
    assert!(same_bits(&got, &values), "{what}: values from an uploaded stream");

    assert_eq!(codec.compress(&data, shape, b).unwrap(), want, "{what}: host path");
    let mut host_out = vec![T::default(); data.len() + 3];
    decompress_into(&want, &mut host_out, b).unwrap();
    assert!(same_bits(&host_out[..data.len()], &values), "{what}: host path values");

    // The bound each codec promises (fixed rate promises none).
    let finite = data.iter().map(|v| v.to_f64()).filter(|v| v.is_finite());
    let range = finite.clone().fold(f64::MIN, f64::max) - finite.fold(f64::MAX, f64::min);
    let bound = match *codec {
        Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => Some(tolerance),
        Codec::Szx { bound: ErrorBound::Abs(e), .. } => Some(e),
        Codec::Szx { bound: ErrorBound::Rel(r), .. } => Some(r * range),
        Codec::Zfp { mode: ZfpMode::FixedRate { .. } } => None,
    };
    if let Some(e) = bound {
        for (x, y) in data.iter().zip(&got) {
            let (x, y) = (x.to_f64(), y.to_f64());
            let held = if x.is_finite() { (x - y).abs() <= e } else { x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()) };
            assert!(held, "{what}: {x} -> {y} exceeds {e}");
        }
    }
}

/// Every way the reduce and half kernels are reached, bit for bit with the CPU.
fn elementwise_cases(b: &Backend) {
    let gpu = b.cuda_backend().expect("a CUDA backend");
    let exec = cpu();
    fn reduce_case<T: GpuElement>(gpu: &CudaBackend, exec: &CpuExecutor) {
        let n = 5003;
        let src: Vec<T> = field(n, true);
        for op in ReduceOp::ALL {
            let mut want: Vec<T> = field::<T>(n + 17, true)[17..].to_vec();
            let mut got = want.clone();
            elementwise::reduce(exec, op, &mut want, &src).unwrap();
            gpu.reduce(op, &mut got, &src).unwrap();
            // Bit for bit, except that which NaN an operation makes is the hardware's
            // (x86 and PTX differ in the default NaN; `ReduceOp` leaves it open).
            let bad = want.iter().zip(&got).position(|(w, g)| {
                let (w, g) = (w.to_f64(), g.to_f64());
                !(w.to_bits() == g.to_bits() || w.is_nan() && g.is_nan())
            });
            assert_eq!(bad.map(|i| (i, src[i].to_f64(), want[i].to_f64(), got[i].to_f64())), None, "{op:?} {}", T::TYPE);
        }
    }
    reduce_case::<f32>(gpu, &exec);
    reduce_case::<f64>(gpu, &exec);

    let f16s: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
    let bf16s: Vec<half::bf16> = (0..=u16::MAX).map(half::bf16::from_bits).collect();
    let (mut want, mut got) = (vec![0f32; f16s.len()], vec![0f32; f16s.len()]);
    elementwise::widen(&exec, &f16s, &mut want).unwrap();
    gpu.widen(&f16s, &mut got).unwrap();
    assert!(same_bits(&got, &want), "f16 -> f32");
    elementwise::widen(&exec, &bf16s, &mut want).unwrap();
    gpu.widen(&bf16s, &mut got).unwrap();
    assert!(same_bits(&got, &want), "bf16 -> f32");
    // Every rounding boundary region: f32 values around each half value's bits.
    let src: Vec<f32> = (0..20_000u32).map(|i| f32::from_bits(i.wrapping_mul(214_013).wrapping_add(2_531_011))).collect();
    let (mut want, mut got) = (vec![half::f16::ZERO; src.len()], vec![half::f16::ZERO; src.len()]);
    elementwise::narrow(&exec, &src, &mut want).unwrap();
    gpu.narrow(&src, &mut got).unwrap();
    assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "f32 -> f16");
    let (mut want, mut got) = (vec![half::bf16::ZERO; src.len()], vec![half::bf16::ZERO; src.len()]);
    elementwise::narrow(&exec, &src, &mut want).unwrap();
    gpu.narrow(&src, &mut got).unwrap();
    assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "f32 -> bf16");
}

/// Several compressions in flight on several streams before any is waited for.
fn multi_stream_case(b: &Backend) {
    let gpu = b.cuda_backend().expect("a CUDA backend");
    let arrays: Vec<(Vec<f64>, Shape)> = shapes().into_iter().map(|s| (field(s.len(), false), s)).collect();
    for codec in [Codec::zfp_accuracy(1e-5), Codec::szx(ErrorBound::Abs(1e-4))] {
        let streams: Vec<_> = arrays.iter().map(|_| gpu.stream().unwrap()).collect();
        let uploads: Vec<_> = arrays.iter().zip(&streams).map(|((a, _), s)| gpu.upload_on(s, a).unwrap()).collect();
        let pending: Vec<_> =
            arrays.iter().zip(&streams).zip(&uploads).map(|(((_, shape), s), d)| codec.compress_on(d, *shape, b, s).unwrap()).collect();
        while !pending.iter().all(|p| p.is_ready().unwrap()) {
            std::thread::yield_now();
        }
        for ((a, shape), p) in arrays.iter().zip(pending) {
            assert_eq!(p.wait_host().unwrap(), codec.compress(a, *shape, &cpu_backend()).unwrap(), "{codec:?} {shape}");
        }
    }
}

/// Corrupt streams: wherever the CPU decoder refuses one, so does the device, and
/// non-finite input to ZFP is reported at the same index.
fn corrupt_cases(b: &Backend) {
    let data: Vec<f32> = field(3000, false);
    let mut refused = 0;
    for codec in codecs() {
        let good = codec.compress(&data, Shape::d1(data.len()), &cpu_backend()).unwrap();
        let mut variants = Vec::new();
        for cut in [good.len() - 1, good.len() - 9, good.len() / 2, 70] {
            variants.push(good[..cut].to_vec());
        }
        if is_szx(&codec) {
            // State bytes of the first chunk's blocks set to an unused code.
            let table_end = 64 + 4 * codec_host::szx::SzxHeader::read(&good).unwrap().chunk_count;
            let mut bad = good.clone();
            bad[table_end..table_end + 3].fill(0xff);
            variants.push(bad);
        }
        for bad in variants {
            let mut out = vec![0f32; data.len()];
            let cpu_says = decompress_into(&bad, &mut out, &cpu_backend());
            let gpu_says = decompress_into(&bad, &mut out, b);
            if cpu_says.is_err() {
                refused += 1;
                assert!(gpu_says.is_err(), "{codec:?}: the CPU refuses a corrupt stream ({cpu_says:?}), the device decoded it");
            }
        }
    }
    assert!(refused >= 12, "only {refused} corrupt variants were refused by the CPU");
    let mut bad = data.clone();
    bad[1234] = f32::NAN;
    for codec in &codecs()[..2] {
        let d = codec.compress(&bad, Shape::d1(bad.len()), b);
        assert_eq!(d, Err(Error::NonFinite { index: 1234 }), "{codec:?}");
    }
    // A finite value zfp would decode as infinity is refused as on the CPU.
    let mut big = data.clone();
    big[777] = 2f32.powi(126);
    for codec in &codecs()[..2] {
        let want = codec.compress(&big, Shape::d1(big.len()), &cpu_backend());
        assert!(matches!(want, Err(Error::NearOverflow { index: 777, .. })), "{codec:?}: {want:?}");
        assert_eq!(codec.compress(&big, Shape::d1(big.len()), b), want, "{codec:?}");
    }
}

#[test]
fn every_entry_point_and_codec_agrees_with_the_cpu() {
    let Some(gpu) = device() else { return };
    let t = std::time::Instant::now();
    elementwise_cases(&gpu);
    for codec in codecs() {
        for shape in shapes() {
            codec_case::<f32>(&gpu, &codec, shape);
            codec_case::<f64>(&gpu, &codec, shape);
        }
    }
    multi_stream_case(&gpu);
    corrupt_cases(&gpu);
    let launched = launched_entry_points();
    let missing: Vec<_> = ENTRY_POINTS.iter().filter(|n| !launched.contains(n)).collect();
    eprintln!("launched {} distinct entry points of {} in {:.1?}", launched.len(), ENTRY_POINTS.len(), t.elapsed());
    assert_eq!(missing, Vec::<&&str>::new(), "entry points never launched");
    assert_eq!(launched.len(), ENTRY_POINTS.len());
}

/// The device-array calls refuse what the CPU refuses, with the same typed errors.
#[test]
fn device_arrays_get_typed_errors() {
    let Some(b) = device() else { return };
    let gpu = b.cuda_backend().expect("a CUDA backend");
    let stream = gpu.stream().unwrap();
    let data: Vec<f64> = field(100, false);
    let d = gpu.upload_on(&stream, &data).unwrap();
    for codec in codecs() {
        assert!(matches!(codec.compress_on(&d, Shape::d2(10, 11), &b, &stream), Err(Error::BadDims(_))), "{codec:?}");
    }
    let s = Codec::szx(ErrorBound::Abs(0.1)).compress_on(&d, Shape::d1(100), &b, &stream).unwrap().wait().unwrap();
    let mut small = gpu.zeroed_on::<f64>(&stream, 99).unwrap();
    assert!(matches!(decompress_on(&s, &mut small, &b, &stream), Err(Error::BufferTooSmall { needed: 100, got: 99 })));
    let mut wrong = gpu.zeroed_on::<f32>(&stream, 100).unwrap();
    assert!(matches!(decompress_on(&s, &mut wrong, &b, &stream), Err(Error::TypeMismatch { .. })));
}
