//! Unmodified MPI programs under `mpirun -x LD_PRELOAD=libccoll_mpi.so`: a C program
//! built with mpicc, a Fortran program (`use mpi` and `use mpi_f08`), an mpi4py
//! program, and Debian's `hpcc` (the HPC Challenge benchmark), on 2 to 4 ranks; plus the
//! settings checks at `MPI_Init`.
//!
//! The library is the one cargo built beside this test, for the same profile
//! (`target/<profile>/deps/libccoll_mpi.so`). The Debian packages come from
//! `.ci/install-deps.sh`: openmpi-bin, libopenmpi-dev, gfortran, python3-mpi4py, hpcc.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use ccoll_tests::{App, Job, Launch};

/// The SZx / ZFP bound the compressed runs ask for.
const E: f64 = 1e-3;
/// Values per block in the C and Python programs (160 KiB of float, 320 KiB of double).
const N: &str = "40000";
/// Allowance for float rounding against the exact (double) reference.
const ROUNDING: f64 = 1e-5;

fn library() -> PathBuf {
    // The test executable is target/<profile>/deps/NAME; cargo builds the crate's cdylib
    // for the tests into the same directory (a cdylib's file name carries no hash). It
    // copies it up to target/<profile>/ only for `cargo build`, so that copy may be stale.
    let exe = std::env::current_exe().expect("the test's own path");
    let lib = exe.with_file_name("libccoll_mpi.so");
    assert!(lib.is_file(), "{} missing: cargo builds it with the tests (crate-type cdylib)", lib.display());
    lib
}

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// Compiles `source` with the MPI compiler wrapper `compiler` into `exe`; `flags` follow
/// the source (libraries included).
fn compile(compiler: &str, source: &str, flags: &[&str], exe: &str) -> String {
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(exe);
    let status = Command::new(compiler)
        .arg("-o")
        .arg(&exe)
        .arg(programs().join(source))
        .args(flags)
        .status()
        .unwrap_or_else(|e| panic!("{compiler}: {e} (Debian packages libopenmpi-dev, gfortran)"));
    assert!(status.success(), "{compiler} {source} failed");
    exe.to_string_lossy().into_owned()
}

/// The C test program, compiled once per test run.
fn c_program() -> &'static str {
    static EXE: OnceLock<String> = OnceLock::new();
    EXE.get_or_init(|| compile("mpicc", "collectives.c", &["-O2", "-Wall", "-lm"], "ccoll-mpi-collectives"))
}

/// `LD_PRELOAD` of the library for an application.
trait Preloaded {
    fn preloaded(self) -> Self;
    /// Preloaded with `codec`, compressing messages from 64 KiB, reporting.
    fn compressing(self, codec: &str) -> Self;
}

impl Preloaded for App {
    fn preloaded(self) -> App {
        self.var("LD_PRELOAD", &library().to_string_lossy())
    }
    fn compressing(self, codec: &str) -> App {
        self.preloaded().var("CCOLL_CODEC", codec).var("CCOLL_MIN_BYTES", "64K").var("CCOLL_REPORT", "1")
    }
}

/// Runs `args` on `ranks` ranks without the library and with it loaded but no codec set:
/// both succeed with no failure and print the same results.
fn unchanged_without_a_codec(ranks: usize, args: &[&str], dir: &Path) {
    let plain = mpirun(vec![App::new(ranks, args)], dir, Duration::from_secs(120));
    assert!(plain.success && plain.stdout.contains("failures=0"), "{}", plain.context());
    let unset = mpirun(vec![App::new(ranks, args).preloaded()], dir, Duration::from_secs(120));
    assert_eq!(plain.stdout, unset.stdout, "results differ with the library loaded and no codec");
}

/// Runs `apps` (MPMD if more than one) in `dir`, with no `CCOLL_*` variable of the
/// caller's environment (only the applications' own), failing after `timeout`.
fn mpirun(apps: Vec<App>, dir: &Path, timeout: Duration) -> Launch {
    Job::new(apps).in_dir(dir).without_ccoll_env().run(timeout)
}

/// A scratch directory of its own for a launch.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ccoll-mpi").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The `case NAME TYPE maxerr=E [hash=H]` lines of the C and Python programs.
fn cases(stdout: &str) -> BTreeMap<String, (f64, String)> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("case "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let err = f[2].strip_prefix("maxerr=").and_then(|e| e.parse().ok()).unwrap_or_else(|| panic!("bad case line {l:?}"));
            let hash = f.get(3).and_then(|h| h.strip_prefix("hash=")).unwrap_or_default();
            (format!("{} {}", f[0], f[1]), (err, hash.to_string()))
        })
        .collect()
}

