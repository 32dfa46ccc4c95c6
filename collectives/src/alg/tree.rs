//! Binomial-tree broadcast, scatter and gather.
//!
//! Ranks are renumbered relative to the root (virtual rank `v = rank - root mod p`).
//! Virtual rank `v` receives from `v - lowbit(v)` and serves the subtrees
//! `[v + m, v + 2m)` for `m = lowbit(v)/2, ..., 1`, so the data of a subtree is a
//! contiguous range of virtual ranks.
//!
//! C-Coll: every block is compressed once at its origin and travels as frames, one
//! message per pipeline chunk and hop, that inner ranks forward without decoding; CPR-P2P: every hop decodes what it received and
//! compresses again what it sends.

use core::ops::Range;

use crate::blocks::Blocks;
use crate::call::{pieces, Call};
use crate::frame::HEADER_LEN;
use crate::place::Place;
use crate::transport::{recycle, test_all, wait_all, Inbox, Pending, SharedFrame, TAG_TREE};
use crate::Value;

/// A binomial tree rooted at `root`, seen from one rank.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Binomial {
    p: usize,
    root: usize,
    v: usize,
}

impl Binomial {
    pub fn new(p: usize, rank: usize, root: usize) -> Self {
        Binomial { p, root, v: (rank + p - root) % p }
    }

    /// The rank of virtual rank `v`.
    pub fn rank_of(&self, v: usize) -> usize {
        (v + self.root) % self.p
    }

    /// Subtree width: lowbit(v), or for the root the next power of two >= p.
    fn span(&self) -> usize {
        if self.v == 0 {
            self.p.next_power_of_two()
        } else {
            1 << self.v.trailing_zeros()
        }
    }

    /// The parent's rank (none for the root).
    pub fn parent(&self) -> Option<usize> {
        (self.v != 0).then(|| self.rank_of(self.v - self.span()))
    }

    /// This rank's subtree, as virtual ranks.
    pub fn subtree(&self) -> Range<usize> {
        self.v..(self.v + self.span()).min(self.p)
    }

    /// The children's subtrees, as virtual ranks, largest first.
    pub fn children(&self) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut m = self.span() / 2;
        while m > 0 {
            let c = self.v + m;
            if c < self.p {
                out.push(c..(c + m).min(self.p));
            }
            m /= 2;
        }
        out
    }

    /// Where the blocks of virtual ranks `range` lie in a buffer laid out by rank, if
    /// they lie there in virtual-rank order, one after another (always for root 0).
    fn in_order(&self, blocks: &Blocks, range: Range<usize>) -> Option<Range<usize>> {
        let mut whole = blocks.range(self.rank_of(range.start));
        for v in range.skip(1) {
            let next = blocks.range(self.rank_of(v));
            if next.start != whole.end {
                return None;
            }
            whole.end = next.end;
        }
        Some(whole)
    }

    /// Offsets of the blocks of virtual ranks `range`, laid out in virtual-rank order,
    /// relative to the start of the range (one more entry than the range).
    fn offsets(&self, blocks: &Blocks, range: Range<usize>) -> Vec<usize> {
        let mut off = vec![0];
        for v in range {
            off.push(off.last().copied().unwrap_or(0) + blocks.len(self.rank_of(v)));
        }
        off
    }
}

/// One frame of a tree stream: chunk `index` of the `pieces` of virtual rank `v`'s
/// block, covering `range` of that block.
struct Piece {
    v: usize,
    index: usize,
    pieces: usize,
    range: Range<usize>,
}

/// The frames that carry the blocks of virtual ranks `vs`, in the order every stream of
/// the tree sends them: virtual-rank order, each block in its pipeline chunks. Every
/// rank derives the same list from the agreed count and chunk size, so a stream needs no
/// other framing than the frames' own headers.
fn stream<T: Value>(call: &Call, tree: &Binomial, blocks: &Blocks, vs: Range<usize>) -> Vec<Piece> {
    let mut out = Vec::new();
    for v in vs {
        let len = blocks.len(tree.rank_of(v));
        let chunks = pieces(0..len, call.chunk_values::<T>(len));
        let n = chunks.len();
        out.extend(chunks.into_iter().enumerate().map(|(index, range)| Piece { v, index, pieces: n, range }));
    }
    out
}

