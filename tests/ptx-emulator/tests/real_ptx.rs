//! The PTX that `cargo xtask build-ptx` writes: every target loads, every entry point is
//! found with its parameter layout, and real kernels give the CPU bodies' results.

mod common;

use common::*;

#[test]
fn every_target_loads_with_all_entry_points() {
    let Some(modules) = ptx_files() else { return };
    for (arch, text) in modules {
        let mut mem = ptx_emulator::Memory::new();
        let m = ptx_emulator::Module::load(&text, &mut mem).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
        assert_eq!(m.target(), format!("sm_{arch}"));
        let names = m.entry_names();
        assert_eq!(names.len(), codec_kernels::kernels::ENTRY_POINTS.len(), "sm_{arch}: {names:?}");
        for want in codec_kernels::kernels::ENTRY_POINTS {
            let e = m.entry(want).unwrap_or_else(|| panic!("sm_{arch}: entry {want} missing"));
            let params = m.params(e);
            assert!(!params.is_empty(), "{want} has no parameters");
            // Packed as the driver packs them: each at its own alignment, no overlap.
            let mut end = 0;
            for p in params {
                assert_eq!(p.offset % p.align, 0, "{want}: {p:?}");
                assert!(p.offset >= end, "{want}: {p:?} overlaps");
                end = p.offset + p.size;
            }
            assert_eq!(m.param_buffer_size(e), end);
        }
        // Worked out from the kernel's Rust signature: pointers and usize take 8 bytes at
        // 8-byte alignment, u32/i32 4 bytes at 4-byte alignment.
        let e = m.entry("zfp_rate_encode_f32_1d").unwrap();
        let layout: Vec<(usize, usize)> = m.params(e).iter().map(|p| (p.offset, p.size)).collect();
        let want = [(0, 8), (8, 8), (16, 8), (24, 8), (32, 8), (40, 4), (44, 4), (48, 4), (52, 4), (56, 8), (64, 8), (72, 8), (80, 8)];
        assert_eq!(layout, want);
        assert_eq!(m.param_buffer_size(e), 88);
        let e = m.entry("szx_plan_f64").unwrap();
        let sizes: Vec<usize> = m.params(e).iter().map(|p| p.size).collect();
        assert_eq!(sizes, [8; 9]);
    }
}
