//! SZx bodies in the form a GPU runs them, one thread per block, over the block coder in
//! `crate::szx`. The stream is `[header][chunk table][frame per chunk]`, a frame being
//! `[state byte per block][u16 size per coded block][payloads]` (plain and pipelined
//! streams differ only in how many values a chunk holds).
//!
//! Encoding: [`plan_body`] gives every block its state, payload size and whether it is
//! coded; exclusive scans of the sizes (`S`) and of the coded flags (`C`) place
//! everything, since chunk `c` starting at block `f` has its frame at
//! `f + SIZE_ENTRY_BYTES * C(f) + S(f)` after the table; [`write_body`] writes each
//! block's state, size entry and payload there, and each chunk's first block its table
//! entry. The host writes the header.
//!
//! Decoding, from the chunk starts the table gives: [`coded_flags_body`] reads the state
//! bytes, a scan of the coded flags finds every size entry, [`payload_lens_body`] gives
//! every payload's length, a scan of those places the payloads, and [`decode_body`]
//! decodes every block, checking that each chunk's blocks fill its frame exactly.

use core::ops::Range;

use crate::grid::Grid;
use crate::shared::{Disjoint, SharedOut};
use crate::szx::coding::{is_coded, SIZE_ENTRY_BYTES};
use crate::szx::{decode_block, encode_block, payload_len, plan_block, SzxFloat, Tolerance};

/// How the values are cut: `n` values in blocks of `block`, chunks of `chunk_blocks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkLayout {
    pub n: usize,
    pub block: usize,
    pub chunk_blocks: usize,
}

/// Block `b`'s place: its chunk, the chunk's first block and the chunk's block count.
#[derive(Clone, Copy)]
struct Place {
    chunk: usize,
    first: usize,
    blocks: usize,
}

impl ChunkLayout {
    /// Number of blocks.
    #[inline(always)]
    pub fn blocks(&self) -> usize {
        self.n.div_ceil(self.block.max(1))
    }

    /// Number of chunks.
    #[inline(always)]
    pub fn chunks(&self) -> usize {
        self.blocks().div_ceil(self.chunk_blocks.max(1))
    }

    /// The values of block `b`.
    #[inline(always)]
    pub fn values(&self, b: usize) -> Range<usize> {
        (b * self.block).min(self.n)..((b + 1) * self.block).min(self.n)
    }

    #[inline(always)]
    fn place(&self, b: usize) -> Place {
        let cb = self.chunk_blocks.max(1);
        let chunk = b / cb;
        let first = chunk * cb;
        Place { chunk, first, blocks: (first + cb).min(self.blocks()) - first }
    }
}

/// Exclusive prefix sums with their total: `at(i)` for `i` up to the length.
#[derive(Clone, Copy)]
pub struct Prefix<'a> {
    pub offsets: &'a [u64],
    pub total: u64,
}

impl Prefix<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        self.offsets.get(i).copied().unwrap_or(self.total) as usize
    }
}

/// Runs `f` on the blocks of grid position `g`; true if it returned true for each.
#[inline(always)]
fn all_blocks(g: Grid, l: &ChunkLayout, mut f: impl FnMut(usize) -> bool) -> bool {
    let mut ok = true;
    for b in g.stride_iter(l.blocks()) {
        ok &= f(b);
    }
    ok
}

/// Encode phase 1: `states[b]`, `sizes[b]` (payload bytes) and `coded[b]` (1 if the
/// block takes a size-table entry) for every block.
#[inline(always)]
pub fn plan_body<T: SzxFloat>(
    g: Grid,
    data: &[T],
    l: &ChunkLayout,
    tol: &Tolerance<T>,
    states: &SharedOut<'_, u8>,
    sizes: &SharedOut<'_, u32>,
    coded: &SharedOut<'_, u32>,
) {
    for b in g.stride_iter(l.blocks()) {
        let Some(x) = data.get(l.values(b)) else { continue };
        let plan = plan_block(x, tol);
        states.set(b, plan.state);
        sizes.set(b, plan.size);
        coded.set(b, plan.is_coded() as u32);
    }
}

/// Encode phase 3: block `b`'s state byte, size entry and payload, and for a chunk's
/// first block the chunk's table entry at `table_at + 4 c`. Frames start at
/// `frames_at`. `s` and `c` are the scans of phase 1's sizes and coded flags. False if
/// a block's plan differs from phase 1's or its bytes fall outside `out`.
///
/// # Safety
/// `s` and `c` must be the exclusive scans of the `sizes` and `coded` that [`plan_body`]
/// gave for the same data, layout and tolerance (the ranges written are then
/// disjoint), and each block must be handled by one grid position.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn write_body<T: SzxFloat>(
    g: Grid,
    data: &[T],
    l: &ChunkLayout,
    tol: &Tolerance<T>,
    s: Prefix<'_>,
    c: Prefix<'_>,
    frames_at: usize,
    table_at: usize,
    out: &Disjoint<'_, u8>,
) -> bool {
    all_blocks(g, l, |b| {
        let Some(x) = data.get(l.values(b)) else { return false };
        let p = l.place(b);
        let last = p.first + p.blocks;
        let frame = frames_at + p.first + SIZE_ENTRY_BYTES * c.at(p.first) + s.at(p.first);
        let coded_in_chunk = c.at(last) - c.at(p.first);
        let plan = plan_block(x, tol);
        let size = plan.size as usize;
        if size != s.at(b + 1) - s.at(b) || plan.is_coded() != (c.at(b + 1) > c.at(b)) {
            return false;
        }
        let state_at = frame + (b - p.first);
        let payload_at = frame + p.blocks + SIZE_ENTRY_BYTES * coded_in_chunk + s.at(b) - s.at(p.first);
        let mut ok = write(out, state_at, &[plan.state]);
        if plan.is_coded() {
            let entry_at = frame + p.blocks + SIZE_ENTRY_BYTES * (c.at(b) - c.at(p.first));
            ok &= write(out, entry_at, &(plan.size as u16).to_le_bytes());
        }
        ok &= out.range_mut(payload_at..payload_at + size).is_some_and(|payload| encode_block(x, &plan, payload));
        if b == p.first {
            let frame_len = p.blocks + SIZE_ENTRY_BYTES * coded_in_chunk + s.at(last) - s.at(p.first);
            ok &= write(out, table_at + 4 * p.chunk, &(frame_len as u32).to_le_bytes());
        }
        ok
    })
}

