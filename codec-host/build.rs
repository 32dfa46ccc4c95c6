//! Embeds the PTX that `cargo xtask build-ptx` wrote (feature `cuda` only).
//!
//! Looks in `$CCOLL_PTX_DIR`, else `<workspace>/target/ptx`, for
//! `codec_kernels.sm_XX.ptx` and generates `embedded_ptx.rs` listing the ones found. When
//! none is there, the list is empty and the CUDA backend loads PTX at run time instead
//! (see `cuda::ptx`).

use std::path::PathBuf;

/// The architectures build-ptx produces, oldest first.
const ARCHES: [u32; 3] = [70, 80, 90];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CCOLL_PTX_DIR");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("CCOLL_PTX_DIR").map(PathBuf::from).unwrap_or_else(|| manifest.join("../target/ptx"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if dir.is_dir() {
        // A rebuild of the PTX (new files or new contents) re-embeds it.
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    let mut entries = String::new();
    for arch in ARCHES {
        let src = dir.join(format!("codec_kernels.sm_{arch}.ptx"));
        if !src.is_file() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", src.display());
        let copy = out.join(format!("codec_kernels.sm_{arch}.ptx"));
        std::fs::copy(&src, &copy).unwrap_or_else(|e| panic!("cannot copy {}: {e}", src.display()));
        entries += &format!("    ({arch}, include_str!(concat!(env!(\"OUT_DIR\"), \"/codec_kernels.sm_{arch}.ptx\"))),\n");
    }
    let code = format!(
        "/// PTX embedded at build time: (sm version, module text), oldest first.\n\
         pub(crate) const EMBEDDED_PTX: &[(u32, &str)] = &[\n{entries}];\n"
    );
    std::fs::write(out.join("embedded_ptx.rs"), code).expect("cannot write embedded_ptx.rs");
}
