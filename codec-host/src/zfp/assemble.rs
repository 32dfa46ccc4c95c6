//! Writing one output stream from several threads without copies or atomics: each
//! writer covers a bit range of the stream; it stores the words wholly inside its range
//! into its own disjoint piece of the output, and keeps the (at most two) words it
//! shares with its neighbours aside, to be OR-ed in once every writer is done.

use codec_kernels::bitstream::{BitWriter, WordSink};

use crate::CpuExecutor;

/// The part of the output one writer owns, as a [`WordSink`].
pub struct OwnedWords<'a> {
    /// Output words `first..first + bytes.len() / 8`, little-endian.
    bytes: &'a mut [u8],
    first: usize,
    /// Words of the whole output (indices past it overflow, as for a plain buffer).
    total: usize,
    /// Shared words written: (index, bits).
    edges: [(usize, u64); 2],
    nedges: usize,
}

impl WordSink for OwnedWords<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.total
    }
    #[inline(always)]
    fn put(&mut self, index: usize, word: u64) {
        match index.checked_sub(self.first).and_then(|i| self.bytes.get_mut(8 * i..8 * i + 8)) {
            Some(dst) => dst.copy_from_slice(&word.to_le_bytes()),
            None => {
                // A range touches at most its first and last word outside what it owns.
                if let Some(slot) = self.edges.get_mut(self.nedges) {
                    *slot = (index, word);
                    self.nedges += 1;
                }
            }
        }
    }
}

/// Fills `out` (whole little-endian words, zeroed past what is already there) from
/// several writers in parallel: writer `i` covers stream bits `ranges[i]` (sorted,
/// disjoint, ascending) and is run as `write(i, writer)` with a [`BitWriter`]
/// positioned at the start of its range; it returns the writer when done. Bits of
/// `out` outside every range are kept.
pub fn assemble<F>(exec: &CpuExecutor, out: &mut [u8], ranges: &[core::ops::Range<usize>], write: F)
where
    F: for<'a> Fn(usize, BitWriter<OwnedWords<'a>>) -> BitWriter<OwnedWords<'a>> + Sync,
{
    let total = out.len() / 8;
    // Owned words of a range: those wholly inside it.
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest: &mut [u8] = out;
    let mut rest_first = 0usize;
    for r in ranges {
        let first = r.start.div_ceil(64).clamp(rest_first, total);
        let end = (r.end / 64).clamp(first, total);
        let (_, tail) = core::mem::take(&mut rest).split_at_mut(8 * (first - rest_first));
        let (piece, tail) = tail.split_at_mut(8 * (end - first));
        rest = tail;
        rest_first = end;
        pieces.push(OwnedWords { bytes: piece, first, total, edges: [(0, 0); 2], nedges: 0 });
    }
    let starts: Vec<usize> = ranges.iter().map(|r| r.start).collect();
    let edges = exec.map_items(pieces, |i, sink| {
        let (sink, _) = write(i, BitWriter::new(sink, starts[i])).flush();
        (sink.edges, sink.nedges)
    });
    for (list, n) in edges {
        for &(index, word) in &list[..n] {
            if let Some(dst) = out.get_mut(8 * index..8 * index + 8) {
                let merged = u64::from_le_bytes(dst.try_into().unwrap_or_default()) | word;
                dst.copy_from_slice(&merged.to_le_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codec_kernels::bitstream::BitReader;

    #[test]
    fn writers_fill_their_ranges_and_share_edges() {
        // A 20-bit prefix already in place, then ranges of odd lengths, some inside one
        // word, one ending exactly on a word boundary.
        let lens = [3usize, 70, 1, 128, 45, 5, 100];
        let mut ranges = Vec::new();
        let mut at = 20;
        for l in lens {
            ranges.push(at..at + l);
            at += l;
        }
        for threads in [1, 3] {
            let exec = CpuExecutor::new(threads).unwrap();
            let mut out = vec![0u8; at.div_ceil(64) * 8];
            out[0] = 0xa5;
            out[1] = 0x0f;
            assemble(&exec, &mut out, &ranges, |i, mut w| {
                // Writer i fills its range with ones, then a marker bit pattern of i.
                let len = lens[i];
                w.write_bits(i as u64 & 1, 1);
                let mut left = len - 1;
                while left > 0 {
                    let n = left.min(64);
                    w.write_bits(u64::MAX, n as u32);
                    left -= n;
                }
                w
            });
            let words: Vec<u64> = out.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
            let mut r = BitReader::new(&words, 0);
            assert_eq!(r.read_bits(20), 0xfa5, "prefix kept ({threads} threads)");
            for (i, &l) in lens.iter().enumerate() {
                assert_eq!(r.read_bits(1), i as u64 & 1);
                for _ in 1..l {
                    assert!(r.read_bit(), "range {i} ({threads} threads)");
                }
            }
            assert_eq!(r.read_bits(64 - (at % 64) as u32), 0);
        }
    }
}