/// Receive sizes of `stream`'s frames: none is larger than its raw values.
fn capacities<T: Value>(stream: &[Piece]) -> Vec<usize> {
    stream.iter().map(|pc| HEADER_LEN + pc.range.len() * T::SIZE).collect()
}

/// Broadcast of `buf` from `root`.
pub(crate) fn bcast<T: Value, W: Place<T> + ?Sized>(call: &mut Call, buf: &mut W, root: usize, recompress: bool) {
    let tree = Binomial::new(call.comm.size, call.comm.rank, root);
    if recompress {
        return bcast_recompress(call, &tree, buf);
    }
    // C-Coll, pipelined: the root compresses chunk by chunk and sends each chunk as soon
    // as it is made; every other rank forwards each chunk as it arrives, then decodes it
    // while the next ones travel.
    let n = buf.len();
    let ranges = pieces(0..n, call.chunk_values::<T>(n));
    let np = ranges.len();
    let kids: Vec<usize> = tree.children().iter().map(|c| tree.rank_of(c.start)).collect();
    let mut sends: Vec<Pending> = Vec::new();
    let forward = |call: &mut Call, sends: &mut Vec<Pending>, frame: Vec<u8>, values: usize| {
        let frame: SharedFrame = frame.into();
        for &kid in &kids {
            sends.push(call.isend::<T>(kid, TAG_TREE, frame.clone(), values));
        }
        test_all(sends);
        frame
    };
    match tree.parent() {
        None if kids.is_empty() => {}
        None => call.frames_each(&*buf, &ranges, |i| i, np, |call, i, frame| {
            forward(call, &mut sends, frame, ranges[i].len());
        }),
        Some(parent) => {
            let mut inbox = Inbox::new(call.comm, parent, TAG_TREE, ranges.iter().map(|r| HEADER_LEN + r.len() * T::SIZE).collect());
            for (i, range) in ranges.iter().enumerate() {
                let Some(bytes) = inbox.next() else { break };
                let frame = forward(call, &mut sends, bytes, range.len());
                let want = call.expect::<T>(Some(i), Some(np), range.len());
                call.decode_at(parent, &frame, &want, buf, range.clone());
                // A leaf's frame ends here; a forwarded one when its last send is done.
                recycle(frame);
                test_all(&mut sends);
                inbox.poll();
            }
        }
    }
    wait_all(&mut sends);
}

fn bcast_recompress<T: Value, W: Place<T> + ?Sized>(call: &mut Call, tree: &Binomial, buf: &mut W) {
    let all = 0..buf.len();
    if let Some(parent) = tree.parent() {
        let bytes = call.comm.recv(parent, TAG_TREE);
        call.decode_pieces(parent, &bytes, buf, all.clone());
    }
    let mut sends = Vec::new();
    for child in tree.children() {
        let frames = call.frames_of(buf, all.clone());
        sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, frames, buf.len()));
    }
    wait_all(&mut sends);
}

/// The rank of the child whose subtree holds virtual rank `v` (none: `v` is this rank).
fn child_holding(tree: &Binomial, children: &[Range<usize>], v: usize) -> Option<usize> {
    children.iter().find(|c| c.contains(&v)).map(|c| tree.rank_of(c.start))
}

