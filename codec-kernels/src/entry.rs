//! What the GPU entry points (defined in `crate::kernels`) need around their bodies on
//! nvptx64: the panic handler, `memcmp`, and small helpers that turn raw parameters into
//! the bodies' arguments. Compiled for nvptx64 only.

use crate::gpu_phases::szx::{ChunkLayout, Prefix};
use crate::shared::{input, SharedOut};
use crate::zfp::Params;

/// A trap ends the kernel with an error the host sees at its next synchronisation; the
/// bodies avoid panicking paths, so this is reached only by a bug.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` only aborts the kernel.
    unsafe { core::arch::nvptx::trap() }
}

/// `memcmp`, which LLVM calls for some comparisons of small arrays. nvptx has no C
/// library, and compiler_builtins (which has one) is linked, not LTO-merged, so it is
/// not in the PTX module. A byte loop: LLVM does not turn loops back into `memcmp`.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        let (x, y) = (*a.add(i), *b.add(i));
        if x != y {
            return x as i32 - y as i32;
        }
    }
    0
}

/// Marks a kernel's failure in its one-word status cell (zeroed by the host).
#[inline(always)]
pub(crate) unsafe fn fail(status: *mut u32) {
    SharedOut::from_raw(status, 1).set(0, 1);
}

/// zfp's parameters from the entry point's four scalars.
#[inline(always)]
pub(crate) fn params(minbits: u32, maxbits: u32, maxprec: u32, minexp: i32) -> Params {
    Params { minbits, maxbits, maxprec, minexp }
}

/// An SZx stream's cut from the entry point's three scalars.
#[inline(always)]
pub(crate) fn layout(n: usize, block: usize, chunk_blocks: usize) -> ChunkLayout {
    ChunkLayout { n, block, chunk_blocks }
}

/// A scan's offsets (`len` of them) and its total (one device value).
#[inline(always)]
pub(crate) unsafe fn prefix<'a>(offsets: *const u64, len: usize, total: *const u64) -> Prefix<'a> {
    Prefix { offsets: input(offsets, len), total: input(total, 1).first().copied().unwrap_or(0) }
}
