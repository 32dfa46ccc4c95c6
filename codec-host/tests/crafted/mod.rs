//! Streams made by hand, byte by byte from the formats, for the hostile-input tests:
//! headers that lie, and valid streams that declare huge arrays.
#![allow(dead_code)]

/// A full zfp header for an array of `extents` (x first) with mode word `mode` (12 or
/// 64 bits); `elem` is zfp's type code minus one: 2 for f32, 3 for f64.
pub fn zfp_header(elem: u64, extents: &[u64], mode: u64) -> Vec<u8> {
    let width = 48 / extents.len() as u32;
    let meta = extents.iter().rev().fold(0u64, |m, &n| m << width | (n - 1)) << 4 | ((extents.len() as u64 - 1) << 2) | elem;
    // Magic, meta and mode from bit 0, 32 and 84; the mode's bits past 128 go after.
    let bits: u128 = 0x0570_667a | (meta as u128) << 32 | (mode as u128) << 84;
    let nbits: usize = if mode & 0xfff == 0xfff { 148 } else { 96 };
    let mut out: Vec<u8> = bits.to_le_bytes().to_vec();
    out.extend_from_slice(&(mode >> 44).to_le_bytes());
    out.truncate(nbits.div_ceil(8));
    out
}

/// Recomputes an SZx header's checksum (FNV-1a of bytes 0..60), so that edited headers
/// reach the deeper checks.
pub fn resign(stream: &mut [u8]) {
    let sum = stream[..60].iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193));
    stream[60..64].copy_from_slice(&sum.to_le_bytes());
}

/// A consistent SZx stream (docs/formats/szx.md) of `blocks` zero blocks of `block` f64
/// values, in chunks of `chunk` values: a state byte per block, all zero, so the stream
/// takes about `blocks` bytes and declares `blocks * block` values.
pub fn zero_blocks_stream(block: u32, chunk: u32, blocks: u64) -> Vec<u8> {
    let n = blocks * block as u64;
    let chunks = n.div_ceil(chunk as u64);
    let mut s = vec![0u8; 64];
    s[..4].copy_from_slice(&codec_host::szx::MAGIC);
    s[4] = codec_host::szx::VERSION;
    s[5] = 2; // f64
    s[7] = 1; // one dimension
    s[8..16].copy_from_slice(&n.to_le_bytes());
    s[16..24].copy_from_slice(&1u64.to_le_bytes());
    s[24..32].copy_from_slice(&1u64.to_le_bytes());
    s[48..52].copy_from_slice(&block.to_le_bytes());
    s[52..56].copy_from_slice(&chunk.to_le_bytes());
    s[56..60].copy_from_slice(&(chunks as u32).to_le_bytes());
    resign(&mut s);
    for i in 0..chunks {
        let values = (n - i * chunk as u64).min(chunk as u64);
        s.extend_from_slice(&(values.div_ceil(block as u64) as u32).to_le_bytes());
    }
    s.resize(s.len() + blocks as usize, 0);
    s
}