/// Scatter of `send` (significant at the root: block b for rank b) into `recv` (this
/// rank's block).
pub(crate) fn scatter<T: Value, W: Place<T> + ?Sized>(call: &mut Call, send: &W, recv: &mut W, blocks: &Blocks, root: usize, recompress: bool) {
    let tree = Binomial::new(call.comm.size, call.comm.rank, root);
    if recompress {
        return scatter_recompress(call, &tree, send, recv, blocks);
    }
    // C-Coll, pipelined: the root compresses the other ranks' blocks chunk by chunk and
    // sends each chunk towards its rank as soon as it is made; inner ranks forward the
    // chunks of their subtree as they arrive and decode their own.
    let sub = tree.subtree();
    let children = tree.children();
    let mut sends: Vec<Pending> = Vec::new();
    match tree.parent() {
        None => {
            let frames = stream::<T>(call, &tree, blocks, 1..call.comm.size);
            let ranges: Vec<Range<usize>> = frames
                .iter()
                .map(|pc| {
                    let block = blocks.range(tree.rank_of(pc.v));
                    block.start + pc.range.start..block.start + pc.range.end
                })
                .collect();
            call.frames_labeled(send, &ranges, |i| (frames[i].index, frames[i].pieces), |call, i, frame| {
                if let Some(kid) = child_holding(&tree, &children, frames[i].v) {
                    sends.push(call.isend::<T>(kid, TAG_TREE, frame, ranges[i].len()));
                }
                test_all(&mut sends);
            });
            call.copy(recv, 0..recv.len(), send, blocks.range(root));
        }
        Some(parent) => {
            let frames = stream::<T>(call, &tree, blocks, sub);
            let mut inbox = Inbox::new(call.comm, parent, TAG_TREE, capacities::<T>(&frames));
            for pc in &frames {
                let Some(frame) = inbox.next() else { break };
                match child_holding(&tree, &children, pc.v) {
                    Some(kid) => sends.push(call.isend::<T>(kid, TAG_TREE, frame, pc.range.len())),
                    None => {
                        let want = call.expect::<T>(Some(pc.index), Some(pc.pieces), pc.range.len());
                        call.decode_at(parent, &frame, &want, recv, pc.range.clone());
                        recycle(frame);
                    }
                }
                test_all(&mut sends);
                inbox.poll();
            }
        }
    }
    wait_all(&mut sends);
}

fn scatter_recompress<T: Value, W: Place<T> + ?Sized>(call: &mut Call, tree: &Binomial, send: &W, recv: &mut W, blocks: &Blocks) {
    let sub = tree.subtree();
    let children = tree.children();
    let mut sends: Vec<Pending> = Vec::new();
    match tree.parent() {
        // As MPICH's binomial scatter: the root sends straight from the caller's input
        // wherever a child's blocks lie there in virtual-rank order (every child when
        // the root is rank 0), and gathers them into a buffer of their own where they
        // wrap around the end.
        None => {
            call.copy(recv, 0..recv.len(), send, blocks.range(tree.rank_of(0)));
            for child in children {
                let off = tree.offsets(blocks, child.clone());
                let frames = match tree.in_order(blocks, child.clone()) {
                    Some(range) => call.frames_of(send, range),
                    // Without the buffer, an empty bundle: the child fails, no rank waits.
                    None => match call.scratch(recv, off[off.len() - 1]) {
                        Some(mut ordered) => {
                            for (k, v) in child.clone().enumerate() {
                                call.copy(&mut *ordered, off[k]..off[k + 1], send, blocks.range(tree.rank_of(v)));
                            }
                            let frames = call.frames_of(&*ordered, 0..ordered.len());
                            W::keep(ordered);
                            frames
                        }
                        None => Vec::new(),
                    },
                };
                sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, frames, off[off.len() - 1]));
            }
        }
        // A leaf decodes its block straight into the caller's output.
        Some(parent) if children.is_empty() => {
            let bytes = call.comm.recv(parent, TAG_TREE);
            call.decode_pieces(parent, &bytes, recv, 0..recv.len());
        }
        // An inner rank decodes its own block into the caller's output and its
        // children's into a buffer in virtual-rank order (only what it passes on; kept
        // for the next call, `spare`), and compresses each child's again. Without the
        // buffer it still takes its message and sends each child an empty bundle.
        Some(parent) => {
            let off = tree.offsets(blocks, sub.clone());
            let own = off[1];
            let mut theirs = call.scratch(recv, off[off.len() - 1] - own);
            let bytes = call.comm.recv(parent, TAG_TREE);
            if let Some(theirs) = theirs.as_mut() {
                call.decode_pieces_split(parent, &bytes, recv, &mut **theirs);
            }
            for child in children {
                let range = off[child.start - sub.start] - own..off[child.end - sub.start] - own;
                let values = range.len();
                let frames = theirs.as_ref().map_or_else(Vec::new, |theirs| call.frames_of(&**theirs, range));
                sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, frames, values));
            }
            if let Some(theirs) = theirs {
                W::keep(theirs);
            }
        }
    }
    wait_all(&mut sends);
}

