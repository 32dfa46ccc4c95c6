//! Streams as bytes and as the 64-bit words the kernels read and write. Word `i` is
//! bytes `8i..8i+8` in little-endian order (zfp's layout on little-endian hosts, and
//! the only layout its 8-bit-word builds have).

use codec_kernels::bitstream::WordSink;

/// A byte buffer seen as little-endian 64-bit words, so that a bit writer fills the
/// final stream in place.
pub struct ByteWords<'a>(pub &'a mut [u8]);

impl WordSink for ByteWords<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len() / 8
    }
    #[inline(always)]
    fn put(&mut self, index: usize, word: u64) {
        if let Some(dst) = self.0.get_mut(8 * index..8 * index + 8) {
            dst.copy_from_slice(&word.to_le_bytes());
        }
    }
}

/// The words of `bytes`; a partial last word (a stream from a build with 8-bit stream
/// words) is zero-padded.
pub fn words_from_bytes(bytes: &[u8]) -> Vec<u64> {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    let mut words = Vec::with_capacity(bytes.len().div_ceil(8));
    words.extend(chunks.map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())));
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        words.push(u64::from_le_bytes(last));
    }
    words
}

/// The bytes of `words` (for streams assembled as words, e.g. copied back from a GPU).
#[cfg(any(feature = "cuda", test))]
pub fn bytes_from_words(words: impl IntoIterator<Item = u64>) -> Vec<u8> {
    let words = words.into_iter();
    // Sized up front: a collected flat_map would grow (and copy) the buffer repeatedly.
    let mut bytes = Vec::with_capacity(words.size_hint().0 * 8);
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_words_round_trip_with_zero_padding() {
        let bytes: Vec<u8> = (1..=11).collect();
        let words = words_from_bytes(&bytes);
        assert_eq!(words, [0x0807_0605_0403_0201, 0x0b_0a09]);
        let back = bytes_from_words(words);
        assert_eq!(&back[..11], &bytes[..]);
        assert_eq!(&back[11..], &[0; 5]);
        assert!(words_from_bytes(&[]).is_empty());
    }

    #[test]
    fn byte_words_hold_what_the_writer_puts() {
        use codec_kernels::bitstream::BitWriter;
        let mut bytes = [0u8; 16];
        let mut w = BitWriter::new(ByteWords(&mut bytes[..]), 4);
        w.write_bits(0xabc, 12);
        w.write_bits(u64::MAX, 64);
        let (_, overflow) = w.flush();
        assert!(!overflow);
        // 4 zero bits, 0xabc, then 64 ones: bits 16..80.
        assert_eq!(&bytes[..2], &[0xc0, 0xab]);
        assert!(bytes[2..10].iter().all(|&b| b == 0xff));
        assert!(bytes[10..].iter().all(|&b| b == 0));
    }
}
