//! ZFP throughput: ours (one thread and all threads) side by side with the zfp C library
//! (Debian's libzfp, serial, through FFI declared here) and the `zfp-rs` crate, on the
//! smooth3d field (256^3 f32, 64 MiB) coded as 3D and as 1D.
//!
//! `cargo bench -p codec-host --bench zfp_throughput` prints the table; set
//! `ZFP_BENCH_QUICK=1` (or pass `--quick`) for a 64^3 smoke run. MB/s are 10^6 bytes of
//! uncompressed data per second, the best of several repetitions, which are interleaved
//! across the implementations. Single-thread figures use the calling thread's CPU time,
//! so that other load on a shared machine does not count against whoever ran then;
//! all-thread figures and the all/1 ratio use wall time. Every stream is checked
//! against the C library's (padded to 64-bit words) before anything is timed.

use std::time::{Duration, Instant};

use codec_host::{Backend, Codec, CpuExecutor, Shape};

mod support;
use support::{c_zfp, thread_cpu_time};

/// The `zfp-rs` crate, serial.
mod zfp_rs_ref {
    use zfp_rs::{ZfpBitStream, ZfpConfig, ZfpDimensionality, ZfpField, ZfpFieldMut, ZfpHeaderMask, ZfpScalarType, ZfpStreamAlignment};

    fn dimensionality(dims: &[usize]) -> ZfpDimensionality {
        if dims.len() == 1 {
            ZfpDimensionality::D1
        } else {
            ZfpDimensionality::D3
        }
    }

    pub fn config(dims: &[usize], rate: Option<f64>, tol: Option<f64>) -> ZfpConfig {
        match (rate, tol) {
            (Some(r), _) => ZfpConfig::fixed_rate(r, ZfpScalarType::F32, dimensionality(dims), ZfpStreamAlignment::Unaligned).unwrap(),
            (_, Some(t)) => ZfpConfig::fixed_accuracy(t),
            _ => unreachable!(),
        }
    }

    pub fn compress(data: &[f32], dims: &[usize], config: &ZfpConfig) -> Vec<u8> {
        let field = match *dims {
            [nx] => ZfpField::new(data, [nx]),
            [nx, ny, nz] => ZfpField::new(data, [nx, ny, nz]),
            _ => unreachable!(),
        }
        .unwrap();
        let cap = config.maximum_size(ZfpScalarType::F32, field.dims()).unwrap();
        let mut bs = ZfpBitStream::new(cap).unwrap();
        bs.write_header(config, &field.metadata(), ZfpHeaderMask::FULL).unwrap();
        bs.compress(config, &field).unwrap();
        bs.into_bytes().unwrap()
    }

    pub fn decompress(stream: &[u8], out: &mut [f32], dims: &[usize]) {
        let mut bs = ZfpBitStream::from_bytes(stream).unwrap();
        let header = bs.read_header(ZfpHeaderMask::FULL).unwrap();
        let config = header.config.unwrap();
        let mut field = match *dims {
            [nx] => ZfpFieldMut::new(out, [nx]),
            [nx, ny, nz] => ZfpFieldMut::new(out, [nx, ny, nz]),
            _ => unreachable!(),
        }
        .unwrap();
        bs.decompress(&config, &mut field).unwrap();
    }
}

/// Best (CPU, wall) times seen for one implementation and operation.
#[derive(Clone, Copy)]
struct Best {
    cpu: Duration,
    wall: Duration,
}

impl Best {
    const NONE: Best = Best { cpu: Duration::MAX, wall: Duration::MAX };

    /// Runs `f` once and keeps the better times.
    fn run<R>(&mut self, f: impl FnOnce() -> R) {
        let (c0, w0) = (thread_cpu_time(), Instant::now());
        std::hint::black_box(f());
        let (c, w) = (thread_cpu_time() - c0, w0.elapsed());
        self.cpu = self.cpu.min(c);
        self.wall = self.wall.min(w);
    }
}

fn mbs(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e6
}