/// Gather of every rank's `mine` (block `rank` of `blocks`) into `out` at the root.
pub(crate) fn gather<T: Value, W: Place<T> + ?Sized>(call: &mut Call, mine: &W, out: &mut W, blocks: &Blocks, root: usize, recompress: bool) {
    let tree = Binomial::new(call.comm.size, call.comm.rank, root);
    if recompress {
        return gather_recompress(call, &tree, mine, out, blocks);
    }
    // C-Coll, pipelined: every rank sends its own block to its parent chunk by chunk as
    // each is compressed, then forwards its children's streams frame by frame (the
    // smaller subtrees, which finish first, first); the root decodes every frame as it
    // arrives, from whichever child has one ready.
    let sub = tree.subtree();
    let children: Vec<Range<usize>> = tree.children().into_iter().rev().collect();
    let mut inboxes: Vec<(usize, Vec<Piece>, Inbox)> = children
        .iter()
        .map(|child| {
            let src = tree.rank_of(child.start);
            let frames = stream::<T>(call, &tree, blocks, child.clone());
            let inbox = Inbox::new(call.comm, src, TAG_TREE, capacities::<T>(&frames));
            (src, frames, inbox)
        })
        .collect();
    match tree.parent() {
        Some(parent) => {
            let own = stream::<T>(call, &tree, blocks, sub.start..sub.start + 1);
            let ranges: Vec<Range<usize>> = own.iter().map(|pc| pc.range.clone()).collect();
            let mut sends: Vec<Pending> = Vec::new();
            call.frames_labeled(mine, &ranges, |i| (own[i].index, own[i].pieces), |call, i, frame| {
                sends.push(call.isend::<T>(parent, TAG_TREE, frame, ranges[i].len()));
                test_all(&mut sends);
                inboxes.iter_mut().for_each(|(_, _, inbox)| inbox.poll());
            });
            for k in 0..inboxes.len() {
                for j in 0..inboxes[k].1.len() {
                    let Some(frame) = inboxes[k].2.next() else { break };
                    let values = inboxes[k].1[j].range.len();
                    sends.push(call.isend::<T>(parent, TAG_TREE, frame, values));
                    test_all(&mut sends);
                    inboxes.iter_mut().for_each(|(_, _, inbox)| inbox.poll());
                }
            }
            wait_all(&mut sends);
        }
        None => {
            call.copy(out, blocks.range(root), mine, 0..mine.len());
            let mut taken = vec![0; inboxes.len()];
            loop {
                // A child whose next frame is here, else the first with frames to come.
                let open: Vec<usize> = (0..inboxes.len()).filter(|&k| taken[k] < inboxes[k].1.len()).collect();
                let Some(k) = open.iter().copied().find(|&k| inboxes[k].2.ready()).or(open.first().copied()) else {
                    break;
                };
                let (src, frames, inbox) = &mut inboxes[k];
                let pc = &frames[taken[k]];
                taken[k] += 1;
                let Some(frame) = inbox.next() else { continue };
                let block = blocks.range(tree.rank_of(pc.v));
                let want = call.expect::<T>(Some(pc.index), Some(pc.pieces), pc.range.len());
                call.decode_at(*src, &frame, &want, out, block.start + pc.range.start..block.start + pc.range.end);
                recycle(frame);
            }
        }
    }
}

