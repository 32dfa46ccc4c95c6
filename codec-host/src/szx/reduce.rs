//! Reduction of two SZx streams into the stream of the reduced values, in the compressed
//! domain where the format allows it: a sum with a zero block copies the other block,
//! constant blocks combine into a constant, and fixed-point blocks (whose units are the
//! powers of two the bound sets, so equal bounds share one grid) combine into fixed
//! point on that grid, all without rounding anything. Only the other blocks are coded
//! again from the reduced values, within a tolerance (see
//! [`codec_kernels::szx::reduce`]).
//!
//! The result is an ordinary stream of the same layout. Its header's bound is stated
//! against the exact reduction of the arrays the two operands were compressed from:
//! `E_a + E_b` for a sum (`max(E_a, E_b)` for min and max, which are 1-Lipschitz in each
//! operand), plus the tolerance if any block was coded again; floating-point rounding of
//! the reduction itself aside, as in any reduction of decoded values.
//!
//! ```
//! use codec_host::elementwise::ReduceOp;
//! use codec_host::szx::{self, reduce};
//! use codec_host::{Backend, Codec, ErrorBound, Shape};
//! let x: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.01).sin()).collect();
//! let y: Vec<f32> = (0..4096).map(|i| if i % 3 == 0 { 0.0 } else { (i as f32 * 0.02).cos() }).collect();
//! let codec = Codec::szx(ErrorBound::Abs(1e-3));
//! let (a, b) = (codec.compress(&x, Shape::d1(4096), &Backend::cpu()).unwrap(), codec.compress(&y, Shape::d1(4096), &Backend::cpu()).unwrap());
//! let sum = reduce::reduce::<f32>(ReduceOp::Sum, &a, &b, 1e-3).unwrap();
//! assert_eq!(sum.summary.requantized, 0);
//! let (back, header) = szx::decompress::<f32>(&sum.stream).unwrap();
//! assert!(header.abs_error >= 2e-3);
//! assert!(back.iter().zip(x.iter().zip(&y)).all(|(r, (x, y))| ((r - (x + y)) as f64).abs() <= header.abs_error + 1e-6));
//! ```

use codec_kernels::szx::coding::{is_coded, SIZE_ENTRY_BYTES};
use codec_kernels::szx::reduce::{reduce_block, BlockRef, Outcome};
use codec_kernels::szx::{BlockError, Tolerance};

use super::frame::block_len;
use super::header::{SzxHeader, CHUNK_ENTRY_LEN, HEADER_LEN};
use super::isa::multiversion;
use crate::elementwise::ReduceOp;
use crate::{BackendElem, Error, Result};

/// How the blocks of a reduced stream were made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReduceSummary {
    /// Copied from one operand (a sum with a zero block).
    pub copied: usize,
    /// Coded from the exact reduced values: constant, fixed point on the operands' grid,
    /// or raw.
    pub exact: usize,
    /// Planned and coded again within the tolerance.
    pub requantized: usize,
}

/// A reduced stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduced {
    pub stream: Vec<u8>,
    pub summary: ReduceSummary,
}

