//! The ZFP GPU entry points' bodies, run through the CPU grid executor in the phases the
//! CUDA backend launches them, give the CPU codec path's streams byte for byte and its
//! decoded values bit for bit: fixed rate (one thread per block, atomic OR into a zeroed
//! stream) and fixed accuracy (slots, scan, compaction; decode through the offsets).

use core::sync::atomic::{AtomicU64, Ordering};

use codec_host::zfp::Header;
use codec_host::{Backend, Codec, CpuExecutor, Element, Shape};
use codec_kernels::bitstream::BitWriter;
use codec_kernels::gpu_phases::zfp::{block_offsets_body, compact_body, decode_fixed_rate_body, decode_indexed_body, encode_slots_body};
use codec_kernels::grid::LaunchConfig;
use codec_host::scan::exclusive_scan_with;
use codec_kernels::shared::{Cell, SharedOut};
use codec_kernels::zfp::fixed_rate::encode_fixed_rate_body;
use codec_kernels::zfp::variable::max_block_bits;
use codec_kernels::zfp::{Dims, Field, FixedRate, Scalar, D1, D2, D3};

fn zeroed(n: usize) -> Vec<AtomicU64> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

fn plain(words: Vec<AtomicU64>) -> Vec<u64> {
    words.into_iter().map(AtomicU64::into_inner).collect()
}

fn bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Launch shapes for `n` blocks: one thread; more threads than blocks; a ragged last
/// block of 128 (cuZFP's block size); many small blocks.
fn shapes(n: usize) -> [LaunchConfig; 4] {
    [
        LaunchConfig { grid_dim: 1, block_dim: 1 },
        LaunchConfig { grid_dim: 2, block_dim: n as u32 + 5 },
        LaunchConfig::for_items(n, 128),
        LaunchConfig { grid_dim: 5, block_dim: 3 },
    ]
}

fn field_of(shape: Shape) -> Field {
    let d = shape.dims();
    Field::new([d[0], d.get(1).copied().unwrap_or(1), d.get(2).copied().unwrap_or(1)])
}

/// The stream's header words (the header is the first `bits` bits).
fn header_words(h: &Header, total_words: usize) -> Vec<AtomicU64> {
    let words = zeroed(total_words);
    let mut w = BitWriter::new(&words[..], 0);
    h.write(&mut w).unwrap();
    w.flush();
    words
}

/// Exclusive scan with one chunk per thread of `cfg`.
fn scan(exec: &CpuExecutor, cfg: LaunchConfig, lens: &[u32], base: u64) -> (Vec<u64>, u64) {
    exclusive_scan_with(exec, cfg, lens.len().div_ceil(cfg.threads()), lens, base)
}

