//! Blocks of equal codec work for C-Coll's ring Allreduce.
//!
//! In each ring step every rank codes a different block, and the step lasts as long as
//! the slowest rank. Fields with regions of one repeated value (the untouched zeros of a
//! wave field, the 0 and 1 plateaus of an ice fraction) code those regions' 128-value
//! blocks at a fraction of the cost of a block of varying values, so blocks of equal
//! counts can hold very unequal work: on the 4-rank `rtm` demo input, the partial sums'
//! varying blocks fall 42%, 38%, 20% and 0% into the four even blocks. The cut here
//! puts the block boundaries where the estimated work, rather than the count, is equal.
//!
//! Every rank profiles its own input (the share of each segment's 128-value blocks that
//! vary, from a sample); one `MPI_Allreduce(MAX)` makes the profiles one, so every rank
//! cuts the same blocks. The maximum over the inputs stands in for the partial sums,
//! whose blocks vary where any rank's do: a lower bound on each segment's share, exact
//! where one rank's input covers the others'.

use crate::blocks::Blocks;
use crate::call::Call;
use crate::place::Place;
use crate::Value;

/// Segments of the vector the profile counts in: the cut is exact at segment ends and
/// spreads a segment's work evenly inside it.
const SEGMENTS: usize = 64;
/// Values per profiled block (the SZx block).
const BLOCK: usize = 128;
/// The profile looks at every 32nd block: a sample places the cut as well as the whole
/// (the regions of one value span many segments). Over a 64 MiB `rtm` input out of the
/// caches, a full pass took 4-6 ms (several percent of the call), every 8th block
/// 1.7 ms (the prefetchers read ahead), every 32nd 0.5 ms, counting within 3% of the full
/// pass.
const STRIDE: usize = 32;
/// Fixed-point one of a segment's fraction of varying blocks.
const ONE: u64 = 1 << 20;
/// The work of a block of varying values, in blocks of one value. A block of one value
/// still costs its passes over memory (the reduction, the zero fills); one of varying
/// values costs its coding. On the `rtm` demo (4 ranks, 64 MiB, two rounds, blocks cut
/// by the exact partial sums), weights of 4 and of 1000 gave C-Coll Allreduce latencies
/// 8-20% below the even blocks', alike within the noise.
const VARYING_WEIGHT: u64 = 4;
/// Smaller vectors keep even blocks: the profile's reduction would cost more latency
/// than the balance saves.
const MIN_VALUES: usize = 1 << 18;

/// Per segment of `values`, the fraction (of [`ONE`]) of its sampled 128-value blocks
/// that hold more than one value (a block belongs to the segment its first value is in).
fn profile<T: Value>(values: &[T]) -> [u64; SEGMENTS] {
    let (mut varying, mut seen) = ([0u64; SEGMENTS], [0u64; SEGMENTS]);
    for (i, block) in values.chunks(BLOCK).enumerate().step_by(STRIDE) {
        let first = block[0];
        // A fold, not `any`: no early exit, so the comparisons run as vector code.
        let varies = block.iter().fold(false, |v, &x| v | (x != first));
        let s = segment(i * BLOCK, values.len());
        seen[s] += 1;
        varying[s] += u64::from(varies);
    }
    core::array::from_fn(|s| (varying[s] * ONE).checked_div(seen[s]).unwrap_or(0))
}

/// The segment value `i` of `len` falls in.
fn segment(i: usize, len: usize) -> usize {
    (i as u128 * SEGMENTS as u128 / len as u128) as usize
}

/// First value of segment `s` of a vector of `len`.
fn segment_start(s: usize, len: usize) -> usize {
    (s as u128 * len as u128).div_ceil(SEGMENTS as u128) as usize
}

/// `len` values in `parts` blocks of about equal work by `varying` (the combined
/// profile), each boundary on a 128-value block.
fn cut(len: usize, parts: usize, varying: &[u64; SEGMENTS]) -> Blocks {
    let starts: Vec<usize> = (0..=SEGMENTS).map(|s| segment_start(s, len)).collect();
    let work: Vec<f64> = (0..SEGMENTS)
        .map(|s| {
            let blocks = (starts[s + 1] - starts[s]) as f64 / BLOCK as f64;
            blocks * (ONE + VARYING_WEIGHT * varying[s].min(ONE)) as f64
        })
        .collect();
    let total: f64 = work.iter().sum();
    let mut bounds = vec![0];
    let (mut s, mut before) = (0, 0.0);
    for k in 1..parts {
        let target = total * k as f64 / parts as f64;
        while s < SEGMENTS && before + work[s] < target {
            before += work[s];
            s += 1;
        }
        let at = if s == SEGMENTS || work[s] == 0.0 {
            starts[s]
        } else {
            starts[s] + ((target - before) / work[s] * (starts[s + 1] - starts[s]) as f64) as usize
        };
        let at = at.next_multiple_of(BLOCK).min(len).max(*bounds.last().unwrap_or(&0));
        bounds.push(at);
    }
    bounds.push(len);
    Blocks::from_counts(bounds.windows(2).map(|w| w[1] - w[0]))
}