/// Reduces streams `a` and `b` (values of `T`, the same shape, block size and chunk
/// size; any bounds) with `op` (sum, min or max) into one stream of `combine(op, a', b')`,
/// where `a'` and `b'` are the decoded values. Blocks that cannot be reduced exactly in
/// the compressed domain are coded again within `tolerance` (finite, `>= 0`; the bound
/// of the codec that made the operands, typically). Runs on the calling thread, one pass
/// over both streams. Either stream failing to decode is an error, as for
/// [`super::decompress`]; nothing is allocated beyond what decoding would.
pub fn reduce<T: BackendElem>(op: ReduceOp, a: &[u8], b: &[u8], tolerance: f64) -> Result<Reduced> {
    if !matches!(op, ReduceOp::Sum | ReduceOp::Min | ReduceOp::Max) {
        return Err(Error::ParamOutOfRange(format!("SZx streams reduce with sum, min or max, not {}", op.name())));
    }
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(Error::ParamOutOfRange(format!("tolerance {tolerance} (finite, >= 0)")));
    }
    let (ha, hb) = (SzxHeader::read(a)?, SzxHeader::read(b)?);
    for h in [&ha, &hb] {
        if h.elem != T::TYPE {
            return Err(Error::TypeMismatch { stream: h.elem, requested: T::TYPE });
        }
    }
    if (ha.shape, ha.block_size, ha.chunk_values) != (hb.shape, hb.block_size, hb.chunk_values) {
        return Err(Error::BadDims(format!(
            "SZx streams to reduce differ: {} in blocks of {} and chunks of {} values, against {} in blocks of {} and chunks of {}",
            ha.shape, ha.block_size, ha.chunk_values, hb.shape, hb.block_size, hb.chunk_values
        )));
    }
    let (lens_a, _) = ha.chunk_lens(a)?;
    let (lens_b, _) = hb.chunk_lens(b)?;
    let tol = Tolerance::<T>::from_f64(tolerance);
    let block = ha.block_size;
    let mut scratch = Scratch {
        va: vec![T::default(); block],
        vb: vec![T::default(); block],
        payload: vec![0u8; block * T::BYTES],
        sizes: Vec::new(),
        payloads: Vec::new(),
    };
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    out.resize(ha.prefix_len(), 0);
    let mut summary = ReduceSummary::default();
    let (mut at_a, mut at_b) = (ha.prefix_len(), hb.prefix_len());
    for (i, (la, lb)) in lens_a.zip(lens_b).enumerate() {
        let (fa, fb) = (&a[at_a..at_a + la], &b[at_b..at_b + lb]);
        (at_a, at_b) = (at_a + la, at_b + lb);
        let start = out.len();
        let job = ChunkJob { op, chunk: i, frames: [fa, fb], values: ha.chunk_values(i).len(), block, tol: &tol };
        reduce_chunk(job, &mut scratch, &mut out, &mut summary)?;
        let len = u32::try_from(out.len() - start).map_err(|_| Error::Corrupt(format!("SZx chunk {i}: reduced chunk over 4 GiB")))?;
        let entry = HEADER_LEN + CHUNK_ENTRY_LEN * i;
        out[entry..entry + CHUNK_ENTRY_LEN].copy_from_slice(&len.to_le_bytes());
    }
    let inputs = match op {
        ReduceOp::Sum => ha.abs_error + hb.abs_error,
        _ => ha.abs_error.max(hb.abs_error),
    };
    let requantized = if summary.requantized > 0 { tolerance } else { 0.0 };
    // Rounded up, so that the stated bound is never below the exact one (a lossless
    // result stays lossless).
    let sum = inputs + requantized;
    let abs_error = match sum {
        0.0 => 0.0,
        s if s < f64::MAX => f64::from_bits(s.to_bits() + 1),
        _ => f64::MAX,
    };
    SzxHeader { abs_error, rel_error: None, ..ha }.write(&mut out);
    Ok(Reduced { stream: out, summary })
}

/// Buffers reused across blocks and chunks: both operands' decoded values, a reduced
/// payload, and a chunk's size table and payloads.
struct Scratch<T> {
    va: Vec<T>,
    vb: Vec<T>,
    payload: Vec<u8>,
    sizes: Vec<u8>,
    payloads: Vec<u8>,
}

/// One chunk of both operands to reduce.
struct ChunkJob<'a, T: BackendElem> {
    op: ReduceOp,
    chunk: usize,
    frames: [&'a [u8]; 2],
    /// Values in the chunk, in blocks of `block`.
    values: usize,
    block: usize,
    tol: &'a Tolerance<T>,
}

