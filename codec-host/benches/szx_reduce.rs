//! The reduce step of a compressed Allreduce, single thread: two SZx streams summed in
//! the compressed domain (`szx::reduce`) against decompress both, add, compress the sum,
//! on the same input in the same run, interleaved.
//!
//! Run: `cargo bench -p codec-host --bench szx_reduce`. The operands are two RTM-like
//! wavefields (64 MiB of f32 each, as two ranks of the demo hold them), compressed with
//! the absolute bound that the relative bound `1e-3` gives over both (the bound an
//! Allreduce agrees on). `CCOLL_SZX_BENCH_REPS` sets the repetitions (median kept,
//! default 5), `CCOLL_SZX_BENCH_QUICK=1` uses 1 Mi values. Also run on a reduced stream
//! and a third field, as the second step of a ring does. Last, a stream added into an
//! accumulator (the reduce-scatter's step) by decoding into a buffer and adding it,
//! against `codec_host::decompress_reduce`. See docs/collectives.md.

use std::hint::black_box;

use codec_host::elementwise::{self, ReduceOp};
use codec_host::szx::{self, pipelined, reduce, ErrorBound, SzxOptions};
use codec_host::{Backend, CpuExecutor, Shape};

mod support;
use support::thread_cpu_time;

const REL: f64 = 1e-3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds of this thread's CPU time taken by `f`, and its result.
fn timed<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let t = thread_cpu_time();
    let r = f();
    ((thread_cpu_time() - t).as_secs_f64(), r)
}

/// Rank `rank`'s field, seeded as `ccoll-bench` seeds it.
fn field(len: usize, rank: u64) -> Vec<f32> {
    let seed = datasets::DEFAULT_SEED ^ rank.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    match datasets::Named::Rtm.generate_len(len, seed).values {
        datasets::Values::F32(v) => v,
        _ => panic!("rtm is an f32 field"),
    }
}

fn main() {
    let quick = std::env::var("CCOLL_SZX_BENCH_QUICK").is_ok_and(|v| v == "1");
    let reps: usize = std::env::var("CCOLL_SZX_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5).max(1);
    let len = if quick { 1 << 20 } else { 1 << 24 };
    let one = Backend::with_executor(CpuExecutor::new(1).expect("one-thread executor"));
    let exec = one.executor().expect("a CPU backend");
    let fields: Vec<Vec<f32>> = (0..3).map(|r| field(len, r)).collect();
    let (lo, hi) = fields.iter().flatten().fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v as f64), h.max(v as f64)));
    let e = REL * (hi - lo);
    let opts = SzxOptions::default();
    let compress = |x: &[f32]| pipelined::Encoder::plain(x, Shape::d1(x.len()), ErrorBound::Abs(e), opts.block_size, exec).and_then(|e| e.into_vec(exec)).expect("compress");
    let streams: Vec<Vec<u8>> = fields.iter().map(|x| compress(x)).collect();
    let first = reduce::reduce::<f32>(ReduceOp::Sum, &streams[0], &streams[1], e).expect("reduce");
    println!(
        "SZx reduce step, rtm {} MiB per operand, f32, E = {e:.4e} (relative {REL:e}), one thread, median of {reps} (CPU seconds)",
        (len * 4) >> 20
    );
    println!(
        "{:<14} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>12} {:>12}",
        "operands", "reduce s", "d-a-c s", "speedup", "copied", "exact", "requant", "ratio red.", "ratio d-a-c"
    );
    // Name, operands, and the original fields summed.
    type Case<'a> = (&'a str, &'a [u8], &'a [u8], Vec<&'a [f32]>);
    let cases: [Case; 2] = [
        ("a + b", &streams[0], &streams[1], vec![&fields[0], &fields[1]]),
        ("(a + b) + c", &first.stream, &streams[2], vec![&fields[0], &fields[1], &fields[2]]),
    ];
    for (name, a, b, originals) in cases {
        let (mut t_red, mut t_dac) = (Vec::new(), Vec::new());
        let (mut va, mut vb) = (vec![0f32; len], vec![0f32; len]);
        let mut last = None;
        for _ in 0..reps {
            let (t, red) = timed(|| reduce::reduce::<f32>(ReduceOp::Sum, black_box(a), black_box(b), e).expect("reduce"));
            t_red.push(t);
            let (t, dac) = timed(|| {
                codec_host::decompress_into(black_box(a), &mut va, &one).expect("decompress");
                codec_host::decompress_into(black_box(b), &mut vb, &one).expect("decompress");
                elementwise::reduce(exec, ReduceOp::Sum, &mut va, &vb).expect("add");
                compress(&va)
            });
            t_dac.push(t);
            last = Some((red, dac));
        }
        let (red, dac) = last.expect("at least one repetition");
        // Both results against the exact sum of the original fields.
        let exact: Vec<f64> = (0..len).map(|i| originals.iter().map(|f| f[i] as f64).sum()).collect();
        let worst = |stream: &[u8]| {
            let (back, h) = szx::decompress::<f32>(stream).expect("decode");
            let err = back.iter().zip(&exact).map(|(&r, &x)| (r as f64 - x).abs()).fold(0.0, f64::max);
            (err, h.abs_error)
        };
        let ((err_red, bound_red), (err_dac, _)) = (worst(&red.stream), worst(&dac));
        let raw = (len * 4) as f64;
        let (m_red, m_dac) = (median(t_red), median(t_dac));
        let s = red.summary;
        println!(
            "{name:<14} {m_red:>10.4} {m_dac:>10.4} {:>7.2}x {:>9} {:>9} {:>9} {:>12.2} {:>12.2}",
            m_dac / m_red,
            s.copied,
            s.exact,
            s.requantized,
            raw / red.stream.len() as f64,
            raw / dac.len() as f64
        );
        let ops = originals.len() as f64;
        println!(
            "    max error vs exact sum: reduce {err_red:.4e} (stated {bound_red:.4e}), decompress-add-compress {err_dac:.4e} (bound {:.4e})",
            ops * e + e
        );
    }
    // An Allreduce's reduce-scatter adds each arriving stream into its block: decode
    // into a buffer and add it, against adding the values as they are decoded.
    let (mut t_sep, mut t_fused) = (Vec::new(), Vec::new());
    let (mut sep, mut fused, mut values) = (fields[0].clone(), fields[0].clone(), vec![0f32; len]);
    for _ in 0..reps {
        let (t, ()) = timed(|| {
            codec_host::decompress_into(black_box(&streams[1]), &mut values, &one).expect("decompress");
            elementwise::reduce(exec, ReduceOp::Sum, &mut sep, &values).expect("add");
        });
        t_sep.push(t);
        let (t, _) = timed(|| codec_host::decompress_reduce(black_box(&streams[1]), &mut fused, ReduceOp::Sum, &one).expect("decompress_reduce"));
        t_fused.push(t);
    }
    assert!(sep.iter().zip(&fused).all(|(a, b)| a.to_bits() == b.to_bits()), "the two ways of adding a stream differ");
    let (m_sep, m_fused) = (median(t_sep), median(t_fused));
    println!("\n{:<14} {:>10} {:>10} {:>8}", "acc += b", "dec+add s", "fused s", "speedup");
    println!("{:<14} {m_sep:>10.4} {m_fused:>10.4} {:>7.2}x   (same bits; acc repeatedly += b, {reps} times)", "a + b", m_sep / m_fused);
}
