//! GPU entry points: thin `extern "gpu-kernel"` wrappers that read the grid position
//! from the hardware, view the raw device pointers as slices and call the bodies.
//! Compiled for nvptx64 only; the names are listed in `kernels::ENTRY_POINTS`.
//!
//! Every pointer argument is a device pointer to `n` values (null when `n` is 0), as the
//! host side in `codec-host` (feature `cuda`) passes them.

use crate::gpu_phases::zfp::{compact_body, decode_fixed_rate_body, decode_indexed_body, encode_slots_body};
use crate::gpu_phases::szx::{coded_flags_body, decode_body, payload_lens_body, plan_body, write_body, ChunkLayout, Prefix};
use crate::grid::Grid;
use crate::half_convert::{f32_to_half_body, half_to_f32_body, Bf16, F16};
use crate::reduce::{reduce_body, ReduceOp};
use crate::scan::{scan_apply_body, scan_partials_body, scan_partials_exclusive_body};
use crate::shared::{input, Disjoint, SharedOut};
use crate::szx::Tolerance;
use crate::zfp::fixed_rate::encode_fixed_rate_body;
use crate::zfp::{Field, FixedRate, Params, D1, D2, D3};

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

/// Marks a kernel's failure in its one-word status cell (zeroed by the host).
#[inline(always)]
unsafe fn fail(status: *mut u32) {
    SharedOut::from_raw(status, 1).set(0, 1);
}

#[inline(always)]
fn params(minbits: u32, maxbits: u32, maxprec: u32, minexp: i32) -> Params {
    Params { minbits, maxbits, maxprec, minexp }
}

/// ZFP entry points for one scalar type and block shape. Arrays are `nx * ny * nz`
/// values, x fastest; `(minbits, maxbits, maxprec, minexp)` are zfp's parameters; a
/// failure (non-finite input, stream too short) sets `status[0]`.
macro_rules! zfp_entries {
    ($($t:ty, $d:ty: $rate_enc:ident, $rate_dec:ident, $acc_slots:ident, $acc_dec:ident;)*) => {$(
        /// Fixed-rate encode into the zeroed stream `out`, blocks from bit `header_bits`.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $rate_enc(
            data: *const $t, n: usize, nx: usize, ny: usize, nz: usize,
            minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
            header_bits: usize, out: *mut u64, n_words: usize, status: *mut u32,
        ) {
            let layout = FixedRate { field: Field::new([nx, ny, nz]), params: params(minbits, maxbits, maxprec, minexp), header_bits };
            let out = SharedOut::from_raw(out, n_words);
            if !encode_fixed_rate_body::<$t, $d>(Grid::from_hardware(), input(data, n), &layout, out.cells()) {
                fail(status);
            }
        }

        /// Fixed-rate decode of the stream `words` (blocks from bit `header_bits`).
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $rate_dec(
            words: *const u64, n_words: usize, nx: usize, ny: usize, nz: usize,
            minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
            header_bits: usize, out: *mut $t, n: usize, status: *mut u32,
        ) {
            let layout = FixedRate { field: Field::new([nx, ny, nz]), params: params(minbits, maxbits, maxprec, minexp), header_bits };
            if !decode_fixed_rate_body::<$t, $d>(Grid::from_hardware(), input(words, n_words), &layout, &SharedOut::from_raw(out, n)) {
                fail(status);
            }
        }

        /// Fixed-accuracy phase 1: every block into its slot of `slot_bits` bits, its
        /// length into `lens` (one per block).
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $acc_slots(
            data: *const $t, n: usize, nx: usize, ny: usize, nz: usize,
            minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
            slot_bits: usize, slots: *mut u64, n_slot_words: usize, lens: *mut u32, n_blocks: usize, status: *mut u32,
        ) {
            let slots = SharedOut::from_raw(slots, n_slot_words);
            let field = Field::new([nx, ny, nz]);
            let p = params(minbits, maxbits, maxprec, minexp);
            if !encode_slots_body::<$t, $d>(Grid::from_hardware(), input(data, n), &field, &p, slot_bits, slots.cells(), &SharedOut::from_raw(lens, n_blocks)) {
                fail(status);
            }
        }

        /// Fixed-accuracy decode through the block offsets `offsets` (one per block).
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $acc_dec(
            words: *const u64, n_words: usize, offsets: *const u64, n_blocks: usize, nx: usize, ny: usize, nz: usize,
            minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
            out: *mut $t, n: usize, status: *mut u32,
        ) {
            let field = Field::new([nx, ny, nz]);
            let p = params(minbits, maxbits, maxprec, minexp);
            if !decode_indexed_body::<$t, $d>(Grid::from_hardware(), input(words, n_words), input(offsets, n_blocks), &field, &p, &SharedOut::from_raw(out, n)) {
                fail(status);
            }
        }
    )*};
}

zfp_entries! {
    f32, D1: zfp_rate_encode_f32_1d, zfp_rate_decode_f32_1d, zfp_acc_slots_f32_1d, zfp_acc_decode_f32_1d;
    f32, D2: zfp_rate_encode_f32_2d, zfp_rate_decode_f32_2d, zfp_acc_slots_f32_2d, zfp_acc_decode_f32_2d;
    f32, D3: zfp_rate_encode_f32_3d, zfp_rate_decode_f32_3d, zfp_acc_slots_f32_3d, zfp_acc_decode_f32_3d;
    f64, D1: zfp_rate_encode_f64_1d, zfp_rate_decode_f64_1d, zfp_acc_slots_f64_1d, zfp_acc_decode_f64_1d;
    f64, D2: zfp_rate_encode_f64_2d, zfp_rate_decode_f64_2d, zfp_acc_slots_f64_2d, zfp_acc_decode_f64_2d;
    f64, D3: zfp_rate_encode_f64_3d, zfp_rate_decode_f64_3d, zfp_acc_slots_f64_3d, zfp_acc_decode_f64_3d;
}

