//! SZx single-thread throughput and compression ratio, side by side with the C SZx
//! (szcompressor/SZx, blocked serial mode, block 128) in the same process and run.
//!
//! Run: `CCOLL_SZX_C=PATH cargo bench -p codec-host --bench szx_throughput`, where PATH is
//! the C SZx's `libSZx.so` or its source directory (built once into
//! `target/szx-c-build` with `./configure CXXFLAGS=-O3 && make`). Without `CCOLL_SZX_C`
//! only our side is measured, and the output says so. `CCOLL_ISA=avx2` (or `baseline`)
//! measures our copies of the block loops for a lesser CPU. `CCOLL_SZX_BENCH_REPS` sets the
//! repetitions (median kept, default 5), `CCOLL_SZX_BENCH_QUICK=1` uses fields of 1 Mi
//! values instead of the full sizes, `CCOLL_SZX_BENCH_DATA=a,b` picks fields.
//!
//! Decompression is timed twice per side: into fresh memory (page faults included: the
//! C decoder's own malloc; ours allocating its own output with `szx::decompress_with`,
//! and, a second column, into a `vec![0; n]` the caller allocated), and into touched
//! memory (our reused output; the C decoder's malloc set to recycle what its previous
//! call freed), so neither side pays a cost the other does not. Next to them, the time
//! of writing the output alone (a fill of the same size, into a new allocation and into
//! the touched buffer, ordinary stores): how close each decoder is to what one core can
//! store that way (ours streams into a caller's outputs of 16 MiB and more, see
//! `szx::STREAMING_MIN_BYTES`). See `docs/benchmarks-szx.md`.

use std::hint::black_box;

use codec_host::szx::{self, pipelined, ErrorBound, SzxOptions};
use codec_host::{Backend, CpuExecutor, Shape};

mod support;
use support::c_szx::CSzx;
use support::glibc_malloc::{self, Recycler};
use support::thread_cpu_time;

/// Relative bounds: `E = R * (max - min)`.
const BOUNDS: [f64; 3] = [1e-2, 1e-3, 1e-4];

/// Fields, at their default sizes (64 MiB, 64 MiB, 26 MB).
const FIELDS: [&str; 3] = ["smooth3d", "rtm", "seaice"];

/// Values per field in quick mode.
const QUICK_LEN: usize = 1 << 20;

/// Seconds of this thread's CPU time taken by `f`, and its result.
fn timed<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let t = thread_cpu_time();
    let r = f();
    ((thread_cpu_time() - t).as_secs_f64(), r)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

/// Largest `|x - y|`, in f64.
fn max_err(x: &[f32], y: &[f32]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (*a as f64 - *b as f64).abs()).fold(0.0, f64::max)
}

/// Median timings and the result of one codec on one field and bound.
#[derive(Default)]
struct Side {
    comp: Vec<f64>,
    /// Decompression into a newly allocated output: a fresh mapping, page faults included.
    decomp_fresh: Vec<f64>,
    /// Decompression into memory already touched (reused by ours, recycled by the C
    /// SZx's malloc): the decoder alone.
    decomp_touched: Vec<f64>,
    /// Ours only: decompression into a `vec![0; n]` the caller allocated (a fresh
    /// mapping, every value written).
    decomp_into_new: Vec<f64>,
    /// Ours only: writing `n` values into a new allocation (a fresh mapping) and into
    /// the touched buffer, no decoding: the store floor of (a) and (b).
    fill_fresh: Vec<f64>,
    fill_touched: Vec<f64>,
    bytes: usize,
    err: f64,
}

impl Side {
    fn ratio(&self, n: usize) -> f64 {
        (n * 4) as f64 / self.bytes as f64
    }
}

/// MB/s of the median of `times`, for `n` f32 values.
fn speed(times: &[f64], n: usize) -> f64 {
    mbps(n * 4, median(times.to_vec()))
}

