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
        assert_eq!(names.len(), 49, "sm_{arch}: {names:?}");
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
    }
}
