//! Message buffers kept for reuse on the thread that made them.
//!
//! Every pipeline chunk of a compressed collective is a fresh frame on the sending side
//! and a fresh receive buffer on the other, a few hundred of them per call. Freed to
//! glibc, that memory returns to the kernel as soon as the top of the heap holds more
//! than its trim threshold, so the next call faults the same pages in again (and the
//! kernel clears them): 3% of the CPU time of a 64 MiB C-Coll Allreduce with the
//! emulated cluster's MPI settings, 4.7% with Open MPI's defaults (`perf`, 4 ranks on 2
//! cores, 2026-11-27; docs/collectives.md). Buffers handed back here are reused instead,
//! as MPI libraries keep their fragment lists. A spare keeps its capacity; the pages
//! of it that were ever written stay resident while it waits, at most [`MAX_BYTES`] of
//! capacity in all.
//!
//! CPR-P2P's tree Scatter and Gather also keep one buffer of values a thread: the
//! subtree buffer an inner rank decodes its children's blocks into (and a root whose
//! children's blocks wrap around the end). Allocated afresh each call, a buffer of 32 MiB
//! or more is a new mapping, and the rank faulted it in at 1.3-1.6 GB/s while the
//! other ranks ran beside it, a fifth of a 32 MiB Scatter (docs/cost-model.md). A kept
//! buffer is not cleared: the algorithms overwrite it whole before they read it. Up to
//! 256 MiB, a Scatter's block of 256 MiB a rank: kept only to 64 MiB, the 128 and 256
//! MiB Scatters' inner rank faulted its buffer in at 1.1-2.2 GB/s, a speed that changed
//! from pass to pass by half (2026-12-06). Its pages stay resident while the thread
//! lives: that much memory is the price.

use std::any::Any;
use std::cell::RefCell;

/// Most spares kept, and most capacity they hold together (bytes).
const MAX_SPARES: usize = 64;
const MAX_BYTES: usize = 64 << 20;

/// Most capacity of the value buffer a thread keeps (bytes).
pub(crate) const MAX_VALUE_BYTES: usize = 256 << 20;

thread_local! {
    static SPARES: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    static VALUES: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// An empty buffer of at least `capacity` bytes: the smallest spare that holds it, else
/// a new allocation of exactly that.
pub(crate) fn take(capacity: usize) -> Vec<u8> {
    let reused = SPARES.with_borrow_mut(|spares| {
        let best = spares.iter().enumerate().filter(|(_, v)| v.capacity() >= capacity).min_by_key(|(_, v)| v.capacity()).map(|(i, _)| i);
        best.map(|i| spares.swap_remove(i))
    });
    reused.unwrap_or_else(|| Vec::with_capacity(capacity))
}

/// Keeps `buf` for a later [`take`], emptied, unless the spares are full (then it is
/// freed, and so is one larger than all of them may hold).
pub(crate) fn give(mut buf: Vec<u8>) {
    if buf.capacity() == 0 {
        return;
    }
    buf.clear();
    SPARES.with_borrow_mut(|spares| {
        let held: usize = spares.iter().map(Vec::capacity).sum();
        if spares.len() < MAX_SPARES && held + buf.capacity() <= MAX_BYTES {
            spares.push(buf);
        }
    });
}

/// `n` values for a buffer its caller overwrites whole: the kept value buffer where it
/// is of `T` and holds `n` (its old values left in place, no pass over it), else `n`
/// zeros.
pub(crate) fn take_values<T: Copy + Default + 'static>(n: usize) -> Vec<T> {
    let kept = VALUES.with_borrow_mut(Option::take).and_then(|b| b.downcast::<Vec<T>>().ok());
    match kept {
        Some(mut v) if v.capacity() >= n => {
            v.resize(n, T::default());
            *v
        }
        _ => vec![T::default(); n],
    }
}

/// Keeps `values` for a later [`take_values`] in place of the buffer kept before,
/// unless its capacity exceeds [`MAX_VALUE_BYTES`] (then it is freed).
pub(crate) fn give_values<T: 'static>(values: Vec<T>) {
    if values.capacity() * size_of::<T>() <= MAX_VALUE_BYTES {
        VALUES.with_borrow_mut(|kept| *kept = Some(Box::new(values)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> (usize, usize) {
        SPARES.with_borrow(|s| (s.len(), s.iter().map(Vec::capacity).sum()))
    }

    #[test]
    fn a_given_buffer_serves_the_next_request_it_can_hold() {
        let mut a = take(1000);
        a.extend_from_slice(&[7; 1000]);
        let ptr = a.as_ptr();
        give(a);
        assert_eq!(held(), (1, 1000));
        // Too large for the spare: a new allocation, the spare stays.
        let big = take(2000);
        assert!(big.capacity() >= 2000 && big.as_ptr() != ptr);
        assert_eq!(held().0, 1);
        // The smallest spare that holds the request, emptied.
        give(big);
        let again = take(500);
        assert_eq!((again.as_ptr(), again.len()), (ptr, 0));
        assert_eq!(held().0, 1);
        give(again);
        assert_eq!(take(1500).capacity(), 2000);
    }

    #[test]
    fn a_kept_value_buffer_serves_the_next_request_of_its_type_it_can_hold() {
        let mut a = take_values::<f32>(1000);
        assert_eq!(a, vec![0.0; 1000]);
        a.fill(7.0);
        let ptr = a.as_ptr();
        give_values(a);
        // The same memory, its values as the last call left them (no clearing pass).
        let b = take_values::<f32>(600);
        assert_eq!((b.as_ptr(), b.len()), (ptr, 600));
        assert!(b.iter().all(|&v| v == 7.0));
        give_values(b);
        // Grown within its capacity: the new values are zeros.
        let c = take_values::<f32>(1000);
        assert_eq!(c.as_ptr(), ptr);
        assert!(c[..600].iter().all(|&v| v == 7.0) && c[600..].iter().all(|&v| v == 0.0));
        give_values(c);
        // Another type: fresh zeros, and the kept buffer is gone.
        assert_eq!(take_values::<f64>(10), vec![0.0; 10]);
        assert!(VALUES.with_borrow(Option::is_none));
        // Nothing larger than the limit is kept.
        give_values(vec![0u8; MAX_VALUE_BYTES + 1]);
        assert!(VALUES.with_borrow(Option::is_none));
        give_values(vec![1u8; 8]);
        assert_eq!(take_values::<u8>(8), vec![1; 8]);
    }

    #[test]
    fn the_spares_never_hold_more_than_their_limits() {
        for _ in 0..MAX_SPARES + 5 {
            give(Vec::with_capacity(16));
        }
        assert_eq!(held().0, MAX_SPARES);
        give(Vec::with_capacity(MAX_BYTES));
        assert_eq!(held().0, MAX_SPARES);
        while held().0 > 0 {
            take(1);
        }
        give(Vec::with_capacity(MAX_BYTES));
        give(Vec::with_capacity(1));
        assert_eq!(held(), (1, MAX_BYTES));
    }
}
