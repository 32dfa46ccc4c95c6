//! The call agreement: before a compressed call moves data, the ranks compare the
//! settings that shape its message schedule, with one small `MPI_Allreduce(MIN)` over
//! each setting and its complement (so every rank learns the minimum and the maximum).
//!
//! Why not rely on the frame headers alone: a rank with another root, count or algorithm
//! would post other receives than its peers, and whichever rank waits for a message that
//! never comes hangs before any header could be read. Agreeing first makes every rank
//! take the same decision (run, or fail with the same error) before any data moves; the
//! headers then guard every message of the call (see `frame`).
//!
//! The same reduction carries a "my arguments are bad" word, so a rank that rejects its
//! own arguments fails the call on every rank instead of leaving them blocked, and the
//! value range of the input (for relative error bounds).

use crate::transport::Comm;
use crate::{CollError, Result};

/// The settings every rank must share, as named words.
pub(crate) struct Signature {
    pub fields: Vec<(&'static str, u64)>,
}

/// What the agreement established.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Agreed {
    /// Smallest and largest finite input value over all ranks that contributed one.
    pub range: Option<(f64, f64)>,
}

/// Runs the agreement: `Err` on every rank if any rank brought `local_error`, or if the
/// ranks' signatures differ; else the global value range of the inputs.
pub(crate) fn agree(comm: Comm, sig: &Signature, local_error: Option<CollError>, range: Option<(f64, f64)>) -> Result<Agreed> {
    let n = sig.fields.len();
    let mut words: Vec<u64> = sig.fields.iter().map(|&(_, v)| v).collect();
    words.extend(sig.fields.iter().map(|&(_, v)| !v));
    // The lowest rank that rejected its arguments (u64::MAX: none).
    words.push(if local_error.is_some() { comm.rank as u64 } else { u64::MAX });
    let (lo, hi) = range.map_or((u64::MAX, u64::MAX), |(lo, hi)| (order_key(lo), !order_key(hi)));
    words.extend([lo, hi]);
    comm.allreduce_min_u64(&mut words, "join the call agreement");

    if let Some(e) = local_error {
        return Err(e);
    }
    if words[2 * n] != u64::MAX {
        return Err(CollError::PeerRejected { rank: words[2 * n] as usize });
    }
    for (i, &(field, local)) in sig.fields.iter().enumerate() {
        let (min, max) = (words[i], !words[n + i]);
        if min != max {
            return Err(CollError::Mismatch { field, local, min, max });
        }
    }
    let (lo, hi) = (words[2 * n + 1], words[2 * n + 2]);
    let range = (lo != u64::MAX).then(|| (from_order_key(lo), from_order_key(!hi)));
    Ok(Agreed { range })
}

/// Maps an f64 to a u64 whose unsigned order is the float order (for finite values).
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_sort_like_floats_and_invert() {
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e300];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) <= order_key(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }
}
