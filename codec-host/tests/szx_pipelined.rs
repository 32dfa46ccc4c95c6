//! The pipelined SZx stream: chunk-by-chunk compression with callbacks, decoding of
//! chunks as they arrive, worst-case sizes, and the codec-level entry points.

mod szx_common;

use codec_host::szx::{self, pipelined, ErrorBound, SzxOptions};
use codec_host::{Backend, Codec, CpuExecutor, Error, Shape, SzxLayout};
use szx_common::{as_f32, as_f64, check_all, data, Rng, KINDS};

fn exec() -> CpuExecutor {
    CpuExecutor::new(1).unwrap()
}

fn sample(n: usize, kind: usize) -> Vec<f32> {
    data(kind, n, 17, as_f32).into_iter().map(|v| v as f32).collect()
}

#[test]
fn callbacks_report_every_chunk_in_order_and_the_bytes_match() {
    let ex = exec();
    let opts = SzxOptions { block_size: 128, chunk_values: 1024 };
    for n in [0usize, 1, 1023, 1024, 1025, 10_000] {
        let x = sample(n, 0);
        let mut buf = vec![0u8; pipelined::max_compressed_len::<f32>(n, &opts)];
        let mut seen = Vec::new();
        let mut enc = pipelined::Encoder::new(&x, Shape::d1(n), ErrorBound::Abs(1e-4), &opts, &ex).unwrap();
        let len = enc
            .compress_into(&mut buf, &ex, |done, bytes| {
                seen.push((done.clone(), bytes.to_vec()));
            })
            .unwrap();
        let two = CpuExecutor::new(2).unwrap();
        let whole = pipelined::Encoder::new(&x, Shape::d1(n), ErrorBound::Abs(1e-4), &opts, &two).and_then(|e| e.into_vec(&two)).unwrap();
        assert_eq!(&buf[..len], &whole[..], "n = {n}");
        assert_eq!(seen.len(), n.div_ceil(1024));
        let mut at = pipelined::prefix_len(&whole).unwrap();
        for (i, (done, bytes)) in seen.iter().enumerate() {
            assert_eq!(done.index, i);
            assert_eq!(done.values, i * 1024..((i + 1) * 1024).min(n));
            assert_eq!(done.bytes.start, at);
            assert_eq!(&whole[done.bytes.clone()], &bytes[..]);
            at = done.bytes.end;
        }
        assert_eq!(at, len);
    }
}

