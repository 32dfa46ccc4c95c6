//! Every GPU kernel, defined once (see [`crate::launch`]): its entry point (nvptx64), its
//! name, its `#[repr(C)]` parameter struct and its place in a selection trait, on every
//! target. [`ENTRY_POINTS`] and [`LAYOUTS`] are generated from these definitions.
//!
//! Every `DevicePtr` parameter points to the number of values its length parameter
//! says (null when that is 0), as the host side in `codec-host` (feature `cuda`) passes
//! them. A kernel that can fail sets `status[0]` (a word the host zeroes).

pub use crate::launch::{DevicePtr, Field, Kernel, KernelLayout};

use crate::half_convert::{Bf16, F16};
use crate::reduce::ReduceOp;
use crate::zfp::{D1, D2, D3};

#[cfg(target_arch = "nvptx64")]
use crate::{
    entry::{fail, layout, params, prefix},
    gpu_phases::szx::{coded_flags_body, decode_body, payload_lens_body, plan_body, write_body},
    gpu_phases::zfp::{block_offsets_body, compact_body, decode_fixed_rate_body, decode_indexed_body, encode_slots_body},
    grid::Grid,
    half_convert::{f32_to_half_body, half_to_f32_body},
    reduce::reduce_body,
    scan::{scan_apply_body, scan_partials_body, scan_partials_exclusive_body},
    shared::{input, Disjoint, SharedOut},
    szx::Tolerance,
    zfp::fixed_rate::encode_fixed_rate_body,
    zfp::{Field as ZfpField, FixedRate},
};

/// The reduction operations as types, the key of [`ReduceKernel`].
pub mod ops {
    use crate::reduce::ReduceOp;

    /// A reduction operation known at compile time.
    pub trait Op {
        const OP: ReduceOp;
    }

    macro_rules! op_types {
        ($($t:ident),*) => {$(
            #[doc = concat!("`ReduceOp::", stringify!($t), "` as a type.")]
            pub struct $t;
            impl Op for $t {
                const OP: ReduceOp = ReduceOp::$t;
            }
        )*};
    }
    op_types!(Sum, Min, Max, Prod);
}
use ops::{Max, Min, Op, Prod, Sum};

/// The reduce kernel of operation `O` for elements `Self`.
pub trait ReduceKernel<O: Op>: Sized {
    type K: Kernel<Params = ReduceParams<Self>>;
}
/// The kernel widening half format `Self` to f32.
pub trait WidenKernel {
    type K: Kernel<Params = WidenParams>;
}
/// The kernel narrowing f32 to half format `Self`.
pub trait NarrowKernel {
    type K: Kernel<Params = NarrowParams>;
}
/// The ZFP fixed-rate encoder for `Self` in `D` dimensions.
pub trait ZfpRateEncodeKernel<D>: Sized {
    type K: Kernel<Params = ZfpRateEncodeParams<Self>>;
}
/// The ZFP fixed-rate decoder for `Self` in `D` dimensions.
pub trait ZfpRateDecodeKernel<D>: Sized {
    type K: Kernel<Params = ZfpRateDecodeParams<Self>>;
}
/// The ZFP fixed-accuracy slot encoder for `Self` in `D` dimensions.
pub trait ZfpAccSlotsKernel<D>: Sized {
    type K: Kernel<Params = ZfpAccSlotsParams<Self>>;
}
/// The ZFP fixed-accuracy indexed decoder for `Self` in `D` dimensions.
pub trait ZfpAccDecodeKernel<D>: Sized {
    type K: Kernel<Params = ZfpAccDecodeParams<Self>>;
}
/// The ZFP fixed-accuracy block-offset rebuild for `Self` in `D` dimensions.
pub trait ZfpAccIndexKernel<D> {
    type K: Kernel<Params = ZfpAccIndexParams>;
}
/// The SZx encoder's plan phase for `Self`.
pub trait SzxPlanKernel: Sized {
    type K: Kernel<Params = SzxPlanParams<Self>>;
}
/// The SZx encoder's write phase for `Self`.
pub trait SzxWriteKernel: Sized {
    type K: Kernel<Params = SzxWriteParams<Self>>;
}
/// The SZx decoder's payload-length phase for `Self`.
pub trait SzxPayloadLensKernel {
    type K: Kernel<Params = SzxPayloadLensParams>;
}
/// The SZx decoder's value phase for `Self`.
pub trait SzxDecodeKernel: Sized {
    type K: Kernel<Params = SzxDecodeParams<Self>>;
}

