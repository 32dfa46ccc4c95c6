//! `cargo xtask szx-exhaustive`: every f32 bit pattern through SZx at several absolute
//! bounds (0, subnormal and normal ones). Each pattern sits in a 128-value block between
//! fixed neighbours (zeros, ±1, ±1e30 or ±the smallest subnormal, by block), so that
//! blocks take every coding path. Every finite value must come back within the bound
//! (checked exactly), NaN and infinities bit for bit, and exact zeros as zeros.
//! `--sample N` checks N patterns in runs of 1024 spread over the whole range.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use codec_host::szx::{pipelined, ErrorBound, SzxOptions};
use codec_host::{Backend, CpuExecutor, Shape};

#[derive(Args)]
pub struct SzxExhaustiveArgs {
    /// Check this many patterns (runs of 1024 spread over all 2^32) instead of all.
    #[arg(long)]
    sample: Option<u64>,
    /// Absolute bounds to check (default: 0, 2^-149, 1e-40, 2^-126, 1e-6, 1e-2, 1, 1e30).
    #[arg(long, value_delimiter = ',')]
    bounds: Vec<f64>,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// The default bounds: lossless, the smallest subnormal, a subnormal, the smallest
/// normal, and normal ones from tight to loose.
const BOUNDS: [f64; 8] = [0.0, 1.401298464324817e-45, 1e-40, 1.1754943508222875e-38, 1e-6, 1e-2, 1.0, 1e30];
/// Values of a block: `EDGE` neighbours, `TESTS` patterns, `EDGE` neighbours.
const EDGE: usize = 16;
const TESTS: usize = 96;
const BLOCK: usize = 2 * EDGE + TESTS;
/// Blocks per compressed batch.
const BATCH_BLOCKS: usize = 4096;
/// Consecutive patterns per run of a sample.
const RUN: u64 = 1024;

/// The neighbour pairs, one set per block in turn.
const NEIGHBOURS: [[f32; 2]; 4] = [[0.0, 0.0], [1.0, -1.0], [1e30, -1e30], [f32::from_bits(1), -f32::from_bits(1)]];

/// Exactly `|a - b| <= e` for finite `a` and `b`: the f64 difference of the (exactly
/// widened) values and its rounding error by Knuth's TwoSum, so that a difference that
/// rounds to `e` is decided by the sign of what was rounded off.
fn within(a: f32, b: f32, e: f64) -> bool {
    let (x, y) = (a as f64, -(b as f64));
    let s = x + y;
    let bb = s - x;
    let err = (x - (s - bb)) + (y - bb);
    let d = s.abs();
    d < e || (d == e && (err == 0.0 || (err < 0.0) != (s < 0.0)))
}

/// Why `back` is not an acceptable decoding of `x` under bound `e`, if it is not.
fn violation(x: f32, back: f32, e: f64) -> Option<&'static str> {
    if !x.is_finite() {
        return (x.to_bits() != back.to_bits()).then_some("non-finite value changed");
    }
    if x == 0.0 && back != 0.0 {
        return Some("exact zero not kept");
    }
    (!back.is_finite() || !within(x, back, e)).then_some("outside the bound")
}

/// The patterns checked: all 2^32, or `n` in runs of [`RUN`] spread evenly.
#[derive(Clone, Copy)]
struct Patterns {
    count: u64,
    runs: u64,
}

impl Patterns {
    fn new(sample: Option<u64>) -> Self {
        let count = sample.map_or(1 << 32, |n| n.clamp(1, 1 << 32).div_ceil(RUN) * RUN);
        Patterns { count, runs: count / RUN }
    }

    /// The `i`-th pattern checked.
    fn get(&self, i: u64) -> u32 {
        let stride = (1u64 << 32) / self.runs;
        ((i / RUN) * stride + i % RUN) as u32
    }
}