multiversion! {
    /// Reduces the frames of one chunk of both operands and appends the reduced frame
    /// to `out`.
    fn reduce_chunk<T: crate::BackendElem>(job: ChunkJob<'_, T>, s: &mut Scratch<T>, out: &mut Vec<u8>, summary: &mut ReduceSummary) -> Result<()> = reduce_chunk_body;
}

#[inline(always)]
fn reduce_chunk_body<T: BackendElem>(job: ChunkJob<'_, T>, s: &mut Scratch<T>, out: &mut Vec<u8>, summary: &mut ReduceSummary) -> Result<()> {
    let (chunk, block) = (job.chunk, job.block);
    let blocks = job.values.div_ceil(block);
    let mut ca = FrameCursor::new(chunk, job.frames[0], blocks)?;
    let mut cb = FrameCursor::new(chunk, job.frames[1], blocks)?;
    let states_at = out.len();
    out.resize(states_at + blocks, 0);
    s.sizes.clear();
    s.payloads.clear();
    for j in 0..blocks {
        let n = (job.values - j * block).min(block);
        let (pa, pb) = (ca.next::<T>(j, n)?, cb.next::<T>(j, n)?);
        let r = reduce_block(job.op, pa, pb, job.tol, &mut s.va[..n], &mut s.vb[..n], &mut s.payload).map_err(|e| corrupt(chunk, j, e))?;
        out[states_at + j] = r.state;
        if is_coded(r.state) {
            s.sizes.extend_from_slice(&(r.len as u16).to_le_bytes());
        }
        s.payloads.extend_from_slice(&s.payload[..r.len]);
        match r.outcome {
            Outcome::Copied => summary.copied += 1,
            Outcome::Exact => summary.exact += 1,
            Outcome::Requantized => summary.requantized += 1,
        }
    }
    ca.finish()?;
    cb.finish()?;
    out.extend_from_slice(&s.sizes);
    out.extend_from_slice(&s.payloads);
    Ok(())
}

fn corrupt(chunk: usize, block: usize, e: BlockError) -> Error {
    Error::Corrupt(format!("SZx chunk {chunk}, block {block}: {e:?}"))
}

/// The blocks of one chunk's frame, in order, each checked to lie in the frame.
struct FrameCursor<'a> {
    chunk: usize,
    frame: &'a [u8],
    states: &'a [u8],
    sizes: &'a [u8],
    /// Coded blocks passed (the next size-table entry), and where the next payload starts.
    rank: usize,
    pos: usize,
}

impl<'a> FrameCursor<'a> {
    fn new(chunk: usize, frame: &'a [u8], blocks: usize) -> Result<Self> {
        let short = |what: &str| Error::Corrupt(format!("SZx chunk {chunk}: shorter than its {what}"));
        let states = frame.get(..blocks).ok_or_else(|| short("block states"))?;
        let coded = states.iter().filter(|&&s| is_coded(s)).count();
        let pos = blocks + coded * SIZE_ENTRY_BYTES;
        let sizes = frame.get(blocks..pos).ok_or_else(|| short("size table"))?;
        Ok(FrameCursor { chunk, frame, states, sizes, rank: 0, pos })
    }

    /// Block `j`, of `n` values.
    fn next<T: BackendElem>(&mut self, j: usize, n: usize) -> Result<BlockRef<'a>> {
        let state = self.states[j];
        let len = block_len::<T>(state, n, self.sizes, &mut self.rank).map_err(|e| corrupt(self.chunk, j, e))?;
        let payload = self.frame.get(self.pos..self.pos + len).ok_or_else(|| corrupt(self.chunk, j, BlockError::BadLength))?;
        self.pos += len;
        Ok(BlockRef { state, payload })
    }

    /// Checks that the blocks filled the frame exactly.
    fn finish(&self) -> Result<()> {
        if self.pos != self.frame.len() {
            return Err(Error::Corrupt(format!("SZx chunk {}: blocks take {} bytes of {}", self.chunk, self.pos, self.frame.len())));
        }
        Ok(())
    }
}
