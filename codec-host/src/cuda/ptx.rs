//! Which PTX module to load: embedded at build time, or read from a directory.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/embedded_ptx.rs"));

/// The directory searched at run time when nothing was embedded: `$CCOLL_PTX_DIR`, else
/// the workspace's `target/ptx` where `cargo xtask build-ptx` writes.
pub fn runtime_dir() -> PathBuf {
    std::env::var_os("CCOLL_PTX_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/ptx")))
}

/// The newest architecture in `available` that a device of compute capability `cc`
/// (major * 10 + minor) can run: PTX for sm_XX is JIT-compiled for any cc >= XX.
pub fn pick(cc: u32, available: impl IntoIterator<Item = u32>) -> Option<u32> {
    available.into_iter().filter(|&a| a <= cc).max()
}

/// The PTX modules on offer, as (sm version, text): the embedded ones, else the files
/// in [`runtime_dir`].
pub fn available() -> Vec<(u32, Cow<'static, str>)> {
    if !EMBEDDED_PTX.is_empty() {
        return EMBEDDED_PTX.iter().map(|&(a, t)| (a, Cow::Borrowed(t))).collect();
    }
    let dir = runtime_dir();
    [70, 80, 90]
        .into_iter()
        .filter_map(|a| std::fs::read_to_string(dir.join(format!("codec_kernels.sm_{a}.ptx"))).ok().map(|t| (a, Cow::Owned(t))))
        .collect()
}

/// The module for a device of compute capability `cc`.
pub fn select(cc: u32) -> Result<(u32, Cow<'static, str>)> {
    select_from(cc, available())
}

/// The module for a device of compute capability `cc` among `all`.
fn select_from(cc: u32, mut all: Vec<(u32, Cow<'static, str>)>) -> Result<(u32, Cow<'static, str>)> {
    if all.is_empty() {
        return Err(Error::Gpu(format!(
            "no PTX embedded and none in {}: run `cargo xtask build-ptx` (or set CCOLL_PTX_DIR)",
            runtime_dir().display()
        )));
    }
    let arch = pick(cc, all.iter().map(|m| m.0)).ok_or_else(|| {
        Error::Gpu(format!("device sm_{cc} is older than every PTX target ({:?})", all.iter().map(|m| m.0).collect::<Vec<_>>()))
    })?;
    let i = all.iter().position(|m| m.0 == arch).unwrap_or(0);
    Ok(all.swap_remove(i))
}

/// Entry points of `codec_kernels::kernels::ENTRY_POINTS` that `ptx` lacks.
pub fn missing_entries(ptx: &str) -> Vec<&'static str> {
    let have: Vec<&str> = codec_kernels::kernels::ptx_entry_names(ptx).collect();
    codec_kernels::kernels::ENTRY_POINTS.iter().copied().filter(|n| !have.contains(n)).collect()
}

/// Kernels whose parameter struct differs from `ptx`'s `.param` list of their entry
/// (count, sizes, offsets as CUDA packs the list, total size), each with the
/// difference. Entries the module lacks are [`missing_entries`]' business.
pub fn layout_mismatches(ptx: &str) -> Vec<String> {
    codec_kernels::kernels::LAYOUTS
        .iter()
        .filter_map(|l| {
            let Some(params) = codec_kernels::kernels::ptx_entry_params(ptx, l.name)?.collect::<Option<Vec<_>>>() else {
                return Some(format!("{}: a parameter that is not a scalar", l.name));
            };
            let mut end = 0usize;
            let packed: Vec<(usize, usize)> = params
                .iter()
                .map(|p| {
                    let at = end.next_multiple_of(p.size);
                    end = at + p.size;
                    (at, p.size)
                })
                .collect();
            let ours: Vec<(usize, usize)> = l.fields.iter().map(|f| (f.offset, f.size)).collect();
            (packed != ours || end != l.size)
                .then(|| format!("{}: the PTX packs (offset, size) {packed:?} in {end} bytes, the struct {ours:?} in {}", l.name, l.size))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_usable_architecture_is_picked() {
        let built = [70, 80, 90];
        assert_eq!(pick(70, built), Some(70));
        assert_eq!(pick(75, built), Some(70));
        assert_eq!(pick(86, built), Some(80));
        assert_eq!(pick(90, built), Some(90));
        assert_eq!(pick(120, built), Some(90));
        assert_eq!(pick(61, built), None);
    }

    /// CI builds the PTX first and sets CCOLL_REQUIRE_PTX=1, so there this cannot pass
    /// vacuously; elsewhere a missing PTX build is reported, not failed.
    #[test]
    fn available_modules_define_every_entry_point() {
        let modules = available();
        if modules.is_empty() {
            assert!(std::env::var_os("CCOLL_REQUIRE_PTX").is_none(), "CCOLL_REQUIRE_PTX is set but no PTX was found");
            eprintln!("no PTX built (cargo xtask build-ptx); entry-point check not run");
            return;
        }
        for (arch, text) in &modules {
            assert!(text.lines().any(|l| l.trim() == format!(".target sm_{arch}")), "sm_{arch} module declares another target");
            assert_eq!(missing_entries(text), Vec::<&str>::new(), "sm_{arch} module");
            assert_eq!(layout_mismatches(text), Vec::<String>::new(), "sm_{arch} module");
        }
        let (arch, _) = select(90).unwrap();
        assert_eq!(arch, modules.iter().map(|m| m.0).max().unwrap());
    }

    #[test]
    fn a_parameter_list_unlike_the_struct_is_reported() {
        let entry = |params: &str| format!(".target sm_80\n.visible .entry reduce_sum_f32(\n{params}\n)\n{{\n}}\n");
        let good = entry("\t.param .u64 .ptr .align 1 a,\n\t.param .u64 .ptr .align 1 b,\n\t.param .u64 c");
        assert_eq!(layout_mismatches(&good), Vec::<String>::new());
        let short = entry("\t.param .u64 .ptr .align 1 a,\n\t.param .u64 c");
        let narrow = entry("\t.param .u64 .ptr .align 1 a,\n\t.param .u64 .ptr .align 1 b,\n\t.param .u32 c");
        let array = entry("\t.param .align 8 .b8 p[24]");
        for bad in [short, narrow, array] {
            let m = layout_mismatches(&bad);
            assert_eq!(m.len(), 1, "{m:?}");
            assert!(m[0].starts_with("reduce_sum_f32: "), "{m:?}");
        }
    }

    /// No PTX at all, or none old enough for the device, is an error that says what to
    /// do; `Backend::auto()` then falls back to the CPU (tested in `backend`).
    #[test]
    fn missing_ptx_is_an_error_naming_the_fix() {
        let none = select_from(80, Vec::new()).unwrap_err();
        assert!(matches!(&none, Error::Gpu(m) if m.contains("cargo xtask build-ptx")), "{none}");
        let too_new = select_from(61, vec![(70, Cow::Borrowed(".target sm_70"))]).unwrap_err();
        assert!(matches!(&too_new, Error::Gpu(m) if m.contains("older than every PTX target")), "{too_new}");
    }
}
