//! Binomial-tree broadcast, scatter and gather.
//!
//! Ranks are renumbered relative to the root (virtual rank `v = rank - root mod p`).
//! Virtual rank `v` receives from `v - lowbit(v)` and serves the subtrees
//! `[v + m, v + 2m)` for `m = lowbit(v)/2, ..., 1`, so the data of a subtree is a
//! contiguous range of virtual ranks.
//!
//! C-Coll: every block is compressed once at its origin and travels as frames that
//! inner ranks forward without decoding; CPR-P2P: every hop decodes what it received and
//! compresses again what it sends.

use core::ops::Range;
use std::rc::Rc;

use crate::blocks::Blocks;
use crate::call::Call;
use crate::frame::split_bundle;
use crate::place::Place;
use crate::transport::{wait_all, Pending, TAG_TREE};
use crate::{CollError, Value};

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

    /// Values in the blocks of virtual ranks `range`.
    fn values(&self, blocks: &Blocks, range: Range<usize>) -> usize {
        range.map(|v| blocks.len(self.rank_of(v))).sum()
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

/// Broadcast of `buf` from `root`.
pub(crate) fn bcast<T: Value, W: Place<T> + ?Sized>(call: &mut Call, buf: &mut W, root: usize, recompress: bool) {
    let all = 0..buf.len();
    let tree = Binomial::new(call.comm.size, call.comm.rank, root);
    let received = tree.parent().map(|parent| (parent, call.comm.recv(parent, TAG_TREE)));
    let children = tree.children();
    let mut sends = Vec::new();
    if recompress {
        if let Some((parent, bytes)) = &received {
            call.decode_pieces(*parent, bytes, buf, all.clone());
        }
        for child in &children {
            let frames = call.frames_of(buf, all.clone());
            sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, frames, buf.len()));
        }
    } else {
        // The root compresses once (if anyone is listening); inner ranks forward as is.
        let bundle: Option<Rc<[u8]>> = match &received {
            Some((_, bytes)) => Some(bytes.as_slice().into()),
            None if !children.is_empty() => Some(call.frames_of(buf, all.clone()).into()),
            None => None,
        };
        if let Some(bundle) = bundle {
            for child in &children {
                sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, bundle.clone(), buf.len()));
            }
            if let Some((parent, _)) = received {
                call.decode_pieces(parent, &bundle, buf, all);
            }
        }
    }
    wait_all(&mut sends);
}

/// Scatter of `send` (significant at the root: block b for rank b) into `recv` (this
/// rank's block).
pub(crate) fn scatter<T: Value, W: Place<T> + ?Sized>(call: &mut Call, send: &W, recv: &mut W, blocks: &Blocks, root: usize, recompress: bool) {
    let tree = Binomial::new(call.comm.size, call.comm.rank, root);
    if recompress {
        return scatter_recompress(call, &tree, send, recv, blocks);
    }
    let sub = tree.subtree();
    // The frames of this subtree's ranks in virtual-rank order; for the root, ranks 1.. only.
    let (first, frames): (usize, Vec<Vec<u8>>) = match tree.parent() {
        None => {
            call.copy(recv, 0..recv.len(), send, blocks.range(root));
            let frames = (1..call.comm.size)
                .map(|v| {
                    let r = tree.rank_of(v);
                    let p = call.comm.size;
                    call.frame_at(send, blocks.range(r), r, p)
                })
                .collect();
            (1, frames)
        }
        Some(parent) => {
            let bytes = call.comm.recv(parent, TAG_TREE);
            let frames: Vec<Vec<u8>> = match split_bundle(&bytes) {
                Ok(f) if f.len() == sub.len() => f.into_iter().map(|(_, b)| b.to_vec()).collect(),
                Ok(f) => {
                    let reason = format!("{} frames for a subtree of {} ranks", f.len(), sub.len());
                    call.fail(CollError::BadMessage { peer: parent, reason });
                    Vec::new()
                }
                Err(reason) => {
                    call.fail(CollError::BadMessage { peer: parent, reason });
                    Vec::new()
                }
            };
            if let Some(own) = frames.first() {
                let want = call.expect::<T>(Some(call.comm.rank), Some(call.comm.size), recv.len());
                call.decode_at(parent, own, &want, recv, 0..recv.len());
            }
            (sub.start, frames)
        }
    };
    let mut sends = Vec::new();
    for child in tree.children() {
        // A rank whose bundle was unusable sends empty bundles on: its children fail too,
        // but nobody waits forever.
        let bundle: Vec<u8> = frames.get(child.start - first..child.end - first).map_or_else(Vec::new, |f| f.concat());
        let values = tree.values(blocks, child.clone());
        sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, bundle, values));
    }
    wait_all(&mut sends);
}