/// One `ccoll-report: op=...` line.
#[derive(Debug)]
struct ReportLine {
    calls: u64,
    compressed: u64,
    bytes: u64,
    sent: u64,
    ratio: f64,
    bound: f64,
}

/// The report's op lines by op, and its settings line. Every line must have exactly the
/// documented fields in the documented order.
fn report(stderr: &str) -> (BTreeMap<String, ReportLine>, String) {
    let mut ops = BTreeMap::new();
    let mut settings = None;
    for line in stderr.lines().filter_map(|l| l.strip_prefix("ccoll-report: ")) {
        if let Some(s) = line.strip_prefix("settings ") {
            assert!(settings.replace(s.to_string()).is_none(), "two settings lines");
            continue;
        }
        let fields: Vec<(&str, &str)> = line.split(' ').map(|f| f.split_once('=').unwrap_or_else(|| panic!("{line:?}"))).collect();
        let keys: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["op", "calls", "compressed", "bytes", "sent", "ratio", "bound"], "{line:?}");
        let num = |i: usize| fields[i].1.parse::<u64>().unwrap_or_else(|_| panic!("{line:?}"));
        let float = |i: usize| fields[i].1.parse::<f64>().unwrap_or_else(|_| panic!("{line:?}"));
        let entry = ReportLine { calls: num(1), compressed: num(2), bytes: num(3), sent: num(4), ratio: float(5), bound: float(6) };
        assert!(ops.insert(fields[0].1.to_string(), entry).is_none(), "op reported twice: {line:?}");
    }
    (ops, settings.unwrap_or_else(|| panic!("no settings line in\n{stderr}")))
}

/// The report op behind a case name (`reduce_scatter_block-sum-inplace` -> `reduce_scatter_block`).
fn op_of(case: &str) -> &str {
    case.split(['-', ' ']).next().unwrap_or(case)
}

/// Compressed calls per rank that the C program makes, by op.
const C_COMPRESSED_PER_RANK: [(&str, u64); 8] = [
    ("allreduce", 8),
    ("reduce", 4),
    ("reduce_scatter_block", 4),
    ("bcast", 2),
    ("scatter", 4),
    ("gather", 4),
    ("allgather", 4),
    ("alltoall", 4),
];

#[test]
fn c_program_without_a_codec_is_bit_identical_and_the_report_says_nothing_was_compressed() {
    let dir = scratch("c-plain");
    let tol = format!("{}", 3.0 * E);
    let plain = mpirun(vec![App::new(3, &[c_program(), &tol, N])], &dir, Duration::from_secs(120));
    assert!(plain.success && plain.stdout.contains("failures=0"), "{}", plain.context());
    let with = mpirun(vec![App::new(3, &[c_program(), &tol, N]).preloaded().var("CCOLL_REPORT", "1")], &dir, Duration::from_secs(120));
    assert!(with.success, "{}", with.context());
    assert_eq!(plain.stdout, with.stdout, "results differ with the library loaded and no codec");
    let (ops, settings) = report(&with.stderr);
    assert_eq!(ops.len(), 8, "{}", with.stderr);
    for (op, line) in &ops {
        assert!(line.calls > 0 && line.compressed == 0, "{op}: {line:?}");
        assert_eq!((line.sent, line.ratio, line.bound), (line.bytes, 1.0, 0.0), "{op}");
    }
    assert!(settings.starts_with("ranks=3 CCOLL_CODEC=unset "), "{settings}");
    assert!(settings.ends_with("(CCOLL_CODEC unset: nothing compressed)"), "{settings}");
}

/// The C program with `codec` on `ranks` ranks: every float/double result within
/// `ranks x E` (no algorithm has k > p) and within its op's stated bound, the calls MPI
/// runs bit-identical to a run without the library, the report exact in its counts.
fn c_program_compressed(ranks: usize, codec: &str) {
    let dir = scratch(&format!("c-{ranks}"));
    let tol = format!("{}", ranks as f64 * E + ROUNDING);
    let plain = mpirun(vec![App::new(ranks, &[c_program(), &tol, N])], &dir, Duration::from_secs(120));
    assert!(plain.success, "{}", plain.context());
    let app = App::new(ranks, &[c_program(), &tol, N]).compressing(codec);
    let run = mpirun(vec![app], &dir, Duration::from_secs(300));
    assert!(run.success && run.stdout.contains("failures=0"), "{}", run.context());
    let (ops, settings) = report(&run.stderr);
    assert!(settings.starts_with(&format!("ranks={ranks} CCOLL_CODEC=")) && settings.contains("CCOLL_MIN_BYTES=65536"), "{settings}");
    for (op, per_rank) in C_COMPRESSED_PER_RANK {
        let line = &ops[op];
        assert_eq!(line.compressed, per_rank * ranks as u64, "{op}: {line:?}");
        assert!(line.ratio > 1.5 && line.sent < line.bytes, "{op}: {line:?}");
        assert!(line.bound > 0.0 && line.bound <= ranks as f64 * E, "{op}: {line:?}");
    }
    let (plain_cases, compressed_cases) = (cases(&plain.stdout), cases(&run.stdout));
    assert_eq!(plain_cases.len(), 40);
    for (case, (err, hash)) in &compressed_cases {
        let passed_to_mpi = case.starts_with("allreduce-small") || case.contains("-derived") || case.ends_with(" int");
        if passed_to_mpi {
            assert_eq!(hash, &plain_cases[case].1, "{case}: MPI ran it, so it must be bit-identical");
        } else {
            assert!(*err <= ops[op_of(case)].bound + ROUNDING, "{case}: error {err} above the stated bound");
            assert!(*err > 0.0, "{case}: no error at all, so nothing was compressed");
        }
    }
}

