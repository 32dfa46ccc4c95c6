//! How the decoder writes its values: through the caches, or, for an output larger than
//! them, with streaming (non-temporal) stores. An ordinary store that misses the caches
//! first reads the line it writes, so writing memory that is not cached moves every
//! byte twice; a streaming store writes whole lines without reading them. On a 64 MiB
//! output out of the caches (2026-11-28, a Xeon with AVX-512, one thread) ordinary
//! stores filled 7.0 to 7.9 GB/s and `memset` 8.0 to 9.6, 32-byte streaming stores 19.8
//! to 23.0 GB/s. The lines written are then not cached: for an output that fits in the
//! caches and is read soon after, ordinary stores are better, hence the threshold (as
//! glibc's `memset` and `memcpy` switch to streaming stores above a size of their own).

use codec_kernels::reduce::{reduce_tile, reduce_tile_const, ReduceOp};

use crate::{Element, OutputWrites};

/// A caller's decoder outputs (`decompress_into`) of at least this many bytes are
/// written with streaming stores, where the CPU has AVX (32-byte ones); smaller ones,
/// the chunks of the pipelined decoder and the allocating decoder's fresh memory,
/// through the caches.
pub const STREAMING_MIN_BYTES: usize = 16 << 20;

/// How a decoder writes its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stores {
    /// Ordinary stores.
    Cached,
    /// Ordinary stores into memory that holds `+0.0` already (fresh from the
    /// allocator's zeroed memory): zero blocks are not written. Streaming stores into
    /// pages just faulted in were slower than ordinary ones (2026-11-28, the Xeon above:
    /// `seaice` decoded into a new zeroed vector at 0.8x).
    Zeroed,
    /// 32-byte streaming stores; made only where the CPU has AVX.
    #[cfg(target_arch = "x86_64")]
    Streaming,
    /// No stores of decoded values: each is combined with `op` into the value in place,
    /// `out[i] = out[i] op v` (a reduction as the values are decoded, with no buffer
    /// for them between: block by block through the staging buffer, which stays in L1).
    Reduce(ReduceOp),
}

impl Stores {
    /// The stores for an output of `values` the caller owns (memory written before, as
    /// a reused buffer is) that the caller wants written as `writes` says: streaming
    /// from [`STREAMING_MIN_BYTES`] on, or whatever the size.
    pub(super) fn for_output<T>(values: &[T], writes: OutputWrites) -> Stores {
        #[cfg(target_arch = "x86_64")]
        if (writes == OutputWrites::Streaming || std::mem::size_of_val(values) >= STREAMING_MIN_BYTES) && std::arch::is_x86_feature_detected!("avx") {
            return Stores::Streaming;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (values, writes);
        Stores::Cached
    }
}

/// Writes the values of one decode tile, in order, with [`Stores`]. With streaming
/// stores, values go through a small staging buffer and out in whole 64-byte lines:
/// blocks rarely start on a line boundary (a large vector's values start 16 bytes into
/// a page under glibc), and a line written partly by streaming stores and partly by
/// ordinary ones costs more than ordinary stores alone (2026-11-28, a Xeon, smooth3d at
/// 1e-3: block by block, decoding ran at 0.68x of ordinary stores). Only the partial
/// lines at the tile's ends take ordinary stores.
/// Streaming stores are ordered (`sfence`) when the writer is dropped, on every path
/// out of the tile, before its output can be read or handed to another thread.
pub(super) struct Writer<'a, T: Element> {
    out: &'a mut [T],
    stores: Stores,
    /// Values of `out` before `done` are written.
    done: usize,
    /// `staging[..pending]` holds the values of `out[done..done + pending]`, not yet
    /// written; fewer than a line's worth between calls.
    staging: Vec<T>,
    pending: usize,
}

impl<'a, T: Element> Writer<'a, T> {
    /// A writer of `out`, for blocks of at most `block` values.
    pub(super) fn new(out: &'a mut [T], stores: Stores, block: usize) -> Self {
        let staging = match stores {
            Stores::Cached | Stores::Zeroed => Vec::new(),
            #[cfg(target_arch = "x86_64")]
            Stores::Streaming => vec![T::default(); block + LINE / size_of::<T>()],
            Stores::Reduce(_) => vec![T::default(); block],
        };
        Writer { out, stores, done: 0, staging, pending: 0 }
    }

    /// The values to write.
    pub(super) fn len(&self) -> usize {
        self.out.len()
    }

