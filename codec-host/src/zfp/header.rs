//! zfp's full stream header (`ZFP_HEADER_FULL`): 32-bit magic, 52-bit field metadata,
//! 12- or 64-bit mode word, written LSB first with no padding before the first block.

use codec_kernels::bitstream::{BitReader, BitWriter, WordSink};
use codec_kernels::zfp::Params;

use super::mode::{mode_word, params_of_mode};
use super::words::words_from_bytes;
use crate::{ElemType, Error, Result, Shape};

/// 'z', 'f', 'p', then codec version 5 (zfp 1.0).
const MAGIC: u64 = 0x0570_667a;
const MAGIC_BITS: u32 = 32;
const META_BITS: u32 = 52;
const SHORT_MODE_BITS: u32 = 12;
const LONG_MODE_BITS: u32 = 64;
/// Longest header in bits.
pub const MAX_HEADER_BITS: usize = (MAGIC_BITS + META_BITS + LONG_MODE_BITS) as usize;

/// What a zfp header says about a stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    pub elem: ElemType,
    pub shape: Shape,
    pub params: Params,
}

/// Bits per extent in the metadata for 1, 2 and 3 dimensions.
fn extent_bits(dims: usize) -> u32 {
    48 / dims as u32
}

impl Header {
    fn mode(&self) -> u64 {
        mode_word(&self.params, self.shape.ndims())
    }

    /// Header length in bits (96 with a short mode word, 148 with a long one).
    pub fn bits(&self) -> usize {
        let mode_bits = if self.mode() & 0xfff == 0xfff { LONG_MODE_BITS } else { SHORT_MODE_BITS };
        (MAGIC_BITS + META_BITS + mode_bits) as usize
    }

    /// The 52-bit field metadata: type and dimensionality in the low 4 bits, then each
    /// extent minus one, x first. Fails if an extent does not fit, as zfp does.
    fn meta(&self) -> Result<u64> {
        let dims = self.shape.dims();
        let width = extent_bits(dims.len());
        let mut meta = 0u64;
        for &n in dims.iter().rev() {
            if n == 0 || (n - 1) as u64 >> width != 0 {
                return Err(Error::BadDims(format!(
                    "extent {n} does not fit the zfp header ({width} bits per extent in {}D)",
                    dims.len()
                )));
            }
            meta = meta << width | (n - 1) as u64;
        }
        let elem = match self.elem {
            ElemType::F32 => 2,
            ElemType::F64 => 3,
        };
        Ok(meta << 4 | ((dims.len() - 1) as u64) << 2 | elem)
    }

    /// Writes the header at the writer's position.
    pub fn write<W: WordSink>(&self, w: &mut BitWriter<W>) -> Result<()> {
        let meta = self.meta()?;
        w.write_bits(MAGIC, MAGIC_BITS);
        w.write_bits(meta, META_BITS);
        let mode = self.mode();
        w.write_bits(mode, if mode & 0xfff == 0xfff { LONG_MODE_BITS } else { SHORT_MODE_BITS });
        Ok(())
    }

