//! Bit streams over 64-bit words, laid out as zfp lays them out.
//!
//! Bits are appended least-significant first; a word fills from its LSB and is stored in
//! native (little-endian) order, so stream bit `i` is bit `i % 8` of byte `i / 8`.
//! Neither side ever panics on short buffers: a writer that runs out of words records
//! [`BitWriter::overflowed`], and a reader that runs past the end reads zeros and records
//! [`BitReader::overrun`], so decoders check one flag instead of every read.

use core::sync::atomic::{AtomicU64, Ordering};

/// Mask of the `n` low bits, for `n` in `0..=64`.
#[inline(always)]
pub const fn low_mask(n: u32) -> u64 {
    // Branch-free: (2^n - 1) for n < 64, all ones (from the second term) for n = 64.
    ((1u64 << (n & 63)).wrapping_sub(1)) | ((n >> 6) as u64).wrapping_neg()
}

/// Where a [`BitWriter`] puts completed words.
pub trait WordSink {
    /// Number of words available.
    fn len(&self) -> usize;
    /// True if no word is available.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Merges `word` into word `index` (`index < len()`).
    fn put(&mut self, index: usize, word: u64);
}

/// A plain slice: words are stored (the writer owns the range it writes).
impl WordSink for &mut [u64] {
    #[inline(always)]
    fn len(&self) -> usize {
        <[u64]>::len(self)
    }
    #[inline(always)]
    fn put(&mut self, index: usize, word: u64) {
        self[index] = word;
    }
}

/// A shared, zero-initialised slice written by many threads at disjoint bit ranges:
/// words are OR-ed in, so neighbours sharing a boundary word do not clobber each other
/// (the cuZFP scheme, which uses atomicAdd on a zeroed buffer).
impl WordSink for &[AtomicU64] {
    #[inline(always)]
    fn len(&self) -> usize {
        <[AtomicU64]>::len(self)
    }
    #[inline(always)]
    fn put(&mut self, index: usize, word: u64) {
        if word != 0 {
            self[index].fetch_or(word, Ordering::Relaxed);
        }
    }
}

/// One writer's bit range `[start, end)` in a shared, zero-initialised buffer: only the
/// first and last words can hold a neighbour's bits, so only they are OR-ed in
/// atomically; the words in between belong to this writer alone and are plainly
/// stored (a relaxed atomic store is an ordinary store).
pub struct SharedRange<'a> {
    words: &'a [AtomicU64],
    first: usize,
    last: usize,
}

impl<'a> SharedRange<'a> {
    /// The range `[start, end)` of `words` (in bits); nothing outside it may be written.
    #[inline(always)]
    pub fn new(words: &'a [AtomicU64], start: usize, end: usize) -> Self {
        SharedRange { words, first: start / 64, last: end.saturating_sub(1) / 64 }
    }
}

impl WordSink for SharedRange<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.words.len()
    }
    #[inline(always)]
    fn put(&mut self, index: usize, word: u64) {
        if index == self.first || index == self.last {
            if word != 0 {
                self.words[index].fetch_or(word, Ordering::Relaxed);
            }
        } else {
            self.words[index].store(word, Ordering::Relaxed);
        }
    }
}

/// Appends bits to a [`WordSink`].
pub struct BitWriter<S: WordSink> {
    sink: S,
    /// Index of the word `buf` will be put into.
    index: usize,
    /// Pending bits, `bits` of them, in the low end.
    buf: u64,
    bits: u32,
    overflowed: bool,
}

impl<S: WordSink> BitWriter<S> {
    /// A writer whose first bit lands at stream bit `bit_offset`. Bits below the offset in
    /// the first word are left as the sink has them.
    #[inline]
    pub fn new(sink: S, bit_offset: usize) -> Self {
        BitWriter { sink, index: bit_offset / 64, buf: 0, bits: (bit_offset % 64) as u32, overflowed: false }
    }

    /// Current stream position in bits.
    #[inline(always)]
    pub fn position(&self) -> usize {
        self.index * 64 + self.bits as usize
    }

    /// True if a word had to be dropped because the sink was too short.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    #[inline(always)]
    fn put(&mut self, word: u64) {
        if self.index < self.sink.len() {
            self.sink.put(self.index, word);
        } else {
            self.overflowed = true;
        }
        self.index += 1;
    }

    /// Appends the `n` low bits of `value` (`n <= 64`), bit 0 first.
    #[inline(always)]
    pub fn write_bits(&mut self, value: u64, n: u32) {
        let value = value & low_mask(n);
        self.buf |= value << self.bits;
        let total = self.bits + n;
        if total >= 64 {
            let done = self.buf;
            // Bits of `value` that did not fit above the old pending bits (none if
            // there were no pending bits: the two shifts then make 64).
            self.buf = (value >> 1) >> (63 - self.bits);
            self.bits = total - 64;
            self.put(done);
        } else {
            self.bits = total;
        }
    }

