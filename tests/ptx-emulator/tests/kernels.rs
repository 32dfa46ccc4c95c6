//! Real kernels of the PTX build, run through the interpreter and compared byte for byte
//! with the CPU results of codec-host (the same kernel bodies on the CPU executor).
//! Launch shapes and argument orders follow codec-host/src/cuda.

mod common;

use codec_host::{CpuExecutor, Shape};
use codec_kernels::reduce::ReduceOp;
use common::*;

/// Grid of the grid-stride elementwise kernels for `n` items (256-thread blocks, capped
/// as codec-host caps them for a small device).
fn elementwise_grid(n: usize) -> u32 {
    (n.div_ceil(256) as u32).clamp(1, 8)
}

fn field_f32(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as f32 + seed as f32) * 0.37).sin() * 1e3 + (i % 7) as f32 * 1e-3).collect()
}

#[test]
fn reductions_match_the_cpu() {
    let Some(ptx) = ptx_sm80() else { return };
    let mut dev = Dev::new(&ptx);
    let exec = CpuExecutor::new(1).unwrap();
    let n = 3000;
    let src = field_f32(n, 1);
    let src64: Vec<f64> = src.iter().map(|&v| v as f64 * 1.000001).collect();
    for op in ReduceOp::ALL {
        let acc0 = field_f32(n, 2);
        let mut want = acc0.clone();
        codec_host::elementwise::reduce(&exec, op, &mut want, &src).unwrap();
        let (a, s) = (dev.upload(&acc0), dev.upload(&src));
        let name = codec_kernels::kernels::reduce_name::<f32>(op);
        dev.launch(name, elementwise_grid(n), 256, &[a, s, n as u64]);
        let got: Vec<f32> = dev.download(a, n);
        assert!(got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()), "{name}");

        let acc64: Vec<f64> = acc0.iter().map(|&v| v as f64 / 3.0).collect();
        let mut want = acc64.clone();
        codec_host::elementwise::reduce(&exec, op, &mut want, &src64).unwrap();
        let (a, s) = (dev.upload(&acc64), dev.upload(&src64));
        let name = codec_kernels::kernels::reduce_name::<f64>(op);
        dev.launch(name, elementwise_grid(n), 256, &[a, s, n as u64]);
        let got: Vec<f64> = dev.download(a, n);
        assert!(got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()), "{name}");
    }
}

#[test]
fn half_conversions_match_the_cpu() {
    let Some(ptx) = ptx_sm80() else { return };
    let mut dev = Dev::new(&ptx);
    let exec = CpuExecutor::new(1).unwrap();
    // Every half value widens exactly as on the CPU.
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let n = all.len();
    let halves: Vec<half::f16> = all.iter().map(|&b| half::f16::from_bits(b)).collect();
    let bhalves: Vec<half::bf16> = all.iter().map(|&b| half::bf16::from_bits(b)).collect();
    let mut want = vec![0f32; n];
    codec_host::elementwise::widen(&exec, &halves, &mut want).unwrap();
    let (s, d) = (dev.upload(&all), dev.zeroed::<f32>(n));
    dev.launch("f16_to_f32", elementwise_grid(n), 256, &[s, d, n as u64]);
    assert!(dev.download::<f32>(d, n).iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()));
    codec_host::elementwise::widen(&exec, &bhalves, &mut want).unwrap();
    dev.launch("bf16_to_f32", elementwise_grid(n), 256, &[s, d, n as u64]);
    assert!(dev.download::<f32>(d, n).iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()));

    // Narrowing: normals, subnormals, ties, overflow, infinities and NaNs.
    let mut src: Vec<f32> = field_f32(4000, 3).iter().map(|v| v * 70.0).collect();
    src.extend([0.0, -0.0, 65504.0, 65520.0, 1e-8, -6.1e-5, 5.96e-8, 2.98e-8, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1.0 + 1.0 / 2048.0]);
    src.extend((0..2000).map(|i| f32::from_bits(0x3380_0000 + i * 0x1357)));
    let n = src.len();
    let mut want = vec![half::f16::ZERO; n];
    codec_host::elementwise::narrow(&exec, &src, &mut want).unwrap();
    let (s, d) = (dev.upload(&src), dev.zeroed::<u16>(n));
    dev.launch("f32_to_f16", elementwise_grid(n), 256, &[s, d, n as u64]);
    assert_eq!(dev.download::<u16>(d, n), want.iter().map(|h| h.to_bits()).collect::<Vec<_>>());
    let mut want = vec![half::bf16::ZERO; n];
    codec_host::elementwise::narrow(&exec, &src, &mut want).unwrap();
    dev.launch("f32_to_bf16", elementwise_grid(n), 256, &[s, d, n as u64]);
    assert_eq!(dev.download::<u16>(d, n), want.iter().map(|h| h.to_bits()).collect::<Vec<_>>());
}

