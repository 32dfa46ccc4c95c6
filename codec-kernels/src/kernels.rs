//! The names of the GPU entry points, on every target.
//!
//! The host launches kernels by these names; `cargo xtask build-ptx` checks that the PTX
//! defines exactly this set, and the CUDA backend checks its module against it.

/// Every `extern "gpu-kernel"` entry point the PTX module defines.
pub const ENTRY_POINTS: &[&str] = &[
    "reduce_sum_f32",
    "reduce_min_f32",
    "reduce_max_f32",
    "reduce_prod_f32",
    "reduce_sum_f64",
    "reduce_min_f64",
    "reduce_max_f64",
    "reduce_prod_f64",
    "f16_to_f32",
    "f32_to_f16",
    "bf16_to_f32",
    "f32_to_bf16",
    "scan_partials_u32",
    "scan_partials_exclusive",
    "scan_apply_u32",
    "zfp_rate_encode_f32_1d",
    "zfp_rate_decode_f32_1d",
    "zfp_acc_slots_f32_1d",
    "zfp_acc_decode_f32_1d",
    "zfp_rate_encode_f32_2d",
    "zfp_rate_decode_f32_2d",
    "zfp_acc_slots_f32_2d",
    "zfp_acc_decode_f32_2d",
    "zfp_rate_encode_f32_3d",
    "zfp_rate_decode_f32_3d",
    "zfp_acc_slots_f32_3d",
    "zfp_acc_decode_f32_3d",
    "zfp_rate_encode_f64_1d",
    "zfp_rate_decode_f64_1d",
    "zfp_acc_slots_f64_1d",
    "zfp_acc_decode_f64_1d",
    "zfp_rate_encode_f64_2d",
    "zfp_rate_decode_f64_2d",
    "zfp_acc_slots_f64_2d",
    "zfp_acc_decode_f64_2d",
    "zfp_rate_encode_f64_3d",
    "zfp_rate_decode_f64_3d",
    "zfp_acc_slots_f64_3d",
    "zfp_acc_decode_f64_3d",
    "zfp_acc_compact",
    "szx_plan_f32",
    "szx_write_f32",
    "szx_payload_lens_f32",
    "szx_decode_f32",
    "szx_plan_f64",
    "szx_write_f64",
    "szx_payload_lens_f64",
    "szx_decode_f64",
    "szx_coded_flags",
];

/// Name of the ZFP entry point `kind` (`rate_encode`, `rate_decode`, `acc_slots`,
/// `acc_decode`) for elements named `elem` and `dims` dimensions.
pub fn zfp_entry(kind: &str, elem: &str, dims: usize) -> Option<&'static str> {
    let dims = ["1d", "2d", "3d"].get(dims.wrapping_sub(1))?;
    ENTRY_POINTS.iter().copied().find(|n| {
        n.strip_prefix("zfp_")
            .and_then(|r| r.strip_prefix(kind))
            .and_then(|r| r.strip_prefix('_'))
            .and_then(|r| r.strip_prefix(elem))
            .and_then(|r| r.strip_prefix('_'))
            == Some(*dims)
    })
}

/// Name of the reduce entry point for `op` on elements named `elem` (`f32`, `f64`).
pub fn reduce_entry(op: crate::reduce::ReduceOp, elem: &str) -> Option<&'static str> {
    ENTRY_POINTS.iter().copied().find(|n| {
        n.strip_prefix("reduce_").and_then(|r| r.strip_prefix(op.name())).and_then(|r| r.strip_prefix('_')) == Some(elem)
    })
}

/// The names of the `.entry` functions a PTX module defines, in file order.
pub fn ptx_entry_names(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|l| {
        let rest = l.trim_start().strip_prefix(".visible .entry ")?;
        rest.split(['(', ' ']).next()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::ReduceOp;

    #[test]
    fn names_are_unique_and_every_reduction_has_one() {
        for (i, a) in ENTRY_POINTS.iter().enumerate() {
            assert!(!ENTRY_POINTS[i + 1..].contains(a), "{a} listed twice");
        }
        for op in ReduceOp::ALL {
            for elem in ["f32", "f64"] {
                let name = reduce_entry(op, elem).unwrap();
                assert_eq!(name, &["reduce_", op.name(), "_", elem].concat());
            }
        }
        assert_eq!(reduce_entry(ReduceOp::Sum, "f16"), None);
        for kind in ["rate_encode", "rate_decode", "acc_slots", "acc_decode"] {
            for elem in ["f32", "f64"] {
                for d in 1..=3 {
                    let want = ["zfp_", kind, "_", elem, "_", ["1d", "2d", "3d"][d - 1]].concat();
                    assert_eq!(zfp_entry(kind, elem, d), Some(&*want));
                }
            }
        }
        assert_eq!(zfp_entry("rate_encode", "f32", 4), None);
        assert_eq!(zfp_entry("rate_encode", "f32", 0), None);
    }

    #[test]
    fn entry_names_are_read_from_ptx_text() {
        let ptx = ".target sm_70\n.visible .entry a_b(\n\t.param .u64 x\n)\n.visible .func helper(\n.visible .entry c (\n";
        let names: [&str; 2] = ["a_b", "c"];
        assert!(ptx_entry_names(ptx).eq(names));
    }
}
