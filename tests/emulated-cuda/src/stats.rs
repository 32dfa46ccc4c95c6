//! `CCOLL_EMU_STATS=<file>`: one JSON line appended per completed launch, for
//! `cargo xtask gpu-estimate`. Each line is written with one `write` to a file opened
//! for appending, so the ranks of an mpirun may share the file.

use std::io::Write;
use std::sync::OnceLock;

use ptx_emulator::{LaunchDims, LaunchStats};

fn path() -> Option<&'static std::path::Path> {
    static PATH: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| std::env::var_os("CCOLL_EMU_STATS").filter(|p| !p.is_empty()).map(Into::into)).as_deref()
}

/// The JSON line of one launch: kernel, grid, block and every LaunchStats counter.
pub fn json_line(kernel: &str, dims: LaunchDims, s: &LaunchStats) -> String {
    let name: String = kernel.chars().filter(|c| !matches!(c, '"' | '\\') && !c.is_control()).collect();
    let fields = [
        ("threads", s.threads),
        ("instructions", s.instructions()),
        ("int_alu", s.int_alu),
        ("fp32", s.fp32),
        ("fp64", s.fp64),
        ("conversion", s.conversion),
        ("control", s.control),
        ("predicate", s.predicate),
        ("global_load", s.global_load),
        ("global_store", s.global_store),
        ("global_atomic", s.global_atomic),
        ("local_load", s.local_load),
        ("local_store", s.local_store),
        ("param_other", s.param_other),
        ("global_load_bytes", s.global_load_bytes),
        ("global_store_bytes", s.global_store_bytes),
        ("local_load_bytes", s.local_load_bytes),
        ("local_store_bytes", s.local_store_bytes),
    ];
    let [gx, gy, gz] = dims.grid;
    let [bx, by, bz] = dims.block;
    let mut line = format!("{{\"kernel\":\"{name}\",\"grid\":[{gx},{gy},{gz}],\"block\":[{bx},{by},{bz}]");
    for (k, v) in fields {
        line.push_str(&format!(",\"{k}\":{v}"));
    }
    line.push_str("}\n");
    line
}

pub fn record(kernel: &str, dims: LaunchDims, stats: &LaunchStats) {
    let Some(path) = path() else { return };
    let line = json_line(kernel, dims, stats);
    let written = std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("ccoll-emu: CCOLL_EMU_STATS={}: {e}", path.display());
    }
}
