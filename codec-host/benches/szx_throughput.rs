//! SZx throughput and compression ratio on the reference data sets, side by side with the
//! zfp C library's fixed-accuracy mode (Debian's libzfp, serial) in the same run. No
//! comparison with the C SZx: that needs it run side by side on the same machine, which
//! this bench does not do yet (figures copied from elsewhere are not comparable).
//!
//! Run: `cargo bench -p codec-host --bench szx_throughput` (release profile). The
//! environment variable `SZX_BENCH_REPS` sets the repetitions per timing (best is kept),
//! `SZX_BENCH_DATA=smooth3d|grad16m` runs one data set only.

use std::hint::black_box;
use std::os::raw::c_void;
use std::sync::OnceLock;
use std::time::Instant;

use codec_host::szx::{self, pipelined, ErrorBound, SzxOptions};
use codec_host::{Codec, CpuExecutor, Shape};

mod support;
use support::thread_cpu_time;

/// A fixed origin for wall-clock readings.
fn wall_epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A clock: the calling thread's CPU time for single-threaded runs (other jobs on the
/// shared machine preempt us; CPU time leaves that out), wall time for parallel runs.
#[derive(Clone, Copy)]
enum Clock {
    ThreadCpu,
    Wall,
}

impl Clock {
    fn now(self) -> f64 {
        match self {
            Clock::ThreadCpu => thread_cpu_time().as_secs_f64(),
            Clock::Wall => wall_epoch().elapsed().as_secs_f64(),
        }
    }

    /// Best of `reps` timings of `f`.
    fn best(self, reps: usize, mut f: impl FnMut()) -> f64 {
        (0..reps.max(1))
            .map(|_| {
                let t = self.now();
                f();
                self.now() - t
            })
            .fold(f64::MAX, f64::min)
    }
}

/// The zfp C library's fixed-accuracy mode, timed the same way as ours.
mod zfp_c {
    use super::support::c_zfp::*;
    use super::*;

    /// Fixed-accuracy compression of `data` (shape `dims`, x fastest) and decompression
    /// into `back`; returns (compressed bytes, best compress s, best decompress s).
    pub fn run(data: &[f32], dims: &[usize], tolerance: f64, back: &mut [f32], reps: usize) -> (usize, f64, f64) {
        // SAFETY: the field and stream point at live buffers of the sizes given, and all
        // handles are freed before returning.
        unsafe {
            let field = |p: *mut f32| match *dims {
                [nx, ny, nz] => zfp_field_3d(p as *mut c_void, ZFP_TYPE_FLOAT, nx, ny, nz),
                _ => zfp_field_1d(p as *mut c_void, ZFP_TYPE_FLOAT, data.len()),
            };
            let fin = field(data.as_ptr() as *mut f32);
            let zfp = zfp_stream_open(std::ptr::null_mut());
            zfp_stream_set_accuracy(zfp, tolerance);
            let mut buf = vec![0u8; zfp_stream_maximum_size(zfp, fin)];
            let bs = stream_open(buf.as_mut_ptr() as *mut c_void, buf.len());
            zfp_stream_set_bit_stream(zfp, bs);
            let mut size = 0;
            let tc = Clock::ThreadCpu.best(reps, || {
                zfp_stream_rewind(zfp);
                size = zfp_compress(zfp, fin);
            });
            let fout = field(back.as_mut_ptr());
            let td = Clock::ThreadCpu.best(reps, || {
                zfp_stream_rewind(zfp);
                zfp_decompress(zfp, fout);
            });
            zfp_field_free(fout);
            zfp_field_free(fin);
            stream_close(bs);
            zfp_stream_close(zfp);
            (size, tc, td)
        }
    }
}

