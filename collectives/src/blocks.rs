//! How a vector is cut into per-rank blocks.

use core::ops::Range;

/// Consecutive blocks of a vector, block `b` belonging to rank `b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Blocks {
    offsets: Vec<usize>,
}

impl Blocks {
    /// `len` values in `parts` blocks whose sizes differ by at most one (larger first).
    pub fn even(len: usize, parts: usize) -> Blocks {
        let (q, r) = (len / parts, len % parts);
        Blocks::from_counts((0..parts).map(|b| q + usize::from(b < r)))
    }

    /// Blocks of the given sizes.
    pub fn from_counts(counts: impl IntoIterator<Item = usize>) -> Blocks {
        let mut offsets = vec![0];
        for c in counts {
            offsets.push(offsets.last().copied().unwrap_or(0) + c);
        }
        Blocks { offsets }
    }

    /// The range of block `b`.
    pub fn range(&self, b: usize) -> Range<usize> {
        self.offsets[b]..self.offsets[b + 1]
    }

    /// Values in block `b`.
    pub fn len(&self, b: usize) -> usize {
        self.offsets[b + 1] - self.offsets[b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_blocks_differ_by_at_most_one() {
        let b = Blocks::even(10, 4);
        assert_eq!((0..4).map(|i| b.range(i)).collect::<Vec<_>>(), vec![0..3, 3..6, 6..8, 8..10]);
        let empty = Blocks::even(2, 3);
        assert_eq!([empty.len(0), empty.len(1), empty.len(2)], [1, 1, 0]);
    }
}