/// Every element-typed kernel for `Self` (`f32`, `f64`): what a generic host launch
/// needs to know about its element type.
pub trait ElementKernels:
    ReduceKernel<Sum>
    + ReduceKernel<Min>
    + ReduceKernel<Max>
    + ReduceKernel<Prod>
    + ZfpKernels<D1>
    + ZfpKernels<D2>
    + ZfpKernels<D3>
    + SzxPlanKernel
    + SzxWriteKernel
    + SzxPayloadLensKernel
    + SzxDecodeKernel
{
}
impl<T> ElementKernels for T where
    T: ReduceKernel<Sum>
        + ReduceKernel<Min>
        + ReduceKernel<Max>
        + ReduceKernel<Prod>
        + ZfpKernels<D1>
        + ZfpKernels<D2>
        + ZfpKernels<D3>
        + SzxPlanKernel
        + SzxWriteKernel
        + SzxPayloadLensKernel
        + SzxDecodeKernel
{
}

/// The ZFP kernels for `Self` in `D` dimensions.
pub trait ZfpKernels<D>:
    ZfpRateEncodeKernel<D> + ZfpRateDecodeKernel<D> + ZfpAccSlotsKernel<D> + ZfpAccDecodeKernel<D> + ZfpAccIndexKernel<D>
{
}
impl<T, D> ZfpKernels<D> for T where
    T: ZfpRateEncodeKernel<D> + ZfpRateDecodeKernel<D> + ZfpAccSlotsKernel<D> + ZfpAccDecodeKernel<D> + ZfpAccIndexKernel<D>
{
}

/// Both directions of half format `Self`.
pub trait HalfKernels: WidenKernel + NarrowKernel {}
impl<H: WidenKernel + NarrowKernel> HalfKernels for H {}