    /// Where to decode the `len` values from `at` (just after the ones written last):
    /// in place, or in the staging buffer; [`flush`](Self::flush) then writes them. One
    /// call site for the decoder either way: two would keep its per-group steps from
    /// being inlined (see `isa.rs`).
    #[inline(always)]
    pub(super) fn target(&mut self, at: usize, len: usize) -> &mut [T] {
        match self.stores {
            Stores::Cached | Stores::Zeroed => &mut self.out[at..at + len],
            #[cfg(target_arch = "x86_64")]
            Stores::Streaming => {
                debug_assert_eq!(at, self.done + self.pending);
                &mut self.staging[self.pending..self.pending + len]
            }
            Stores::Reduce(_) => {
                self.done = at;
                &mut self.staging[..len]
            }
        }
    }

    /// Writes the `len` values decoded into [`target`](Self::target).
    #[inline(always)]
    pub(super) fn flush(&mut self, len: usize) {
        match self.stores {
            Stores::Cached | Stores::Zeroed => {}
            #[cfg(target_arch = "x86_64")]
            Stores::Streaming => {
                self.pending += len;
                self.stream_lines();
            }
            Stores::Reduce(op) => reduce_tile(op, &mut self.out[self.done..self.done + len], &self.staging[..len]),
        }
    }

    /// Sets the `len` values from `at` (just after the ones written last) to `v`.
    #[inline(always)]
    pub(super) fn fill(&mut self, at: usize, len: usize, v: T) {
        match self.stores {
            Stores::Cached | Stores::Zeroed => self.out[at..at + len].fill(v),
            Stores::Reduce(op) => reduce_tile_const(op, &mut self.out[at..at + len], v),
            #[cfg(target_arch = "x86_64")]
            Stores::Streaming => {
                debug_assert_eq!(at, self.done + self.pending);
                // Complete the staged line, stream it, then the whole lines straight
                // into `out`; what is left of the last line is staged.
                let to_line = self.out[at..].as_ptr().align_offset(LINE).min(len);
                self.staging[self.pending..self.pending + to_line].fill(v);
                self.pending += to_line;
                self.stream_lines();
                let (at, len) = (at + to_line, len - to_line);
                if len == 0 {
                    return;
                }
                // The staged line was completed and streamed: `out[at..]` starts on a
                // line boundary with nothing staged.
                debug_assert_eq!(self.pending, 0);
                let lines = len / (LINE / size_of::<T>()) * (LINE / size_of::<T>());
                // SAFETY: a streaming writer exists only where the CPU has AVX
                // (`for_output`); `out[at..]` starts on a line boundary.
                unsafe { x86::stream_fill(&mut self.out[at..at + lines], v) };
                self.done = at + lines;
                self.staging[..len - lines].fill(v);
                self.pending = len - lines;
            }
        }
    }

    /// Writes the `len` values from `at` (just after the ones written last) as `+0.0`
    /// (a zero block), unless they hold it already.
    #[inline(always)]
    pub(super) fn zeros(&mut self, at: usize, len: usize) {
        if self.stores != Stores::Zeroed {
            self.fill(at, len, T::default());
        }
    }

    /// Streams the whole lines of the staged values (ordinary stores before the first
    /// line boundary) and keeps the rest staged.
    #[cfg(target_arch = "x86_64")]
    fn stream_lines(&mut self) {
        let lanes = LINE / size_of::<T>();
        let dst = &mut self.out[self.done..self.done + self.pending];
        let lead = dst.as_ptr().align_offset(LINE).min(dst.len());
        let lines = (dst.len() - lead) / lanes * lanes;
        let (head, body) = dst.split_at_mut(lead);
        head.copy_from_slice(&self.staging[..lead]);
        // SAFETY: as in `fill`; `body` starts on a line boundary.
        unsafe { x86::stream_copy(&mut body[..lines], &self.staging[lead..lead + lines]) };
        let moved = lead + lines;
        self.staging.copy_within(moved..self.pending, 0);
        self.done += moved;
        self.pending -= moved;
    }

    /// Writes the staged values with ordinary stores.
    fn write_pending(&mut self) {
        self.out[self.done..self.done + self.pending].copy_from_slice(&self.staging[..self.pending]);
        self.done += self.pending;
        self.pending = 0;
    }
}