#[test]
fn scan_kernels_give_exclusive_prefix_sums() {
    let Some(ptx) = ptx_sm80() else { return };
    let mut dev = Dev::new(&ptx);
    let n = 5000usize;
    let lens: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 20).collect();
    let base = 1u64 << 33;
    // Three launches as CudaBackend::exclusive_scan_on queues them.
    let chunk = n.div_ceil(1 << 15).max(256);
    let n_chunks = codec_kernels::scan::chunk_count(n, chunk);
    let lp = dev.upload(&lens);
    let (pp, tp, op) = (dev.zeroed::<u64>(n_chunks), dev.zeroed::<u64>(1), dev.zeroed::<u64>(n));
    let grid = (n_chunks.div_ceil(256) as u32).max(1);
    let (nn, c, nc) = (n as u64, chunk as u64, n_chunks as u64);
    dev.launch("scan_partials_u32", grid, 256, &[lp, nn, c, pp, nc]);
    dev.launch("scan_partials_exclusive", 1, 1, &[pp, nc, base, tp]);
    dev.launch("scan_apply_u32", grid, 256, &[lp, nn, c, pp, nc, op]);
    let mut acc = base;
    let want: Vec<u64> = lens.iter().map(|&l| {
        let o = acc;
        acc += l as u64;
        o
    }).collect();
    assert_eq!(dev.download::<u64>(op, n), want);
    assert_eq!(dev.download::<u64>(tp, 1), vec![acc]);
}

/// ZFP fixed-rate encode as CudaBackend::zfp_compress_on queues it: the header words
/// first, then the kernel writes every block; the words must equal the CPU stream's.
fn zfp_rate_encode<T: Plain + codec_host::BackendElem>(dev: &mut Dev, data: &[T], shape: Shape, rate: f64) -> (Vec<u64>, ptx_emulator::LaunchStats, std::time::Duration) {
    use codec_host::zfp::{params_for, Header};
    use codec_kernels::bitstream::BitWriter;
    let codec = codec_host::Codec::zfp_rate(rate);
    let one = codec_host::Backend::with_executor(CpuExecutor::new(1).unwrap());
    let cpu = codec.compress(data, shape, &one).unwrap();
    let dims = shape.ndims();
    let header = Header { elem: T::TYPE, shape, params: params_for(codec_host::ZfpMode::FixedRate { rate }, T::TYPE, dims).unwrap() };
    let mut hw = vec![0u64; header.bits().div_ceil(64)];
    let mut w = BitWriter::new(&mut hw[..], 0);
    header.write(&mut w).unwrap();
    w.flush();
    let p = header.params;
    let d = shape.dims();
    let [nx, ny, nz] = [d[0], d.get(1).copied().unwrap_or(1), d.get(2).copied().unwrap_or(1)];
    let nblocks = codec_kernels::zfp::Field::new([nx, ny, nz]).block_count();
    let capacity_bits = header.bits() + nblocks * p.maxbits as usize;
    let n_words = capacity_bits.div_ceil(64);
    let mut words = vec![0u64; n_words];
    words[..hw.len()].copy_from_slice(&hw);
    let (dp, wp, sp) = (dev.upload(data), dev.upload(&words), dev.zeroed::<u32>(1));
    // The kernel's name from its one definition (codec_kernels::kernels).
    let name = format!("zfp_rate_encode_{}_{dims}d", T::TYPE);
    assert!(codec_kernels::kernels::ENTRY_POINTS.contains(&name.as_str()), "{name}");
    let name = name.as_str();
    let args = [dp, data.len() as u64, nx as u64, ny as u64, nz as u64, p.minbits as u64, p.maxbits as u64, p.maxprec as u64, p.minexp as u32 as u64, header.bits() as u64, wp, n_words as u64, sp];
    let t = std::time::Instant::now();
    let stats = dev.launch(name, nblocks.div_ceil(128) as u32, 128, &args);
    let took = t.elapsed();
    assert_eq!(dev.download::<u32>(sp, 1), vec![0], "{name} reported a failure");
    let got = dev.download::<u64>(wp, n_words);
    let want = codec_host_words(&cpu);
    assert_eq!(got[..want.len()], want[..], "{name} {shape}");
    (got, stats, took)
}

/// A stream's bytes as the little-endian words the kernels write.
fn codec_host_words(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(w)
    }).collect()
}

#[test]
fn zfp_fixed_rate_encode_matches_the_cpu() {
    let Some(ptx) = ptx_sm80() else { return };
    let mut dev = Dev::new(&ptx);
    let x = field_f32(1000, 4);
    let (_, stats, took) = zfp_rate_encode(&mut dev, &x, Shape::d1(x.len()), 12.0);
    let ips = stats.instructions() as f64 / took.as_secs_f64();
    println!("zfp_rate_encode_f32_1d: {} instructions in {:?} = {:.1} M instructions/s (informational)", stats.instructions(), took, ips / 1e6);
    let (nx, ny, nz) = (13, 9, 6);
    let x3 = field_f32(nx * ny * nz, 5);
    let (_, stats, took) = zfp_rate_encode(&mut dev, &x3, Shape::d3(nx, ny, nz), 9.5);
    println!("zfp_rate_encode_f32_3d: {} instructions in {:?} = {:.1} M instructions/s (informational)", stats.instructions(), took, stats.instructions() as f64 / took.as_secs_f64() / 1e6);
    let x64: Vec<f64> = field_f32(17 * 11, 6).iter().map(|&v| v as f64 / 7.0).collect();
    zfp_rate_encode(&mut dev, &x64, Shape::d2(17, 11), 20.0);
}

