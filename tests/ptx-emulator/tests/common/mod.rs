//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// target/ptx of the workspace, where `cargo xtask build-ptx` writes.
pub fn ptx_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/ptx"))
}

/// The three PTX modules as (sm version, text), or None (with a visible note) when they
/// have not been built. With CCOLL_REQUIRE_PTX=1 (as CI sets after building them) a
/// missing file fails the test instead.
pub fn ptx_files() -> Option<Vec<(u32, String)>> {
    let dir = ptx_dir();
    let files: Vec<_> = [70, 80, 90]
        .into_iter()
        .map(|a| (a, std::fs::read_to_string(dir.join(format!("codec_kernels.sm_{a}.ptx")))))
        .collect();
    if files.iter().any(|f| f.1.is_err()) {
        assert!(
            std::env::var_os("CCOLL_REQUIRE_PTX").is_none(),
            "CCOLL_REQUIRE_PTX is set but {} lacks the PTX: run `cargo xtask build-ptx`",
            dir.display()
        );
        eprintln!("SKIPPED: no PTX in {} (run `cargo xtask build-ptx`)", dir.display());
        return None;
    }
    Some(files.into_iter().map(|(a, t)| (a, t.unwrap())).collect())
}

/// One PTX module (sm_80), if built.
pub fn ptx_sm80() -> Option<String> {
    ptx_files().map(|mut v| v.swap_remove(1).1)
}