fn check<T: codec_host::BackendElem + Scalar + Cell, D: Dims>(exec: &CpuExecutor, data: &[T], shape: Shape, codec: Codec) {
    let cpu = codec.compress(data, shape, &Backend::cpu()).unwrap();
    let mut cpu_values = vec![T::default(); data.len()];
    codec_host::decompress_into(&cpu, &mut cpu_values, &Backend::cpu()).unwrap();
    let (header, header_bits) = Header::parse(&cpu).unwrap();
    let p = header.params;
    let field = field_of(shape);
    let nblocks = field.block_count();
    let same_values = |got: &[T]| got.iter().zip(&cpu_values).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits());
    for cfg in shapes(nblocks) {
        let what = format!("{codec:?} {} {shape} {cfg:?}", T::TYPE);
        if p.minbits == p.maxbits {
            let layout = FixedRate { field, params: p, header_bits };
            let words = header_words(&header, cpu.len() / 8);
            exec.launch(cfg, |g| assert!(encode_fixed_rate_body::<T, D>(g, data, &layout, &words)));
            let words = plain(words);
            assert_eq!(bytes(&words), cpu, "rate encode {what}");
            let mut got = vec![T::default(); data.len()];
            let out = SharedOut::new(&mut got[..]);
            exec.launch(cfg, |g| assert!(decode_fixed_rate_body::<T, D>(g, &words, &layout, &out)));
            assert!(same_values(&got), "rate decode {what}");
        } else {
            // Phase 1: worst-case slots, word-aligned.
            let slot_bits = max_block_bits::<T, D>(&p).div_ceil(64) * 64;
            let slots = zeroed(nblocks * slot_bits / 64);
            let mut lens = vec![0u32; nblocks];
            {
                let l = SharedOut::new(&mut lens[..]);
                exec.launch(cfg, |g| assert!(encode_slots_body::<T, D>(g, data, &field, &p, slot_bits, &slots, &l)));
            }
            let slots = plain(slots);
            // Phase 2: offsets behind the header.
            let (offsets, total) = scan(exec, cfg, &lens, header_bits as u64);
            // Phase 3: compaction into the header's words.
            let words = header_words(&header, total.div_ceil(64) as usize);
            exec.launch(cfg, |g| compact_body(g, &slots, slot_bits, &lens, &offsets, &words));
            let words = plain(words);
            assert_eq!(bytes(&words), cpu, "accuracy encode {what}");
            // Decode through the index, and the index rebuilt from the stream alone.
            let mut got = vec![T::default(); data.len()];
            let out = SharedOut::new(&mut got[..]);
            exec.launch(cfg, |g| assert!(decode_indexed_body::<T, D>(g, &words, &offsets, &field, &p, &out)));
            assert!(same_values(&got), "accuracy decode {what}");
            let mut rebuilt = vec![0u64; nblocks];
            let mut end = [0u64];
            let (r, e) = (SharedOut::new(&mut rebuilt[..]), SharedOut::new(&mut end[..]));
            exec.launch(cfg, |g| assert!(block_offsets_body::<T, D>(g, &words, header_bits, &p, &r, &e)));
            assert_eq!((rebuilt, end[0]), (offsets.clone(), total), "index {what}");
            // A stream cut short is reported, not decoded past its end.
            let cut = &words[..words.len() / 2];
            let mut scratch = vec![T::default(); data.len()];
            let out = SharedOut::new(&mut scratch[..]);
            let failed = std::sync::atomic::AtomicBool::new(false);
            exec.launch(cfg, |g| {
                if !decode_indexed_body::<T, D>(g, cut, &offsets, &field, &p, &out) {
                    failed.store(true, Ordering::Relaxed);
                }
            });
            assert!(failed.into_inner() || nblocks == 1, "truncation unnoticed {what}");
        }
    }
}

fn field_data<T: Element>(n: usize) -> Vec<T> {
    (0..n).map(|i| T::from_f64(((i as f64) * 0.37).sin() * (1.0 + (i % 13) as f64) + if i % 29 == 0 { 1e-30 } else { 0.0 })).collect()
}

fn all_codecs() -> [Codec; 4] {
    [
        Codec::zfp_rate(8.0),
        Codec::zfp_rate(5.5),
        Codec::zfp_accuracy(1e-3),
        Codec::zfp_accuracy(1e-9),
    ]
}

fn check_type<T: codec_host::BackendElem + Scalar + Cell>() {
    let exec = CpuExecutor::new(3).unwrap();
    for codec in all_codecs() {
        for shape in [Shape::d1(1), Shape::d1(103)] {
            check::<T, D1>(&exec, &field_data::<T>(shape.len()), shape, codec);
        }
        for shape in [Shape::d2(4, 4), Shape::d2(13, 6)] {
            check::<T, D2>(&exec, &field_data::<T>(shape.len()), shape, codec);
        }
        for shape in [Shape::d3(5, 4, 7), Shape::d3(9, 2, 3)] {
            check::<T, D3>(&exec, &field_data::<T>(shape.len()), shape, codec);
        }
    }
}

#[test]
fn f32_streams_and_values_are_identical() {
    check_type::<f32>();
}

#[test]
fn f64_streams_and_values_are_identical() {
    check_type::<f64>();
}