fn gather_recompress<T: Value, W: Place<T> + ?Sized>(call: &mut Call, tree: &Binomial, mine: &W, out: &mut W, blocks: &Blocks) {
    let sub = tree.subtree();
    let children = tree.children();
    match tree.parent() {
        // As MPICH's binomial gather: a leaf sends straight from the caller's input...
        Some(parent) if children.is_empty() => {
            let frames = call.frames_of(mine, 0..mine.len());
            call.send::<T>(parent, TAG_TREE, &frames, mine.len());
        }
        // ...an inner rank gathers its subtree's blocks in a buffer in virtual-rank
        // order, decoding its children's, and compresses them all again (without the
        // buffer it still takes its children's messages, and sends an empty bundle)...
        Some(parent) => {
            let off = tree.offsets(blocks, sub.clone());
            let mut ordered = call.scratch(mine, off[off.len() - 1]);
            if let Some(ordered) = ordered.as_mut() {
                call.copy(&mut **ordered, 0..off[1], mine, 0..mine.len());
            }
            for child in children.into_iter().rev() {
                let src = tree.rank_of(child.start);
                let bytes = call.comm.recv(src, TAG_TREE);
                let range = off[child.start - sub.start]..off[child.end - sub.start];
                if let Some(ordered) = ordered.as_mut() {
                    call.decode_pieces(src, &bytes, &mut **ordered, range);
                }
            }
            let frames = ordered.as_ref().map_or_else(Vec::new, |ordered| call.frames_of(&**ordered, 0..ordered.len()));
            if let Some(ordered) = ordered {
                W::keep(ordered);
            }
            call.send::<T>(parent, TAG_TREE, &frames, off[off.len() - 1]);
        }
        // ...and the root decodes each child's straight into the caller's output where
        // its ranks' blocks lie there in order (every child when the root is rank 0),
        // else into a buffer it copies them out of.
        None => {
            call.copy(out, blocks.range(tree.rank_of(0)), mine, 0..mine.len());
            for child in children.into_iter().rev() {
                let src = tree.rank_of(child.start);
                let bytes = call.comm.recv(src, TAG_TREE);
                if let Some(range) = tree.in_order(blocks, child.clone()) {
                    call.decode_pieces(src, &bytes, out, range);
                    continue;
                }
                let off = tree.offsets(blocks, child.clone());
                // Without the buffer, the other children's messages are still taken.
                let Some(mut ordered) = call.scratch(mine, off[off.len() - 1]) else { continue };
                let all = 0..ordered.len();
                call.decode_pieces(src, &bytes, &mut *ordered, all);
                for (k, v) in child.enumerate() {
                    call.copy(out, blocks.range(tree.rank_of(v)), &ordered, off[k]..off[k + 1]);
                }
                W::keep(ordered);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_has_one_parent_and_subtrees_tile_the_ranks() {
        for p in 1..=9 {
            for root in 0..p {
                let mut seen = vec![0; p];
                for rank in 0..p {
                    let t = Binomial::new(p, rank, root);
                    for child in t.children() {
                        let c = Binomial::new(p, t.rank_of(child.start), root);
                        assert_eq!(c.parent(), Some(rank));
                        assert_eq!(c.subtree(), child);
                        seen[c.rank_of(child.start)] += 1;
                    }
                    let kids: usize = t.children().iter().map(|c| c.len()).sum();
                    assert_eq!(kids + 1, t.subtree().len(), "p {p} root {root} rank {rank}");
                }
                seen[root] += 1;
                assert!(seen.iter().all(|&n| n == 1), "p {p} root {root}: {seen:?}");
            }
        }
    }

    #[test]
    fn a_subtree_lies_in_order_in_the_callers_buffer_unless_its_ranks_wrap_around() {
        let blocks = Blocks::even(80, 8);
        // Root 0: every child's blocks, one after another.
        let t = Binomial::new(8, 0, 0);
        let found: Vec<_> = t.children().into_iter().map(|c| t.in_order(&blocks, c)).collect();
        assert_eq!(found, [Some(40..80), Some(20..40), Some(10..20)]);
        // Root 3: the largest child holds ranks 7, 0, 1, 2 (no order), the next 5 and 6.
        let t = Binomial::new(8, 3, 3);
        let found: Vec<_> = t.children().into_iter().map(|c| t.in_order(&blocks, c)).collect();
        assert_eq!(found, [None, Some(50..70), Some(40..50)]);
    }
}