/// A violation found: the bound, the input pattern and what came back.
type Finding = (f64, u32, u32, &'static str);

/// Checks patterns `first..first + n` at bound `e`; returns the violations.
fn check_batch(p: &Patterns, first: u64, n: u64, e: f64, backend: &Backend, values: &mut Vec<f32>) -> Vec<Finding> {
    let exec = backend.executor().expect("a CPU backend");
    values.clear();
    let blocks = n.div_ceil(TESTS as u64);
    for b in 0..blocks {
        let [u, v] = NEIGHBOURS[((first / TESTS as u64 + b) % NEIGHBOURS.len() as u64) as usize];
        let edge = (0..EDGE).map(|k| if k % 2 == 0 { u } else { v });
        values.extend(edge.clone());
        let start = first + b * TESTS as u64;
        let end = (start + TESTS as u64).min(first + n);
        values.extend((start..end).map(|i| f32::from_bits(p.get(i))));
        values.extend(edge);
    }
    let shape = Shape::d1(values.len());
    let opts = SzxOptions { block_size: BLOCK, ..SzxOptions::default() };
    let stream = pipelined::Encoder::plain(values, shape, ErrorBound::Abs(e), opts.block_size, exec).and_then(|e| e.into_vec(exec)).expect("SZx compresses any f32");
    let mut back = vec![0f32; values.len()];
    codec_host::decompress_into(&stream, &mut back, backend).expect("SZx decodes its own stream");
    values.iter().zip(&back).filter_map(|(&x, &y)| violation(x, y, e).map(|why| (e, x.to_bits(), y.to_bits(), why))).collect()
}

/// Runs the check over `p` at each bound on `threads` threads, printing progress when
/// `progress`; returns the patterns checked per bound, the violations and the seconds.
fn check(p: Patterns, bounds: &[f64], threads: usize, progress: bool) -> (u64, Vec<Finding>, f64) {
    let batch = (BATCH_BLOCKS * TESTS) as u64;
    let batches = p.count.div_ceil(batch);
    let start = Instant::now();
    let findings = Mutex::new(Vec::new());
    for &e in bounds {
        let next = AtomicU64::new(0);
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let backend = Backend::with_executor(CpuExecutor::new(1).expect("one-thread executor"));
                    let mut values = Vec::with_capacity(BATCH_BLOCKS * BLOCK);
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= batches {
                            break;
                        }
                        let first = k * batch;
                        let found = check_batch(&p, first, batch.min(p.count - first), e, &backend, &mut values);
                        findings.lock().unwrap_or_else(|e| e.into_inner()).extend(found);
                        if progress && (k + 1).is_multiple_of((batches / 32).max(1)) {
                            let done = (k + 1) as f64 / batches as f64;
                            let secs = t0.elapsed().as_secs_f64();
                            eprintln!("  bound {e:e}: {:5.1}% after {secs:.0} s, about {:.0} s left", 100.0 * done, secs / done - secs);
                        }
                    }
                });
            }
        });
        if progress {
            let found = findings.lock().unwrap_or_else(|e| e.into_inner()).iter().filter(|f| f.0 == e).count();
            println!("bound {e:e}: {} patterns in {:.1} s, {found} violations", p.count, t0.elapsed().as_secs_f64());
        }
    }
    (p.count, findings.into_inner().unwrap_or_else(|e| e.into_inner()), start.elapsed().as_secs_f64())
}

pub fn run(a: &SzxExhaustiveArgs) -> Result<ExitCode, String> {
    if cfg!(debug_assertions) {
        return crate::workspace::rerun_in_release();
    }
    let bounds = if a.bounds.is_empty() { BOUNDS.to_vec() } else { a.bounds.clone() };
    if let Some(bad) = bounds.iter().find(|e| !(e.is_finite() && **e >= 0.0)) {
        return Err(format!("bound {bad}: must be finite and >= 0"));
    }
    let threads = if a.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { a.threads };
    let p = Patterns::new(a.sample);
    println!("SZx exhaustive check: {} f32 patterns x {} bounds, {threads} threads", p.count, bounds.len());
    let (count, findings, secs) = check(p, &bounds, threads, true);
    for (e, x, y, why) in findings.iter().take(20) {
        println!("VIOLATION at bound {e:e}: {x:#010x} ({:e}) -> {y:#010x} ({:e}): {why}", f32::from_bits(*x), f32::from_bits(*y));
    }
    println!(
        "{count} patterns x {} bounds checked (and their neighbours) in {secs:.1} s: {} violations",
        bounds.len(),
        findings.len()
    );
    Ok(if findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_difference_check_decides_roundings_to_the_bound() {
        let ulp = f32::EPSILON;
        assert!(within(1.0, 1.0 + ulp, ulp as f64));
        assert!(!within(1.0, 1.0 + 2.0 * ulp, ulp as f64));
        // 1 + 2^-149 rounds to 1 in f64: the rounding error decides.
        let tiny = f32::from_bits(1);
        assert!(!within(1.0, -tiny, 1.0));
        assert!(within(1.0, tiny, 1.0));
        assert!(within(-0.0, 0.0, 0.0) && !within(tiny, 0.0, 0.0));
        assert!(within(f32::MAX, -f32::MAX, 2.0 * f32::MAX as f64));
        assert_eq!(violation(f32::NAN, f32::from_bits(f32::NAN.to_bits() | 1), 1.0), Some("non-finite value changed"));
        assert_eq!(violation(0.0, 1e-9, 1.0), Some("exact zero not kept"));
        assert_eq!(violation(1.0, f32::INFINITY, 1e30), Some("outside the bound"));
    }

    #[test]
    fn samples_spread_over_every_exponent_and_sign() {
        let p = Patterns::new(Some(1 << 16));
        assert_eq!((p.count, p.runs), (1 << 16, 64));
        assert_eq!((p.get(0), p.get(1023), p.get(1024)), (0, 1023, 1 << 26));
        assert_eq!(p.get(p.count - 1), (63 << 26) + 1023);
        assert_eq!(Patterns::new(None).get((1 << 32) - 1), u32::MAX);
    }

    #[test]
    fn a_sampled_slice_holds_every_bound() {
        // 2^20 patterns (1024 runs over the whole range, NaNs and infinities included) at
        // every default bound; the full run is `cargo xtask szx-exhaustive`.
        let (count, findings, _) = check(Patterns::new(Some(1 << 20)), &BOUNDS, 2, false);
        assert_eq!(count, 1 << 20);
        assert_eq!(findings, Vec::new());
    }
}
