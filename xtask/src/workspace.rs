//! Locating and building the workspace's binaries.

use std::path::PathBuf;
use std::process::Command;

/// The workspace root (the directory above this crate).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// `cargo build --release -p PACKAGE --bin BIN`, returning the binary's path.
pub fn build_release_bin(package: &str, bin: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--release", "--quiet", "-p", package, "--bin", bin])
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building {bin} failed"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"));
    Ok(target.join("release").join(bin))
}

/// Runs this same xtask command line again from a release build (for measurements that
/// a debug build would distort), returning its exit code.
pub fn rerun_in_release() -> Result<std::process::ExitCode, String> {
    let exe = build_release_bin("xtask", "xtask")?;
    let status = Command::new(&exe).args(std::env::args_os().skip(1)).status().map_err(|e| format!("{}: {e}", exe.display()))?;
    Ok(std::process::ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
}