#[test]
fn c_program_compressed_within_the_bound_on_2_ranks() {
    c_program_compressed(2, "szx=1e-3");
}

#[test]
fn c_program_compressed_within_the_bound_on_3_ranks() {
    c_program_compressed(3, "zfp-tol=1e-3");
}

#[test]
fn c_program_compressed_within_the_bound_on_4_ranks() {
    c_program_compressed(4, "szx:1e-3");
}

#[test]
fn mpi4py_program_compresses_within_the_bound() {
    let script = programs().join("mpi4py_collectives.py");
    let script = script.to_str().expect("a UTF-8 path");
    let dir = scratch("mpi4py");
    // Debian's interpreter, which sees python3-mpi4py (the first python3 on PATH may not).
    let python = "/usr/bin/python3";
    unchanged_without_a_codec(2, &[python, script, "1e-2", N], &dir);

    let tol = format!("{}", 4.0 * E + ROUNDING);
    let app = App::new(4, &[python, script, &tol, N]).compressing("szx=1e-3");
    let run = mpirun(vec![app], &dir, Duration::from_secs(300));
    assert!(run.success && run.stdout.contains("failures=0"), "{}", run.context());
    let (ops, _) = report(&run.stderr);
    // Per rank: two allreduce, one bcast and one alltoall per element type.
    for (op, per_rank) in [("allreduce", 4), ("bcast", 2), ("alltoall", 2)] {
        assert_eq!(ops[op].compressed, per_rank * 4, "{op}: {:?}", ops[op]);
    }
    for (case, (err, _)) in cases(&run.stdout) {
        assert!(err <= ops[op_of(&case)].bound + ROUNDING && err > 0.0, "{case}: {err}");
    }
}

/// The Fortran program with `use mpi` (mpif.h's bindings) or `use mpi_f08`: the same
/// checks as the C program's, within the bound, with a report that shows the Fortran
/// calls compressed (Open MPI's Fortran bindings bypass the C `MPI_*` symbols, so the
/// library interposes the Fortran ones too).
fn fortran_program(f08: bool) {
    let (flags, exe): (&[&str], _) = if f08 { (&["-cpp", "-O2", "-DF08"], "ccoll-mpi-f08") } else { (&["-cpp", "-O2"], "ccoll-mpi-f90") };
    let exe = compile("mpif90", "collectives.f90", flags, exe);
    let dir = scratch(if f08 { "fortran-f08" } else { "fortran" });
    let ranks = 3;
    let tol = format!("{}", ranks as f64 * E + ROUNDING);
    unchanged_without_a_codec(ranks, &[&exe, &tol, N], &dir);
    let app = App::new(ranks, &[&exe, &tol, N]).compressing("szx=1e-3");
    let run = mpirun(vec![app], &dir, Duration::from_secs(300));
    assert!(run.success && run.stdout.contains("failures=0"), "{}", run.context());
    let (ops, _) = report(&run.stderr);
    // Per rank: three float allreduces (one in place), one bcast, one alltoall.
    for (op, per_rank) in [("allreduce", 3), ("bcast", 1), ("alltoall", 1)] {
        assert_eq!(ops[op].compressed, per_rank * ranks as u64, "{op}: {:?}", ops[op]);
    }
    assert!(run.stdout.contains("case allreduce-sum integer maxerr= 0.000E+00"), "{}", run.stdout);
}

#[test]
fn fortran_use_mpi_program_is_intercepted_and_compresses_within_the_bound() {
    fortran_program(false);
}

#[test]
fn fortran_use_mpi_f08_program_is_intercepted_and_compresses_within_the_bound() {
    fortran_program(true);
}

