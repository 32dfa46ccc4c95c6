//! The SZx decoding paths give the same bits: the allocating decoder
//! (`szx::decompress_with`, zeroed memory, zero blocks not written) against decoding
//! into memory already holding other values, on fields of zero blocks, constant blocks,
//! signed zeros and coded blocks, mixed; one thread and several; small and large
//! outputs (the huge-page path, and the streaming stores of large caller's outputs).

use codec_host::szx::{self, ErrorBound, HUGE_PAGE_MIN_BYTES, STREAMING_MIN_BYTES};
use codec_host::elementwise::ReduceOp;
use codec_host::{Backend, Codec, CpuExecutor, Element, Error, OutputWrites, Shape, SzxLayout};

/// A field of runs of block-sized pieces, each of a kind picked by `i`: exact `+0.0`,
/// `-0.0`, a constant, a smooth wave, values within `1e-3` of zero of both signs,
/// isolated spikes among zeros, and `-0.0` among larger values (a coded block that
/// keeps the sign of its zeros).
fn mixed(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let (piece, j) = (i / 128 + seed, i % 128);
            match piece % 7 {
                0 => 0.0,
                1 => -0.0,
                2 => 3.25,
                3 => (i as f32 * 0.01).sin() * 50.0,
                4 => if j % 2 == 0 { 4e-4 } else { -4e-4 },
                5 => if j == 77 { 12.5 } else { 0.0 },
                _ => if j % 3 == 0 { -0.0 } else { (i as f32 * 0.37).sin() * 20.0 },
            }
        })
        .collect()
}

/// The values' bytes, little-endian.
fn le_bytes<T: Element>(v: &[T]) -> Vec<u8> {
    let mut b = Vec::new();
    codec_host::extend_le(v, &mut b);
    b
}

/// Each value's bit pattern.
fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    le_bytes(v).chunks_exact(std::mem::size_of::<T>()).map(|b| b.iter().rev().fold(0u64, |a, &y| a << 8 | y as u64)).collect()
}

/// Decodes `stream` both ways, on one thread and on four, and compares the bits.
fn same_bits(stream: &[u8], n: usize) -> Vec<f32> {
    let mut touched = vec![f32::from_bits(0x7fc0_1234); n];
    codec_host::decompress_into(stream, &mut touched, &Backend::with_executor(CpuExecutor::new(1).unwrap())).unwrap();
    for threads in [1, 4] {
        let (fresh, header) = szx::decompress_with::<f32>(stream, &CpuExecutor::new(threads).unwrap()).unwrap();
        assert_eq!(header.len(), n);
        assert_eq!(bits(&fresh), bits(&touched), "{threads} threads");
    }
    touched
}

#[test]
fn zero_skipping_decoder_equals_decoding_into_used_memory() {
    let (mut negative_zeros, mut kinds) = (0, [false; 3]);
    for (n, seed) in [(1, 0), (127, 3), (128 * 40 + 17, 1), (128 * 7 * 64, 5)] {
        let x = mixed(n, seed);
        for e in [0.0, 1e-3, 1e-1] {
            let stream = Codec::szx(ErrorBound::Abs(e)).compress(&x, Shape::d1(n), &Backend::cpu()).unwrap();
            let back = same_bits(&stream, n);
            for (a, b) in x.iter().zip(&back) {
                assert!(((a - b) as f64).abs() <= e, "E {e}: {a} vs {b}");
            }
            negative_zeros += back.iter().filter(|v| v.to_bits() == (-0.0f32).to_bits()).count();
            let census = szx::describe(&stream).unwrap().blocks;
            kinds[0] |= census.zero > 0;
            kinds[1] |= census.constant > 0;
            kinds[2] |= census.zero > 0 && census.constant + census.quantized + census.direct + census.offset > 0;
        }
    }
    // Values decoded as -0.0 among the zero blocks (whose +0.0 comes from the
    // allocator): a decoder skipping the wrong blocks would lose their sign.
    assert!(negative_zeros > 100, "{negative_zeros} values decoded as -0.0");
    assert_eq!(kinds, [true; 3], "zero blocks, constant blocks, and both mixed with coded ones");
}