fn scatter_recompress<T: Value, W: Place<T> + ?Sized>(call: &mut Call, tree: &Binomial, send: &W, recv: &mut W, blocks: &Blocks) {
    let sub = tree.subtree();
    let off = tree.offsets(blocks, sub.clone());
    // This subtree's values in virtual-rank order.
    let Some(mut ordered) = call.zeros(recv, off[off.len() - 1]) else { return };
    match tree.parent() {
        None => {
            for v in sub.clone() {
                call.copy(&mut *ordered, off[v]..off[v + 1], send, blocks.range(tree.rank_of(v)));
            }
        }
        Some(parent) => {
            let bytes = call.comm.recv(parent, TAG_TREE);
            let all = 0..ordered.len();
            call.decode_pieces(parent, &bytes, &mut *ordered, all);
        }
    }
    call.copy(recv, 0..off[1], &ordered, 0..off[1]);
    let mut sends: Vec<Pending> = Vec::new();
    for child in tree.children() {
        let range = off[child.start - sub.start]..off[child.end - sub.start];
        let values = range.len();
        let frames = call.frames_of(&*ordered, range);
        sends.push(call.isend::<T>(tree.rank_of(child.start), TAG_TREE, frames, values));
    }
    wait_all(&mut sends);
}

/// Gather of every rank's `mine` (block `rank` of `blocks`) into `out` at the root.
pub(crate) fn gather<T: Value, W: Place<T> + ?Sized>(call: &mut Call, mine: &W, out: &mut W, blocks: &Blocks, root: usize, recompress: bool) {
    let tree = Binomial::new(call.comm.size, call.comm.rank, root);
    if recompress {
        return gather_recompress(call, &tree, mine, out, blocks);
    }
    let p = call.comm.size;
    // Smaller subtrees finish first: take the children in ascending order.
    let children: Vec<Range<usize>> = tree.children().into_iter().rev().collect();
    match tree.parent() {
        Some(parent) => {
            let me = call.comm.rank;
            let mut bundle = call.frame_at(mine, 0..mine.len(), me, p);
            for child in &children {
                bundle.extend_from_slice(&call.comm.recv(tree.rank_of(child.start), TAG_TREE));
            }
            call.send::<T>(parent, TAG_TREE, &bundle, tree.values(blocks, tree.subtree()));
        }
        None => {
            call.copy(out, blocks.range(root), mine, 0..mine.len());
            for child in &children {
                let src = tree.rank_of(child.start);
                let bytes = call.comm.recv(src, TAG_TREE);
                match split_bundle(&bytes) {
                    Ok(frames) if frames.len() == child.len() => {
                        for (v, (_, frame)) in child.clone().zip(frames) {
                            let r = tree.rank_of(v);
                            let want = call.expect::<T>(Some(r), Some(p), blocks.len(r));
                            call.decode_at(src, frame, &want, out, blocks.range(r));
                        }
                    }
                    Ok(frames) => call.fail(CollError::BadMessage {
                        peer: src,
                        reason: format!("{} frames for a subtree of {} ranks", frames.len(), child.len()),
                    }),
                    Err(reason) => call.fail(CollError::BadMessage { peer: src, reason }),
                }
            }
        }
    }
}

fn gather_recompress<T: Value, W: Place<T> + ?Sized>(call: &mut Call, tree: &Binomial, mine: &W, out: &mut W, blocks: &Blocks) {
    let sub = tree.subtree();
    let off = tree.offsets(blocks, sub.clone());
    let Some(mut ordered) = call.zeros(mine, off[off.len() - 1]) else { return };
    call.copy(&mut *ordered, 0..off[1], mine, 0..mine.len());
    for child in tree.children().into_iter().rev() {
        let src = tree.rank_of(child.start);
        let bytes = call.comm.recv(src, TAG_TREE);
        let range = off[child.start - sub.start]..off[child.end - sub.start];
        call.decode_pieces(src, &bytes, &mut *ordered, range);
    }
    match tree.parent() {
        Some(parent) => {
            let frames = call.frames_of(&*ordered, 0..ordered.len());
            call.send::<T>(parent, TAG_TREE, &frames, ordered.len());
        }
        None => {
            for v in sub {
                call.copy(out, blocks.range(tree.rank_of(v)), &ordered, off[v]..off[v + 1]);
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
}