#[test]
fn chunks_compressed_into_separate_buffers_form_the_same_stream() {
    let ex = exec();
    let x = sample(7000, 6);
    let opts = SzxOptions { block_size: 64, chunk_values: 2048 };
    let mut enc = pipelined::Encoder::new(&x, Shape::d1(x.len()), ErrorBound::Rel(1e-3), &opts, &ex).unwrap();
    assert_eq!(enc.header().chunk_count, 4);
    let mut chunks = Vec::new();
    for i in 0..enc.header().chunk_count {
        let mut b = vec![0u8; enc.max_chunk_len(i)];
        let len = enc.compress_chunk(i, &mut b, &ex).unwrap();
        b.truncate(len);
        chunks.push(b);
    }
    assert!(matches!(enc.compress_chunk(4, &mut [0u8; 100], &ex), Err(Error::ParamOutOfRange(_))));
    assert!(matches!(enc.compress_chunk(0, &mut [0u8; 10], &ex), Err(Error::BufferTooSmall { .. })));
    let lens: Vec<usize> = chunks.iter().map(Vec::len).collect();
    let mut stream = vec![0u8; enc.prefix_len()];
    enc.write_prefix(&mut stream, &lens).unwrap();
    for c in &chunks {
        stream.extend_from_slice(c);
    }
    let whole = pipelined::Encoder::new(&x, Shape::d1(x.len()), ErrorBound::Rel(1e-3), &opts, &ex).and_then(|e| e.into_vec(&ex)).unwrap();
    assert_eq!(stream, whole);

    // Chunks decode on their own, in any order.
    let dec = pipelined::Decoder::new(&stream).unwrap();
    let mut back = vec![f32::NAN; x.len()];
    for i in (0..4).rev() {
        assert_eq!(dec.decode_chunk(i, &chunks[i], &mut back, &ex).unwrap(), dec.header().chunk_values(i));
    }
    assert_eq!(check_all(&x, &back, dec.header().abs_error), Ok(()));
    assert!(matches!(dec.decode_chunk(4, &chunks[0], &mut back, &ex), Err(Error::ParamOutOfRange(_))));
    // A receiver that knows the layout needs no header at all.
    let bare = pipelined::Decoder::for_array::<f32>(Shape::d1(x.len()), &opts).unwrap();
    let mut again = vec![0f32; x.len()];
    for (i, c) in chunks.iter().enumerate() {
        bare.decode_chunk(i, c, &mut again, &ex).unwrap();
    }
    assert!(back.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn a_decoder_fed_growing_prefixes_decodes_each_chunk_once_it_has_arrived() {
    let ex = exec();
    let mut r = Rng::new(3);
    for kind in 0..KINDS {
        let x: Vec<f64> = data(kind, 3000 + kind * 100, kind as u64, as_f64);
        let opts = SzxOptions { block_size: 32, chunk_values: 512 };
        let stream = pipelined::Encoder::new(&x, Shape::d1(x.len()), ErrorBound::Abs(1e-5), &opts, &ex).and_then(|e| e.into_vec(&ex)).unwrap();
        let mut dec = pipelined::Decoder::new(&stream[..szx::HEADER_LEN]).unwrap();
        let (_, ends) = chunk_ends(&stream);
        let mut back = vec![0f64; x.len()];
        let mut cut = 0;
        let mut order = Vec::new();
        while cut < stream.len() {
            cut = (cut + 1 + r.below(400) as usize).min(stream.len());
            let before = dec.chunks_decoded();
            let got = dec.decode_available(&stream[..cut], &mut back, &ex, |d| order.push(d.index)).unwrap();
            let expected = if cut >= dec.header().prefix_len() { ends.iter().filter(|&&e| e <= cut).count() } else { 0 };
            assert_eq!(got, before..expected, "cut {cut}");
        }
        assert!(dec.is_done());
        assert_eq!(order, (0..ends.len()).collect::<Vec<_>>());
        assert_eq!(check_all(&x, &back, 1e-5), Ok(()));
    }
}

/// The prefix length and each chunk's end offset, from the table.
fn chunk_ends(stream: &[u8]) -> (usize, Vec<usize>) {
    let info = szx::describe(stream).unwrap();
    let mut at = info.header.prefix_len();
    let ends = info.chunk_lens.iter().map(|l| {
        at += l;
        at
    });
    (info.header.prefix_len(), ends.collect())
}

#[test]
fn the_worst_case_bound_covers_incompressible_data() {
    let ex = exec();
    for n in [0usize, 1, 2, 3, 13, 127, 128, 129, 5121, 20_000] {
        for block in [1usize, 4, 128] {
            let opts = SzxOptions { block_size: block, chunk_values: block * 5 };
            // Random f64 bit patterns, losslessly: every block stays raw, so the bound is
            // attained exactly (an over-estimate fails here as an under-estimate fails
            // compress_into), and the values come back bit for bit.
            let x: Vec<f64> = data(8, n, n as u64, as_f64);
            let mut out = vec![0u8; pipelined::max_compressed_len::<f64>(n, &opts)];
            let len = pipelined::Encoder::new(&x, Shape::d1(n), ErrorBound::Abs(0.0), &opts, &ex).and_then(|mut e| e.compress_into(&mut out, &ex, |_, _| {})).unwrap();
            assert_eq!(len, out.len(), "pipelined, n = {n}, block {block}");
            let mut plain = vec![0u8; szx::max_compressed_len::<f64>(n, &opts)];
            let plain_len = pipelined::Encoder::plain(&x, Shape::d1(n), ErrorBound::Abs(0.0), opts.block_size, &ex).and_then(|mut e| e.compress_into(&mut plain, &ex, |_, _| {})).unwrap();
            assert_eq!(plain_len, plain.len(), "plain, n = {n}, block {block}");
            for stream in [&out, &plain] {
                let mut back = vec![0f64; n];
                codec_host::decompress_into(stream, &mut back, &Backend::cpu()).unwrap();
                assert!(x.iter().zip(&back).all(|(a, b)| a.to_bits() == b.to_bits()), "n = {n}, block {block}");
            }
            let x32: Vec<f32> = data(8, n, n as u64, as_f32).into_iter().map(|v| v as f32).collect();
            let mut out = vec![0u8; pipelined::max_compressed_len::<f32>(n, &opts)];
            pipelined::Encoder::new(&x32, Shape::d1(n), ErrorBound::Abs(0.0), &opts, &ex).and_then(|mut e| e.compress_into(&mut out, &ex, |_, _| {})).unwrap();
        }
    }
    let x = sample(1000, 8);
    let mut small = vec![0u8; 100];
    let err = pipelined::Encoder::plain(&x, Shape::d1(1000), ErrorBound::Abs(0.0), SzxOptions::default().block_size, &ex).and_then(|mut e| e.compress_into(&mut small, &ex, |_, _| {})).unwrap_err();
    assert!(matches!(err, Error::BufferTooSmall { .. }));
}

#[test]
fn codec_level_streams_of_both_kinds() {
    let x = sample(12_345, 0);
    let shape = Shape::d3(5, 3, 823);
    for codec in [
        Codec::szx(ErrorBound::Abs(1e-3)),
        Codec::szx(ErrorBound::Rel(1e-3)),
        Codec::Szx { bound: ErrorBound::Abs(1e-3), layout: SzxLayout::Pipelined { chunk_values: 5120 } },
        Codec::Szx { bound: ErrorBound::Rel(1e-2), layout: SzxLayout::Pipelined { chunk_values: 256 } },
    ] {
        let stream = codec.compress(&x, shape, &Backend::cpu()).unwrap();
        let info = codec_host::inspect(&stream).unwrap();
        assert_eq!((info.shape, info.stream_bytes, info.elem), (shape, stream.len(), codec_host::ElemType::F32));
        match (codec, info.codec) {
            (Codec::Szx { bound: ErrorBound::Rel(a), layout: SzxLayout::Plain }, Codec::Szx { bound: ErrorBound::Rel(b), layout: SzxLayout::Plain }) => assert_eq!(a, b),
            (a, b) => assert_eq!(a, b),
        }
        let mut back = vec![0f32; x.len()];
        codec_host::decompress_into(&stream, &mut back, &Backend::cpu()).unwrap();
        let e = szx::describe(&stream).unwrap().header.abs_error;
        assert_eq!(check_all(&x, &back, e), Ok(()));
        let mut wrong = vec![0f64; x.len()];
        assert!(matches!(codec_host::decompress_into(&stream, &mut wrong, &Backend::cpu()), Err(Error::TypeMismatch { .. })));
    }
    let info = szx::describe(&Codec::Szx { bound: ErrorBound::Abs(1e-3), layout: SzxLayout::Pipelined { chunk_values: 1280 } }.compress(&x, shape, &Backend::cpu()).unwrap()).unwrap();
    assert_eq!((info.header.pipelined, info.header.chunk_count, info.chunk_lens.len()), (true, 10, 10));
    let b = info.blocks;
    assert_eq!(b.total(), x.len().div_ceil(128));
}

#[test]
fn bad_parameters_are_refused() {
    let x = sample(100, 0);
    let ex = exec();
    let compress = |bound, block, chunk| pipelined::Encoder::new(&x, Shape::d1(100), bound, &SzxOptions { block_size: block, chunk_values: chunk }, &ex).and_then(|e| e.into_vec(&ex));
    for (bound, block, chunk) in [
        (ErrorBound::Abs(-1.0), 128, 512),
        (ErrorBound::Abs(f64::NAN), 128, 512),
        (ErrorBound::Abs(f64::INFINITY), 128, 512),
        (ErrorBound::Rel(-0.1), 128, 512),
        (ErrorBound::Abs(1e-3), 0, 512),
        (ErrorBound::Abs(1e-3), 5000, 5000),
        (ErrorBound::Abs(1e-3), 128, 500),
        (ErrorBound::Abs(1e-3), 128, 0),
    ] {
        assert!(matches!(compress(bound, block, chunk), Err(Error::ParamOutOfRange(_))), "{bound:?} {block} {chunk}");
    }
    assert!(matches!(Codec::szx(ErrorBound::Abs(0.1)).compress(&x, Shape::d1(99), &Backend::cpu()), Err(Error::BadDims(_))));
}

#[test]
fn relative_bounds_ignore_non_finite_values_and_f64_works_the_same() {
    let mut x: Vec<f64> = (0..1000).map(|i| i as f64).collect();
    x[10] = f64::NAN;
    x[20] = f64::INFINITY;
    let s = Codec::szx(ErrorBound::Rel(1e-3)).compress(&x, Shape::d1(1000), &Backend::cpu()).unwrap();
    let (back, h) = szx::decompress::<f64>(&s).unwrap();
    assert_eq!(h.abs_error, 0.999);
    assert!(back[10].is_nan() && back[20] == f64::INFINITY);
    assert_eq!(check_all(&x, &back, 0.999), Ok(()));
}

#[test]
fn the_one_pass_encoder_writes_every_byte_of_dirty_room() {
    // The one-thread encoder reuses its room from stream to stream, and `encode_into`
    // takes the caller's buffer as it is: neither may lean on zeroed bytes. Every kind
    // of data after every other (what one kind leaves the next finds), and into a
    // buffer of 0xA5, against the two-pass parallel writer.
    let (one, two) = (exec(), CpuExecutor::new(2).unwrap());
    let n = 20_000;
    for round in 0..2 {
        for kind in 0..KINDS {
            let x = sample(n, (kind + round) % KINDS);
            let enc = |ex: &CpuExecutor| pipelined::Encoder::plain(&x, Shape::d1(n), ErrorBound::Rel(1e-3), 64, ex).unwrap();
            let want = enc(&two).into_vec(&two).unwrap();
            assert_eq!(enc(&one).into_vec(&one).unwrap(), want, "kind {kind}, round {round}");
            let mut dirty = vec![0xA5u8; want.len() + 4096];
            let len = enc(&one).encode_into(&mut dirty, &one).unwrap();
            assert_eq!(&dirty[..len], &want[..], "kind {kind}, round {round}, caller's buffer");
        }
    }
}
