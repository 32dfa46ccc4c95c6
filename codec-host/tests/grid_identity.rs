//! Every GPU entry point's body, launched through the CPU grid executor the way the GPU
//! launches it (grid-stride, many threads), gives exactly what the CPU codec path gives.
//! Shapes: one thread; more threads than items; a ragged last block; many blocks.

use codec_host::elementwise::{self, ReduceOp};
use codec_host::scan::exclusive_scan_with;
use codec_host::CpuExecutor;
use codec_kernels::grid::LaunchConfig;
use codec_kernels::half_convert::{f32_to_half_body, half_to_f32_body, Bf16, F16};
use codec_kernels::reduce::reduce_body;
use codec_kernels::shared::SharedOut;
use half::slice::HalfFloatSliceExt;

/// Launch shapes for `n` items.
fn shapes(n: usize) -> Vec<LaunchConfig> {
    vec![
        LaunchConfig { grid_dim: 1, block_dim: 1 },
        LaunchConfig { grid_dim: 4, block_dim: (n as u32 / 2).max(1) },
        LaunchConfig::for_items(n, 96),
        LaunchConfig { grid_dim: 7, block_dim: 33 },
    ]
}

fn executors() -> [CpuExecutor; 2] {
    [CpuExecutor::new(1).unwrap(), CpuExecutor::new(3).unwrap()]
}

fn field(n: usize, seed: f64) -> Vec<f64> {
    (0..n).map(|i| ((i as f64 + seed) * 0.173).sin() * 10f64.powi((i % 7) as i32 - 3)).collect()
}

#[test]
fn reduce_bodies_match_the_cpu_path() {
    // Beyond two of the CPU path's tiles (32768 values), the last one partial.
    let n = 2 * 32768 + 1001;
    let mut src = field(n, 0.5);
    src[3] = f64::NAN;
    src[10] = -0.0;
    let acc0 = field(n, 2.0);
    for exec in executors() {
        for op in ReduceOp::ALL {
            let mut want = acc0.clone();
            elementwise::reduce(&exec, op, &mut want, &src).unwrap();
            for cfg in shapes(n) {
                let mut got = acc0.clone();
                let out = SharedOut::new(&mut got[..]);
                exec.launch(cfg, |g| reduce_body(g, op, &out, &src));
                assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "{op:?} {cfg:?}");
            }
            let src32: Vec<f32> = src.iter().map(|&v| v as f32).collect();
            let acc32: Vec<f32> = acc0.iter().map(|&v| v as f32).collect();
            let mut want = acc32.clone();
            elementwise::reduce(&exec, op, &mut want, &src32).unwrap();
            for cfg in shapes(n) {
                let mut got = acc32.clone();
                let out = SharedOut::new(&mut got[..]);
                exec.launch(cfg, |g| reduce_body(g, op, &out, &src32));
                assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "{op:?} f32 {cfg:?}");
            }
        }
    }
}

#[test]
fn half_conversion_bodies_match_the_cpu_path() {
    let halves: Vec<half::f16> = (0..=u16::MAX).step_by(7).map(half::f16::from_bits).collect();
    let bhalves: Vec<half::bf16> = (0..=u16::MAX).step_by(5).map(half::bf16::from_bits).collect();
    let wide: Vec<f32> = field(3000, 1.0).iter().map(|&v| v as f32).collect();
    for exec in executors() {
        let mut want = vec![0f32; halves.len()];
        elementwise::widen(&exec, &halves, &mut want).unwrap();
        let mut bwant = vec![0f32; bhalves.len()];
        elementwise::widen(&exec, &bhalves, &mut bwant).unwrap();
        let mut nwant = vec![half::f16::ZERO; wide.len()];
        elementwise::narrow(&exec, &wide, &mut nwant).unwrap();
        let mut bnwant = vec![half::bf16::ZERO; wide.len()];
        elementwise::narrow(&exec, &wide, &mut bnwant).unwrap();
        for cfg in shapes(wide.len()) {
            let mut got = vec![0f32; halves.len()];
            let out = SharedOut::new(&mut got[..]);
            exec.launch(cfg, |g| half_to_f32_body::<F16>(g, halves.reinterpret_cast(), &out));
            assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "f16->f32 {cfg:?}");

            let mut got = vec![0f32; bhalves.len()];
            let out = SharedOut::new(&mut got[..]);
            exec.launch(cfg, |g| half_to_f32_body::<Bf16>(g, bhalves.reinterpret_cast(), &out));
            assert!(bwant.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "bf16->f32 {cfg:?}");

            let mut got = vec![0u16; wide.len()];
            let out = SharedOut::new(&mut got[..]);
            exec.launch(cfg, |g| f32_to_half_body::<F16>(g, &wide, &out));
            assert_eq!(HalfFloatSliceExt::reinterpret_cast(&nwant[..]), &got[..], "f32->f16 {cfg:?}");

            let mut got = vec![0u16; wide.len()];
            let out = SharedOut::new(&mut got[..]);
            exec.launch(cfg, |g| f32_to_half_body::<Bf16>(g, &wide, &out));
            assert_eq!(HalfFloatSliceExt::reinterpret_cast(&bnwant[..]), &got[..], "f32->bf16 {cfg:?}");
        }
    }
}

#[test]
fn scan_bodies_give_the_sequential_prefix_sums() {
    let lens: Vec<u32> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 20) % 700 + 1).collect();
    let base = 96u64;
    let want: Vec<u64> = lens
        .iter()
        .scan(base, |run, &l| {
            let at = *run;
            *run += l as u64;
            Some(at)
        })
        .collect();
    let total_want = base + lens.iter().map(|&l| l as u64).sum::<u64>();
    for exec in executors() {
        for cfg in shapes(lens.len()) {
            for chunk in [1usize, 64, lens.len().div_ceil(cfg.threads())] {
                let (offsets, total) = exclusive_scan_with(&exec, cfg, chunk, &lens, base);
                assert_eq!(offsets, want, "{cfg:?} chunk {chunk}");
                assert_eq!(total, total_want);
            }
        }
    }
}