/// Fixed-accuracy phase 3: every slot's bits to its stream offset in the zeroed `out`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn zfp_acc_compact(
    slots: *const u64,
    n_slot_words: usize,
    slot_bits: usize,
    lens: *const u32,
    offsets: *const u64,
    n_blocks: usize,
    out: *mut u64,
    n_words: usize,
) {
    let out = SharedOut::from_raw(out, n_words);
    compact_body(Grid::from_hardware(), input(slots, n_slot_words), slot_bits, input(lens, n_blocks), input(offsets, n_blocks), out.cells());
}

#[inline(always)]
fn layout(n: usize, block: usize, chunk_blocks: usize) -> ChunkLayout {
    ChunkLayout { n, block, chunk_blocks }
}

/// A scan's offsets (`len` of them) and its total (one device value).
#[inline(always)]
unsafe fn prefix<'a>(offsets: *const u64, len: usize, total: *const u64) -> Prefix<'a> {
    Prefix { offsets: input(offsets, len), total: input(total, 1).first().copied().unwrap_or(0) }
}

/// SZx entry points for one element type; `n` values in blocks of `block`, chunks of
/// `chunk_blocks` blocks, error bound `e`; a failure sets `status[0]`.
macro_rules! szx_entries {
    ($($t:ty: $plan:ident, $write:ident, $lens:ident, $decode:ident;)*) => {$(
        /// Encode phase 1: states, payload sizes and coded flags, one per block.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $plan(
            data: *const $t, n: usize, block: usize, chunk_blocks: usize, e: f64,
            states: *mut u8, sizes: *mut u32, coded: *mut u32, n_blocks: usize,
        ) {
            let l = layout(n, block, chunk_blocks);
            let tol = Tolerance::<$t>::from_f64(e);
            plan_body(Grid::from_hardware(), input(data, n), &l, &tol, &SharedOut::from_raw(states, n_blocks),
                &SharedOut::from_raw(sizes, n_blocks), &SharedOut::from_raw(coded, n_blocks));
        }

        /// Encode phase 3: frames and chunk table into `out` (the host writes the header).
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $write(
            data: *const $t, n: usize, block: usize, chunk_blocks: usize, e: f64,
            s_offsets: *const u64, s_total: *const u64, c_offsets: *const u64, c_total: *const u64, n_blocks: usize,
            frames_at: usize, table_at: usize, out: *mut u8, out_len: usize, status: *mut u32,
        ) {
            let l = layout(n, block, chunk_blocks);
            let tol = Tolerance::<$t>::from_f64(e);
            let (s, c) = (prefix(s_offsets, n_blocks, s_total), prefix(c_offsets, n_blocks, c_total));
            if !write_body(Grid::from_hardware(), input(data, n), &l, &tol, s, c, frames_at, table_at, &Disjoint::from_raw(out, out_len)) {
                fail(status);
            }
        }

        /// Decode phase 2: payload lengths, one per block.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $lens(
            stream: *const u8, stream_len: usize, n: usize, block: usize, chunk_blocks: usize,
            chunk_starts: *const u64, n_starts: usize, c_offsets: *const u64, c_total: *const u64,
            lens: *mut u32, n_blocks: usize, status: *mut u32,
        ) {
            let l = layout(n, block, chunk_blocks);
            if !payload_lens_body::<$t>(Grid::from_hardware(), input(stream, stream_len), &l, input(chunk_starts, n_starts),
                prefix(c_offsets, n_blocks, c_total), &SharedOut::from_raw(lens, n_blocks)) {
                fail(status);
            }
        }

        /// Decode phase 3: every block's values into `out`.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $decode(
            stream: *const u8, stream_len: usize, n: usize, block: usize, chunk_blocks: usize,
            chunk_starts: *const u64, n_starts: usize, c_offsets: *const u64, c_total: *const u64,
            s_offsets: *const u64, s_total: *const u64, n_blocks: usize, out: *mut $t, status: *mut u32,
        ) {
            let l = layout(n, block, chunk_blocks);
            if !decode_body(Grid::from_hardware(), input(stream, stream_len), &l, input(chunk_starts, n_starts),
                prefix(c_offsets, n_blocks, c_total), prefix(s_offsets, n_blocks, s_total), &Disjoint::from_raw(out, n)) {
                fail(status);
            }
        }
    )*};
}

szx_entries! {
    f32: szx_plan_f32, szx_write_f32, szx_payload_lens_f32, szx_decode_f32;
    f64: szx_plan_f64, szx_write_f64, szx_payload_lens_f64, szx_decode_f64;
}

/// Decode phase 1: coded flags from the state bytes, one per block.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn szx_coded_flags(
    stream: *const u8,
    stream_len: usize,
    n: usize,
    block: usize,
    chunk_blocks: usize,
    chunk_starts: *const u64,
    n_starts: usize,
    coded: *mut u32,
    n_blocks: usize,
    status: *mut u32,
) {
    let l = layout(n, block, chunk_blocks);
    if !coded_flags_body(Grid::from_hardware(), input(stream, stream_len), &l, input(chunk_starts, n_starts), &SharedOut::from_raw(coded, n_blocks)) {
        fail(status);
    }
}
