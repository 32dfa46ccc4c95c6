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
    let mut all = available();
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
        }
        let (arch, _) = select(90).unwrap();
        assert_eq!(arch, modules.iter().map(|m| m.0).max().unwrap());
    }
}