    /// Appends one bit.
    #[inline(always)]
    pub fn write_bit(&mut self, bit: bool) {
        self.write_bits(bit as u64, 1);
    }

    /// Appends `n` zero bits.
    #[inline]
    pub fn pad(&mut self, mut n: usize) {
        while n >= 64 {
            self.write_bits(0, 64);
            n -= 64;
        }
        self.write_bits(0, n as u32);
    }

    /// Writes out the partial last word (zero-padded above the last bit) and returns the
    /// sink. The position is unchanged.
    #[inline]
    pub fn flush(mut self) -> (S, bool) {
        if self.bits > 0 {
            let buf = self.buf;
            self.put(buf);
        }
        (self.sink, self.overflowed)
    }
}

/// A stored stream word: a `u64`, or 8 little-endian bytes (a byte stream read in place).
pub trait Word: Copy {
    /// The word's value.
    fn get(self) -> u64;
}

impl Word for u64 {
    #[inline(always)]
    fn get(self) -> u64 {
        self
    }
}

impl Word for [u8; 8] {
    #[inline(always)]
    fn get(self) -> u64 {
        u64::from_le_bytes(self)
    }
}

/// Reads bits from a word slice.
pub struct BitReader<'a, W: Word = u64> {
    words: &'a [W],
    /// Index of the next word to load.
    index: usize,
    /// Unread bits of the current word, `bits` of them, in the low end.
    buf: u64,
    bits: u32,
    overrun: bool,
}

impl<'a, W: Word> BitReader<'a, W> {
    /// A reader positioned at stream bit `bit_offset`.
    #[inline]
    pub fn new(words: &'a [W], bit_offset: usize) -> Self {
        let mut r = BitReader { words, index: 0, buf: 0, bits: 0, overrun: false };
        r.seek(bit_offset);
        r
    }

    /// Moves to stream bit `bit_offset`.
    #[inline]
    pub fn seek(&mut self, bit_offset: usize) {
        self.index = bit_offset / 64;
        let skip = (bit_offset % 64) as u32;
        self.bits = 0;
        self.buf = 0;
        if skip > 0 {
            let w = self.next_word();
            self.buf = w >> skip;
            self.bits = 64 - skip;
        }
    }

    /// Current stream position in bits.
    #[inline(always)]
    pub fn position(&self) -> usize {
        self.index * 64 - self.bits as usize
    }