/// The blocks C-Coll's ring Allreduce cuts `input` (this rank's values) into, the same
/// on every rank: even on one rank, below [`MIN_VALUES`] and where nothing is
/// compressed (then no rank profiles: every rank takes the same branch, as the count
/// and the codec are agreed), else cut by the ranks' combined profile. A rank whose
/// input is in device memory brings an empty profile (the others' still count).
pub(crate) fn blocks<T: Value, W: Place<T> + ?Sized>(call: &Call, input: &W) -> Blocks {
    let (n, p) = (input.len(), call.comm.size);
    if p < 2 || n < MIN_VALUES || !call.compresses() {
        return Blocks::even(n, p);
    }
    let local = if call.on_device() { [0; SEGMENTS] } else { input.with_host(0..n, profile).unwrap_or([0; SEGMENTS]) };
    // The maximum as the minimum of the complements.
    let mut words: Vec<u64> = local.iter().map(|&c| !c).collect();
    call.comm.allreduce_min_u64(&mut words, "combine the profiles of the Allreduce blocks");
    let varying: [u64; SEGMENTS] = core::array::from_fn(|s| !words[s]);
    cut(n, p, &varying)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(b: &Blocks, parts: usize) -> Vec<usize> {
        (0..parts).map(|i| b.len(i)).collect()
    }

    #[test]
    fn profile_samples_the_varying_blocks_of_each_segment() {
        // Four sampled blocks per segment.
        let per = 4 * STRIDE * BLOCK;
        let n = SEGMENTS * per;
        let mut v = vec![0f32; n];
        // Segment 0: its first sampled block varies, an unsampled one too; segment 1:
        // constant but not zero; segment 2: a NaN (which differs from itself); the last
        // segment: every block varies.
        v[5] = 1.0;
        v[BLOCK + 5] = 1.0;
        v[per..2 * per].fill(3.0);
        v[2 * per + STRIDE * BLOCK] = f32::NAN;
        for (i, x) in v[n - per..].iter_mut().enumerate() {
            *x = i as f32;
        }
        let p = profile(&v);
        assert_eq!(&p[..4], &[ONE / 4, 0, ONE / 4, 0]);
        assert_eq!(p[SEGMENTS - 1], ONE);
        assert_eq!(p.iter().sum::<u64>(), ONE * 3 / 2);
    }

    #[test]
    fn uniform_work_cuts_even_blocks() {
        let n = SEGMENTS * 100 * BLOCK;
        for varying in [[0; SEGMENTS], [ONE / 3; SEGMENTS]] {
            assert_eq!(lens(&cut(n, 4, &varying), 4), vec![n / 4; 4]);
        }
    }

    #[test]
    fn work_in_the_first_half_moves_the_boundaries_there() {
        let n = SEGMENTS * 100 * BLOCK;
        let mut varying = [0; SEGMENTS];
        varying[..SEGMENTS / 2].fill(ONE);
        let b = cut(n, 4, &varying);
        let l = lens(&b, 4);
        assert_eq!(l.iter().sum::<usize>(), n);
        // Work per 128 values: 5 in the first half, 1 in the second; every block gets
        // a quarter of the total, within a 128-value block's work.
        let half = n / 2;
        let work = |r: core::ops::Range<usize>| (r.start..r.end).step_by(BLOCK).map(|i| if i < half { 5 } else { 1 }).sum::<usize>();
        let per = (0..4).map(|i| work(b.range(i))).collect::<Vec<_>>();
        let avg = per.iter().sum::<usize>() / 4;
        for w in &per {
            assert!(w.abs_diff(avg) <= 5, "{per:?}");
        }
        assert!(l[0].abs_diff(n * 15 / 100) <= BLOCK && l[3].abs_diff(n * 55 / 100) <= BLOCK, "{l:?}");
        for i in 0..4 {
            assert_eq!(b.range(i).start % BLOCK, 0);
        }
    }

    #[test]
    fn tiny_and_degenerate_vectors_keep_every_value() {
        for n in [0, 1, 127, 129, 1000, SEGMENTS * BLOCK + 3] {
            for parts in [1, 2, 3, 8] {
                let mut varying = [0; SEGMENTS];
                varying[0] = u64::MAX;
                let b = cut(n, parts, &varying);
                assert_eq!(lens(&b, parts).iter().sum::<usize>(), n, "n {n} parts {parts}");
                assert_eq!(b.range(parts - 1).end, n);
            }
        }
    }
}
