//! The SZx GPU entry points' bodies, run through the CPU grid executor in the phases the
//! CUDA backend launches them (plan, two scans, write; coded flags, scan, payload
//! lengths, scan, decode), give the CPU codec path's plain and pipelined streams byte
//! for byte and its decoded values bit for bit, and reject corrupted streams.

use std::sync::atomic::{AtomicBool, Ordering};

use codec_host::szx::{ErrorBound, SzxHeader, HEADER_LEN};
use codec_host::{Backend, Codec, CpuExecutor, Element, Shape, SzxLayout};
use codec_kernels::gpu_phases::szx::{coded_flags_body, decode_body, payload_lens_body, plan_body, write_body, ChunkLayout, Prefix};
use codec_kernels::grid::LaunchConfig;
use codec_host::scan::exclusive_scan_with;
use codec_kernels::shared::{Cell, Disjoint, SharedOut};
use codec_kernels::szx::{SzxFloat, Tolerance};

/// Launch shapes for `n` blocks: one thread; more threads than blocks; ragged; many.
fn shapes(n: usize) -> [LaunchConfig; 4] {
    [
        LaunchConfig { grid_dim: 1, block_dim: 1 },
        LaunchConfig { grid_dim: 2, block_dim: n as u32 + 3 },
        LaunchConfig::for_items(n, 64),
        LaunchConfig { grid_dim: 7, block_dim: 5 },
    ]
}

/// Exclusive scan with one chunk per thread of `cfg`.
fn scan(exec: &CpuExecutor, cfg: LaunchConfig, lens: &[u32], base: u64) -> (Vec<u64>, u64) {
    exclusive_scan_with(exec, cfg, lens.len().div_ceil(cfg.threads()), lens, base)
}

/// Runs `body` on every grid position of `cfg`; true if every call returned true.
fn all(exec: &CpuExecutor, cfg: LaunchConfig, body: impl Fn(codec_kernels::grid::Grid) -> bool + Sync) -> bool {
    let ok = AtomicBool::new(true);
    exec.launch(cfg, |g| {
        if !body(g) {
            ok.store(false, Ordering::Relaxed);
        }
    });
    ok.into_inner()
}

fn layout_of(h: &SzxHeader) -> ChunkLayout {
    ChunkLayout { n: h.len(), block: h.block_size, chunk_blocks: h.chunk_values / h.block_size }
}

/// GPU-form encode of `data` under the header of `cpu` (the host writes the header).
fn encode<T: Element + SzxFloat + Cell>(exec: &CpuExecutor, cfg: LaunchConfig, data: &[T], cpu: &[u8]) -> Vec<u8> {
    let h = SzxHeader::read(cpu).unwrap();
    let l = layout_of(&h);
    let tol = Tolerance::<T>::from_f64(h.abs_error);
    let nb = l.blocks();
    let (mut states, mut sizes, mut coded) = (vec![0u8; nb], vec![0u32; nb], vec![0u32; nb]);
    {
        let (st, si, co) = (SharedOut::new(&mut states[..]), SharedOut::new(&mut sizes[..]), SharedOut::new(&mut coded[..]));
        exec.launch(cfg, |g| plan_body(g, data, &l, &tol, &st, &si, &co));
    }
    let (s_off, s_total) = scan(exec, cfg, &sizes, 0);
    let (c_off, c_total) = scan(exec, cfg, &coded, 0);
    let total = h.prefix_len() + nb + 2 * c_total as usize + s_total as usize;
    let mut out = vec![0u8; total];
    out[..HEADER_LEN].copy_from_slice(&cpu[..HEADER_LEN]);
    let s = Prefix { offsets: &s_off, total: s_total };
    let c = Prefix { offsets: &c_off, total: c_total };
    {
        let d = Disjoint::new(&mut out[..]);
        // SAFETY: the scans are of this plan's sizes and flags; each block has one thread.
        assert!(all(exec, cfg, |g| unsafe { write_body(g, data, &l, &tol, s, c, h.prefix_len(), HEADER_LEN, &d) }));
    }
    out
}