struct Measured {
    ratio: f64,
    comp: f64,
    decomp: f64,
    decomp_fresh: f64,
    max_err: f64,
    held: bool,
    zeros_kept: bool,
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

/// Best-of-`reps` compression into a reused buffer and decompression into a reused
/// output, plus the quality of the result.
fn measure_szx(x: &[f32], e: f64, exec: &CpuExecutor, pipe: bool, reps: usize) -> Measured {
    let opts = SzxOptions::default();
    let shape = Shape::d1(x.len());
    let clock = if exec.threads() == 1 { Clock::ThreadCpu } else { Clock::Wall };
    let max = if pipe { pipelined::max_compressed_len::<f32>(x.len(), &opts) } else { szx::max_compressed_len::<f32>(x.len(), &opts) };
    let mut buf = vec![0u8; max];
    let mut len = 0;
    let tc = clock.best(reps, || {
        len = if pipe {
            pipelined::compress_into(x, shape, ErrorBound::Abs(e), &opts, &mut buf, exec, |d, _| {
                black_box(d);
            })
        } else {
            szx::compress_into(x, shape, ErrorBound::Abs(e), &opts, &mut buf, exec)
        }
        .expect("compress");
    });
    let mut back = vec![0f32; x.len()];
    let td = clock.best(reps, || {
        szx::decompress_into(&buf[..len], &mut back, exec).expect("decompress");
    });
    // Into a new buffer each time, first-touch page faults included.
    let mut tf = f64::MAX;
    for _ in 0..reps.max(1) {
        let t = clock.now();
        let mut fresh = vec![0f32; x.len()];
        szx::decompress_into(&buf[..len], &mut fresh, exec).expect("decompress");
        tf = tf.min(clock.now() - t);
        black_box(&fresh);
    }
    Measured { decomp_fresh: mbps(x.len() * 4, tf), ..quality(x, &back, len, tc, td, e) }
}

fn main() {
    let reps: usize = std::env::var("SZX_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let one = CpuExecutor::new(1).expect("executor");
    let all = CpuExecutor::new(0).expect("executor");
    println!(
        "SZx (ccoll) vs zfp C fixed accuracy (serial); best of {reps}; MB/s of uncompressed data; \
         single-thread runs (ours and zfp C) timed by the thread's CPU clock, 'all threads' ({}) by the wall clock.",
        all.threads()
    );
    println!(
        "'decomp' writes into a reused buffer; 'fresh' into a new one each time, first-touch page faults included. \
         zfp (C library and ours, fixed accuracy, tolerance = E, one thread): smooth3d as a 3D field, grad16m as 1D.\n"
    );
    println!("| data | E | E/range | mode | ratio | comp MB/s | decomp MB/s | fresh MB/s | max abs err | bound | zeros | comp / zfp C | comp / our ZFP |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let only = std::env::var("SZX_BENCH_DATA").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let mut sets: Vec<(&str, Vec<f32>, Shape)> = Vec::new();
    if wanted("smooth3d") {
        sets.push(("smooth3d", datasets::smooth3d(), Shape::d3(256, 256, 256)));
    }
    if wanted("grad16m") {
        sets.push(("grad16m", datasets::grad16m(), Shape::d1(16 << 20)));
    }
    let mut all_held = true;
    let mut zfp_rows = Vec::new();
    for (name, x, shape) in &sets {
        let (lo, hi) = datasets::value_range(x);
        let range = hi - lo;
        let bounds = [(1e-2 * range, true), (1e-3 * range, true), (1e-4 * range, true), (1e-2, false), (1e-3, false), (1e-4, false)];
        for (e, relative) in bounds {
            let zc = measure_zfp_c(x, shape.dims(), e, reps.min(3));
            let zo = measure_our_zfp(x, *shape, e, &one, reps.min(3));
            let e_label = if relative { format!("{:.0e}", e / range) } else { "abs".into() };
            zfp_rows.push(format!(
                "| {name} | {e:.3e} | {e_label} | {:.2} | {:.0} | {:.0} | {:.3e} | {:.2} | {:.0} | {:.0} | {:.3e} |",
                zc.ratio, zc.comp, zc.decomp, zc.max_err, zo.ratio, zo.comp, zo.decomp, zo.max_err
            ));
            for (mode, exec, pipe) in [("1 thread", &one, false), ("all threads", &all, false), ("pipelined, 1 thread", &one, true)] {
                let m = measure_szx(x, e, exec, pipe, reps);
                all_held &= m.held;
                println!(
                    "| {name} | {e:.3e} | {e_label} | {mode} | {:.2} | {:.0} | {:.0} | {:.0} | {:.3e} | {} | {} | {:.2}x | {:.2}x |",
                    m.ratio,
                    m.comp,
                    m.decomp,
                    m.decomp_fresh,
                    m.max_err,
                    if m.held { "held" } else { "BROKEN" },
                    if m.zeros_kept { "kept" } else { "lost" },
                    m.comp / zc.comp,
                    m.comp / zo.comp,
                );
            }
        }
    }
    println!("\nbound held everywhere: {all_held}\n");
    println!("ZFP fixed accuracy at the same tolerance, one thread (thread CPU clock):\n");
    println!("| data | E | E/range | zfp C ratio | zfp C comp MB/s | zfp C decomp MB/s | zfp C max err | our ZFP ratio | our ZFP comp MB/s | our ZFP decomp MB/s | our ZFP max err |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for row in zfp_rows {
        println!("{row}");
    }
}

/// zfp C fixed accuracy, serial.
fn measure_zfp_c(x: &[f32], dims: &[usize], e: f64, reps: usize) -> Measured {
    let mut back = vec![0f32; x.len()];
    let (size, tc, td) = zfp_c::run(x, dims, e, &mut back, reps);
    quality(x, &back, size, tc, td, e)
}

/// Our ZFP fixed accuracy on `exec`.
fn measure_our_zfp(x: &[f32], shape: Shape, e: f64, exec: &CpuExecutor, reps: usize) -> Measured {
    let codec = Codec::ZfpFixedAccuracy { tolerance: e };
    let mut stream = Vec::new();
    let tc = Clock::ThreadCpu.best(reps, || stream = codec.compress_with(x, shape, exec).expect("zfp compress"));
    let mut back = vec![0f32; x.len()];
    let td = Clock::ThreadCpu.best(reps, || {
        codec_host::decompress_into_with(&stream, &mut back, exec).expect("zfp decompress");
    });
    quality(x, &back, stream.len(), tc, td, e)
}

/// Ratio, speeds and error of one codec run.
fn quality(x: &[f32], back: &[f32], size: usize, tc: f64, td: f64, e: f64) -> Measured {
    let max_err = x.iter().zip(back).map(|(a, b)| (*a as f64 - *b as f64).abs()).fold(0.0, f64::max);
    let bytes = x.len() * 4;
    Measured {
        ratio: bytes as f64 / size as f64,
        comp: mbps(bytes, tc),
        decomp: mbps(bytes, td),
        decomp_fresh: 0.0,
        max_err,
        held: max_err <= e,
        zeros_kept: x.iter().zip(back).all(|(a, b)| *a != 0.0 || *b == 0.0),
    }
}
