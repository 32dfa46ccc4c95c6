//! The pipelined SZx decoder fed a stream in two pieces (the split point is the first
//! input byte): it decodes the same chunks and values as the whole-stream decoder.
#![no_main]

use codec_host::szx::{self, pipelined};
use codec_host::{BackendElem, ElemType};
use codec_host_fuzz::{backends, bits, exec, output, typed};
use libfuzzer_sys::fuzz_target;

fn decode<T: BackendElem>(stream: &[u8], split: usize, n: usize) {
    let exec = exec();
    let mut whole = output::<T>(n);
    let plain = typed("decompress_into", codec_host::decompress_into(stream, &mut whole, backends()[0]));
    let Some(mut dec) = typed("Decoder::new", pipelined::Decoder::new(stream)) else {
        assert!(plain.is_none(), "the plain decoder took a stream the pipelined one refused");
        return;
    };
    let mut out = output::<T>(n);
    let mut done = Vec::new();
    let first = typed("first piece", dec.decode_available(&stream[..split], &mut out, exec, |c| done.push(c.index)));
    let rest = first.and_then(|_| typed("second piece", dec.decode_available(stream, &mut out, exec, |c| done.push(c.index))));
    assert_eq!(done, (0..done.len()).collect::<Vec<_>>(), "chunks out of order");
    if plain.is_some() {
        assert!(rest.is_some() && dec.is_done(), "the pipelined decoder did not finish a valid stream");
        assert_eq!(bits(&out), bits(&whole));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else { return };
    let split = stream.len() * cut as usize / 255;
    let Some(header) = typed("read", szx::SzxHeader::read(stream)) else { return };
    match header.elem {
        ElemType::F32 => decode::<f32>(stream, split, header.len()),
        ElemType::F64 => decode::<f64>(stream, split, header.len()),
    }
});
