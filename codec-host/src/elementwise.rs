//! Elementwise kernels on the CPU executor: reductions for the collectives and
//! half-precision conversion for gradient buffers.
//!
//! The bodies are the GPU kernels' bodies. On the CPU each tile of consecutive elements
//! is one launch of a one-thread grid, so a worker streams through contiguous memory
//! instead of the GPU's interleaved grid-stride pattern; the result is the same.

use codec_kernels::grid::Grid;
use codec_kernels::half_convert::{f32_to_half_body, half_to_f32_body, Bf16, HalfFormat, F16};
use codec_kernels::reduce::{reduce_tile, ReduceElem};
use codec_kernels::shared::SharedOut;
use half::slice::HalfFloatSliceExt;

pub use codec_kernels::reduce::ReduceOp;

use crate::{CpuExecutor, Error, Result};

/// The grid of a one-thread launch, which a body turns into a plain loop.
pub(crate) const ONE_THREAD: Grid = Grid { block_idx: 0, block_dim: 1, thread_idx: 0, grid_dim: 1 };

/// Elements per CPU tile: large enough to amortise scheduling, small enough to balance.
const TILE: usize = 1 << 15;

pub(crate) fn same_len(what: &str, a: usize, b: usize) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::BadDims(format!("{what}: lengths differ ({a} and {b})")))
    }
}

/// `acc[i] = acc[i] op src[i]` for every `i` (MPI semantics: see [`ReduceOp`]).
pub fn reduce<T: ReduceElem + Send + Sync>(exec: &CpuExecutor, op: ReduceOp, acc: &mut [T], src: &[T]) -> Result<()> {
    same_len("reduce", acc.len(), src.len())?;
    exec.for_each_chunk_mut(acc, TILE, |i, tile| reduce_tile(op, tile, &src[i * TILE..][..tile.len()]));
    Ok(())
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// A 16-bit float type of the `half` crate: `half::f16` or `half::bf16`.
pub trait HalfElem: Copy + Send + Sync + sealed::Sealed {
    /// The kernel-side format, with its GPU kernels in both directions.
    type Format: HalfFormat + codec_kernels::kernels::HalfKernels;
    /// The values as their bit patterns (no copy).
    fn as_bits(s: &[Self]) -> &[u16];
    /// The values as their bit patterns, writable (no copy).
    fn as_bits_mut(s: &mut [Self]) -> &mut [u16];
}

impl HalfElem for half::f16 {
    type Format = F16;
    fn as_bits(s: &[Self]) -> &[u16] {
        s.reinterpret_cast()
    }
    fn as_bits_mut(s: &mut [Self]) -> &mut [u16] {
        s.reinterpret_cast_mut()
    }
}

impl HalfElem for half::bf16 {
    type Format = Bf16;
    fn as_bits(s: &[Self]) -> &[u16] {
        s.reinterpret_cast()
    }
    fn as_bits_mut(s: &mut [Self]) -> &mut [u16] {
        s.reinterpret_cast_mut()
    }
}

/// Widens half-precision values to f32 (exact).
pub fn widen<H: HalfElem>(exec: &CpuExecutor, src: &[H], dst: &mut [f32]) -> Result<()> {
    same_len("widen", src.len(), dst.len())?;
    let src = H::as_bits(src);
    let out = SharedOut::new(dst);
    exec.map_tiles(src.len(), TILE, |r| half_to_f32_body::<H::Format>(ONE_THREAD, &src[r.clone()], &out.slice(r)));
    Ok(())
}

/// Narrows f32 values to half precision, rounding to nearest even.
pub fn narrow<H: HalfElem>(exec: &CpuExecutor, src: &[f32], dst: &mut [H]) -> Result<()> {
    same_len("narrow", src.len(), dst.len())?;
    let out = SharedOut::new(H::as_bits_mut(dst));
    exec.map_tiles(src.len(), TILE, |r| f32_to_half_body::<H::Format>(ONE_THREAD, &src[r.clone()], &out.slice(r)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn reduce_matches_scalar_arithmetic_across_tiles() {
        let exec = CpuExecutor::new(2).unwrap();
        let n = 3 * TILE + 17;
        let src: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        for op in ReduceOp::ALL {
            let mut acc: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
            let want: Vec<f64> = acc
                .iter()
                .zip(&src)
                .map(|(&a, &b)| match op {
                    ReduceOp::Sum => a + b,
                    ReduceOp::Prod => a * b,
                    ReduceOp::Min => a.min(b),
                    ReduceOp::Max => a.max(b),
                })
                .collect();
            reduce(&exec, op, &mut acc, &src).unwrap();
            assert_eq!(acc, want, "{op:?}");
        }
    }

    #[test]
    fn mismatched_lengths_are_an_error() {
        let exec = CpuExecutor::new(1).unwrap();
        assert!(matches!(reduce(&exec, ReduceOp::Sum, &mut [0f32; 3], &[0f32; 4]), Err(Error::BadDims(_))));
        assert!(matches!(widen(&exec, &[f16::ZERO; 2], &mut [0f32; 1]), Err(Error::BadDims(_))));
        assert!(matches!(narrow(&exec, &[0f32; 2], &mut [bf16::ZERO; 3]), Err(Error::BadDims(_))));
    }

    #[test]
    fn half_buffers_round_trip_through_f32() {
        let exec = CpuExecutor::new(2).unwrap();
        let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).filter(|h| !h.is_nan()).collect();
        let mut wide = vec![0f32; halves.len()];
        widen(&exec, &halves, &mut wide).unwrap();
        assert!(halves.iter().zip(&wide).all(|(h, w)| h.to_f32().to_bits() == w.to_bits()));
        let mut back = vec![f16::ZERO; halves.len()];
        narrow(&exec, &wide, &mut back).unwrap();
        assert!(halves.iter().zip(&back).all(|(a, b)| a.to_bits() == b.to_bits()));
        let grads: Vec<f32> = (0..5000).map(|i| (i as f32 * 1.3e-3).exp() - 1.0).collect();
        let mut b = vec![bf16::ZERO; grads.len()];
        narrow(&exec, &grads, &mut b).unwrap();
        assert!(grads.iter().zip(&b).all(|(g, h)| bf16::from_f32(*g).to_bits() == h.to_bits()));
    }
}
