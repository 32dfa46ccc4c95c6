//! How the host cuts an array into units of parallel work.

use codec_kernels::zfp::{Dims, Field};

use crate::Shape;

/// Blocks per tile or slab to aim for: enough to amortise the per-tile work, small
/// enough to balance the load.
const TARGET_BLOCKS: usize = 2048;

/// The kernels' view of an array shape (unused axes have extent 1).
pub fn field_of(shape: &Shape) -> Field {
    let d = shape.dims();
    Field::new([d[0], d.get(1).copied().unwrap_or(1), d.get(2).copied().unwrap_or(1)])
}

/// Blocks per tile when `nblocks` are coded as independent runs by `threads` threads:
/// everything in one run for one thread, otherwise several tiles per thread.
pub fn tile_blocks(nblocks: usize, threads: usize) -> usize {
    if threads <= 1 {
        nblocks.max(1)
    } else {
        nblocks.div_ceil(4 * threads).clamp(1, TARGET_BLOCKS)
    }
}

/// Whether a variable-length (fixed-accuracy) stream is worth decoding in parallel with
/// `threads` threads. The parallel decode first parses every block sequentially to find
/// the slab starts; measured (instructions, smooth3d) that pass costs about a third of
/// a full decode for 3D blocks but two thirds for 1D blocks, whose 4 values leave
/// little besides parsing. With a serial fraction f the speed-up is 1 / (f + 1/threads),
/// so 1D needs at least 4 threads to gain. For 2D/3D two threads did not gain either:
/// on smooth3d 3D (tolerances 1e-2..1e-4) the 2-thread parallel decode ran at 0.93-0.96x
/// the serial one (docs/benchmarks-zfp.md), so the parallel path starts at 3 threads.
pub fn parallel_variable_decode<D: Dims>(threads: usize) -> bool {
    threads >= if D::D == 1 { 4 } else { 3 }
}

/// A slab: whole layers of blocks along the slowest axis, which cover a contiguous
/// range of the array, so slabs can be decoded into disjoint output chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slabs {
    /// Blocks per slab.
    pub blocks: usize,
    /// Array values per slab.
    pub values: usize,
}

impl Slabs {
    /// Slabs of about [`TARGET_BLOCKS`] blocks for `field` cut into blocks of `D`.
    pub fn new<D: Dims>(field: &Field) -> Slabs {
        let nb = field.blocks();
        // One block layer: 1 block (1D), a row of blocks (2D), a plane of blocks (3D).
        let (layer_blocks, layer_values) = match D::D {
            1 => (1, 4),
            2 => (nb[0], 4 * field.n[0]),
            _ => (nb[0] * nb[1], 4 * field.n[0] * field.n[1]),
        };
        let layers = (TARGET_BLOCKS / layer_blocks.max(1)).max(1);
        Slabs { blocks: layers * layer_blocks, values: layers * layer_values }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codec_kernels::zfp::{D1, D2, D3};

    #[test]
    fn slabs_are_whole_block_layers() {
        let s = Slabs::new::<D3>(&Field::new([10, 9, 8]));
        // 3x3 blocks per plane, 227 planes per slab.
        assert_eq!(s, Slabs { blocks: 227 * 9, values: 227 * 4 * 90 });
        let s = Slabs::new::<D2>(&Field::new([5000, 7, 1]));
        assert_eq!(s, Slabs { blocks: 1250, values: 20000 });
        let s = Slabs::new::<D1>(&Field::new([10, 1, 1]));
        assert_eq!(s, Slabs { blocks: TARGET_BLOCKS, values: 4 * TARGET_BLOCKS });
    }

    #[test]
    fn parallel_decode_needs_enough_threads() {
        assert!(!parallel_variable_decode::<D3>(1));
        assert!(!parallel_variable_decode::<D3>(2));
        assert!(parallel_variable_decode::<D3>(3));
        assert!(!parallel_variable_decode::<D1>(2));
        assert!(parallel_variable_decode::<D1>(4));
    }

    #[test]
    fn tiles_give_every_thread_several() {
        assert_eq!(tile_blocks(100, 1), 100);
        assert_eq!(tile_blocks(0, 1), 1);
        assert_eq!(tile_blocks(100, 2), 13);
        assert_eq!(tile_blocks(1 << 20, 2), TARGET_BLOCKS);
    }
}