/// Runs of constant blocks, of one value and of several, next to zero blocks: every
/// value exact (the decoder writes each run of one value with one fill).
#[test]
fn runs_of_constant_blocks_decode_exactly() {
    let x: Vec<f32> = (0..128 * 70 + 50)
        .map(|i| match (i / 128) % 9 {
            0..=2 => 1.0,
            3 | 4 => 2.5,
            5 => 1.0,
            6 => -7.0,
            _ => 0.0,
        })
        .collect();
    for e in [0.0, 1e-3] {
        let stream = Codec::szx(ErrorBound::Abs(e)).compress(&x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
        let census = szx::describe(&stream).unwrap().blocks;
        assert!(census.constant >= 40 && census.zero >= 15, "{census:?}");
        let back = same_bits(&stream, x.len());
        assert_eq!(bits(&back), bits(&x), "E {e}");
    }
}

/// Outputs large enough for the huge-page advice, with few zero blocks (advised) and
/// with many (not advised, zero pages left untouched); and the same through f64.
#[test]
fn large_outputs_decode_the_same_both_ways() {
    let n = HUGE_PAGE_MIN_BYTES / 4 + 1000;
    let dense: Vec<f32> = (0..n).map(|i| (i as f32 * 1e-3).sin() + 2.0).collect();
    let sparse: Vec<f32> = (0..n).map(|i| if (i / 4096) % 5 == 0 { (i as f32 * 1e-3).cos() } else { 0.0 }).collect();
    for x in [dense, sparse] {
        let stream = Codec::szx(ErrorBound::Abs(1e-3)).compress(&x, Shape::d1(n), &Backend::cpu()).unwrap();
        same_bits(&stream, n);
    }
    let x: Vec<f64> = mixed(50_000, 2).into_iter().map(f64::from).collect();
    let stream = Codec::szx(ErrorBound::Abs(1e-4)).compress(&x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
    let mut touched = vec![f64::NAN; x.len()];
    codec_host::decompress_into(&stream, &mut touched, &Backend::cpu()).unwrap();
    let (fresh, _) = szx::decompress::<f64>(&stream).unwrap();
    assert_eq!(bits(&fresh), bits(&touched));
}

/// Outputs written with streaming stores, at several starts of a caller's buffer
/// relative to the cache lines: large ones (by their size) and pieces of any size
/// (`OutputWrites::Streaming`). The same bits as the allocating decoder, which writes
/// through the caches, and the buffer's values around the output left alone. A writer
/// that misplaced the partial lines at block, run, tile or output edges would show here.
#[test]
fn streamed_outputs_decode_the_same() {
    fn check<T: codec_host::BackendElem>(x: &[T], starts: &[usize], writes: OutputWrites) {
        let stream = Codec::szx(ErrorBound::Abs(1e-3)).compress(x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
        let (fresh, _) = szx::decompress_with::<T>(&stream, &CpuExecutor::new(1).unwrap()).unwrap();
        let want = le_bytes(&fresh);
        let n = x.len();
        let old = T::from_f64(-7.25);
        let old_bits = bits(&[old])[0];
        let mut buf = vec![old; n + 16];
        for &start in starts {
            for threads in [1, 3] {
                buf.iter_mut().for_each(|v| *v = old);
                let backend = Backend::with_executor(CpuExecutor::new(threads).unwrap());
                codec_host::decompress_into_with(&stream, &mut buf[start..start + n], writes, &backend).unwrap();
                assert!(le_bytes(&buf[start..start + n]) == want, "{n} values at {start}, {threads} threads, {writes:?}");
                let around = [bits(&buf[..start]), bits(&buf[start + n..])].concat();
                assert!(around.iter().all(|&b| b == old_bits), "{n} values at {start}: a write outside the output");
            }
        }
    }
    let n = STREAMING_MIN_BYTES / 4 + 333;
    check(&mixed(n, 4), &[0, 1, 6, 15], OutputWrites::BySize);
    let x: Vec<f64> = mixed(STREAMING_MIN_BYTES / 8 + 77, 1).into_iter().map(f64::from).collect();
    check(&x, &[0, 3], OutputWrites::BySize);
    for (n, seed) in [(1, 2), (15, 0), (127, 3), (128 * 5 + 3, 5), (128 * 64 * 3 + 17, 1), (300_001, 6)] {
        check(&mixed(n, seed), &[0, 1, 6, 15], OutputWrites::Streaming);
        let x: Vec<f64> = mixed(n, seed + 1).into_iter().map(f64::from).collect();
        check(&x, &[0, 5], OutputWrites::Streaming);
    }
}

/// Reducing as it decodes gives the bits of decoding and then reducing, for every
/// operation, on fields of every block kind (one thread and several, plain and
/// pipelined streams, f32 and f64), into accumulators holding signed zeros,
/// infinities and NaN; zfp streams take the decode-then-reduce path. Cut streams are
/// errors, as is an accumulator shorter than the stream.
#[test]
fn reducing_decoder_equals_decode_then_reduce() {
    fn check<T: codec_host::BackendElem>(x: &[T], acc: &[T], codecs: &[Codec]) {
        let cpu = Backend::cpu();
        for codec in codecs {
            let stream = codec.compress(x, Shape::d1(x.len()), &cpu).unwrap();
            let mut decoded = vec![T::default(); x.len()];
            codec_host::decompress_into(&stream, &mut decoded, &cpu).unwrap();
            for op in ReduceOp::ALL {
                let mut want = acc.to_vec();
                cpu.reduce(op, &mut want, &decoded).unwrap();
                for threads in [1, 3] {
                    let backend = Backend::with_executor(CpuExecutor::new(threads).unwrap());
                    // A longer accumulator: the values after the stream's are left alone.
                    let mut got = acc.to_vec();
                    got.push(acc[0]);
                    let info = codec_host::decompress_reduce(&stream, &mut got, op, &backend).unwrap();
                    assert_eq!(info.shape.len(), x.len());
                    assert!(bits(&got[..x.len()]) == bits(&want) && bits(&got[x.len()..]) == bits(&acc[..1]), "{codec} {op:?}, {threads} threads");
                }
            }
            let mut short = acc[1..].to_vec();
            assert!(matches!(codec_host::decompress_reduce(&stream, &mut short, ReduceOp::Sum, &cpu), Err(Error::BufferTooSmall { .. })), "{codec}");
            for cut in (0..stream.len()).step_by(stream.len() / 50 + 1) {
                assert!(codec_host::decompress_reduce(&stream[..cut], &mut acc.to_vec(), ReduceOp::Sum, &cpu).is_err(), "{codec}, cut at {cut}");
            }
        }
    }
    let codecs = [
        Codec::szx(ErrorBound::Abs(1e-3)),
        Codec::szx(ErrorBound::Abs(0.0)),
        Codec::Szx { bound: ErrorBound::Abs(1e-2), layout: SzxLayout::Pipelined { chunk_values: 128 * 30 } },
        Codec::zfp_accuracy(1e-3),
    ];
    let n = 128 * 7 * 20 + 61;
    let specials = [-0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e30, -2.5];
    let acc: Vec<f32> = (0..n).map(|i| if i % 5 == 0 { specials[i / 5 % specials.len()] } else { (i as f32 * 0.21).cos() * 30.0 }).collect();
    check(&mixed(n, 3), &acc, &codecs);
    let wide = |v: Vec<f32>| v.into_iter().map(f64::from).collect::<Vec<f64>>();
    check(&wide(mixed(n, 6)), &wide(acc), &codecs);
}

/// Several streams reduced together (`decompress_reduce_all`) give the bits of copying
/// the first values in and reducing the streams one after the other: every operation,
/// one to four streams of every block kind (chunks of several tiles and a partial last
/// block), with and without the first values given apart, one thread (the streams
/// reduced tile by tile) and three, f32 and f64, zfp and SZx streams of differing
/// layouts (each in turn). Cut or corrupt streams and unequal counts are errors.
#[test]
fn streams_reduced_together_equal_reduced_in_turn() {
    fn check<T: codec_host::BackendElem>(fields: &[Vec<T>], acc: &[T], codecs: &[Codec]) {
        let cpu = Backend::cpu();
        let n = acc.len();
        let streams: Vec<Vec<u8>> = fields.iter().zip(codecs.iter().cycle()).map(|(x, c)| c.compress(x, Shape::d1(n), &cpu).unwrap()).collect();
        let init: Vec<T> = acc.iter().rev().copied().collect();
        for k in 1..=streams.len() {
            let some: Vec<&[u8]> = streams[..k].iter().map(Vec::as_slice).collect();
            for op in ReduceOp::ALL {
                for first in [None, Some(&init[..])] {
                    let mut want = first.unwrap_or(acc).to_vec();
                    for s in &some {
                        codec_host::decompress_reduce(s, &mut want, op, &cpu).unwrap();
                    }
                    for threads in [1, 3] {
                        let backend = Backend::with_executor(CpuExecutor::new(threads).unwrap());
                        // One more value than the streams hold: left alone.
                        let mut got = acc.to_vec();
                        got.push(acc[1]);
                        codec_host::decompress_reduce_all(&some, first, &mut got, op, &backend).unwrap();
                        let what = format!("{k} streams of {codecs:?}, {op:?}, init {}, {threads} threads", first.is_some());
                        assert!(bits(&got[..n]) == bits(&want) && bits(&got[n..]) == bits(&acc[1..2]), "{what}");
                    }
                }
            }
        }
        let all: Vec<&[u8]> = streams.iter().map(Vec::as_slice).collect();
        let one = Backend::with_executor(CpuExecutor::new(1).unwrap());
        let mut got = acc.to_vec();
        assert!(matches!(codec_host::decompress_reduce_all(&all, Some(&init[1..]), &mut got, ReduceOp::Sum, &one), Err(Error::BufferTooSmall { .. })));
        for cut in (0..all[1].len()).step_by(all[1].len() / 40 + 1) {
            let cut_one = [all[0], &all[1][..cut]];
            assert!(codec_host::decompress_reduce_all(&cut_one, None, &mut got, ReduceOp::Sum, &one).is_err(), "cut at {cut}");
        }
        let shorter = codecs[0].compress(&fields[0][1..], Shape::d1(n - 1), &cpu).unwrap();
        assert!(matches!(codec_host::decompress_reduce_all(&[all[0], &shorter], None, &mut got, ReduceOp::Sum, &one), Err(Error::BadDims(_))));
    }
    let n = 128 * 64 * 3 + 77;
    let specials = [-0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e30, -2.5];
    let acc: Vec<f32> = (0..n).map(|i| if i % 5 == 0 { specials[i / 5 % specials.len()] } else { (i as f32 * 0.21).cos() * 30.0 }).collect();
    let fields: Vec<Vec<f32>> = (0..4).map(|s| mixed(n, s * 2)).collect();
    let szx = Codec::szx(ErrorBound::Abs(1e-3));
    let pipelined = Codec::Szx { bound: ErrorBound::Abs(1e-2), layout: SzxLayout::Pipelined { chunk_values: 128 * 100 } };
    check(&fields, &acc, &[szx]);
    check(&fields, &acc, &[pipelined]);
    check(&fields, &acc, &[szx, Codec::szx(ErrorBound::Abs(0.0)), Codec::zfp_accuracy(1e-3)]);
    check(&fields, &acc, &[szx, pipelined]);
    let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    check(&fields.iter().map(|f| wide(f)).collect::<Vec<_>>(), &wide(&acc), &[szx]);
}

/// Every truncation and many corruptions of a stream with zero, constant and coded
/// blocks: the allocating decoder gives a typed error or the values the other decoder
/// gives, never a panic.
#[test]
fn truncated_and_corrupt_streams_are_errors_for_the_allocating_decoder() {
    let x = mixed(128 * 21, 0);
    let stream = Codec::szx(ErrorBound::Abs(1e-3)).compress(&x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
    let exec = CpuExecutor::new(1).unwrap();
    for cut in 0..stream.len() {
        assert!(szx::decompress_with::<f32>(&stream[..cut], &exec).is_err(), "cut at {cut}");
    }
    for at in 0..stream.len() {
        for bit in [0, 3, 7] {
            let mut s = stream.clone();
            s[at] ^= 1 << bit;
            let mut touched = vec![1f32; x.len()];
            let plain = codec_host::decompress_into(&s, &mut touched, &Backend::with_executor(CpuExecutor::new(1).unwrap()));
            match (szx::decompress_with::<f32>(&s, &exec), plain) {
                (Ok((v, _)), Ok(_)) => assert_eq!(bits(&v), bits(&touched[..v.len()]), "byte {at} bit {bit}"),
                // A header declaring more values than the buffer given to the other.
                (Ok((v, _)), Err(Error::BufferTooSmall { .. })) => assert!(v.len() > x.len()),
                (Err(_), Err(_)) => {}
                (a, b) => panic!("byte {at} bit {bit}: the decoders disagree: {:?} vs {b:?}", a.map(|(v, _)| v.len())),
            }
        }
    }
}

/// One thread (each frame one tile, its blocks checked as they are decoded) and
/// several (the frames cut into tiles first, by a pass over the states and sizes) give
/// the same verdict and the same values on cut and corrupted streams of several tiles:
/// plain (one chunk) and pipelined (several); both reject a frame longer than its
/// blocks.
#[test]
fn one_thread_and_several_agree_on_corrupt_streams() {
    let x = mixed(128 * 150 + 40, 2);
    let one = Backend::with_executor(CpuExecutor::new(1).unwrap());
    let three = Backend::with_executor(CpuExecutor::new(3).unwrap());
    let plain = Codec::szx(ErrorBound::Abs(1e-3)).compress(&x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
    let piped = Codec::Szx { bound: ErrorBound::Abs(1e-3), layout: SzxLayout::Pipelined { chunk_values: 128 * 70 } }.compress(&x, Shape::d1(x.len()), &Backend::cpu()).unwrap();
    let (mut rejected, mut decoded) = (0, 0);
    for stream in [plain, piped] {
        let decode = |s: &[u8], backend: &Backend| {
            let mut out = vec![f32::from_bits(0x7fc0_5678); x.len()];
            codec_host::decompress_into(s, &mut out, backend).map(|_| bits(&out))
        };
        let mut cases: Vec<Vec<u8>> = (0..stream.len()).step_by(197).map(|cut| stream[..cut].to_vec()).collect();
        // A third of the bytes of the header, the chunk table, the states and the
        // sizes, then a sample of the payloads.
        for at in (0..stream.len()).filter(|&at| at < 600 && at % 3 == 0 || at % 37 == 0) {
            for bit in [0, 5] {
                let mut s = stream.clone();
                s[at] ^= 1 << bit;
                cases.push(s);
            }
        }
        // The last frame one byte longer than its blocks take (its table entry and the
        // stream grown by a byte): every block decodes, only the frame's end is wrong.
        let header = szx::SzxHeader::read(&stream).unwrap();
        let entry = szx::HEADER_LEN + szx::CHUNK_ENTRY_LEN * (header.chunk_count - 1);
        let mut longer = stream.clone();
        let len = u32::from_le_bytes(longer[entry..entry + 4].try_into().unwrap());
        longer[entry..entry + 4].copy_from_slice(&(len + 1).to_le_bytes());
        longer.push(0);
        assert!(decode(&longer, &one).is_err() && decode(&longer, &three).is_err());
        for s in &cases {
            let (a, b) = (decode(s, &one), decode(s, &three));
            assert_eq!(a.is_ok(), b.is_ok(), "{} bytes: one thread {:?}, three {:?}", s.len(), a.as_ref().err(), b.as_ref().err());
            if let (Ok(a), Ok(b)) = (&a, &b) {
                assert_eq!(a, b);
            }
            rejected += a.is_err() as usize;
            decoded += a.is_ok() as usize;
        }
    }
    assert!(rejected > 200 && decoded > 200, "{rejected} rejected, {decoded} decoded");
}