define_kernels! {
    /// `acc[i] = acc[i] op src[i]` for `i < n`, grid-stride.
    family ReduceParams[T] (acc: DevicePtr<T>, src: DevicePtr<T>, n: usize)
    generics [T, O] select [ReduceKernel<O> for T]
    body {
        reduce_body(Grid::from_hardware(), O::OP, &SharedOut::from_raw(acc, n), input(src, n));
    }
    kernels {
        ReduceSumF32 = reduce_sum_f32 [f32, Sum];
        ReduceMinF32 = reduce_min_f32 [f32, Min];
        ReduceMaxF32 = reduce_max_f32 [f32, Max];
        ReduceProdF32 = reduce_prod_f32 [f32, Prod];
        ReduceSumF64 = reduce_sum_f64 [f64, Sum];
        ReduceMinF64 = reduce_min_f64 [f64, Min];
        ReduceMaxF64 = reduce_max_f64 [f64, Max];
        ReduceProdF64 = reduce_prod_f64 [f64, Prod];
    }

    /// `n` half-precision bit patterns `src` widened into `dst`.
    family WidenParams[] (src: DevicePtr<u16>, dst: DevicePtr<f32>, n: usize)
    generics [H] select [WidenKernel for H]
    body {
        half_to_f32_body::<H>(Grid::from_hardware(), input(src, n), &SharedOut::from_raw(dst, n));
    }
    kernels {
        F16ToF32 = f16_to_f32 [F16];
        Bf16ToF32 = bf16_to_f32 [Bf16];
    }

    /// `n` values `src` narrowed into half-precision bit patterns `dst`.
    family NarrowParams[] (src: DevicePtr<f32>, dst: DevicePtr<u16>, n: usize)
    generics [H] select [NarrowKernel for H]
    body {
        f32_to_half_body::<H>(Grid::from_hardware(), input(src, n), &SharedOut::from_raw(dst, n));
    }
    kernels {
        F32ToF16 = f32_to_f16 [F16];
        F32ToBf16 = f32_to_bf16 [Bf16];
    }

    /// Scan launch 1: the sums of `n` u32 lengths in chunks of `chunk`, `n_chunks` of them.
    family ScanPartialsParams[] (lens: DevicePtr<u32>, n: usize, chunk: usize, partials: DevicePtr<u64>, n_chunks: usize)
    generics [] select []
    body {
        scan_partials_body(Grid::from_hardware(), input(lens, n), chunk, &SharedOut::from_raw(partials, n_chunks));
    }
    kernels {
        ScanPartialsU32 = scan_partials_u32 [];
    }

    /// Scan launch 2 (one thread): exclusive scan of the partials plus `base`, grand
    /// total into `total[0]`.
    family ScanExclusiveParams[] (partials: DevicePtr<u64>, n_chunks: usize, base: u64, total: DevicePtr<u64>)
    generics [] select []
    body {
        scan_partials_exclusive_body(Grid::from_hardware(), &SharedOut::from_raw(partials, n_chunks), base, &SharedOut::from_raw(total, 1));
    }
    kernels {
        ScanPartialsExclusive = scan_partials_exclusive [];
    }

    /// Scan launch 3: every item's offset from its chunk's scanned partial.
    family ScanApplyParams[] (lens: DevicePtr<u32>, n: usize, chunk: usize, partials: DevicePtr<u64>, n_chunks: usize, offsets: DevicePtr<u64>)
    generics [] select []
    body {
        scan_apply_body(Grid::from_hardware(), input(lens, n), chunk, input(partials, n_chunks), &SharedOut::from_raw(offsets, n));
    }
    kernels {
        ScanApplyU32 = scan_apply_u32 [];
    }

    /// ZFP fixed-rate encode of the `nx * ny * nz` values `data` (x fastest) into the
    /// zeroed stream `out`, blocks from bit `header_bits`; `(minbits, maxbits, maxprec,
    /// minexp)` are zfp's parameters. Fails on a non-finite value.
    family ZfpRateEncodeParams[T] (
        data: DevicePtr<T>, n: usize, nx: usize, ny: usize, nz: usize,
        minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
        header_bits: usize, out: DevicePtr<u64>, n_words: usize, status: DevicePtr<u32>,
    )
    generics [T, D] select [ZfpRateEncodeKernel<D> for T]
    body {
        let layout = FixedRate { field: ZfpField::new([nx, ny, nz]), params: params(minbits, maxbits, maxprec, minexp), header_bits };
        let out = SharedOut::from_raw(out, n_words);
        if !encode_fixed_rate_body::<T, D>(Grid::from_hardware(), input(data, n), &layout, out.cells()) {
            fail(status);
        }
    }
    kernels {
        ZfpRateEncodeF32D1 = zfp_rate_encode_f32_1d [f32, D1];
        ZfpRateEncodeF32D2 = zfp_rate_encode_f32_2d [f32, D2];
        ZfpRateEncodeF32D3 = zfp_rate_encode_f32_3d [f32, D3];
        ZfpRateEncodeF64D1 = zfp_rate_encode_f64_1d [f64, D1];
        ZfpRateEncodeF64D2 = zfp_rate_encode_f64_2d [f64, D2];
        ZfpRateEncodeF64D3 = zfp_rate_encode_f64_3d [f64, D3];
    }

    /// ZFP fixed-rate decode of the stream `words` (blocks from bit `header_bits`) into
    /// `out`. Fails if a block lies past the stream.
    family ZfpRateDecodeParams[T] (
        words: DevicePtr<u64>, n_words: usize, nx: usize, ny: usize, nz: usize,
        minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
        header_bits: usize, out: DevicePtr<T>, n: usize, status: DevicePtr<u32>,
    )
    generics [T, D] select [ZfpRateDecodeKernel<D> for T]
    body {
        let layout = FixedRate { field: ZfpField::new([nx, ny, nz]), params: params(minbits, maxbits, maxprec, minexp), header_bits };
        if !decode_fixed_rate_body::<T, D>(Grid::from_hardware(), input(words, n_words), &layout, &SharedOut::from_raw(out, n)) {
            fail(status);
        }
    }
    kernels {
        ZfpRateDecodeF32D1 = zfp_rate_decode_f32_1d [f32, D1];
        ZfpRateDecodeF32D2 = zfp_rate_decode_f32_2d [f32, D2];
        ZfpRateDecodeF32D3 = zfp_rate_decode_f32_3d [f32, D3];
        ZfpRateDecodeF64D1 = zfp_rate_decode_f64_1d [f64, D1];
        ZfpRateDecodeF64D2 = zfp_rate_decode_f64_2d [f64, D2];
        ZfpRateDecodeF64D3 = zfp_rate_decode_f64_3d [f64, D3];
    }

    /// ZFP fixed-accuracy phase 1: every block into its zeroed slot of `slot_bits` bits,
    /// its length into `lens` (one per block). Fails on a non-finite value.
    family ZfpAccSlotsParams[T] (
        data: DevicePtr<T>, n: usize, nx: usize, ny: usize, nz: usize,
        minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
        slot_bits: usize, slots: DevicePtr<u64>, n_slot_words: usize, lens: DevicePtr<u32>, n_blocks: usize, status: DevicePtr<u32>,
    )
    generics [T, D] select [ZfpAccSlotsKernel<D> for T]
    body {
        let slots = SharedOut::from_raw(slots, n_slot_words);
        let field = ZfpField::new([nx, ny, nz]);
        let p = params(minbits, maxbits, maxprec, minexp);
        if !encode_slots_body::<T, D>(Grid::from_hardware(), input(data, n), &field, &p, slot_bits, slots.cells(), &SharedOut::from_raw(lens, n_blocks)) {
            fail(status);
        }
    }
    kernels {
        ZfpAccSlotsF32D1 = zfp_acc_slots_f32_1d [f32, D1];
        ZfpAccSlotsF32D2 = zfp_acc_slots_f32_2d [f32, D2];
        ZfpAccSlotsF32D3 = zfp_acc_slots_f32_3d [f32, D3];
        ZfpAccSlotsF64D1 = zfp_acc_slots_f64_1d [f64, D1];
        ZfpAccSlotsF64D2 = zfp_acc_slots_f64_2d [f64, D2];
        ZfpAccSlotsF64D3 = zfp_acc_slots_f64_3d [f64, D3];
    }

    /// ZFP fixed-accuracy decode through the block offsets `offsets` (one per block).
    /// Fails if a block runs past the stream.
    family ZfpAccDecodeParams[T] (
        words: DevicePtr<u64>, n_words: usize, offsets: DevicePtr<u64>, n_blocks: usize, nx: usize, ny: usize, nz: usize,
        minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
        out: DevicePtr<T>, n: usize, status: DevicePtr<u32>,
    )
    generics [T, D] select [ZfpAccDecodeKernel<D> for T]
    body {
        let field = ZfpField::new([nx, ny, nz]);
        let p = params(minbits, maxbits, maxprec, minexp);
        if !decode_indexed_body::<T, D>(Grid::from_hardware(), input(words, n_words), input(offsets, n_blocks), &field, &p, &SharedOut::from_raw(out, n)) {
            fail(status);
        }
    }
    kernels {
        ZfpAccDecodeF32D1 = zfp_acc_decode_f32_1d [f32, D1];
        ZfpAccDecodeF32D2 = zfp_acc_decode_f32_2d [f32, D2];
        ZfpAccDecodeF32D3 = zfp_acc_decode_f32_3d [f32, D3];
        ZfpAccDecodeF64D1 = zfp_acc_decode_f64_1d [f64, D1];
        ZfpAccDecodeF64D2 = zfp_acc_decode_f64_2d [f64, D2];
        ZfpAccDecodeF64D3 = zfp_acc_decode_f64_3d [f64, D3];
    }

    /// ZFP fixed-accuracy index rebuild for a stream that arrives without its offsets:
    /// one sequential pass (grid position 0 works, launch one thread) from bit
    /// `start_bits` writes every block's offset into `offsets`. Fails if the blocks run
    /// past `stream_bits`, the stream's true length.
    family ZfpAccIndexParams[] (
        words: DevicePtr<u64>, n_words: usize, start_bits: usize, stream_bits: usize,
        minbits: u32, maxbits: u32, maxprec: u32, minexp: i32,
        offsets: DevicePtr<u64>, n_blocks: usize, status: DevicePtr<u32>,
    )
    generics [T, D] select [ZfpAccIndexKernel<D> for T]
    body {
        let p = params(minbits, maxbits, maxprec, minexp);
        let mut end = [0u64];
        let ok = block_offsets_body::<T, D>(Grid::from_hardware(), input(words, n_words), start_bits, &p,
            &SharedOut::from_raw(offsets, n_blocks), &SharedOut::new(&mut end[..]));
        if !ok || end[0] as usize > stream_bits {
            fail(status);
        }
    }
    kernels {
        ZfpAccIndexF32D1 = zfp_acc_index_f32_1d [f32, D1];
        ZfpAccIndexF32D2 = zfp_acc_index_f32_2d [f32, D2];
        ZfpAccIndexF32D3 = zfp_acc_index_f32_3d [f32, D3];
        ZfpAccIndexF64D1 = zfp_acc_index_f64_1d [f64, D1];
        ZfpAccIndexF64D2 = zfp_acc_index_f64_2d [f64, D2];
        ZfpAccIndexF64D3 = zfp_acc_index_f64_3d [f64, D3];
    }

    /// ZFP fixed-accuracy phase 3: every slot's `lens[b]` bits to stream bit
    /// `offsets[b]` of the zeroed `out`.
    family ZfpAccCompactParams[] (
        slots: DevicePtr<u64>, n_slot_words: usize, slot_bits: usize, lens: DevicePtr<u32>, offsets: DevicePtr<u64>,
        n_blocks: usize, out: DevicePtr<u64>, n_words: usize,
    )
    generics [] select []
    body {
        let out = SharedOut::from_raw(out, n_words);
        compact_body(Grid::from_hardware(), input(slots, n_slot_words), slot_bits, input(lens, n_blocks), input(offsets, n_blocks), out.cells());
    }
    kernels {
        ZfpAccCompact = zfp_acc_compact [];
    }

    /// SZx encode phase 1 over `n` values in blocks of `block`, chunks of `chunk_blocks`
    /// blocks, bound `e`: states, payload sizes and coded flags, one per block.
    family SzxPlanParams[T] (
        data: DevicePtr<T>, n: usize, block: usize, chunk_blocks: usize, e: f64,
        states: DevicePtr<u8>, sizes: DevicePtr<u32>, coded: DevicePtr<u32>, n_blocks: usize,
    )
    generics [T] select [SzxPlanKernel for T]
    body {
        let l = layout(n, block, chunk_blocks);
        let tol = Tolerance::<T>::from_f64(e);
        plan_body(Grid::from_hardware(), input(data, n), &l, &tol, &SharedOut::from_raw(states, n_blocks),
            &SharedOut::from_raw(sizes, n_blocks), &SharedOut::from_raw(coded, n_blocks));
    }
    kernels {
        SzxPlanF32 = szx_plan_f32 [f32];
        SzxPlanF64 = szx_plan_f64 [f64];
    }

    /// SZx encode phase 3: frames and chunk table into `out` of `out_len` bytes (the
    /// host writes the header), from the scans of phase 1's sizes (`s_*`) and coded
    /// flags (`c_*`). Fails if a block's plan changed between the phases.
    family SzxWriteParams[T] (
        data: DevicePtr<T>, n: usize, block: usize, chunk_blocks: usize, e: f64,
        s_offsets: DevicePtr<u64>, s_total: DevicePtr<u64>, c_offsets: DevicePtr<u64>, c_total: DevicePtr<u64>, n_blocks: usize,
        frames_at: usize, table_at: usize, out: DevicePtr<u8>, out_len: usize, status: DevicePtr<u32>,
    )
    generics [T] select [SzxWriteKernel for T]
    body {
        let l = layout(n, block, chunk_blocks);
        let tol = Tolerance::<T>::from_f64(e);
        let (s, c) = (prefix(s_offsets, n_blocks, s_total), prefix(c_offsets, n_blocks, c_total));
        if !write_body(Grid::from_hardware(), input(data, n), &l, &tol, s, c, frames_at, table_at, &Disjoint::from_raw(out, out_len)) {
            fail(status);
        }
    }
    kernels {
        SzxWriteF32 = szx_write_f32 [f32];
        SzxWriteF64 = szx_write_f64 [f64];
    }

    /// SZx decode phase 1: coded flags from the state bytes, one per block, from the
    /// chunk starts (`n_starts` = chunks + 1, the last the stream's end).
    family SzxCodedFlagsParams[] (
        stream: DevicePtr<u8>, stream_len: usize, n: usize, block: usize, chunk_blocks: usize,
        chunk_starts: DevicePtr<u64>, n_starts: usize, coded: DevicePtr<u32>, n_blocks: usize, status: DevicePtr<u32>,
    )
    generics [] select []
    body {
        let l = layout(n, block, chunk_blocks);
        if !coded_flags_body(Grid::from_hardware(), input(stream, stream_len), &l, input(chunk_starts, n_starts), &SharedOut::from_raw(coded, n_blocks)) {
            fail(status);
        }
    }
    kernels {
        SzxCodedFlags = szx_coded_flags [];
    }

    /// SZx decode phase 2: payload lengths, one per block.
    family SzxPayloadLensParams[] (
        stream: DevicePtr<u8>, stream_len: usize, n: usize, block: usize, chunk_blocks: usize,
        chunk_starts: DevicePtr<u64>, n_starts: usize, c_offsets: DevicePtr<u64>, c_total: DevicePtr<u64>,
        lens: DevicePtr<u32>, n_blocks: usize, status: DevicePtr<u32>,
    )
    generics [T] select [SzxPayloadLensKernel for T]
    body {
        let l = layout(n, block, chunk_blocks);
        if !payload_lens_body::<T>(Grid::from_hardware(), input(stream, stream_len), &l, input(chunk_starts, n_starts),
            prefix(c_offsets, n_blocks, c_total), &SharedOut::from_raw(lens, n_blocks)) {
            fail(status);
        }
    }
    kernels {
        SzxPayloadLensF32 = szx_payload_lens_f32 [f32];
        SzxPayloadLensF64 = szx_payload_lens_f64 [f64];
    }

    /// SZx decode phase 3: every block's values into `out`.
    family SzxDecodeParams[T] (
        stream: DevicePtr<u8>, stream_len: usize, n: usize, block: usize, chunk_blocks: usize,
        chunk_starts: DevicePtr<u64>, n_starts: usize, c_offsets: DevicePtr<u64>, c_total: DevicePtr<u64>,
        s_offsets: DevicePtr<u64>, s_total: DevicePtr<u64>, n_blocks: usize, out: DevicePtr<T>, status: DevicePtr<u32>,
    )
    generics [T] select [SzxDecodeKernel for T]
    body {
        let l = layout(n, block, chunk_blocks);
        if !decode_body(Grid::from_hardware(), input(stream, stream_len), &l, input(chunk_starts, n_starts),
            prefix(c_offsets, n_blocks, c_total), prefix(s_offsets, n_blocks, s_total), &Disjoint::from_raw(out, n)) {
            fail(status);
        }
    }
    kernels {
        SzxDecodeF32 = szx_decode_f32 [f32];
        SzxDecodeF64 = szx_decode_f64 [f64];
    }
}