/// SZx encode phase 1 as CudaBackend::szx_compress queues it, against the same body on
/// the CPU (one host thread walking every block).
fn szx_plan<T: Plain + codec_kernels::szx::scalar::SzxFloat>(dev: &mut Dev, data: &[T], name: &str) {
    use codec_kernels::gpu_phases::szx::{plan_body, ChunkLayout};
    use codec_kernels::grid::Grid;
    use codec_kernels::shared::SharedOut;
    use codec_kernels::szx::tolerance::Tolerance;
    let (n, block, chunk_blocks, e) = (data.len(), 128usize, 8usize, 1e-3);
    let nblocks = n.div_ceil(block);
    let (mut states, mut sizes, mut coded) = (vec![0u8; nblocks], vec![0u32; nblocks], vec![0u32; nblocks]);
    let one = Grid { block_idx: 0, block_dim: 1, thread_idx: 0, grid_dim: 1 };
    let l = ChunkLayout { n, block, chunk_blocks };
    plan_body(one, data, &l, &Tolerance::<T>::from_f64(e), &SharedOut::new(&mut states), &SharedOut::new(&mut sizes), &SharedOut::new(&mut coded));
    let dp = dev.upload(data);
    let (stp, szp, cop) = (dev.zeroed::<u8>(nblocks), dev.zeroed::<u32>(nblocks), dev.zeroed::<u32>(nblocks));
    let args = [dp, n as u64, block as u64, chunk_blocks as u64, e.to_bits(), stp, szp, cop, nblocks as u64];
    dev.launch(name, nblocks.div_ceil(128) as u32, 128, &args);
    assert_eq!(dev.download::<u8>(stp, nblocks), states, "{name} states");
    assert_eq!(dev.download::<u32>(szp, nblocks), sizes, "{name} sizes");
    assert_eq!(dev.download::<u32>(cop, nblocks), coded, "{name} coded");
}

#[test]
fn szx_plan_matches_the_cpu() {
    let Some(ptx) = ptx_sm80() else { return };
    let mut dev = Dev::new(&ptx);
    // Smooth stretches, constant (zero) blocks and noisy blocks give every block state.
    let x: Vec<f32> = (0..5000)
        .map(|i| match (i / 128) % 4 {
            0 => 0.0,
            1 => (i as f32 * 1e-3).sin(),
            2 => ((i * 7919) % 1000) as f32 * 1.7,
            _ => 1.0 + (i % 3) as f32 * 1e-4,
        })
        .collect();
    szx_plan(&mut dev, &x, "szx_plan_f32");
    let x64: Vec<f64> = x.iter().map(|&v| v as f64 * 1.1).collect();
    szx_plan(&mut dev, &x64, "szx_plan_f64");
}

#[test]
fn zfp_fixed_rate_decode_matches_the_cpu() {
    use codec_host::zfp::Header;
    let Some(ptx) = ptx_sm80() else { return };
    let mut dev = Dev::new(&ptx);
    let one = codec_host::Backend::with_executor(CpuExecutor::new(1).unwrap());
    let (nx, ny) = (23, 14);
    let x: Vec<f64> = field_f32(nx * ny, 7).iter().map(|&v| v as f64 * 0.01).collect();
    let codec = codec_host::Codec::zfp_rate(16.0);
    let stream = codec.compress(&x, Shape::d2(nx, ny), &one).unwrap();
    let mut want = vec![0f64; x.len()];
    codec_host::decompress_into(&stream, &mut want, &one).unwrap();
    let (header, _) = Header::parse(&stream).unwrap();
    let p = header.params;
    let words = codec_host_words(&stream);
    let (wp, op, sp) = (dev.upload(&words), dev.zeroed::<f64>(x.len()), dev.zeroed::<u32>(1));
    let nblocks = codec_kernels::zfp::Field::new([nx, ny, 1]).block_count();
    let args = [wp, words.len() as u64, nx as u64, ny as u64, 1, p.minbits as u64, p.maxbits as u64, p.maxprec as u64, p.minexp as u32 as u64, header.bits() as u64, op, x.len() as u64, sp];
    dev.launch("zfp_rate_decode_f64_2d", nblocks.div_ceil(128) as u32, 128, &args);
    assert_eq!(dev.download::<u32>(sp, 1), vec![0]);
    let got: Vec<f64> = dev.download(op, x.len());
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
}
