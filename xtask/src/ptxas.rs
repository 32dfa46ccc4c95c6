//! Finding NVIDIA's ptxas, running it, and reading its `-v` resource report.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where install-deps.sh puts the tools extracted from Debian's non-free packages.
const DEFAULT_TOOL_DIR: &str = "/opt/ccoll-cuda";

/// The ptxas to use: `$PTXAS`, then `ptxas` on PATH, then `$CCOLL_CUDA_DIR/bin`,
/// `/opt/ccoll-cuda/bin`, `$CUDA_PATH/bin`, `/usr/local/cuda/bin`.
pub fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from) {
        return p.is_file().then_some(p);
    }
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let tool_dirs = [std::env::var_os("CCOLL_CUDA_DIR").map(PathBuf::from), Some(DEFAULT_TOOL_DIR.into())]
        .into_iter()
        .flatten()
        .chain(std::env::var_os("CUDA_PATH").map(PathBuf::from))
        .chain(Some(PathBuf::from("/usr/local/cuda")))
        .map(|d| d.join("bin"));
    on_path.chain(tool_dirs).map(|d| d.join("ptxas")).find(|p| p.is_file())
}

/// Resources ptxas reports for one kernel entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub name: String,
    pub registers: u32,
    pub stack_bytes: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub shared_bytes: u32,
}

/// The number right before `unit` in `text` (`"32 registers"` -> 32).
fn number_before(text: &str, unit: &str) -> Option<u32> {
    let end = text.find(unit)?;
    text[..end].trim_end().rsplit([' ', ',']).next()?.parse().ok()
}

/// The quoted name in a line such as `Compiling entry function 'f' for 'sm_70'`.
fn first_quoted(line: &str) -> Option<&str> {
    let start = line.find('\'')? + 1;
    let len = line[start..].find('\'')?;
    Some(&line[start..start + len])
}

/// Reads the entry kernels' figures from `ptxas -v` output. Each entry's block is
/// "Compiling entry function 'NAME'", then "Function properties for NAME" with the stack
/// and spill line, then "Used N registers[, S bytes smem][, ... cmem]". Properties of
/// non-entry functions (`.func`) are reported in between and skipped.
pub fn parse_report(output: &str) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    let mut properties_of: Option<String> = None;
    for line in output.lines() {
        if line.contains("Compiling entry function") {
            if let Some(name) = first_quoted(line) {
                kernels.push(KernelResources { name: name.to_string(), ..Default::default() });
            }
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = Some(rest.trim().to_string());
        } else if line.contains("bytes stack frame") {
            let Some(k) = kernels.last_mut().filter(|k| Some(&k.name) == properties_of.as_ref()) else { continue };
            k.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
            k.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
            k.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
        } else if line.contains("Used ") && line.contains("registers") {
            if let Some(k) = kernels.last_mut() {
                let used = &line[line.find("Used ").unwrap_or(0)..];
                k.registers = number_before(used, "registers").unwrap_or(0);
                k.shared_bytes = number_before(used, "bytes smem").unwrap_or(0);
            }
        }
    }
    kernels
}

/// What one ptxas run produced.
pub struct Report {
    pub kernels: Vec<KernelResources>,
    /// Lines ptxas flagged as warnings.
    pub warnings: Vec<String>,
}

/// Assembles `ptx` for `arch` into `cubin`; an error carries ptxas's own messages.
pub fn check(ptxas: &Path, arch: &str, ptx: &Path, cubin: &Path) -> Result<Report, String> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(ptx)
        .arg("-o")
        .arg(cubin)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let errors: Vec<&str> = text.lines().filter(|l| l.contains("error") || l.contains("fatal")).collect();
    if !out.status.success() || !errors.is_empty() {
        // Without a recognisable error line, show the end of what ptxas said.
        let shown = if errors.is_empty() { text.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect() } else { errors };
        return Err(format!("ptxas rejected {} for {arch} ({}):\n{}", ptx.display(), out.status, shown.join("\n")));
    }
    let warnings = text.lines().filter(|l| l.contains("warning")).map(str::to_string).collect();
    Ok(Report { kernels: parse_report(&text), warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'zfp_encode' for 'sm_80'
ptxas info    : Function properties for zfp_encode
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 64 registers, 2048 bytes smem, 376 bytes cmem[0]
ptxas info    : Function properties for _ZN4core9panicking9panic_fmt
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'reduce_sum_f32' for 'sm_90'
ptxas info    : Function properties for reduce_sum_f32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers
";

    #[test]
    fn report_gives_each_entry_its_own_figures() {
        let k = parse_report(SAMPLE);
        assert_eq!(
            k,
            vec![
                KernelResources {
                    name: "zfp_encode".into(),
                    registers: 64,
                    stack_bytes: 16,
                    spill_stores: 8,
                    spill_loads: 4,
                    shared_bytes: 2048
                },
                KernelResources { name: "reduce_sum_f32".into(), registers: 10, ..Default::default() },
            ]
        );
    }

    #[test]
    fn numbers_are_read_before_their_units() {
        assert_eq!(number_before("Used 255 registers, 96 bytes smem", "bytes smem"), Some(96));
        assert_eq!(number_before("Used 255 registers", "bytes smem"), None);
        assert_eq!(first_quoted("entry function 'a_b' for 'sm_70'"), Some("a_b"));
    }
}