    /// True if any read went past the end of the words.
    pub fn overrun(&self) -> bool {
        self.overrun
    }

    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        let w = match self.words.get(self.index) {
            Some(&w) => w.get(),
            None => {
                self.overrun = true;
                0
            }
        };
        self.index += 1;
        w
    }

    /// Reads `n` bits (`n <= 64`); the first bit read is bit 0 of the result.
    #[inline(always)]
    pub fn read_bits(&mut self, n: u32) -> u64 {
        if n <= self.bits {
            let v = self.buf & low_mask(n);
            // Two shifts so that n = 64 empties the buffer without a branch.
            self.buf = (self.buf >> (n / 2)) >> (n - n / 2);
            self.bits -= n;
            v
        } else {
            let have = self.bits;
            let low = self.buf;
            let w = self.next_word();
            let need = n - have; // 1..=64
            let v = low | if have == 0 { w } else { w << have };
            self.buf = if need >= 64 { 0 } else { w >> need };
            self.bits = 64 - need;
            v & low_mask(n)
        }
    }

    /// The next `n` bits (`n <= 64`) without consuming them; past the end they read as 0
    /// (and do not set [`BitReader::overrun`] until consumed).
    #[inline(always)]
    pub fn peek_bits(&self, n: u32) -> u64 {
        let v = if n <= self.bits {
            self.buf
        } else {
            // bits < n <= 64, so the shift is in range.
            let w = self.words.get(self.index).map_or(0, |w| w.get());
            self.buf | w << self.bits
        };
        v & low_mask(n)
    }

    /// Reads one bit.
    #[inline(always)]
    pub fn read_bit(&mut self) -> bool {
        self.read_bits(1) != 0
    }

    /// Skips `n` bits.
    #[inline]
    pub fn skip(&mut self, n: usize) {
        let to = self.position() + n;
        self.seek(to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn low_masks() {
        assert_eq!(low_mask(0), 0);
        assert_eq!(low_mask(1), 1);
        assert_eq!(low_mask(63), u64::MAX >> 1);
        assert_eq!(low_mask(64), u64::MAX);
    }

    #[test]
    fn bits_round_trip_across_word_boundaries() {
        let mut words = [0u64; 8];
        let fields: [(u64, u32); 9] =
            [(1, 1), (0x1ff, 9), (0xdead_beef, 32), (u64::MAX, 64), (0, 3), (5, 3), (0x1234_5678_9abc, 48), (1, 64), (3, 2)];
        let mut w = BitWriter::new(&mut words[..], 0);
        for &(v, n) in &fields {
            w.write_bits(v, n);
        }
        let end = w.position();
        let (_, overflow) = w.flush();
        assert!(!overflow);
        assert_eq!(end, fields.iter().map(|f| f.1 as usize).sum::<usize>());
        let mut r = BitReader::new(&words, 0);
        for &(v, n) in &fields {
            assert_eq!(r.read_bits(n), v & low_mask(n), "field of {n} bits");
        }
        assert_eq!(r.position(), end);
        assert!(!r.overrun());
    }

    #[test]
    fn layout_is_lsb_first_little_endian() {
        let mut words = [0u64; 1];
        let mut w = BitWriter::new(&mut words[..], 0);
        w.write_bits(0x7a, 8);
        w.write_bits(0x66, 8);
        w.write_bit(true);
        w.flush();
        assert_eq!(&words[0].to_le_bytes()[..3], &[0x7a, 0x66, 0x01]);
    }

    #[test]
    fn atomic_sink_merges_neighbouring_ranges() {
        let words: [AtomicU64; 3] = Default::default();
        // Two writers of 70 bits each, the second starting where the first ends.
        for (start, value) in [(0usize, 0x2aaau64), (70, 0x1555)] {
            let mut w = BitWriter::new(&words[..], start);
            w.write_bits(value, 14);
            w.write_bits(u64::MAX, 56);
            w.flush();
        }
        let plain: [u64; 3] = core::array::from_fn(|i| words[i].load(Ordering::Relaxed));
        let mut r = BitReader::new(&plain, 0);
        assert_eq!(r.read_bits(14), 0x2aaa);
        assert_eq!(r.read_bits(56), low_mask(56));
        assert_eq!(r.read_bits(14), 0x1555);
        assert_eq!(r.read_bits(56), low_mask(56));
        assert_eq!(r.read_bits(52), 0);
    }

    #[test]
    fn shared_ranges_store_inside_and_merge_at_the_edges() {
        let words: [AtomicU64; 4] = Default::default();
        // Three writers of 70 bits each, back to back from bit 20.
        for (i, value) in [0x2aaau64, 0x1555, 0x3333].into_iter().enumerate() {
            let start = 20 + 70 * i;
            let mut w = BitWriter::new(SharedRange::new(&words[..], start, start + 70), start);
            w.write_bits(value, 14);
            w.write_bits(u64::MAX, 56);
            w.flush();
        }
        let plain: [u64; 4] = core::array::from_fn(|i| words[i].load(Ordering::Relaxed));
        let mut r = BitReader::new(&plain, 0);
        assert_eq!(r.read_bits(20), 0);
        for value in [0x2aaau64, 0x1555, 0x3333] {
            assert_eq!(r.read_bits(14), value);
            assert_eq!(r.read_bits(56), low_mask(56));
        }
        assert_eq!(r.read_bits(26), 0);
    }

    #[test]
    fn short_buffers_flag_instead_of_panicking() {
        let mut words = [0u64; 1];
        let mut w = BitWriter::new(&mut words[..], 60);
        w.write_bits(0xff, 8);
        let (_, overflow) = w.flush();
        assert!(overflow);
        let mut r = BitReader::new(&words, 60);
        r.read_bits(8);
        assert!(r.overrun());
        let mut r = BitReader::<u64>::new(&[], 1000);
        assert_eq!(r.read_bits(64), 0);
        assert!(r.overrun());
    }

    #[test]
    fn byte_words_read_like_u64_words() {
        let words = [0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210];
        let bytes = words.map(u64::to_le_bytes);
        let mut a = BitReader::new(&words, 3);
        let mut b = BitReader::new(&bytes, 3);
        for n in [7, 64, 20, 30] {
            assert_eq!(a.peek_bits(n), b.peek_bits(n));
            assert_eq!(a.read_bits(n), b.read_bits(n));
        }
        assert_eq!(a.position(), b.position());
    }

    #[test]
    fn seek_and_skip_land_on_the_same_bits() {
        let words = [0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210];
        let mut a = BitReader::new(&words, 0);
        a.skip(60);
        let mut b = BitReader::new(&words, 60);
        assert_eq!(a.read_bits(12), b.read_bits(12));
        assert_eq!(a.position(), 72);
    }

    #[test]
    fn peek_sees_what_read_returns() {
        let words = [0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210];
        let mut r = BitReader::new(&words, 0);
        for n in [0u32, 5, 64, 17, 33, 8, 1] {
            let p = r.peek_bits(n);
            assert_eq!(r.read_bits(n), p, "{n} bits");
        }
        assert!(!r.overrun());
        let r = BitReader::new(&words, 100);
        assert_eq!(r.peek_bits(64), words[1] >> 36);
        assert!(!r.overrun());
    }
}