/// GPU-form decode of `stream`; `None` if a body reports a bad stream.
fn decode<T: Element + SzxFloat + Cell>(exec: &CpuExecutor, cfg: LaunchConfig, stream: &[u8]) -> Option<Vec<T>> {
    let h = SzxHeader::read(stream).ok()?;
    let (lens, end) = h.chunk_lens(stream).ok()?;
    let mut starts = vec![h.prefix_len() as u64];
    for len in lens {
        starts.push(starts.last()? + len as u64);
    }
    assert_eq!(*starts.last()?, end as u64);
    let l = layout_of(&h);
    let nb = l.blocks();
    let mut coded = vec![0u32; nb];
    let co = SharedOut::new(&mut coded[..]);
    if !all(exec, cfg, |g| coded_flags_body(g, stream, &l, &starts, &co)) {
        return None;
    }
    let (c_off, c_total) = scan(exec, cfg, &coded, 0);
    let c = Prefix { offsets: &c_off, total: c_total };
    let mut lens = vec![0u32; nb];
    let le = SharedOut::new(&mut lens[..]);
    if !all(exec, cfg, |g| payload_lens_body::<T>(g, stream, &l, &starts, c, &le)) {
        return None;
    }
    let (s_off, s_total) = scan(exec, cfg, &lens, 0);
    let s = Prefix { offsets: &s_off, total: s_total };
    let mut out = vec![T::default(); h.len()];
    let d = Disjoint::new(&mut out[..]);
    // SAFETY: each block is handled by one grid position.
    all(exec, cfg, |g| unsafe { decode_body(g, stream, &l, &starts, c, s, &d) }).then_some(out)
}

fn same<T: Element>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_f64().to_bits() == y.to_f64().to_bits())
}

fn data<T: Element>(n: usize) -> Vec<T> {
    (0..n)
        .map(|i| {
            let x = i as f64;
            let v = match (i / 300) % 4 {
                0 => (x * 0.01).sin() * 50.0,
                1 => 3.25,
                2 => 0.0,
                _ => (x * 7.7).cos() * 1e-3 + if i % 97 == 0 { f64::NAN } else { 0.0 },
            };
            T::from_f64(v)
        })
        .collect()
}

fn check<T: codec_host::BackendElem + SzxFloat + Cell>() {
    let exec = CpuExecutor::new(3).unwrap();
    let codecs = [
        Codec::szx(ErrorBound::Abs(1e-3)),
        Codec::szx(ErrorBound::Abs(0.0)),
        Codec::szx(ErrorBound::Rel(1e-4)),
        Codec::Szx { bound: ErrorBound::Abs(1e-2), layout: SzxLayout::Pipelined { chunk_values: 512 } },
    ];
    for codec in codecs {
        for n in [1, 127, 2000] {
            let x = data::<T>(n);
            let cpu = codec.compress(&x, Shape::d1(n), &Backend::cpu()).unwrap();
            let mut want = vec![T::default(); n];
            codec_host::decompress_into(&cpu, &mut want, &Backend::cpu()).unwrap();
            let nb = SzxHeader::read(&cpu).map(|h| layout_of(&h).blocks()).unwrap();
            for cfg in shapes(nb) {
                let what = format!("{codec:?} {} n={n} {cfg:?}", T::TYPE);
                assert_eq!(encode(&exec, cfg, &x, &cpu), cpu, "encode {what}");
                assert!(same(&decode::<T>(&exec, cfg, &cpu).expect(&what), &want), "decode {what}");
            }
            // Corruptions are reported (never a panic): every state byte set to an
            // invalid value, a cut frame, a grown chunk length.
            let h = SzxHeader::read(&cpu).unwrap();
            let cfg = shapes(nb)[2];
            let mut bad = cpu.clone();
            bad[h.prefix_len()] = 0x3f;
            assert!(decode::<T>(&exec, cfg, &bad).is_none(), "bad state {codec:?} n={n}");
            let mut grown = cpu.clone();
            grown[HEADER_LEN] = grown[HEADER_LEN].wrapping_add(1);
            grown.push(0);
            assert!(decode::<T>(&exec, cfg, &grown).is_none(), "grown chunk {codec:?} n={n}");
        }
    }
}

#[test]
fn f32_streams_and_values_are_identical() {
    check::<f32>();
}

#[test]
fn f64_streams_and_values_are_identical() {
    check::<f64>();
}