/// One repetition of ours: compress into a reused buffer; decompress into an output it
/// allocates (a fresh mapping, as the C API's malloc gives here), into a new vector the
/// caller allocated, and into `touched`; and the fills of the same sizes.
fn ours_rep(x: &[f32], e: f64, backend: &Backend, buf: &mut [u8], touched: &mut [f32], side: &mut Side, check: bool) {
    let exec = backend.executor().expect("a CPU backend");
    let block = SzxOptions::default().block_size;
    // The touched fill first, while `touched` is out of the caches as it is for the
    // decoding below (the C SZx's timings and ours in between evict it and write back
    // what the fill left dirty).
    let (tft, ()) = timed(|| touched.fill(1.0));
    black_box(&mut *touched);
    let mut compress = || pipelined::Encoder::plain(x, Shape::d1(x.len()), ErrorBound::Abs(e), block, exec)?.encode_into(buf, exec);
    let (tc, len) = timed(|| compress().expect("compress"));
    let stream = &buf[..len];
    let (tf, (back, _)) = timed(|| szx::decompress_with::<f32>(stream, exec).expect("decompress"));
    let (tn, into_new) = timed(|| {
        let mut out = vec![0f32; x.len()];
        codec_host::decompress_into(stream, &mut out, backend).expect("decompress");
        out
    });
    let (tt, ()) = timed(|| {
        codec_host::decompress_into(stream, touched, backend).expect("decompress");
    });
    let matches = !check || back.iter().zip(&into_new).zip(touched.iter()).all(|((a, b), c)| a.to_bits() == b.to_bits() && b.to_bits() == c.to_bits());
    assert!(matches, "our decoders disagree");
    let (tff, filled) = timed(|| {
        let mut v = Vec::with_capacity(x.len());
        v.resize(x.len(), 1f32);
        v
    });
    black_box(filled);
    side.comp.push(tc);
    side.decomp_fresh.push(tf);
    side.decomp_into_new.push(tn);
    side.fill_fresh.push(tff);
    side.fill_touched.push(tft);
    side.decomp_touched.push(tt);
    side.bytes = len;
    if check {
        side.err = max_err(x, &back);
    }
    black_box(back);
    black_box(into_new);
}

/// One repetition of the C SZx, the same way: its decoder allocates its output, a fresh
/// mapping first, then (allocator set to recycle) memory its previous call touched.
fn c_rep(c: &CSzx, x: &[f32], e: f32, buf: &mut [u8], recycler: &mut Recycler, side: &mut Side, check: bool) {
    let (tc, len) = timed(|| c.compress(x, e, buf));
    let stream = &buf[..len];
    let (tf, back) = timed(|| c.decompress(stream, x.len()));
    let (tt, err) = recycler.run(x.len() * 4, || {
        let (t, again) = timed(|| c.decompress(stream, x.len()));
        (t, if check { max_err(x, &again) } else { 0.0 })
    });
    side.comp.push(tc);
    side.decomp_fresh.push(tf);
    side.decomp_touched.push(tt);
    side.bytes = len;
    if check {
        side.err = max_err(x, &back).max(err);
    }
    black_box(back);
}