/// Copies `bytes` to `at` in `out`; false if they do not fit.
///
/// # Safety
/// As [`Disjoint::range_mut`].
#[inline(always)]
unsafe fn write(out: &Disjoint<'_, u8>, at: usize, bytes: &[u8]) -> bool {
    match out.range_mut(at..at + bytes.len()) {
        Some(dst) => {
            dst.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// The state byte of block `b` whose chunk's frame starts at `chunk_starts[chunk]`.
#[inline(always)]
fn state_of(stream: &[u8], l: &ChunkLayout, chunk_starts: &[u64], b: usize) -> Option<(u8, Place, usize)> {
    let p = l.place(b);
    let frame = *chunk_starts.get(p.chunk)? as usize;
    let state = *stream.get(frame + (b - p.first))?;
    Some((state, p, frame))
}

/// Decode phase 1: `coded[b]` = 1 if block `b`'s state says it has a size entry.
/// `chunk_starts` holds every chunk's frame offset and, last, the end of the stream.
/// False if a state byte lies outside the stream.
#[inline(always)]
pub fn coded_flags_body(g: Grid, stream: &[u8], l: &ChunkLayout, chunk_starts: &[u64], coded: &SharedOut<'_, u32>) -> bool {
    all_blocks(g, l, |b| {
        let Some((state, _, _)) = state_of(stream, l, chunk_starts, b) else { return false };
        coded.set(b, is_coded(state) as u32);
        true
    })
}

/// Decode phase 2: `lens[b]`, the payload bytes of block `b`, from its state and (for a
/// coded block) its size entry; `c` is the scan of phase 1's flags. False for a bad
/// state byte or a size entry outside the stream.
#[inline(always)]
pub fn payload_lens_body<T: SzxFloat>(
    g: Grid,
    stream: &[u8],
    l: &ChunkLayout,
    chunk_starts: &[u64],
    c: Prefix<'_>,
    lens: &SharedOut<'_, u32>,
) -> bool {
    all_blocks(g, l, |b| {
        let Some((state, p, frame)) = state_of(stream, l, chunk_starts, b) else { return false };
        let entry_at = frame + p.blocks + SIZE_ENTRY_BYTES * (c.at(b) - c.at(p.first));
        let coded_size = match stream.get(entry_at..entry_at + SIZE_ENTRY_BYTES) {
            Some(e) => u16::from_le_bytes([e[0], e[1]]) as usize,
            None if is_coded(state) => return false,
            None => 0,
        };
        match payload_len::<T>(state, l.values(b).len(), coded_size) {
            Ok(len) if len <= u32::MAX as usize => {
                lens.set(b, len as u32);
                true
            }
            _ => false,
        }
    })
}

/// Decode phase 3: block `b`'s values into `out`; `c` and `s` are the scans of the
/// coded flags and payload lengths. False if a block cannot be decoded, its payload
/// leaves its chunk's frame, or a chunk's blocks do not end exactly at its frame's end.
///
/// # Safety
/// Each block must be handled by one grid position (as every launch does), so that the
/// blocks' value ranges taken from `out` are disjoint.
#[inline(always)]
pub unsafe fn decode_body<T: SzxFloat>(
    g: Grid,
    stream: &[u8],
    l: &ChunkLayout,
    chunk_starts: &[u64],
    c: Prefix<'_>,
    s: Prefix<'_>,
    out: &Disjoint<'_, T>,
) -> bool {
    all_blocks(g, l, |b| {
        let Some((state, p, frame)) = state_of(stream, l, chunk_starts, b) else { return false };
        let frame_end = chunk_starts.get(p.chunk + 1).map_or(0, |&e| e as usize);
        let last = p.first + p.blocks;
        let payload_at = frame + p.blocks + SIZE_ENTRY_BYTES * (c.at(last) - c.at(p.first)) + s.at(b) - s.at(p.first);
        let end = payload_at + s.at(b + 1) - s.at(b);
        if end > frame_end || (b + 1 == last && end != frame_end) {
            return false;
        }
        // SAFETY: block `b`'s values are this position's alone (blocks do not overlap,
        // and the caller hands every block to one grid position).
        match (stream.get(payload_at..end), out.range_mut(l.values(b))) {
            (Some(payload), Some(values)) => decode_block(state, payload, values).is_ok(),
            _ => false,
        }
    })
}