/// The lines of hpcc's output that carry its computed results and checks (not its
/// timings). DGEMM's "Scaled residual" is left out: DGEMM seeds its matrices from the
/// clock, so it differs between two runs without the library too.
fn hpcc_results(dir: &Path) -> Vec<String> {
    let out = std::fs::read_to_string(dir.join("hpccoutf.txt")).expect("hpcc writes hpccoutf.txt");
    let markers = ["||Ax-b||", "residual=", "Errors=", "maxErr=", "errors in", "Validates", "_N=", "_n="];
    out.lines().filter(|l| markers.iter().any(|m| l.contains(m))).map(str::to_string).collect()
}

/// Runs Debian's hpcc on 4 ranks (a 2 x 2 grid, N = 400) in a fresh directory.
fn hpcc(name: &str, app: impl FnOnce(App) -> App) -> (Launch, PathBuf) {
    let dir = scratch(name);
    std::fs::copy(programs().join("hpccinf.txt"), dir.join("hpccinf.txt")).expect("copy hpccinf.txt");
    let launch = mpirun(vec![app(App::new(4, &["hpcc"]))], &dir, Duration::from_secs(180));
    assert!(launch.success, "hpcc failed (Debian package hpcc installed?)\n{}", launch.context());
    (launch, dir)
}

#[test]
fn hpcc_results_are_unchanged_by_default_and_it_completes_compressed() {
    let (_, plain) = hpcc("hpcc-plain", |a| a);
    let reference = hpcc_results(&plain);
    assert!(reference.iter().any(|l| l.contains("PASSED")) && reference.len() > 15, "{reference:?}");

    let (with, dir) = hpcc("hpcc-default", |a| a.preloaded().var("CCOLL_REPORT", "1"));
    assert_eq!(hpcc_results(&dir), reference, "hpcc's results differ with the library's default settings");
    let (ops, settings) = report(&with.stderr);
    assert!(ops.values().all(|l| l.compressed == 0) && settings.contains("nothing compressed"), "{}", with.stderr);

    // Auto selection sends messages this small through plain MPI (the cost model's
    // latency term): the algorithm is forced too, so that compression really runs.
    let forced = |a: App| {
        a.preloaded()
            .var("CCOLL_CODEC", "szx=1e-6")
            .var("CCOLL_MIN_BYTES", "64")
            .var("CCOLL_ALGORITHM", "allreduce=c-coll,reduce=c-coll")
            .var("CCOLL_REPORT", "1")
    };
    let (run, dir) = hpcc("hpcc-compressed", forced);
    let (ops, _) = report(&run.stderr);
    let compressed: u64 = ops.values().map(|l| l.compressed).sum();
    assert!(ops["allreduce"].compressed > 0 && ops["reduce"].compressed > 0, "{}", run.stderr);
    assert!(hpcc_results(&dir).iter().any(|l| l.contains("PASSED")), "HPL's residual check failed under compression");
    eprintln!("hpcc compressed {compressed} calls: {}", run.stderr.lines().filter(|l| l.starts_with("ccoll-report")).collect::<Vec<_>>().join(" | "));
}

#[test]
fn mismatched_codecs_stop_every_rank_within_seconds() {
    let dir = scratch("mismatch");
    let rank = |codec: &str| App::new(1, &[c_program(), "1", "1000"]).preloaded().var("CCOLL_CODEC", codec);
    let run = mpirun(vec![rank("szx=1e-3"), rank("szx=1e-4")], &dir, Duration::from_secs(60));
    assert!(!run.success, "{}", run.context());
    assert!(run.elapsed < Duration::from_secs(20), "took {:?}", run.elapsed);
    for (r, value) in [(0, "szx=0.001"), (1, "szx=0.0001")] {
        let want = format!("ccoll-mpi: rank {r}: CCOLL_CODEC differs between the ranks (here {value})");
        assert!(run.stderr.contains(&want), "{want:?} missing\n{}", run.context());
    }
    assert!(!run.stdout.contains("case "), "the program ran past MPI_Init\n{}", run.context());
}

#[test]
fn an_invalid_value_stops_at_mpi_init_naming_the_variable_and_the_accepted_forms() {
    let dir = scratch("invalid");
    for (var, value, accepted) in [("CCOLL_MIN_BYTES", "lots", "64K"), ("CCOLL_CODEC", "szx", "szx-rel=R"), ("CCOLL_OPS", "allreduce,send", "alltoall")] {
        let app = App::new(2, &[c_program(), "1", "1000"]).preloaded().var(var, value);
        let run = mpirun(vec![app], &dir, Duration::from_secs(60));
        assert!(!run.success && !run.stdout.contains("case "), "{}", run.context());
        let head = format!("ccoll-mpi: rank 0: {var}={value:?} is not valid");
        let line = run.stderr.lines().find(|l| l.starts_with(&head)).unwrap_or_else(|| panic!("{head:?} missing\n{}", run.context()));
        assert!(line.contains("accepted: ") && line.contains(accepted), "{line}");
    }
}