fn main() {
    let reps: usize = std::env::var("CCOLL_SZX_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5).max(1);
    let quick = std::env::var("CCOLL_SZX_BENCH_QUICK").is_ok_and(|v| v == "1");
    let only = std::env::var("CCOLL_SZX_BENCH_DATA").ok();
    let c = std::env::var_os("CCOLL_SZX_C").map(|path| CSzx::open(path.as_ref()).unwrap_or_else(|e| panic!("CCOLL_SZX_C: {e}")));
    let backend = Backend::with_executor(CpuExecutor::new(1).expect("executor"));
    glibc_malloc::fix_thresholds();
    let mut recycler = Recycler::default();
    println!(
        "SZx, one thread: ours vs the C SZx (blocked serial, block 128), in-process, interleaved; \
         median of {reps}; per-thread CPU time; MB/s of uncompressed f32 data; E = R * (max - min)."
    );
    println!(
        "Compress into a reused, touched buffer. Decompress (a) into fresh memory, first-touch page faults included: \
         each decoder allocating its own output (the C API's malloc; ours szx::decompress_with, zeroed memory whose \
         zero blocks it does not write: their pages are faulted later, if ever written), and ours into a vec![0; n] \
         the caller allocated (every value written); (b) into touched memory for both (our reused output; the C SZx's \
         malloc set to recycle the memory its previous call freed): the decoders alone. fill = writing the output \
         alone with ordinary stores (a new allocation written through; the touched buffer filled): their floor on \
         one core. Ours into a caller's output of at least {} MiB writes with streaming stores (no read of each \
         line first), which that floor does not bind.",
        szx::STREAMING_MIN_BYTES >> 20
    );
    println!(
        "Ours ran its {} copies of the block loops (the best this CPU has, at most what {} allows); this CPU's BMI2 bit extract and deposit are {} (the AVX2 copy packs by them only if fast).",
        szx::active_isa().name(),
        szx::ENV_ISA,
        if szx::fast_bit_deposits() { "fast" } else { "slow" }
    );
    match &c {
        Some(c) => println!("C SZx: {}\n", c.describe()),
        None => println!("CCOLL_SZX_C is not set: the C SZx comparison was NOT run; ours only.\n"),
    }
    println!(
        "| field | R | E | C comp | ours comp | x | C decomp (a) fresh | ours alloc | x | ours into new vec | x | fill fresh | C decomp (b) touched | ours | x | fill touched | C ratio | ours ratio | x | C max err | ours max err |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut above_floor = Vec::new();
    let mut all_held = true;
    let mut c_held = true;
    for name in FIELDS.iter().filter(|n| only.as_deref().is_none_or(|o| o.split(',').any(|w| w == **n))) {
        let named = datasets::Named::from_name(name).expect("known field");
        let data = if quick { named.generate_len(QUICK_LEN, datasets::DEFAULT_SEED) } else { named.generate_default() };
        let x = data.values.to_f32();
        let n = x.len();
        let (lo, hi) = datasets::value_range(&x);
        // Every buffer touched before the first timing.
        let mut ours_buf = vec![1u8; szx::max_compressed_len::<f32>(n, &SzxOptions::default())];
        let mut touched = vec![1f32; n];
        let mut c_buf = vec![1u8; support::c_szx::max_compressed_len(n)];
        for r in BOUNDS {
            // One f32 bound for both (the C API takes a float): ours gets it exactly.
            let e32 = (r * (hi - lo)) as f32;
            let e = e32 as f64;
            if let Some(c) = &c {
                // The C decoder's recycled output, touched once before the timings.
                let len = c.compress(&x, e32, &mut c_buf);
                recycler.run(n * 4, || black_box(c.decompress(&c_buf[..len], n)).len());
            }
            let (mut ours, mut theirs) = (Side::default(), Side::default());
            for rep in 0..reps {
                if let Some(c) = &c {
                    c_rep(c, &x, e32, &mut c_buf, &mut recycler, &mut theirs, rep == 0);
                }
                ours_rep(&x, e, &backend, &mut ours_buf, &mut touched, &mut ours, rep == 0);
            }
            all_held &= ours.err <= e;
            let (oc, of, ot, or) = (speed(&ours.comp, n), speed(&ours.decomp_fresh, n), speed(&ours.decomp_touched, n), ours.ratio(n));
            let (on, ff, ft) = (speed(&ours.decomp_into_new, n), speed(&ours.fill_fresh, n), speed(&ours.fill_touched, n));
            let row = match &c {
                Some(_) => {
                    c_held &= theirs.err <= e;
                    let (cc, cf, ct, cr) = (speed(&theirs.comp, n), speed(&theirs.decomp_fresh, n), speed(&theirs.decomp_touched, n), theirs.ratio(n));
                    for (what, twice, fill) in [("(a) into new memory", 2.0 * cf, ff), ("(b) touched", 2.0 * ct, ft)] {
                        if twice > fill {
                            above_floor.push(format!("{name} R={r:.0e} {what}: 2x the C SZx is {twice:.0} MB/s, above the fill's {fill:.0}"));
                        }
                    }
                    format!(
                        "{cc:.0} | {oc:.0} | {:.2}x | {cf:.0} | {of:.0} | {:.2}x | {on:.0} | {:.2}x | {ff:.0} | {ct:.0} | {ot:.0} | {:.2}x | {ft:.0} | {cr:.2} | {or:.2} | {:.2}x | {:.3e}{} | {:.3e}",
                        oc / cc,
                        of / cf,
                        on / cf,
                        ot / ct,
                        or / cr,
                        theirs.err,
                        if theirs.err <= e { "" } else { " BROKEN" },
                        ours.err
                    )
                }
                None => format!("- | {oc:.0} | - | - | {of:.0} | - | {on:.0} | - | {ff:.0} | - | {ot:.0} | - | {ft:.0} | - | {or:.2} | - | - | {:.3e}", ours.err),
            };
            println!("| {name} ({n}) | {r:.0e} | {e:.3e} | {row} |");
        }
    }
    if c.is_some() {
        if above_floor.is_empty() {
            println!("\n2x the C SZx's decompression speed is below the fill speed on every row.");
        } else {
            println!("\nRows where 2x the C SZx's decompression speed is above the fill speed (ordinary stores' floor):");
            for line in &above_floor {
                println!("- {line}");
            }
        }
    }
    println!("\nours: bound held everywhere: {all_held}");
    if c.is_some() {
        println!("C SZx: bound held everywhere: {c_held}");
    }
    assert!(all_held, "our SZx broke its bound");
}
