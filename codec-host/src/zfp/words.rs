//! Streams as bytes and as the 64-bit words the kernels read and write. Word `i` is
//! bytes `8i..8i+8` in little-endian order (zfp's layout on little-endian hosts, and
//! the only layout its 8-bit-word builds have).

/// The words of `bytes`; a partial last word (a stream from a build with 8-bit stream
/// words) is zero-padded.
pub fn words_from_bytes(bytes: &[u8]) -> Vec<u64> {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    let mut words: Vec<u64> = chunks.map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        words.push(u64::from_le_bytes(last));
    }
    words
}

/// The bytes of `words`.
pub fn bytes_from_words(words: impl IntoIterator<Item = u64>) -> Vec<u8> {
    words.into_iter().flat_map(u64::to_le_bytes).collect()
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
}