fn main() {
    let quick = std::env::var_os("ZFP_BENCH_QUICK").is_some() || std::env::args().any(|a| a == "--quick");
    let (n, reps) = if quick { (64, 1) } else { (256, 5) };
    let data = if quick { datasets::smooth3d_field(n, 1e-3, datasets::generate::DEFAULT_SEED) } else { datasets::smooth3d() };
    let bytes = data.len() * 4;
    let one = Backend::with_executor(CpuExecutor::new(1).unwrap());
    let all = CpuExecutor::new(0).unwrap();
    let threads = all.threads();
    let all = Backend::with_executor(all);
    println!(
        "smooth3d {n}^3 f32 ({:.1} MiB, datasets::smooth3d); ours: 1 thread and {} threads; C: Debian libzfp 1.0 serial; \
         zfp-rs 1.0.1 serial; best of {reps} interleaved runs; MB/s of uncompressed data (1T columns per thread-CPU second, \
         {}T and {}T/1T by wall clock)",
        bytes as f64 / (1 << 20) as f64,
        threads,
        threads,
        threads
    );
    println!(
        "| data | mode | op | ours 1T | ours {t}T | C lib | zfp-rs | ours1T/C | ours1T/zfp-rs | {t}T/1T | ratio | max abs err |",
        t = threads
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let modes: [(&str, Option<f64>, Option<f64>); 6] = [
        ("rate 4", Some(4.0), None),
        ("rate 8", Some(8.0), None),
        ("rate 16", Some(16.0), None),
        ("tol 1e-2", None, Some(1e-2)),
        ("tol 1e-3", None, Some(1e-3)),
        ("tol 1e-4", None, Some(1e-4)),
    ];
    for (label, dims) in [("3D", vec![n, n, n]), ("1D", vec![n * n * n])] {
        let shape = Shape::from_dims(&dims).unwrap();
        for &(mode, rate, tol) in &modes {
            let codec = match (rate, tol) {
                (Some(rate), _) => Codec::zfp_rate(rate),
                (_, Some(tolerance)) => Codec::zfp_accuracy(tolerance),
                _ => unreachable!(),
            };
            let rs_config = zfp_rs_ref::config(&dims, rate, tol);
            // Correctness first: all three produce the same stream.
            let ours = codec.compress(&data, shape, &one).unwrap();
            let c = c_zfp::compress(&data, &dims, rate, tol);
            assert!(ours.len() == c.len().div_ceil(8) * 8 && ours[..c.len()] == c[..], "{label} {mode}: stream differs from libzfp");
            let rs = zfp_rs_ref::compress(&data, &dims, &rs_config);
            let rs_note = if rs[..] == ours[..] { "" } else { " (zfp-rs stream differs)" };
            let mut out = vec![0f32; data.len()];
            codec_host::decompress_into(&ours, &mut out, &one).unwrap();
            let err = datasets::max_abs_error(&data, &out);

            // [compress, decompress] x [ours 1T, ours all, C, zfp-rs]
            let mut best = [[Best::NONE; 4]; 2];
            for _ in 0..reps {
                best[0][0].run(|| codec.compress(&data, shape, &one).unwrap());
                best[0][1].run(|| codec.compress(&data, shape, &all).unwrap());
                best[0][2].run(|| c_zfp::compress(&data, &dims, rate, tol));
                best[0][3].run(|| zfp_rs_ref::compress(&data, &dims, &rs_config));
                best[1][0].run(|| codec_host::decompress_into(&ours, &mut out, &one).unwrap());
                best[1][1].run(|| codec_host::decompress_into(&ours, &mut out, &all).unwrap());
                best[1][2].run(|| c_zfp::decompress(&c, &mut out, &dims));
                best[1][3].run(|| zfp_rs_ref::decompress(&rs, &mut out, &dims));
            }
            let ratio = bytes as f64 / ours.len() as f64;
            for (op, b) in ["compress", "decompress"].into_iter().zip(best) {
                let (o1, oc, or) = (mbs(bytes, b[0].cpu), mbs(bytes, b[2].cpu), mbs(bytes, b[3].cpu));
                let on = mbs(bytes, b[1].wall);
                let scaling = b[0].wall.as_secs_f64() / b[1].wall.as_secs_f64();
                println!(
                    "| {label} | {mode} | {op} | {o1:.0} | {on:.0} | {oc:.0} | {or:.0}{rs_note} | {:.2} | {:.2} | {scaling:.2} | {ratio:.2} | {err:.2e} |",
                    o1 / oc,
                    o1 / or,
                );
            }
        }
    }
}
