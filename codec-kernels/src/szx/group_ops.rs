//! The byte steps both coders take over one group of a coded block ([`GroupOps`]), in
//! portable code ([`ScalarOps`]); a CPU build supplies vector versions of its own.

use super::coding::GROUP;
use super::decode::load_le_u64;

/// Running counts over a group: byte `i % 8` of word `i / 8` (little-endian) is value
/// `i`'s count, at most [`GROUP`].
pub type Counts = [u64; GROUP / 8];

/// The byte steps of the coders over a group: the same results whichever runs them, in a
/// few vector instructions on a processor that has byte shuffles. The decoder picks
/// each value's whole byte and residual from the stored ones (for values that keep one
/// whole byte: the fixed-point blocks of every field measured); the encoder compacts
/// the ones it stores.
pub trait GroupOps: Copy {
    /// For each value of a group, how many of the codes `lead` (0 to 3) up to and
    /// including its own equal `code` (4 counts none).
    #[inline(always)]
    fn running_count(self, lead: &[u8; GROUP], code: u8) -> Counts {
        running_count(lead, code)
    }
    /// For every value `i`: `src[k - 1]`, or `prev` where `k = 0`, `k` being value
    /// `i`'s entry of `counts` (the last stored byte or residual up to it).
    fn pick(self, src: &[u8; GROUP], prev: u8, counts: &Counts) -> [u8; GROUP];
    /// The [`GROUP`] fields of `r` bits (0 to 7; none: all zero) packed least
    /// significant first in `src`.
    fn unpack(self, src: &[u8; GROUP], r: u32) -> [u8; GROUP];
    /// The mask of the values whose code in `lead` (0 to 3) is at most `code`: bit `i`
    /// for value `i`.
    #[inline(always)]
    fn at_most(self, lead: &[u8; GROUP], code: u8) -> u64 {
        lead.iter().enumerate().fold(0u64, |mask, (i, &l)| mask | ((l <= code) as u64) << i)
    }
    /// The inverse of [`GroupOps::unpack`]: the fields of `r` bits (the low bits of each
    /// byte of `src`, the others zero) packed least significant first, eight to `r` whole
    /// bytes: word `j` holds fields `8j` to `8j + 7`.
    #[inline(always)]
    fn pack(self, src: &[u8; GROUP], r: u32) -> [u64; GROUP / 8] {
        core::array::from_fn(|j| (0..8).fold(0u64, |word, i| word | (src[8 * j + i] as u64) << (r * i as u32)))
    }
    /// The bytes of `src` whose bit in `keep` is set, in order, then zeros.
    #[inline(always)]
    fn compact(self, src: &[u8; GROUP], keep: u64) -> [u8; GROUP] {
        let mut out = [0u8; GROUP];
        let mut at = 0;
        for (i, &b) in src.iter().enumerate() {
            // A byte not kept writes a zero, which the next byte overwrites.
            let k = (keep >> i) as u8 & 1;
            out[at % GROUP] = b & k.wrapping_neg();
            at += k as usize;
        }
        out
    }
}

/// [`GroupOps`] in portable code (any processor, the GPU included).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScalarOps;

impl GroupOps for ScalarOps {
    #[inline(always)]
    fn pick(self, src: &[u8; GROUP], prev: u8, counts: &Counts) -> [u8; GROUP] {
        // A table of `prev` then `src`, looked up at the counts (masked: no check).
        let mut table = [prev; 2 * GROUP];
        table[1..=GROUP].copy_from_slice(src);
        core::array::from_fn(|i| table[count_at(counts, i) & (2 * GROUP - 1)])
    }

    #[inline(always)]
    fn unpack(self, src: &[u8; GROUP], r: u32) -> [u8; GROUP] {
        let mask = (1u64 << r) - 1;
        let mut out = [0u8; GROUP];
        // Eight fields take `r` whole bytes: the words at fixed positions (vector code).
        for (j, o) in out.chunks_exact_mut(8).enumerate() {
            let acc = load_le_u64(src, j * r as usize);
            for (i, o) in o.iter_mut().enumerate() {
                *o = ((acc >> (r * i as u32)) & mask) as u8;
            }
        }
        out
    }
}

/// Value `i`'s entry of `counts`.
#[inline(always)]
fn count_at(counts: &Counts, i: usize) -> usize {
    (counts[(i / 8) % (GROUP / 8)] >> (8 * (i % 8))) as u8 as usize
}

/// For each value of a group, how many of the codes up to and including its own equal
/// `code` (codes are 0 to 3; `code` 4 counts none): eight codes at a time, a byte each,
/// summed within a word by one multiplication.
#[inline(always)]
fn running_count(lead: &[u8; GROUP], code: u8) -> Counts {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Per word of eight codes, the counts within it (independent of the other words)...
    let mut sums: Counts = core::array::from_fn(|w| {
        let l = &lead[8 * w..8 * w + 8];
        let x = u64::from_le_bytes([l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]]) ^ (code as u64 * ONES);
        // A byte of 1 where the code equals `code` (`x` is then 0; its bytes are below 8).
        let hits = ((x | x >> 1 | x >> 2) & ONES) ^ ONES;
        hits.wrapping_mul(ONES)
    });
    // ...plus those of the words before it (a chain of additions only).
    let mut before = 0u64;
    for s in &mut sums {
        let own = *s >> 56;
        *s += before * ONES;
        before += own;
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable compaction keeps exactly the bytes whose bit is set, in order, and
    /// zeros the rest, for masks from none to all.
    #[test]
    fn compact_keeps_the_marked_bytes_in_order() {
        let src: [u8; GROUP] = core::array::from_fn(|i| 200 - i as u8);
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for round in 0..500 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let keep = match round % 5 {
                0 => 0,
                1 => u64::MAX,
                2 => 1 << (round % 64),
                3 => !(1 << (round % 64)),
                _ => s,
            };
            let mut want = [0u8; GROUP];
            for (at, i) in (0..GROUP).filter(|&i| keep >> i & 1 == 1).enumerate() {
                want[at] = src[i];
            }
            assert_eq!(ScalarOps.compact(&src, keep), want, "keep {keep:#x}");
        }
    }
}
