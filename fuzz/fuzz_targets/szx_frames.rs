//! The SZx chunk frame parser and block decoders, behind no header checksum: the first
//! bytes choose a layout (element type, block size, value count), the rest is one
//! chunk's frame, decoded as `Decoder::decode_chunk` decodes a chunk that arrived alone.
#![no_main]

use codec_host::szx::{pipelined::Decoder, SzxOptions};
use codec_host::{Element, Shape};
use codec_host_fuzz::{exec, typed};
use libfuzzer_sys::fuzz_target;

fn decode<T: Element>(block: usize, n: usize, frame: &[u8]) {
    let opts = SzxOptions { block_size: block, chunk_values: n.div_ceil(block).max(1) * block };
    let dec = Decoder::for_array::<T>(Shape::d1(n), &opts).expect("a valid layout");
    let mut out = vec![T::default(); n];
    if typed("decode_chunk", dec.decode_chunk(0, frame, &mut out, exec())).is_some() {
        // One state byte at least per block: the frame vouches for the values.
        assert!(frame.len() >= n.div_ceil(block));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((layout, frame)) = data.split_first_chunk::<3>() else { return };
    let block = [1, 3, 8, 32, 128, 4096][layout[0] as usize % 6];
    let n = 1 + u16::from_le_bytes([layout[1], layout[2] & 0x7f]) as usize;
    if layout[2] & 0x80 == 0 {
        decode::<f32>(block, n, frame);
    } else {
        decode::<f64>(block, n, frame);
    }
});
