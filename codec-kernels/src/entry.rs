//! GPU entry points: thin `extern "gpu-kernel"` wrappers that read the grid position
//! from the hardware, view the raw device pointers as slices and call the bodies.
//! Compiled for nvptx64 only; the names are listed in `kernels::ENTRY_POINTS`.
//!
//! Every pointer argument is a device pointer to `n` values (null when `n` is 0), as the
//! host side in `codec-host` (feature `cuda`) passes them.

use crate::grid::Grid;
use crate::half_convert::{f32_to_half_body, half_to_f32_body, Bf16, F16};
use crate::reduce::{reduce_body, ReduceOp};
use crate::scan::{scan_apply_body, scan_partials_body, scan_partials_exclusive_body};
use crate::shared::{input, SharedOut};

/// A trap ends the kernel with an error the host sees at its next synchronisation; the
/// bodies avoid panicking paths, so this is reached only by a bug.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` only aborts the kernel.
    unsafe { core::arch::nvptx::trap() }
}

macro_rules! reduce_entries {
    ($($name:ident: $t:ty, $op:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(acc: *mut $t, src: *const $t, n: usize) {
            reduce_body(Grid::from_hardware(), $op, &SharedOut::from_raw(acc, n), input(src, n));
        }
    )*};
}

reduce_entries! {
    reduce_sum_f32: f32, ReduceOp::Sum;
    reduce_min_f32: f32, ReduceOp::Min;
    reduce_max_f32: f32, ReduceOp::Max;
    reduce_prod_f32: f32, ReduceOp::Prod;
    reduce_sum_f64: f64, ReduceOp::Sum;
    reduce_min_f64: f64, ReduceOp::Min;
    reduce_max_f64: f64, ReduceOp::Max;
    reduce_prod_f64: f64, ReduceOp::Prod;
}

macro_rules! half_entries {
    ($($widen:ident, $narrow:ident: $fmt:ty;)*) => {$(
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $widen(src: *const u16, dst: *mut f32, n: usize) {
            half_to_f32_body::<$fmt>(Grid::from_hardware(), input(src, n), &SharedOut::from_raw(dst, n));
        }
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $narrow(src: *const f32, dst: *mut u16, n: usize) {
            f32_to_half_body::<$fmt>(Grid::from_hardware(), input(src, n), &SharedOut::from_raw(dst, n));
        }
    )*};
}

half_entries! {
    f16_to_f32, f32_to_f16: F16;
    bf16_to_f32, f32_to_bf16: Bf16;
}

/// Scan launch 1 over `n` u32 lengths into `n_chunks` partial sums.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn scan_partials_u32(lens: *const u32, n: usize, chunk: usize, partials: *mut u64, n_chunks: usize) {
    scan_partials_body(Grid::from_hardware(), input(lens, n), chunk, &SharedOut::from_raw(partials, n_chunks));
}

/// Scan launch 2: exclusive scan of the partials plus `base`, grand total into `total[0]`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn scan_partials_exclusive(partials: *mut u64, n_chunks: usize, base: u64, total: *mut u64) {
    scan_partials_exclusive_body(Grid::from_hardware(), &SharedOut::from_raw(partials, n_chunks), base, &SharedOut::from_raw(total, 1));
}

/// Scan launch 3: every item's offset from its chunk's scanned partial.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn scan_apply_u32(lens: *const u32, n: usize, chunk: usize, partials: *const u64, n_chunks: usize, offsets: *mut u64) {
    scan_apply_body(Grid::from_hardware(), input(lens, n), chunk, input(partials, n_chunks), &SharedOut::from_raw(offsets, n));
}
