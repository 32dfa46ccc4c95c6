//! `cargo xtask emulate -- CMD [ARGS]`: runs a command with the emulated CUDA device
//! (tests/emulated-cuda, docs/gpu.md "The emulated device") in place of NVIDIA's driver.
//!
//! Builds the emulator's `libcuda.so` in release, links it as `libcuda.so.1` in
//! `target/emulated-cuda/lib64`, puts that directory first on `LD_LIBRARY_PATH` and sets
//! `CUDA_LIBRARY_PATH` to its parent, so that cust's build script (find_cuda_helper,
//! which searches `$CUDA_LIBRARY_PATH/lib64`) links against the emulator too and no
//! NVIDIA library is needed at all. Builds `codec-host --features cuda` in release (the
//! `ccoll` binary) the same way, then runs the command. That binary opens libcuda.so.1
//! at run time (codec-host's cuda/driver.rs), so it also starts outside the emulator. `mpirun` ranks started on this
//! machine inherit the environment: each loads its own emulated device.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::workspace;

#[derive(clap::Args)]
pub struct EmulateArgs {
    /// Do not build codec-host's cuda binaries (only the emulator library).
    #[arg(long)]
    no_build: bool,
    /// Print the environment as shell `export` lines instead of running a command
    /// (`eval "$(cargo xtask emulate --print-env)"`).
    #[arg(long)]
    print_env: bool,
    /// The command and its arguments.
    #[arg(last = true, required_unless_present = "print_env")]
    cmd: Vec<OsString>,
}

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace::root().join("target"))
}

/// `cargo build --release ARGS` with `env` set.
fn cargo_build(args: &[&str], env: &[(&str, &OsString)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(workspace::root()).args(["build", "--release", "--quiet"]).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let status = c.status().map_err(|e| format!("cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo build --release {} failed", args.join(" ")))
    }
}

/// (Re)creates `link` pointing at `to`.
fn symlink(to: &Path, link: &Path) -> Result<(), String> {
    match std::fs::remove_file(link) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", link.display())),
    }
    std::os::unix::fs::symlink(to, link).map_err(|e| format!("{}: {e}", link.display()))
}

/// Builds the emulator and lays out `<target>/emulated-cuda/lib64`; returns the
/// environment a program needs to use it: LD_LIBRARY_PATH and CUDA_LIBRARY_PATH.
pub fn prepare() -> Result<Vec<(&'static str, OsString)>, String> {
    cargo_build(&["-p", "emulated-cuda"], &[])?;
    let target = target_dir();
    let lib = target.join("release").join("libcuda.so");
    let base = target.join("emulated-cuda");
    let lib64 = base.join("lib64");
    std::fs::create_dir_all(&lib64).map_err(|e| format!("{}: {e}", lib64.display()))?;
    symlink(&lib, &lib64.join("libcuda.so.1"))?;
    symlink(Path::new("libcuda.so.1"), &lib64.join("libcuda.so"))?;
    // `cargo xtask` (cargo run) prepended the target and toolchain library directories
    // to this process's LD_LIBRARY_PATH; the command gets the caller's own entries.
    let toolchains = std::env::var_os("RUSTUP_HOME").map(|h| PathBuf::from(h).join("toolchains"));
    let mut ld = OsString::from(&lib64);
    for dir in std::env::split_paths(&std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default()) {
        let cargos = dir.starts_with(&target) || toolchains.as_ref().is_some_and(|t| dir.starts_with(t));
        if !cargos && !dir.as_os_str().is_empty() {
            ld.push(":");
            ld.push(&dir);
        }
    }
    Ok(vec![("LD_LIBRARY_PATH", ld), ("CUDA_LIBRARY_PATH", base.into_os_string())])
}

/// `VALUE` quoted for a POSIX shell.
fn shell_quote(v: &std::ffi::OsStr) -> String {
    format!("'{}'", v.to_string_lossy().replace('\'', "'\\''"))
}

pub fn run(args: &EmulateArgs) -> Result<ExitCode, String> {
    let env = prepare()?;
    if args.print_env {
        for (k, v) in &env {
            println!("export {k}={}", shell_quote(v));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !args.no_build {
        let refs: Vec<(&str, &OsString)> = env.iter().map(|(k, v)| (*k, v)).collect();
        cargo_build(&["-p", "codec-host", "--features", "cuda"], &refs)?;
    }
    let (program, rest) = args.cmd.split_first().ok_or("no command given")?;
    let status = Command::new(program)
        .args(rest)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .status()
        .map_err(|e| format!("{}: {e}", program.to_string_lossy()))?;
    Ok(match status.code() {
        Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
        // Killed by a signal: the shell's convention.
        None => ExitCode::from(128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0).clamp(0, 127) as u8),
    })
}

#[cfg(test)]
mod tests {
    use super::shell_quote;
    use std::ffi::OsStr;

    #[test]
    fn values_are_quoted_for_the_shell() {
        assert_eq!(shell_quote(OsStr::new("/a b/lib64:/c")), "'/a b/lib64:/c'");
        assert_eq!(shell_quote(OsStr::new("it's")), r"'it'\''s'");
    }
}
