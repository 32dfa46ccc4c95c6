//! `cargo xtask build-ptx`: codec-kernels as PTX, checked by ptxas.
//!
//! rustc's own `nvptx64-nvidia-cuda` target on the nightly builds the crate with
//! `-Zbuild-std=core`. The crate is built as a `cdylib` with fat LTO so that the
//! emitted assembly (`--emit=asm`) is one self-contained PTX module holding the entry
//! points and every `core` function they call. rustc's link step for this target runs
//! `llvm-bitcode-linker`, a rustup component that is not needed for that module (and not
//! always available), so the linker is replaced by `true`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ptxas;

const TARGET: &str = "nvptx64-nvidia-cuda";
const CRATE: &str = "codec_kernels";

#[derive(clap::Args)]
pub struct Args {
    /// Architectures to build for (each gets its own PTX file).
    #[arg(long, value_delimiter = ',', default_value = "sm_70,sm_80,sm_90")]
    arch: Vec<String>,
    /// Directory for the PTX files (default: <workspace>/target/ptx).
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

fn workspace_root() -> PathBuf {
    // xtask lives one level below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A `cargo +nightly` / `rustc +nightly` command, free of the variables the outer
/// (stable) cargo run put into our environment.
fn nightly(tool: &str) -> Command {
    let mut c = Command::new(tool);
    c.arg("+nightly");
    for var in ["RUSTUP_TOOLCHAIN", "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET"] {
        c.env_remove(var);
    }
    c
}

fn capture(mut c: Command) -> Option<String> {
    let out = c.output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Checks that the nightly, its nvptx target and its core sources are there; the error
/// says what to install.
fn check_toolchain() -> Result<String, String> {
    let version = capture({
        let mut c = nightly("rustc");
        c.arg("-V");
        c
    })
    .ok_or("the nightly toolchain is missing: install it with `rustup toolchain install nightly --profile minimal --component rust-src`")?;
    let targets = capture({
        let mut c = nightly("rustc");
        c.args(["--print", "target-list"]);
        c
    })
    .unwrap_or_default();
    if !targets.lines().any(|t| t == TARGET) {
        return Err(format!("{} does not know the {TARGET} target: update the nightly (`rustup update nightly`)", version.trim()));
    }
    let sysroot = capture({
        let mut c = nightly("rustc");
        c.args(["--print", "sysroot"]);
        c
    })
    .unwrap_or_default();
    let core_src = Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/core");
    if !core_src.is_dir() {
        return Err(format!(
            "the nightly has no rust-src ({} missing), which -Zbuild-std=core needs: `rustup component add rust-src --toolchain nightly`",
            core_src.display()
        ));
    }
    Ok(version.trim().to_string())
}

/// Builds the PTX for `arch` and returns the path of the assembly rustc emitted.
fn build(root: &Path, arch: &str) -> Result<PathBuf, String> {
    let target_dir = root.join("target/ptx-build").join(arch);
    let status = nightly("cargo")
        .current_dir(root)
        .args(["rustc", "--quiet", "--release", "-p", "codec-kernels", "--target", TARGET, "-Zbuild-std=core"])
        .args(["--crate-type", "cdylib", "--", "--emit=asm", "-C", "linker=true"])
        .env("CARGO_TARGET_DIR", &target_dir)
        // target-cpu applies to core as well, so LTO merges code built for one architecture.
        .env("RUSTFLAGS", format!("-C target-cpu={arch}"))
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .status()
        .map_err(|e| format!("cannot run cargo +nightly: {e}"))?;
    if !status.success() {
        return Err(format!("the PTX build for {arch} failed ({status})"));
    }
    let asm = target_dir.join(TARGET).join("release/deps").join(format!("{CRATE}.s"));
    if asm.is_file() {
        Ok(asm)
    } else {
        Err(format!("the PTX build for {arch} left no {}", asm.display()))
    }
}

/// The `.entry` names a PTX module defines.
fn entries(ptx: &str) -> BTreeSet<&str> {
    codec_kernels::kernels::ptx_entry_names(ptx).collect()
}

/// Checks that the module targets `arch` and defines exactly the listed entry points.
fn check_module(ptx: &str, arch: &str) -> Result<(), String> {
    if !ptx.lines().any(|l| l.trim() == format!(".target {arch}")) {
        return Err(format!("the PTX for {arch} does not declare `.target {arch}`"));
    }
    let have = entries(ptx);
    let want: BTreeSet<&str> = codec_kernels::kernels::ENTRY_POINTS.iter().copied().collect();
    if have != want {
        let missing: Vec<_> = want.difference(&have).collect();
        let extra: Vec<_> = have.difference(&want).collect();
        return Err(format!("PTX entry points differ from kernels::ENTRY_POINTS: missing {missing:?}, unlisted {extra:?}"));
    }
    Ok(())
}

pub fn run(args: &Args) -> Result<(), String> {
    let root = workspace_root();
    let out_dir = args.out_dir.clone().unwrap_or_else(|| root.join("target/ptx"));
    let version = check_toolchain()?;
    // Look for ptxas before the (slow) build, so a missing one is reported at once.
    let ptxas = ptxas::find().ok_or(
        "ptxas not found (PATH, $PTXAS, $CCOLL_CUDA_DIR/bin, /opt/ccoll-cuda/bin, /usr/local/cuda/bin): \
         run `bash .ci/install-deps.sh`, which extracts it from Debian non-free `nvidia-cuda-toolkit` \
         into /opt/ccoll-cuda, or install a CUDA toolkit",
    )?;
    println!("build-ptx: {version}; ptxas: {}", ptxas.display());
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let mut table = Vec::new();
    for arch in &args.arch {
        let asm = build(&root, arch)?;
        let ptx_path = out_dir.join(format!("{CRATE}.{arch}.ptx"));
        std::fs::copy(&asm, &ptx_path).map_err(|e| format!("cannot write {}: {e}", ptx_path.display()))?;
        let ptx = std::fs::read_to_string(&ptx_path).map_err(|e| format!("cannot read {}: {e}", ptx_path.display()))?;
        check_module(&ptx, arch)?;
        let cubin = root.join("target/ptx-build").join(arch).join(format!("{CRATE}.cubin"));
        let report = ptxas::check(&ptxas, arch, &ptx_path, &cubin)?;
        for w in &report.warnings {
            println!("build-ptx: {arch}: {w}");
        }
        if report.kernels.len() != entries(&ptx).len() {
            return Err(format!("ptxas reported {} kernels for {arch}, the PTX has {}", report.kernels.len(), entries(&ptx).len()));
        }
        println!("build-ptx: {} ({} kernels) accepted by ptxas", ptx_path.display(), report.kernels.len());
        table.extend(report.kernels.into_iter().map(|k| (arch.clone(), k)));
    }
    let text = format_table(&args.arch, &table);
    print!("{text}");
    let report_path = out_dir.join("ptxas-report.md");
    std::fs::write(&report_path, &text).map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
    Ok(())
}

/// A Markdown table with one row per kernel; each cell holds the figures of the
/// architectures in order, separated by `/`, or one number where they agree.
fn format_table(arches: &[String], rows: &[(String, ptxas::KernelResources)]) -> String {
    let names: BTreeSet<&str> = rows.iter().map(|(_, k)| k.name.as_str()).collect();
    let mut s = format!(
        "| kernel ({}) | registers | stack B | spill stores B | spill loads B | shared B |\n|---|---:|---:|---:|---:|---:|\n",
        arches.join("/")
    );
    for name in names {
        let per_arch: Vec<Option<&ptxas::KernelResources>> =
            arches.iter().map(|a| rows.iter().find(|(ra, k)| ra == a && k.name == name).map(|(_, k)| k)).collect();
        let cell = |f: fn(&ptxas::KernelResources) -> u32| {
            let v: Vec<String> = per_arch.iter().map(|k| k.map_or("-".to_string(), |k| f(k).to_string())).collect();
            if v.iter().all(|x| *x == v[0]) {
                v[0].clone()
            } else {
                v.join("/")
            }
        };
        s += &format!(
            "| {name} | {} | {} | {} | {} | {} |\n",
            cell(|k| k.registers),
            cell(|k| k.stack_bytes),
            cell(|k| k.spill_stores),
            cell(|k| k.spill_loads),
            cell(|k| k.shared_bytes)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_check_wants_the_target_and_every_entry() {
        let mut ptx = String::from(".version 7.0\n.target sm_80\n.address_size 64\n");
        for name in codec_kernels::kernels::ENTRY_POINTS {
            ptx += &format!(".visible .entry {name}(\n\t.param .u64 p\n)\n{{\n}}\n");
        }
        ptx += ".visible .func helper(\n)\n";
        assert_eq!(check_module(&ptx, "sm_80"), Ok(()));
        assert!(check_module(&ptx, "sm_90").is_err());
        let short = ptx.replace(".visible .entry reduce_sum_f32(", ".visible .func reduce_sum_f32(");
        assert!(check_module(&short, "sm_80").unwrap_err().contains("reduce_sum_f32"));
        let extra = format!("{ptx}.visible .entry stray(\n)\n");
        assert!(check_module(&extra, "sm_80").unwrap_err().contains("stray"));
    }

    #[test]
    fn table_merges_architectures_per_kernel() {
        let k = |name: &str, registers, spill_stores| ptxas::KernelResources { name: name.into(), registers, spill_stores, ..Default::default() };
        let rows = vec![("sm_70".to_string(), k("b", 40, 8)), ("sm_80".to_string(), k("b", 32, 8)), ("sm_70".to_string(), k("a", 10, 0))];
        let t = format_table(&["sm_70".into(), "sm_80".into()], &rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "| kernel (sm_70/sm_80) | registers | stack B | spill stores B | spill loads B | shared B |");
        assert_eq!(lines[2], "| a | 10/- | 0/- | 0/- | 0/- | 0/- |");
        assert_eq!(lines[3], "| b | 40/32 | 0 | 8 | 0 | 0 |");
    }
}