impl<T: Element> Drop for Writer<'_, T> {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if self.stores == Stores::Streaming {
            self.write_pending();
            // SAFETY: SSE is part of x86-64.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
    }
}

/// Bytes of a cache line, the unit streamed.
const LINE: usize = 64;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};

    use super::LINE;

    /// Bytes per streaming store.
    const STORE: usize = 32;

    /// Copies `src` into `dst`, whole lines on line boundaries, with streaming stores.
    ///
    /// # Safety
    /// The CPU must have AVX; `dst` must be empty or start on a line boundary, hold
    /// whole lines, and `src` must be as long.
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn stream_copy<T: Copy>(dst: &mut [T], src: &[T]) {
        debug_assert!((dst.is_empty() || dst.as_ptr().cast::<u8>().align_offset(LINE) == 0) && size_of_val(dst).is_multiple_of(LINE) && src.len() == dst.len());
        let lanes = STORE / size_of::<T>();
        for (d, s) in dst.chunks_exact_mut(lanes).zip(src.chunks_exact(lanes)) {
            // SAFETY: `d` is 32 bytes on a 32-byte boundary and `s` 32 bytes (the
            // caller's line-aligned whole lines); the caller vouches for AVX.
            unsafe { _mm256_stream_si256(d.as_mut_ptr().cast::<__m256i>(), _mm256_loadu_si256(s.as_ptr().cast::<__m256i>())) };
        }
    }

    /// Sets every value of `dst`, whole lines on line boundaries, to `v` with streaming
    /// stores.
    ///
    /// # Safety
    /// As for [`stream_copy`].
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn stream_fill<T: Copy>(dst: &mut [T], v: T) {
        debug_assert!((dst.is_empty() || dst.as_ptr().cast::<u8>().align_offset(LINE) == 0) && size_of_val(dst).is_multiple_of(LINE));
        // Eight values hold at least 32 bytes of `v` repeated (T is 4 or 8 bytes).
        let pattern = [v; 8];
        assert!(size_of_val(&pattern) >= STORE);
        // SAFETY: `pattern` holds at least 32 bytes; the caller vouches for AVX.
        let store = unsafe { _mm256_loadu_si256(pattern.as_ptr().cast::<__m256i>()) };
        for d in dst.chunks_exact_mut(STORE / size_of::<T>()) {
            // SAFETY: `d` is 32 bytes on a 32-byte boundary.
            unsafe { _mm256_stream_si256(d.as_mut_ptr().cast::<__m256i>(), store) };
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Runs a sequence of blocks, fills and zeros over `out[offset..]` with `stores`.
    fn write_sequence<T: Element>(out: &mut [T], offset: usize, stores: Stores, ops: &[(u8, usize)], value: &impl Fn(usize) -> T) {
        let block = 40;
        let mut w = Writer::new(&mut out[offset..], stores, block);
        let mut at = 0;
        for (k, &(op, len)) in ops.iter().enumerate() {
            let len = len.min(w.len() - at).min(if op == 0 { block } else { usize::MAX });
            match op {
                0 => {
                    for (i, x) in w.target(at, len).iter_mut().enumerate() {
                        *x = value(at + i);
                    }
                    w.flush(len);
                }
                1 => w.fill(at, len, value(1000 + k)),
                _ => w.zeros(at, len),
            }
            at += len;
        }
    }

    /// Streamed writes leave exactly what ordinary ones do, at every alignment, over
    /// sequences of blocks, fills (short, long, across lines) and zeros.
    fn streams_like_plain_stores<T: Element>(value: impl Fn(usize) -> T) {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..400 {
            let ops: Vec<(u8, usize)> = (0..1 + round % 12)
                .map(|_| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((s >> 60) as u8 % 3, (s >> 20) as usize % 90)
                })
                .collect();
            let offset = round % 17;
            let mut streamed = vec![value(7); 700];
            let mut plain = streamed.clone();
            write_sequence(&mut streamed, offset, Stores::Streaming, &ops, &value);
            write_sequence(&mut plain, offset, Stores::Cached, &ops, &value);
            assert_eq!(streamed, plain, "offset {offset}, {ops:?}");
        }
    }

    #[test]
    fn streamed_f32_like_plain() {
        streams_like_plain_stores(|i| i as f32 * 1.5 - 3.0);
    }

    #[test]
    fn streamed_f64_like_plain() {
        streams_like_plain_stores(|i| -(i as f64) * 0.25 + 1e300);
    }
}