    /// Reads the header at the start of `stream`; returns it and its length in bits.
    pub fn parse(stream: &[u8]) -> Result<(Header, usize)> {
        let too_short = |bits: usize| Error::Truncated { needed: bits.div_ceil(8), got: stream.len() };
        let words = words_from_bytes(&stream[..stream.len().min(MAX_HEADER_BITS.div_ceil(8))]);
        let mut r = BitReader::new(&words, 0);
        let short_bits = (MAGIC_BITS + META_BITS + SHORT_MODE_BITS) as usize;
        if stream.len() < 4 {
            return Err(too_short(short_bits));
        }
        let magic = r.read_bits(MAGIC_BITS);
        if magic & 0xff_ffff != MAGIC & 0xff_ffff {
            return Err(Error::Corrupt("not a zfp stream (no 'zfp' magic)".into()));
        }
        if magic != MAGIC {
            return Err(Error::UnsupportedHeader(format!("zfp codec version {} (5 supported)", magic >> 24)));
        }
        if stream.len() * 8 < short_bits {
            return Err(too_short(short_bits));
        }
        let meta = r.read_bits(META_BITS);
        let mut mode = r.read_bits(SHORT_MODE_BITS);
        let mut bits = short_bits;
        if mode == 0xfff {
            bits = MAX_HEADER_BITS;
            if stream.len() * 8 < bits {
                return Err(too_short(bits));
            }
            mode |= r.read_bits(LONG_MODE_BITS - SHORT_MODE_BITS) << SHORT_MODE_BITS;
        }
        let elem = match meta & 3 {
            2 => ElemType::F32,
            3 => ElemType::F64,
            _ => return Err(Error::UnsupportedHeader("zfp integer array (f32 and f64 supported)".into())),
        };
        let ndims = ((meta >> 2) & 3) as usize + 1;
        if ndims > 3 {
            return Err(Error::UnsupportedHeader("4D zfp array (1 to 3 dimensions supported)".into()));
        }
        let width = extent_bits(ndims);
        let extents: Vec<usize> = (0..ndims)
            .map(|i| usize::try_from((meta >> (4 + width * i as u32)) & ((1 << width) - 1)).map(|n| n + 1))
            .collect::<Result<_, _>>()
            .map_err(|_| Error::BadDims("zfp extent too large for this machine".into()))?;
        let shape = Shape::from_dims(&extents)?;
        Ok((Header { elem, shape, params: params_of_mode(mode) }, bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_bytes(h: &Header) -> Vec<u8> {
        let mut words = [0u64; 3];
        let mut w = BitWriter::new(&mut words[..], 0);
        h.write(&mut w).unwrap();
        let bits = w.position();
        w.flush();
        words.iter().flat_map(|w| w.to_le_bytes()).take(bits.div_ceil(8)).collect()
    }

    const RATE: fn(u32) -> Params = |bits| Params { minbits: bits, maxbits: bits, maxprec: 64, minexp: -1074 };

    #[test]
    fn headers_match_the_bytes_zfp_writes() {
        let h = Header { elem: ElemType::F32, shape: Shape::d3(256, 256, 256), params: RATE(256) };
        assert_eq!(header_bytes(&h), [0x7a, 0x66, 0x70, 0x05, 0xfa, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f]);
        assert_eq!(h.bits(), 96);
        let h = Header { elem: ElemType::F32, shape: Shape::d1(16 << 20), params: RATE(32) };
        assert_eq!(header_bytes(&h), [0x7a, 0x66, 0x70, 0x05, 0xf2, 0xff, 0xff, 0x0f, 0x00, 0x00, 0xf0, 0x01]);
        let acc = Params { minbits: 1, maxbits: 16658, maxprec: 64, minexp: -7 };
        let h = Header { elem: ElemType::F32, shape: Shape::d3(256, 256, 256), params: acc };
        assert_eq!(&header_bytes(&h)[10..], [0xc0, 0xca]);
    }

    #[test]
    fn headers_round_trip_short_and_long() {
        for (shape, elem, params) in [
            (Shape::d1(1), ElemType::F64, RATE(12)),
            (Shape::d2(5, 1 << 24), ElemType::F32, RATE(2048)),
            (Shape::d3(65536, 3, 1), ElemType::F64, RATE(4096)),
            (Shape::d1(1 << 40), ElemType::F32, Params { minbits: 1, maxbits: 16658, maxprec: 64, minexp: 900 }),
        ] {
            let h = Header { elem, shape, params };
            let bytes = header_bytes(&h);
            assert_eq!(bytes.len(), h.bits().div_ceil(8));
            assert_eq!(Header::parse(&bytes).unwrap(), (h, h.bits()));
            assert!(matches!(Header::parse(&bytes[..bytes.len() - 1]), Err(Error::Truncated { .. })));
        }
    }

    #[test]
    fn bad_headers_get_typed_errors() {
        let h = Header { elem: ElemType::F32, shape: Shape::d3(65537, 1, 1), params: RATE(64) };
        assert!(matches!(h.write(&mut BitWriter::new(&mut [0u64; 3][..], 0)), Err(Error::BadDims(_))));
        let good = header_bytes(&Header { elem: ElemType::F32, shape: Shape::d2(3, 4), params: RATE(64) });
        let mut bad = good.clone();
        bad[0] = b'Z';
        assert!(matches!(Header::parse(&bad), Err(Error::Corrupt(_))));
        bad = good.clone();
        bad[3] = 4;
        assert!(matches!(Header::parse(&bad), Err(Error::UnsupportedHeader(_))));
        bad = good.clone();
        bad[4] &= !3; // int32
        assert!(matches!(Header::parse(&bad), Err(Error::UnsupportedHeader(_))));
        bad = good.clone();
        bad[4] |= 0xc; // 4D
        assert!(matches!(Header::parse(&bad), Err(Error::UnsupportedHeader(_))));
        assert!(matches!(Header::parse(&good[..2]), Err(Error::Truncated { .. })));
        assert!(matches!(Header::parse(&[]), Err(Error::Truncated { .. })));
    }
}