/// The reduce kernel's name for `op` on `T` (for messages; launches select by type).
pub fn reduce_name<T: ElementKernels>(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => <<T as ReduceKernel<Sum>>::K as Kernel>::NAME,
        ReduceOp::Min => <<T as ReduceKernel<Min>>::K as Kernel>::NAME,
        ReduceOp::Max => <<T as ReduceKernel<Max>>::K as Kernel>::NAME,
        ReduceOp::Prod => <<T as ReduceKernel<Prod>>::K as Kernel>::NAME,
    }
}

/// The names of the `.entry` functions a PTX module defines, in file order.
pub fn ptx_entry_names(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|l| {
        let rest = l.trim_start().strip_prefix(".visible .entry ")?;
        rest.split(['(', ' ']).next()
    })
}

/// One scalar `.param` of a PTX `.entry`: its size in bytes (its alignment too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtxParam {
    pub size: usize,
}

/// The `.param` list of entry `name` in `ptx`, or `None` if the module lacks it. A
/// parameter that is not a plain scalar (`.param .u64 [.ptr .align N] x`, `.b32`,
/// `.f64`, ...), such as a byte array, reads as `None`.
pub fn ptx_entry_params<'a>(ptx: &'a str, name: &str) -> Option<impl Iterator<Item = Option<PtxParam>> + 'a> {
    let head = ptx.lines().position(|l| l.trim_start().strip_prefix(".visible .entry ").and_then(|r| r.split(['(', ' ']).next()) == Some(name))?;
    let lines = ptx.lines().skip(head + 1).take_while(|l| !l.trim_start().starts_with(')'));
    Some(lines.map(|l| {
        let mut words = l.split_whitespace();
        if words.next() != Some(".param") {
            return None;
        }
        let bits: usize = words.next()?.get(2..)?.parse().ok()?;
        let ident = words.find(|w| !w.starts_with('.') && w.parse::<u64>().is_err())?;
        (bits.is_multiple_of(8) && !ident.contains('[')).then_some(PtxParam { size: bits / 8 })
    }))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn names_are_unique_and_every_selection_agrees_with_its_name() {
        for (i, a) in ENTRY_POINTS.iter().enumerate() {
            assert!(!ENTRY_POINTS[i + 1..].contains(a), "{a} listed twice");
        }
        assert_eq!(ENTRY_POINTS.len(), LAYOUTS.len());
        assert!(ENTRY_POINTS.iter().zip(LAYOUTS).all(|(n, l)| *n == l.name));
        for op in ReduceOp::ALL {
            assert_eq!(reduce_name::<f32>(op), ["reduce_", op.name(), "_f32"].concat());
            assert_eq!(reduce_name::<f64>(op), ["reduce_", op.name(), "_f64"].concat());
        }
        assert_eq!(<<F16 as WidenKernel>::K as Kernel>::NAME, "f16_to_f32");
        assert_eq!(<<Bf16 as NarrowKernel>::K as Kernel>::NAME, "f32_to_bf16");
        assert_eq!(<<f64 as ZfpAccSlotsKernel<D2>>::K as Kernel>::NAME, "zfp_acc_slots_f64_2d");
        assert_eq!(<<f32 as ZfpAccIndexKernel<D3>>::K as Kernel>::NAME, "zfp_acc_index_f32_3d");
        assert_eq!(<<f64 as SzxDecodeKernel>::K as Kernel>::NAME, "szx_decode_f64");
    }

    #[test]
    fn parameter_structs_are_packed_like_cuda_packs_the_entry_parameters() {
        for l in LAYOUTS {
            // CUDA packs each parameter at the next multiple of its own alignment; every
            // field here is a scalar whose alignment is its size.
            let mut at = 0usize;
            for f in l.fields {
                at = at.next_multiple_of(f.size);
                assert_eq!(f.offset, at, "{}.{}", l.name, f.name);
                at += f.size;
            }
            // No trailing padding: the struct's size is the packed buffer's length.
            assert_eq!(l.size, at, "{}", l.name);
        }
        let zfp = LAYOUTS.iter().find(|l| l.name == "zfp_rate_encode_f32_1d").unwrap();
        let at: Vec<(usize, usize)> = zfp.fields.iter().map(|f| (f.offset, f.size)).collect();
        assert_eq!(&at[4..10], &[(32, 8), (40, 4), (44, 4), (48, 4), (52, 4), (56, 8)]);
    }

    #[test]
    fn entry_names_and_params_are_read_from_ptx_text() {
        let ptx = ".target sm_70\n.visible .entry a_b(\n\t.param .u64 .ptr .align 1 a_b_param_0,\n\t.param .u32 a_b_param_1,\n\t.param .f64 a_b_param_2,\n\t.param .align 8 .b8 a_b_param_3[24]\n)\n.visible .func helper(\n.visible .entry c (\n)\n";
        let names: [&str; 2] = ["a_b", "c"];
        assert!(ptx_entry_names(ptx).eq(names));
        let params: Vec<_> = ptx_entry_params(ptx, "a_b").unwrap().collect();
        let p = |size| Some(PtxParam { size });
        assert_eq!(params, [p(8), p(4), p(8), None]);
        assert_eq!(ptx_entry_params(ptx, "c").unwrap().count(), 0);
        assert!(ptx_entry_params(ptx, "helper").is_none());
    }
}
